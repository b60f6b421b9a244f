"""A `var` DSD streaming to the host, FIFO to FIFO in the background and globals named nowhere
(tests/python/kernels/edge_forward, the shape of the SDK's pipeline-03): PE (0, 0) sends 3 * x
east; the edge PE (1, 0) forwards it through a FIFO into the host stream. Reference: numpy's
3 * x (one exact f32 multiply each). Changing such a DSD is a compile error at its line."""

import os
import shutil
import subprocess

import numpy as np
import pytest

from conftest import SOURCE_DIR, WSEMU

N = 12
KERNEL = os.path.join(SOURCE_DIR, "tests/python/kernels/edge_forward")


def cslc(layout, arch, out):
    return subprocess.run([WSEMU, "cslc", layout, f"--arch={arch}", "--fabric-dims=9,3", "--fabric-offsets=4,1",
                           "--memcpy", "-o", out, f"--params=N:{N},D2H_1:1"], capture_output=True, text=True)


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_the_edge_pe_forwards_into_the_host_stream(tmp_path, rng, arch):
    from cerebras.sdk.runtime.sdkruntimepybind import MemcpyDataType, MemcpyOrder, SdkRuntime

    out = str(tmp_path / "out")
    r = cslc(os.path.join(KERNEL, "layout.csl"), arch, out)
    assert r.returncode == 0, r.stderr
    x = rng.standard_normal(N).astype(np.float32)
    f32, rows = MemcpyDataType.MEMCPY_32BIT, MemcpyOrder.ROW_MAJOR
    runner = SdkRuntime(out)
    runner.load()
    runner.run()
    runner.memcpy_h2d(runner.get_id("x"), x, 0, 0, 1, 1, N, streaming=False, data_type=f32, order=rows, nonblock=False)
    runner.launch("send", nonblock=False)
    y = np.zeros(N, np.float32)
    runner.memcpy_d2h(y, 1, 1, 0, 1, 1, N, streaming=True, data_type=f32, order=rows, nonblock=False)
    runner.stop()
    np.testing.assert_array_equal(y, np.float32(3) * x)


def test_changing_a_dsd_that_streams_to_the_host_is_a_compile_error(tmp_path):
    kernel = tmp_path / "k"
    shutil.copytree(KERNEL, kernel)
    edge = kernel / "edge.csl"
    text = edge.read_text()
    text = text.replace("  @mov32(to_host, fifo, .{ .async = true });",
                        "  to_host = @set_dsd_length(to_host, 4);\n  @mov32(to_host, fifo, .{ .async = true });")
    edge.write_text(text)
    line = text.splitlines().index("  to_host = @set_dsd_length(to_host, 4);") + 1
    r = cslc(str(kernel / "layout.csl"), "wse2", str(tmp_path / "out"))
    assert r.returncode == 2  # wsemu cslc: any error in the program
    assert f"edge.csl:{line}:3: error: unsupported: changing DSD variable 'to_host', which streams to the host" in r.stderr
