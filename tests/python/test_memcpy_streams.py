"""Host streams of <memcpy/memcpy> on the colors the layout names (tests/python/kernels/streams):
two host-to-device streams into every PE of a 2 x 2 rectangle (PE (0,0) takes both through the
firmware's one loop queue), a 32-bit and a 16-bit device-to-host stream out, then a scalar
pushed twice (a fabout of extent 2 from a register). The reference is numpy: y = 2 x + b exactly
(one f32 multiply by 2 and one add per element), and the 16-bit elements come back zero-extended
in their u32 words (memcpy_view takes the low halves)."""

import os
import subprocess

import numpy as np
import pytest

from conftest import SOURCE_DIR, WSEMU

W, H, N = 2, 2, 5


def compile_streams(tmp_path, arch, h2d=(0, 1), d2h=2, route_h2d_1=0):
    out = str(tmp_path / "out")
    subprocess.run([WSEMU, "cslc", os.path.join(SOURCE_DIR, "tests/python/kernels/streams/layout.csl"),
                    f"--arch={arch}", "--fabric-dims=9,4", "--fabric-offsets=4,1", "--memcpy", "-o", out,
                    f"--params=W:{W},H:{H},N:{N},H2D_1:{h2d[0]},H2D_2:{h2d[1]},D2H_1:{d2h},"
                    f"ROUTE_H2D_1:{route_h2d_1}"],
                   check=True, stdout=subprocess.DEVNULL)
    return out


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
@pytest.mark.parametrize("colors", [(0, 1), (7, 3)])
def test_two_streams_in_and_16_bit_stream_out(tmp_path, rng, arch, colors):
    from cerebras.sdk.runtime.sdkruntimepybind import MemcpyDataType, MemcpyOrder, SdkRuntime
    from cerebras.sdk.sdk_utils import memcpy_view

    out = compile_streams(tmp_path, arch, colors)
    x = rng.standard_normal(W * H * N).astype(np.float32)
    b = rng.standard_normal(W * H * N).astype(np.float32)
    h = rng.integers(0, 1 << 16, W * H * N).astype(np.uint16)
    f32, u16, rows = MemcpyDataType.MEMCPY_32BIT, MemcpyDataType.MEMCPY_16BIT, MemcpyOrder.ROW_MAJOR
    runner = SdkRuntime(out)
    runner.load()
    runner.run()
    runner.memcpy_h2d(runner.get_id("h"), h, 0, 0, W, H, N, streaming=False, data_type=u16, order=rows,
                      nonblock=False)
    runner.launch("start", nonblock=False)
    runner.memcpy_h2d(colors[0], x, 0, 0, W, H, N, streaming=True, data_type=f32, order=rows, nonblock=False)
    runner.memcpy_h2d(colors[1], b, 0, 0, W, H, N, streaming=True, data_type=f32, order=rows, nonblock=False)
    y = np.zeros(W * H * N, np.float32)
    runner.memcpy_d2h(y, 2, 0, 0, W, H, N, streaming=True, data_type=f32, order=rows, nonblock=False)
    words = np.zeros(W * H * N, np.uint32)
    runner.memcpy_d2h(words, 2, 0, 0, W, H, N, streaming=True, data_type=u16, order=rows, nonblock=False)
    twice = np.zeros(W * H * 2, np.uint32)
    runner.memcpy_d2h(twice, 2, 0, 0, W, H, 2, streaming=True, data_type=u16, order=rows, nonblock=False)
    runner.stop()
    np.testing.assert_array_equal(y, np.float32(2) * x + b)
    np.testing.assert_array_equal(words, h.astype(np.uint32))
    np.testing.assert_array_equal(memcpy_view(words, np.dtype(np.uint16)), h)
    first = h.reshape(W * H, N)[:, 0].astype(np.uint32)  # each PE's h[0], rows of the rectangle
    np.testing.assert_array_equal(twice, np.repeat(first, 2))


def test_a_stream_the_program_does_not_take_is_a_usage_error(tmp_path):
    from cerebras.sdk.runtime.sdkruntimepybind import SdkRuntime
    from wsemu.errors import UsageError

    runner = SdkRuntime(compile_streams(tmp_path, "wse3"))
    runner.load()
    with pytest.raises(UsageError, match="stream 5 at PE.*colors 0, 1"):
        runner.memcpy_h2d(5, np.zeros(N, np.float32), 0, 0, 1, 1, N, streaming=True)


def test_a_layout_route_on_a_stream_color_is_a_load_error(tmp_path):
    from cerebras.sdk.runtime.sdkruntimepybind import SdkRuntime
    from wsemu.errors import UsageError

    runner = SdkRuntime(compile_streams(tmp_path, "wse2", route_h2d_1=1))
    with pytest.raises(UsageError, match="takes host streams on color 0.*which its layout also routes"):
        runner.load()
