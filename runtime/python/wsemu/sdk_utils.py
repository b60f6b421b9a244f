"""The helpers SDK run scripts import from ``cerebras.sdk.sdk_utils``, written from how the
scripts use them.

* ``memcpy_view(arr, dtype)``: a memcpy buffer of 32-bit words seen as ``dtype``; for a 16-bit
  dtype the low half of each word (where 16-bit memcpy puts the data), one element per word.
* ``input_array_to_u32(np_arr, sentinel, fast_dim_sz)``: 16-bit data widened to the u32 words a
  16-bit memcpy takes: the data in the low half, and in the high half zero (``sentinel`` None
  or 0) or the element's index within its run of ``fast_dim_sz`` elements (otherwise: kernels
  read it as the wavelet's index); 32-bit data as its bits.
* Timestamps of ``<time>`` are 48-bit counters stored as three 16-bit words, low first:
  ``make_u48`` reads one; a kernel's start and end stamps travel as six 16-bit words, or packed
  into three 32-bit words (low half first) in the one f32 buffer the SDK's scripts copy back,
  and ``sub_ts`` (six words) and ``calculate_cycles`` (either form) give end - start, as the
  scripts that call them read it; ``float_to_hex`` prints an f32.

Contract: pure numpy, nothing touches a runtime; wrong dtypes raise wsemu.DtypeError.
"""

import struct

import numpy as np

from wsemu.errors import DtypeError, UsageError


def memcpy_view(arr, dtype):
    """``arr`` (32-bit words, as memcpy_d2h fills them) seen as ``dtype``, without copying."""
    dtype = np.dtype(dtype)
    if not isinstance(arr, np.ndarray) or arr.dtype.itemsize != 4:
        raise DtypeError(f"memcpy_view: takes an array of 32-bit words (uint32), not "
                         f"{getattr(arr, 'dtype', type(arr).__name__)}")
    if dtype.itemsize == 4:
        return arr.view(dtype)
    if dtype.itemsize == 2:
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        # Little-endian words: element i's low half is the 16-bit value i of the view, step 2.
        wide = arr.reshape(-1).view(dtype)[0::2]
        return wide.reshape(arr.shape)
    raise DtypeError(f"memcpy_view: dtype {dtype} is neither a 16- nor a 32-bit type")


def input_array_to_u32(np_arr, sentinel, fast_dim_sz):
    """The u32 words a memcpy of ``np_arr`` takes (see the module's docstring)."""
    if not isinstance(np_arr, np.ndarray):
        raise DtypeError(f"input_array_to_u32: takes a numpy array, not {type(np_arr).__name__}")
    flat = np.ascontiguousarray(np_arr).reshape(-1)
    if flat.dtype.itemsize == 4:
        return flat.view(np.uint32).copy()
    if flat.dtype.itemsize != 2:
        raise DtypeError(f"input_array_to_u32: dtype {flat.dtype} is neither a 16- nor a 32-bit type")
    low = flat.view(np.uint16).astype(np.uint32)
    if not sentinel:
        return low
    if int(fast_dim_sz) <= 0:
        raise UsageError(f"input_array_to_u32: fast_dim_sz must be positive, not {fast_dim_sz}")
    index = (np.arange(flat.size, dtype=np.uint32) % np.uint32(fast_dim_sz)) & np.uint32(0xFFFF)
    return low | (index << np.uint32(16))


def make_u48(words):
    """Three 16-bit words (low first) as one 48-bit integer."""
    return int(words[0]) + (int(words[1]) << 16) + (int(words[2]) << 32)


def sub_ts(words):
    """Cycles from a start stamp (words 0-2) to an end stamp (words 3-5), 16-bit words."""
    if len(words) != 6:
        raise UsageError(f"sub_ts: a start and an end timestamp are 6 words, got {len(words)}")
    return make_u48(words[3:]) - make_u48(words[0:3])


def calculate_cycles(timestamp_buf):
    """end - start of the two stamps in ``timestamp_buf``: three 32-bit words (f32 or integer)
    holding six 16-bit halves, low half first, or the six 16-bit words themselves."""
    buf = np.asarray(timestamp_buf).reshape(-1)
    if buf.dtype == np.float32:
        buf = buf.view(np.uint32)
    elif buf.dtype == np.float16:
        buf = buf.view(np.uint16)
    elif buf.dtype.kind not in "iu":
        raise DtypeError(f"calculate_cycles: timestamps are f32 or integer words, not {buf.dtype}")
    if buf.size == 3:
        words = [int(w) & 0xFFFFFFFF for w in buf]
        halves = [h for w in words for h in (w & 0xFFFF, w >> 16)]
    elif buf.size == 6:
        halves = [int(w) & 0xFFFF for w in buf]
    else:
        raise UsageError("calculate_cycles: a start and an end timestamp are three 32-bit words "
                         f"or six 16-bit words, got {buf.size}")
    return sub_ts(halves)


def float_to_hex(f):
    """The bits of ``f`` as an f32, in hex: float_to_hex(1.0) == '0x3f800000'."""
    return hex(struct.unpack("<I", struct.pack("<f", float(f)))[0])
