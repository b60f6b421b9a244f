"""<kernels/fft/fft3d_layout> (compiler/csl/lib/kernels/fft) against numpy's fftn / ifftn: random
complex points in the library's documented layout (PE (x // P, y // P), element
z P P + (y % P) P + x % P), every norm, forward and inverse, f32 and f16, on 1 x 1, 2 x 2 and
4 x 4 rectangles (tests/python/kernels/fft3d)."""

import os
import subprocess

import numpy as np
import pytest

from conftest import SOURCE_DIR, WSEMU

NORMS = {0: "backward", 1: "ortho", 2: "forward"}


def to_device(a, W, P):
    """a[y][x][z] (complex, N^3) -> [W][W][2 P P N] interleaved (re, im), PE (x // P, y // P)."""
    N = a.shape[0]
    out = np.zeros((W, W, 2 * P * P * N), np.float64)
    for y in range(N):
        for x in range(N):
            l = np.arange(N) * P * P + (y % P) * P + x % P
            out[y // P, x // P, 2 * l] = a[y, x, :].real
            out[y // P, x // P, 2 * l + 1] = a[y, x, :].imag
    return out


def from_device(d, N, P):
    a = np.zeros((N, N, N), complex)
    for y in range(N):
        for x in range(N):
            l = np.arange(N) * P * P + (y % P) * P + x % P
            a[y, x, :] = d[y // P, x // P, 2 * l] + 1j * d[y // P, x // P, 2 * l + 1]
    return a


@pytest.mark.parametrize("N,W,FP", [(8, 2, 1), (4, 1, 1), (8, 4, 0), (16, 4, 1)])
def test_transforms_match_numpy(tmp_path, rng, N, W, FP):
    from cerebras.sdk.runtime.sdkruntimepybind import MemcpyDataType, MemcpyOrder, SdkRuntime
    from cerebras.sdk.sdk_utils import memcpy_view

    out = str(tmp_path / "out")
    subprocess.run([WSEMU, "cslc", os.path.join(SOURCE_DIR, "tests/python/kernels/fft3d/layout.csl"), "--arch=wse3",
                    f"--fabric-dims={W + 7},{W + 2}", "--fabric-offsets=4,1", "--memcpy", "-o", out,
                    f"--params=N:{N},W:{W},FP:{FP}"], check=True, stdout=subprocess.DEVNULL)
    P = N // W
    dtype = np.dtype(np.float32 if FP else np.float16)
    kind = MemcpyDataType.MEMCPY_32BIT if FP else MemcpyDataType.MEMCPY_16BIT
    rows = MemcpyOrder.ROW_MAJOR
    a = rng.standard_normal((N, N, N)) + 1j * rng.standard_normal((N, N, N))
    a = from_device(to_device(a, W, P).astype(dtype).astype(np.float64), N, P)  # as the device holds it
    twiddles = np.zeros(N, np.uint32)
    view = memcpy_view(twiddles, dtype)
    view[0::2] = np.cos(2 * np.pi * np.arange(N // 2) / N).astype(dtype)
    view[1::2] = np.sin(2 * np.pi * np.arange(N // 2) / N).astype(dtype)
    runner = SdkRuntime(out)
    runner.load()
    runner.run()
    runner.memcpy_h2d(runner.get_id("twiddle_array"), np.tile(twiddles, W * W), 0, 0, W, W, N, streaming=False,
                      data_type=kind, order=rows, nonblock=False)
    for norm in NORMS:
        for inverse in (0, 1):
            container = np.zeros((W, W, 2 * P * P * N), np.uint32)
            memcpy_view(container, dtype)[:] = to_device(a, W, P).astype(dtype)
            runner.memcpy_h2d(runner.get_id("X"), container.ravel(), 0, 0, W, W, 2 * P * P * N, streaming=False,
                              data_type=kind, order=rows, nonblock=False)
            runner.launch("csfftExecC2C", np.int16(norm), np.int16(inverse), nonblock=False)
            runner.memcpy_d2h(container.ravel(), runner.get_id("X"), 0, 0, W, W, 2 * P * P * N, streaming=False,
                              data_type=kind, order=rows, nonblock=False)
            got = from_device(memcpy_view(container, dtype).astype(np.float64), N, P)
            want = (np.fft.ifftn if inverse else np.fft.fftn)(a, norm=NORMS[norm])
            # f32 all through: the rounding of N log N operations; f16: the inputs' and outputs'
            # rounding (the library transforms in f32), relative to the largest output.
            tol = 2e-5 if FP else 2e-3
            scale = np.abs(want).max()
            np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale, err_msg=f"norm {norm} inverse {inverse}")
    times = np.zeros(W * W * 2, np.uint32)
    runner.memcpy_d2h(times, runner.get_id("fft_time"), 0, 0, W, W, 2, streaming=False,
                      data_type=MemcpyDataType.MEMCPY_32BIT, order=rows, nonblock=False)
    cycles = runner.cycles()
    runner.stop()
    words = times.view(np.uint16).reshape(W * W, 4)
    elapsed = words[:, 0] + (words[:, 1].astype(np.int64) << 16) + (words[:, 2].astype(np.int64) << 32)
    assert (words[:, 3] == 0).all()
    assert (elapsed > 0).all() and (elapsed < cycles).all()
