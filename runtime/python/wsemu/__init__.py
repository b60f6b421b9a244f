"""wsemu: the Cerebras SDK's host API (SdkRuntime) over wsemu's virtual wafer.

    import numpy as np
    import wsemu
    rt = wsemu.SdkRuntime("out")            # out/out.wsx, from `wsemu cslc` or `wsemu build`
    rt.load(); rt.run()
    rt.memcpy_h2d(rt.get_id("x"), x, 0, 0, 1, 1, x.size)
    rt.launch("compute")
    rt.memcpy_d2h(y, rt.get_id("y"), 0, 0, 1, 1, y.size)
    rt.stop()
    print(rt.cycles(), rt.stats()["host"]["memcpy_cycles"])

SDK scripts import the same classes under the SDK's names (cerebras.sdk.runtime.sdkruntimepybind,
cerebras.sdk.sdk_utils, cerebras.sdk.debug.debug_util); `wsemu python run.py` puts both on the
path. See runtime/python/README.md.
"""

from wsemu.errors import (CycleLimitError, DtypeError, Error, FaultError, HangError, NoHardwareError,
                          UnknownSymbolError, UsageError)
from wsemu.sdk_runtime import MemcpyDataType, MemcpyOrder, SdkRuntime, SymbolId, Task
from wsemu import sdk_utils

__all__ = ["SdkRuntime", "MemcpyDataType", "MemcpyOrder", "SymbolId", "Task", "sdk_utils", "Error", "UsageError",
           "UnknownSymbolError", "DtypeError", "FaultError", "HangError", "CycleLimitError", "NoHardwareError"]


def _exit_codes_for_uncaught_errors():
    """Under `wsemu python`: an uncaught wsemu error ends the script with `wsemu run`'s exit codes."""
    import os
    import sys
    import traceback

    codes = ((UsageError, 2), (FaultError, 3), (HangError, 4), (CycleLimitError, 5), (NoHardwareError, 2))
    previous = sys.excepthook

    def hook(kind, value, tb):
        for cls, code in codes:
            if isinstance(value, cls):
                traceback.print_exception(kind, value, tb)
                from wsemu.sdk_runtime import _finish_all
                _finish_all()  # os._exit skips atexit: close traces, write stats first
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        previous(kind, value, tb)

    sys.excepthook = hook


import os as _os

if _os.environ.get("WSEMU_PYTHON_CLI"):
    _exit_codes_for_uncaught_errors()

