"""The SDK's debug_util, served by wsemu: post-mortem reads of a finished run.

``debug_util(bindir, cmaddr=None)`` finds the latest SdkRuntime this process opened on
``bindir`` (the SDK reads the simulator's files there instead) and reads its PEs' memory after
``stop()``. Coordinates are fabric coordinates (from the fabric's north-west corner), as in the
SDK, not relative to the kernel's rectangle.
"""

import numpy as np

from wsemu.errors import NoHardwareError, UnknownSymbolError, UsageError
from wsemu.sdk_runtime import _symbol_dtype, _view_words, runtime_for


class debug_util:  # noqa: N801 - the SDK's class name
    def __init__(self, bindir, cmaddr=None):
        if cmaddr is not None:
            raise NoHardwareError(f"debug_util: cmaddr={cmaddr!r} names a real CS system; wsemu has none")
        self._runtime = runtime_for(bindir)
        if self._runtime is None:
            raise UsageError(f"debug_util: no SdkRuntime ran on {bindir!r} in this process; run the program first")

    def _symbol_at(self, px, py, symbol):
        rt = self._runtime
        sym = rt._symbols.get(symbol)
        if sym is None:
            raise UnknownSymbolError(f"debug_util: no exported symbol '{symbol}' (the program exports: "
                                     f"{', '.join(rt._symbols) or 'none'})")
        r = rt.executable["rects"][sym["rect"]]
        x, y = int(px) - r["x"], int(py) - r["y"]
        if not (0 <= x < r["width"] and 0 <= y < r["height"]):
            raise UsageError(f"debug_util: fabric PE ({px}, {py}) is outside rectangle '{r['name']}' of symbol "
                             f"'{symbol}' (at {r['x']}, {r['y']}, {r['width']} x {r['height']})")
        return sym, rt._session.read_symbol(x, y, symbol)

    def get_symbol(self, px, py, symbol, dtype=None):
        """The symbol on fabric PE (px, py), viewed as ``dtype`` (default: its own type)."""
        sym, words = self._symbol_at(px, py, symbol)
        return _view_words(words, np.dtype(dtype) if dtype is not None else _symbol_dtype(sym), "get_symbol")

    def read_trace(self, px, py, name):
        """The entries a <debug> trace buffer recorded on fabric PE (px, py), in order: str for
        trace_string, int for the integer kinds and for trace_timestamp (the 48-bit cycle count),
        float for trace_f32, bool for trace_bool (compiler/csl/lib/debug.csl has the format)."""
        _, words = self._symbol_at(px, py, name)
        words = [int(w) for w in words]
        if not words or words[0] > len(words) - 1:
            raise UsageError(f"debug_util.read_trace: '{name}' on PE ({px}, {py}) is not a <debug> trace buffer "
                             f"(its first word, {words[0] if words else 'none'}, counts more words than it holds)")
        used, pos, out = words[0], 1, []
        while pos < 1 + used:
            kind, n = words[pos] >> 16, words[pos] & 0xFFFF
            payload = words[pos + 1:pos + 1 + n]
            if len(payload) != n or not (1 <= kind <= 8):
                raise UsageError(f"debug_util.read_trace: '{name}' on PE ({px}, {py}): a corrupt entry at word {pos}")
            if kind == 1:
                out.append(b"".join(w.to_bytes(4, "little") for w in payload).split(b"\0", 1)[0].decode("latin-1"))
            elif kind in (2, 5):
                out.append(payload[0])
            elif kind == 3:
                out.append(int(np.array(payload[0], np.uint32).view(np.int32)))
            elif kind == 4:
                out.append(float(np.array(payload[0], np.uint32).view(np.float32)))
            elif kind == 6:
                out.append(int(np.array(payload[0] & 0xFFFF, np.uint16).view(np.int16)))
            elif kind == 7:
                out.append(bool(payload[0]))
            else:
                out.append(payload[0] | (payload[1] << 32))
            pos += 1 + n
        return out
