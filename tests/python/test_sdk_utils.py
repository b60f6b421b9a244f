"""The sdk_utils helpers against hand-worked values, and the SDK module names the shims serve."""

import numpy as np
import pytest

import wsemu
from wsemu import DtypeError


def test_shims_serve_wsemu_under_the_sdk_names():
    from cerebras.sdk.runtime.sdkruntimepybind import MemcpyDataType, MemcpyOrder, SdkRuntime
    from cerebras.sdk import sdk_utils
    from cerebras.sdk.sdk_utils import calculate_cycles, input_array_to_u32, memcpy_view  # noqa: F401
    from cerebras.sdk.debug.debug_util import debug_util  # noqa: F401
    assert SdkRuntime is wsemu.SdkRuntime
    assert MemcpyDataType.MEMCPY_16BIT is wsemu.MemcpyDataType.MEMCPY_16BIT
    assert MemcpyOrder.COL_MAJOR is wsemu.MemcpyOrder.COL_MAJOR
    assert sdk_utils.memcpy_view is wsemu.sdk_utils.memcpy_view


def test_memcpy_view():
    from cerebras.sdk.sdk_utils import memcpy_view
    words = np.array([0xABCD0001, 0x0000FFFF, 0x12343C00], dtype=np.uint32)
    np.testing.assert_array_equal(memcpy_view(words, np.dtype(np.int16)), [1, -1, 0x3C00])
    np.testing.assert_array_equal(memcpy_view(words, np.dtype(np.uint16)), [1, 0xFFFF, 0x3C00])
    assert memcpy_view(words, np.dtype(np.float16))[2] == 1.0  # 0x3C00 is 1.0 in fp16
    f = memcpy_view(np.array([0x3F800000], dtype=np.uint32), np.dtype(np.float32))
    assert f[0] == 1.0
    view = memcpy_view(words, np.dtype(np.uint16))
    words[0] = 7  # a view, not a copy
    assert view[0] == 7
    square = memcpy_view(np.arange(6, dtype=np.uint32).reshape(2, 3), np.dtype(np.int16))
    assert square.shape == (2, 3) and square[1, 2] == 5
    with pytest.raises(DtypeError):
        memcpy_view(np.zeros(2, np.uint16), np.dtype(np.int16))
    with pytest.raises(DtypeError):
        memcpy_view(words, np.dtype(np.float64))


def test_input_array_to_u32():
    from cerebras.sdk.sdk_utils import input_array_to_u32
    data = np.array([1, -1, 3, 4, 5], dtype=np.int16)
    np.testing.assert_array_equal(input_array_to_u32(data, None, 2), [1, 0xFFFF, 3, 4, 5])
    np.testing.assert_array_equal(input_array_to_u32(data, 0, 2), [1, 0xFFFF, 3, 4, 5])
    # A sentinel: the high half holds the element's index within its run of fast_dim_sz.
    np.testing.assert_array_equal(input_array_to_u32(data, 1, 2),
                                  [1, 0x1FFFF, 3, 0x10004, 5])
    half = np.array([1.0, -2.0], dtype=np.float16)
    np.testing.assert_array_equal(input_array_to_u32(half, None, 1), [0x3C00, 0xC000])
    f32 = np.array([1.0, 2.0], dtype=np.float32)
    np.testing.assert_array_equal(input_array_to_u32(f32, None, 1), [0x3F800000, 0x40000000])
    assert input_array_to_u32(data, None, 2).dtype == np.uint32
    with pytest.raises(DtypeError):
        input_array_to_u32(np.zeros(2, np.float64), None, 1)


def test_timestamps():
    from cerebras.sdk.sdk_utils import calculate_cycles, float_to_hex, make_u48, sub_ts
    assert make_u48([0x0001, 0x0002, 0x0003]) == 0x000300020001
    # start 0x0000_0001_FFFF, end 0x0001_0002_0005, worked by hand: 0x100020005 - 0x1FFFF.
    start, end = [0xFFFF, 0x0001, 0x0000], [0x0005, 0x0002, 0x0001]
    assert sub_ts(start + end) == 0x100020005 - 0x1FFFF
    assert calculate_cycles(np.array(start + end, dtype=np.uint16)) == 0x100020005 - 0x1FFFF
    # The same six halves packed low first into three 32-bit words, as a kernel's f32
    # timestamp buffer holds them.
    packed = np.array([0x0001FFFF, 0x00050000, 0x00010002], dtype=np.uint32)
    assert calculate_cycles(packed) == 0x100020005 - 0x1FFFF
    assert calculate_cycles(packed.view(np.float32)) == 0x100020005 - 0x1FFFF
    assert float_to_hex(1.0) == "0x3f800000"
    with pytest.raises(ValueError):
        calculate_cycles([1, 2])
    with pytest.raises(ValueError):
        sub_ts([1, 2, 3])
    with pytest.raises(DtypeError):
        calculate_cycles(np.zeros(3, np.float64))
