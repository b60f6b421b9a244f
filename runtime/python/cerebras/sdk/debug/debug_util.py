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
        """The entries a <debug> trace buffer recorded on fabric PE (px, py)."""
        raise NotImplementedError(
            "debug_util.read_trace: wsemu's <debug> library (its trace buffer format) is not written yet; "
            "read the buffer with get_symbol(px, py, name) meanwhile")
