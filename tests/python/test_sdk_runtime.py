"""SdkRuntime's calls, driven as SDK run scripts drive them, on kernels built with `wsemu build`;
results against numpy's y = A x + b computed here."""

import os
import subprocess

import numpy as np
import pytest

from cerebras.sdk.runtime.sdkruntimepybind import MemcpyDataType, MemcpyOrder, SdkRuntime
from cerebras.sdk.sdk_utils import input_array_to_u32, memcpy_view
from cerebras.sdk.debug.debug_util import debug_util
from conftest import GEMV01, GEMV01_F16, GEMV09, HOST_API, WSEMU

M32 = MemcpyDataType.MEMCPY_32BIT
ROW = MemcpyOrder.ROW_MAJOR


def gemv01_inputs(rng, M=4, N=6):
    A = rng.standard_normal((M, N)).astype(np.float32)
    x = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(M).astype(np.float32)
    return A, x, b, A.astype(np.float64) @ x + b


@pytest.mark.parametrize("as_words", [False, True], ids=["float32", "uint32-view"])
def test_gemv01_copy_mode(kernels, rng, as_words):
    bindir = kernels(GEMV01)
    A, x, b, expected = gemv01_inputs(rng)
    runner = SdkRuntime(bindir, cmaddr=None)
    ids = {name: runner.get_id(name) for name in ("A", "x", "b", "y")}
    runner.load()
    runner.run()
    for name, data in (("A", A.ravel()), ("x", x), ("b", b)):
        src = data.view(np.uint32) if as_words else data
        runner.memcpy_h2d(ids[name], src, 0, 0, 1, 1, data.size, streaming=False, order=ROW, data_type=M32,
                          nonblock=False)
    runner.launch("compute", nonblock=False)
    y = np.zeros(4, dtype=np.uint32 if as_words else np.float32)
    runner.memcpy_d2h(y, ids["y"], 0, 0, 1, 1, 4, streaming=False, order=ROW, data_type=M32, nonblock=False)
    runner.stop()
    got = y.view(np.float32) if as_words else y
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_gemv01_by_name_and_call(kernels, rng):
    """wsemu also takes symbol names; call() is the SDK's raw-word launch."""
    A, x, b, expected = gemv01_inputs(rng)
    with SdkRuntime(kernels(GEMV01)) as runner:
        runner.load()
        runner.memcpy_h2d("A", A, 0, 0, 1, 1, A.size)  # a 2-D array: any shape with the right size
        runner.memcpy_h2d("x", x, 0, 0, 1, 1, x.size)
        runner.memcpy_h2d("b", b, 0, 0, 1, 1, b.size)
        runner.call("compute", [], nonblock=False)
        y = np.zeros((2, 2), np.float32)
        runner.memcpy_d2h(y, "y", 0, 0, 1, 1, 4)
    np.testing.assert_allclose(y.ravel(), expected, rtol=1e-5, atol=1e-5)


