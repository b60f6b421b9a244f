"""An exported CSL pointer variable through the SDK's Python API (wsemu python): the host's copies
of "v" follow the pointer that the launched swap() moves between two arrays
(tests/compiler/programs/exported_pointer, a row of three PEs); "fixed", a const pointer, stays on
its array. Values worked by hand from the program's initial arrays."""

import os
import subprocess

import numpy as np
import pytest

from conftest import SOURCE_DIR, WSEMU


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_copies_follow_the_exported_pointer(tmp_path, arch):
    from cerebras.sdk.runtime.sdkruntimepybind import MemcpyDataType, MemcpyOrder, SdkRuntime

    out = str(tmp_path / "out")
    subprocess.run([WSEMU, "cslc", os.path.join(SOURCE_DIR, "tests/compiler/programs/exported_pointer/layout.csl"),
                    f"--arch={arch}", "--fabric-dims=10,3", "--fabric-offsets=4,1", "-o", out],
                   check=True, stdout=subprocess.DEVNULL)
    runner = SdkRuntime(out)
    symbols = {s["name"]: s for s in runner.executable["symbols"]}
    assert symbols["v"]["indirect"] and not symbols["fixed"]["indirect"]
    runner.load()
    runner.run()
    kind, order = MemcpyDataType.MEMCPY_32BIT, MemcpyOrder.ROW_MAJOR

    def read(name):
        got = np.zeros(3 * 4, np.float32)
        runner.memcpy_d2h(got, runner.get_id(name), 0, 0, 3, 1, 4, streaming=False, data_type=kind, order=order,
                          nonblock=False)
        return got.reshape(3, 4)

    second = np.tile(np.float32([10, 20, 30, 40]), (3, 1))
    np.testing.assert_array_equal(read("v"), np.tile(np.float32([1, 2, 3, 4]), (3, 1)))  # v -> first
    written = np.arange(12, dtype=np.float32).reshape(3, 4) + 100
    runner.memcpy_h2d(runner.get_id("v"), written.ravel(), 0, 0, 3, 1, 4, streaming=False, data_type=kind,
                      order=order, nonblock=False)
    runner.launch("swap", nonblock=False)  # v -> second, other -> first
    np.testing.assert_array_equal(read("v"), second)
    np.testing.assert_array_equal(read("fixed"), second)
    runner.launch("swap", nonblock=False)  # v -> first again: what the host wrote through v
    np.testing.assert_array_equal(read("v"), written)
    runner.stop()
