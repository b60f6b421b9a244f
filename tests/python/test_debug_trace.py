"""debug_util.read_trace: <debug> trace buffers read back after a run, by name, although the
layout exports only the launched function (as the SDK's topic-12 does). The expected entries are
the ones tests/python/kernels/debug_trace/pe.csl records, written out by hand."""

import os
import subprocess

import pytest

from conftest import SOURCE_DIR, WSEMU


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_read_trace_decodes_every_entry_kind(tmp_path, arch):
    from cerebras.sdk.debug.debug_util import debug_util
    from cerebras.sdk.runtime.sdkruntimepybind import SdkRuntime
    from wsemu.errors import UnknownSymbolError, UsageError

    out = str(tmp_path / "out")
    subprocess.run([WSEMU, "cslc", os.path.join(SOURCE_DIR, "tests/python/kernels/debug_trace/layout.csl"),
                    f"--arch={arch}", "--fabric-dims=5,3", "--fabric-offsets=2,1", "-o", out], check=True)
    runner = SdkRuntime(out)
    runner.load()
    runner.run()
    runner.launch("record", nonblock=False)
    cycles = runner.cycles()
    runner.stop()

    dbg = debug_util(out)
    for x in range(2):
        # Fabric coordinates: the rectangle starts at (2, 1).
        assert dbg.read_trace(2 + x, 1, "trace") == ["begin", 100 + x, -7, 1.5, 65535, -2, True, "end"]
        t0, t1 = dbg.read_trace(2 + x, 1, "times")
        assert 0 < t0 < t1 < cycles
    with pytest.raises(UnknownSymbolError):
        dbg.read_trace(2, 1, "no_such_buffer")
    with pytest.raises(UsageError):
        dbg.read_trace(0, 0, "trace")  # outside the kernel