def gemv09_tiles(A, kx, ky):
    """A's blocks as the [h][w][MT*NT] tensor gemv-09 expects: each PE's block row-major."""
    M, N = A.shape
    MT, NT = M // ky, N // kx
    return A.reshape(ky, MT, kx, NT).transpose(0, 2, 1, 3)


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_gemv09_streaming(kernels, rng, arch):
    M, N, kx, ky = 6, 8, 4, 3
    bindir = kernels(GEMV09, arch=arch, M=M, N=N, kx=kx, ky=ky)
    A = rng.standard_normal((M, N)).astype(np.float32)
    x = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(M).astype(np.float32)
    runner = SdkRuntime(bindir, simfab_numthreads=4, suppress_simfab_trace=True, msg_level="WARNING")
    A_sym = runner.get_id("A")
    stream = runner.get_id("init")  # any id of the rectangle names the stream's rectangle
    runner.load()
    runner.run()
    runner.memcpy_h2d(A_sym, gemv09_tiles(A, kx, ky).ravel(), 0, 0, kx, ky, (M // ky) * (N // kx), streaming=False,
                      order=ROW, data_type=M32, nonblock=False)
    runner.launch("init", nonblock=False)
    tx = runner.memcpy_h2d(stream, x, 0, 0, kx, 1, N // kx, streaming=True, order=ROW, data_type=M32,
                           nonblock=True)
    tb = runner.memcpy_h2d(7, b, kx - 1, 0, 1, ky, M // ky, streaming=True, order=ROW, data_type=M32,
                           nonblock=True)  # a raw stream id (as run scripts read from out.json)
    y = np.zeros(M, np.float32)
    ty = runner.memcpy_d2h(y, stream, kx - 1, 0, 1, ky, M // ky, streaming=True, order=ROW, data_type=M32,
                           nonblock=True)
    for t in (tx, tb, ty):
        runner.task_wait(t)
        assert runner.is_task_done(t)
    runner.stop()
    np.testing.assert_allclose(y, A.astype(np.float64) @ x + b, rtol=1e-5, atol=1e-5)


def test_col_major_equals_row_major(kernels, rng):
    """COL_MAJOR takes the [h][w][elems] tensor in Fortran order: the same A gives the same y."""
    M, N, kx, ky = 6, 8, 4, 3
    bindir = kernels(GEMV09, M=M, N=N, kx=kx, ky=ky)
    A = rng.standard_normal((M, N)).astype(np.float32)
    x = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(M).astype(np.float32)
    tiles = gemv09_tiles(A, kx, ky).reshape(ky, kx, -1)
    results = []
    for order, data in ((MemcpyOrder.ROW_MAJOR, tiles.ravel(order="C")),
                        (MemcpyOrder.COL_MAJOR, tiles.ravel(order="F"))):
        runner = SdkRuntime(bindir)
        runner.load()
        runner.memcpy_h2d(runner.get_id("A"), data, 0, 0, kx, ky, tiles.shape[2], order=order)
        runner.launch("init")
        runner.memcpy_h2d("gemv", x, 0, 0, kx, 1, N // kx, streaming=True)
        runner.memcpy_h2d("gemv", b, kx - 1, 0, 1, ky, M // ky, streaming=True)
        y = np.zeros(M, np.float32)
        runner.memcpy_d2h(y, "gemv", kx - 1, 0, 1, ky, M // ky, streaming=True)
        runner.stop()
        results.append(y)
    np.testing.assert_allclose(results[0], A.astype(np.float64) @ x + b, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(results[0], results[1])


def test_gemv01_fp16(kernels, rng):
    """16-bit memcpy: u32 words with the data in the low half (input_array_to_u32), or f16 arrays."""
    M, N = 4, 6
    bindir = kernels(GEMV01_F16)
    A = rng.uniform(-1, 1, (M, N)).astype(np.float16)
    x = rng.uniform(-1, 1, N).astype(np.float16)
    b = rng.uniform(-1, 1, M).astype(np.float16)
    runner = SdkRuntime(bindir)
    runner.load()
    runner.run()
    M16 = MemcpyDataType.MEMCPY_16BIT
    runner.memcpy_h2d(runner.get_id("A"), input_array_to_u32(A.ravel(), 0, N), 0, 0, 1, 1, M * N, data_type=M16)
    runner.memcpy_h2d(runner.get_id("x"), input_array_to_u32(x, None, N), 0, 0, 1, 1, N, data_type=M16)
    runner.memcpy_h2d(runner.get_id("b"), b, 0, 0, 1, 1, M, data_type=M16)  # f16 directly
    runner.launch("compute")
    words = np.zeros(M, np.uint32)
    runner.memcpy_d2h(words, runner.get_id("y"), 0, 0, 1, 1, M, data_type=M16)
    halves = np.zeros(M, np.float16)
    runner.memcpy_d2h(halves, runner.get_id("y"), 0, 0, 1, 1, M, data_type=M16)
    runner.stop()
    y = memcpy_view(words, np.dtype(np.float16))
    assert np.all(words >> 16 == 0)
    np.testing.assert_array_equal(y, halves)
    expected = A.astype(np.float64) @ x.astype(np.float64) + b
    # One fp16 rounding per multiply-add: N + 1 roundings of at most half an ulp of max |y|.
    tol = (N + 1) * 2.0 ** -11 * max(1.0, float(np.abs(expected).max()) + N)
    np.testing.assert_allclose(y.astype(np.float64), expected, atol=tol, rtol=0)


def test_launch_arguments(kernels):
    """launch's typed arguments reach MEMCPY_ARGS as 32-bit words."""
    runner = SdkRuntime(kernels(HOST_API))
    runner.load()
    runner.launch("store_args", np.int16(-2), np.uint16(65535), 1.5, True, nonblock=False)
    expected = np.array([0xFFFFFFFE, 0xFFFF, 0x3FC00000, 1], dtype=np.uint32)
    for px in (0, 1):
        out = np.zeros(4, np.uint32)
        runner.memcpy_d2h(out, runner.get_id("out"), px, 0, 1, 1, 4)
        np.testing.assert_array_equal(out, expected)
    runner.launch("add_args", 0xFFFFFFFF, 5)
    s = np.zeros(2, np.uint32)
    runner.memcpy_d2h(s, "sum", 0, 0, 2, 1, 1)
    np.testing.assert_array_equal(s, [4, 4])  # wraps around at 2^32
    runner.call("add_args", np.array([7, 8], dtype=np.uint32))
    np.testing.assert_array_equal(runner.read_symbol(1, 0, "sum"), [15])
    runner.stop()


def test_read_symbol_dump_core_and_debug_util(kernels, rng, tmp_path):
    A, x, b, expected = gemv01_inputs(rng)
    bindir = kernels(GEMV01)
    runner = SdkRuntime(bindir)
    runner.load()
    for name, data in (("A", A), ("x", x), ("b", b)):
        runner.memcpy_h2d(name, data, 0, 0, 1, 1, data.size)
    runner.launch("compute")
    y = runner.read_symbol(0, 0, "y")
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(runner.read_symbol(0, 0, "y", dtype=np.uint32), y.view(np.uint32))
    core = runner.dump_core(str(tmp_path / "corefile.cs1"))
    text = open(core, encoding="utf-8").read()
    assert "PE(1,1)" in text and "registers" in text  # the kernel's one PE, in fabric coordinates
    assert "PE(1,1)" in runner.core_text(1, 1)
    runner.stop()
    # After stop(), as the SDK's post-mortem tools do, in fabric coordinates.
    dbg = debug_util(bindir)
    np.testing.assert_array_equal(dbg.get_symbol(1, 1, "y"), y)
    with pytest.raises(ValueError, match="outside"):
        dbg.get_symbol(0, 0, "y")


def test_cycles_and_stats(kernels, rng):
    A, x, b, _ = gemv01_inputs(rng)
    runner = SdkRuntime(kernels(GEMV01))
    assert runner.cycles() == 0
    runner.load()
    for name, data in (("A", A), ("x", x), ("b", b)):
        runner.memcpy_h2d(name, data, 0, 0, 1, 1, data.size)
    runner.launch("compute")
    host = runner.stats()["host"]
    assert host["cycles"] == runner.cycles() > 0
    assert host["load_cycles"] + host["memcpy_cycles"] + host["launch_cycles"] + host["run_cycles"] == runner.cycles()
    assert host["h2d_elements"] == A.size + x.size + b.size
    assert [p["what"] for p in host["phases"]] == ["memcpy_h2d A", "memcpy_h2d x", "memcpy_h2d b", "launch compute"]
    assert runner.clock_mhz() == 850
    assert runner.time_us() == pytest.approx(runner.cycles() / 850)
    assert runner.run_until_quiescent()["status"] == "quiescent"
    assert runner.run_cycles(10)["cycles_run"] == 0  # nothing left to do
    assert runner.summary_line().startswith(f"{runner.cycles()} cycles = ")
    runner.stop()


def test_trace_recording(kernels, rng, tmp_path):
    A, x, b, _ = gemv01_inputs(rng)
    runner = SdkRuntime(kernels(GEMV01))
    runner.load()
    path = tmp_path / "gemv.wstrace"
    runner.start_trace(path, events="all")
    for name, data in (("A", A), ("x", x), ("b", b)):
        runner.memcpy_h2d(name, data, 0, 0, 1, 1, data.size)
    runner.launch("compute")
    info = runner.stop_trace()
    assert info["path"] == str(path) and info["events"] > 0 and os.path.getsize(path) == info["bytes"]
    runner.stop()
    summary = subprocess.run([WSEMU, "trace", str(path), "summary"], capture_output=True, text=True)
    assert summary.returncode == 0, summary.stderr


def test_nonblock_tasks_complete_in_issue_order(kernels, rng):
    A, x, b, expected = gemv01_inputs(rng)
    runner = SdkRuntime(kernels(GEMV01))
    runner.load()
    tasks = [runner.memcpy_h2d(n, d, 0, 0, 1, 1, d.size, nonblock=True) for n, d in (("A", A), ("x", x), ("b", b))]
    tasks.append(runner.launch("compute", nonblock=True))
    assert [t.id for t in tasks] == [1, 2, 3, 4]
    assert all(runner.is_task_done(t) for t in tasks)
    phases = [p["what"] for p in runner.stats()["host"]["phases"]]
    assert phases == ["memcpy_h2d A", "memcpy_h2d x", "memcpy_h2d b", "launch compute"]
    y = np.zeros(4, np.float32)
    runner.task_wait(runner.memcpy_d2h(y, "y", 0, 0, 1, 1, 4, nonblock=True))
    runner.stop()
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("order", [MemcpyOrder.ROW_MAJOR, MemcpyOrder.COL_MAJOR], ids=["row", "col"])
def test_row_and_column_broadcasts(kernels, rng, order):
    """s = r + c on every PE: r sent once per row (rowbcast), c once per column (colbcast)."""
    PW, PH, N = 4, 3, 8
    bindir = kernels("kernels/row-col-broadcast/layout.wsl", PW=PW, PH=PH, N=N)
    rows = rng.standard_normal((PH, N)).astype(np.float32)  # row y's vector
    cols = rng.standard_normal((PW, N)).astype(np.float32)  # column x's vector
    fortran = order == MemcpyOrder.COL_MAJOR
    runner = SdkRuntime(bindir)
    runner.load()
    runner.memcpy_h2d_rowbcast(runner.get_id("r"), rows.ravel(order="F" if fortran else "C"), 0, 0, PW, PH, N,
                               data_type=M32, order=order, nonblock=False)
    runner.memcpy_h2d_colbcast(runner.get_id("c"), cols.ravel(order="F" if fortran else "C"), 0, 0, PW, PH, N,
                               data_type=M32, order=order, nonblock=False)
    runner.launch("combine")
    s = np.zeros((PH, PW, N), np.float32)
    runner.memcpy_d2h(s, runner.get_id("s"), 0, 0, PW, PH, N)
    runner.stop()
    expected = rows[:, None, :].astype(np.float64) + cols[None, :, :]
    np.testing.assert_allclose(s, expected, rtol=1e-6, atol=1e-6)
