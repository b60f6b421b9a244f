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


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
@pytest.mark.parametrize("col_major", [False, True], ids=["row", "col"])
def test_streamed_row_and_column_broadcasts(tmp_path, rng, arch, col_major):
    """memcpy_h2d_rowbcast / colbcast with streaming=True: every PE of row y takes row y's x on
    stream 1, every PE of column x takes column x's b on stream 2; y = 2 x[row] + b[column]."""
    from cerebras.sdk.runtime.sdkruntimepybind import MemcpyDataType, MemcpyOrder, SdkRuntime

    out = compile_streams(tmp_path, arch, (0, 1))
    x_rows = rng.standard_normal((H, N)).astype(np.float32)
    b_cols = rng.standard_normal((W, N)).astype(np.float32)
    f32, u16 = MemcpyDataType.MEMCPY_32BIT, MemcpyDataType.MEMCPY_16BIT
    order = MemcpyOrder.COL_MAJOR if col_major else MemcpyOrder.ROW_MAJOR
    ravel = "F" if col_major else "C"
    runner = SdkRuntime(out)
    runner.load()
    runner.run()
    runner.launch("start", nonblock=False)
    runner.memcpy_h2d_rowbcast(0, x_rows.ravel(order=ravel), 0, 0, W, H, N, streaming=True, data_type=f32,
                               order=order, nonblock=False)
    runner.memcpy_h2d_colbcast(1, b_cols.ravel(order=ravel), 0, 0, W, H, N, streaming=True, data_type=f32,
                               order=order, nonblock=False)
    y = np.zeros((H, W, N), np.float32)
    runner.memcpy_d2h(y, 2, 0, 0, W, H, N, streaming=True, data_type=f32, order=MemcpyOrder.ROW_MAJOR,
                      nonblock=False)
    rest = np.zeros(W * H * (N + 2), np.uint32)  # h, then h[0] twice: drained, not checked here
    runner.memcpy_d2h(rest[:W * H * N], 2, 0, 0, W, H, N, streaming=True, data_type=u16, nonblock=False)
    runner.memcpy_d2h(rest[W * H * N:], 2, 0, 0, W, H, 2, streaming=True, data_type=u16, nonblock=False)
    runner.stop()
    expected = np.float32(2) * x_rows[:, None, :] + b_cols[None, :, :]
    np.testing.assert_array_equal(y, expected)

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


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_a_16_bit_stream_keeps_the_high_half_of_each_word(tmp_path, rng, arch):
    """MEMCPY_16BIT streaming delivers whole u32 words: a data task with two u16 parameters
    (tests/python/kernels/indexed_stream) reads the element from the low half and its index from
    the high half, as the SDK's wide-multiplication does with input_array_to_u32's indices. The
    words go out in a shuffled order; numpy files each value at its index."""
    from cerebras.sdk.runtime.sdkruntimepybind import MemcpyDataType, MemcpyOrder, SdkRuntime
    from cerebras.sdk.sdk_utils import input_array_to_u32

    n = 6
    out = str(tmp_path / "out")
    subprocess.run([WSEMU, "cslc", os.path.join(SOURCE_DIR, "tests/python/kernels/indexed_stream/layout.csl"),
                    f"--arch={arch}", "--fabric-dims=9,4", "--fabric-offsets=4,1", "--memcpy", "-o", out,
                    f"--params=W:{W},H:{H},N:{n},H2D:3"], check=True, stdout=subprocess.DEVNULL)
    values = rng.integers(0, 1 << 16, (H, W, n)).astype(np.uint16)
    order = np.stack([rng.permutation(n) for _ in range(W * H)]).reshape(H, W, n)
    words = values.astype(np.uint32) | (order.astype(np.uint32) << 16)
    u16 = MemcpyDataType.MEMCPY_16BIT
    runner = SdkRuntime(out)
    runner.load()
    runner.run()
    runner.memcpy_h2d(3, words.ravel(), 0, 0, W, H, n, streaming=True, data_type=u16,
                      order=MemcpyOrder.ROW_MAJOR, nonblock=False)
    filed = np.zeros((H, W, n), np.uint16)
    runner.memcpy_d2h(filed, "filed", 0, 0, W, H, n, data_type=u16)
    # input_array_to_u32 with a sentinel: the index of each element within its run of n
    ascending = rng.integers(0, 1 << 16, (H, W, n)).astype(np.uint16)
    runner.memcpy_h2d(3, input_array_to_u32(ascending.ravel(), 1, n), 0, 0, W, H, n, streaming=True,
                      data_type=u16, order=MemcpyOrder.ROW_MAJOR, nonblock=False)
    again = np.zeros((H, W, n), np.uint16)
    runner.memcpy_d2h(again, "filed", 0, 0, W, H, n, data_type=u16)
    count = np.zeros((H, W, 1), np.uint16)
    runner.memcpy_d2h(count, "count", 0, 0, W, H, 1, data_type=u16)
    runner.stop()
    expected = np.zeros((H, W, n), np.uint16)
    np.put_along_axis(expected, order, values, axis=2)
    np.testing.assert_array_equal(filed, expected)
    np.testing.assert_array_equal(again, ascending)
    np.testing.assert_array_equal(count, np.full((H, W, 1), 2 * n))
