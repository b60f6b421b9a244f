"""The exceptions of the wsemu module.

Every failure of a host call is a ``wsemu.Error`` (a ``RuntimeError``) of one of these kinds, so
that a script can catch what it expects and let the rest propagate:

* ``UsageError`` (also a ``ValueError``): a bad argument, detected before anything was sent to
  the wafer (unknown symbol or function, rectangle outside the symbol's PEs, wrong size).
  ``UnknownSymbolError`` for names the executable does not export, ``DtypeError`` (also a
  ``TypeError``) for arrays of the wrong dtype.
* ``FaultError``: the kernel faulted; ``report`` has the emulator's text (category, PE, cycle,
  PC, instruction, color) and ``category`` its category.
* ``HangError``: nothing could make progress; ``report`` is the hang report (every blocked PE
  with its task and what it waits on, the cycle of waits).
* ``CycleLimitError``: the session reached its ``max_cycles``.
* ``NoHardwareError``: ``cmaddr`` named a real system; wsemu only has the virtual wafer.
"""


class Error(RuntimeError):
    """A failed wsemu host call. ``report`` holds the emulator's report text, if any."""

    def __init__(self, message, report=None, category=None):
        super().__init__(message)
        self.report = report
        self.category = category


class UsageError(Error, ValueError):
    """A bad argument to a host call; the wafer is unchanged."""


class UnknownSymbolError(UsageError):
    """A symbol, function or id the executable does not export."""


class DtypeError(UsageError, TypeError):
    """A numpy array of a dtype the call cannot take."""


class FaultError(Error):
    """The kernel faulted on the wafer (``report``: category, PE, cycle, PC, instruction)."""


class HangError(Error):
    """Nothing on the wafer could make progress (``report``: the hang report)."""


class CycleLimitError(Error):
    """The session reached its cycle limit (``max_cycles``)."""


class NoHardwareError(Error):
    """A real CS system was asked for (``cmaddr``); wsemu runs the virtual wafer only."""
