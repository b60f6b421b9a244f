"""Every bad call is a clear Python exception of wsemu.errors (never a crash), and the wafer's
failures (hang, fault, cycle limit) carry the emulator's report."""

import numpy as np
import pytest

import wsemu
from wsemu import (CycleLimitError, DtypeError, FaultError, HangError, NoHardwareError, UnknownSymbolError,
                   UsageError)
from conftest import GEMV01, GEMV09, HOST_API


@pytest.fixture
def gemv01(kernels):
    runner = wsemu.SdkRuntime(kernels(GEMV01))
    runner.load()
    return runner


def test_constructor_errors(kernels, tmp_path):
    bindir = kernels(GEMV01)
    with pytest.raises(NoHardwareError, match="no hardware"):
        wsemu.SdkRuntime(bindir, cmaddr="10.0.0.1:9000")
    wsemu.SdkRuntime(bindir, cmaddr=None)  # what run scripts pass without --cmaddr
    wsemu.SdkRuntime(bindir, cmaddr="")  # single-tile-matvec's run.py defaults --cmaddr to ""
    with pytest.raises(FileNotFoundError, match="out.wsx"):
        wsemu.SdkRuntime(str(tmp_path / "missing"))
    with pytest.raises(TypeError, match="no_such_option"):
        wsemu.SdkRuntime(bindir, no_such_option=False)
    with pytest.raises(TypeError, match="get_platform"):
        wsemu.SdkRuntime(bindir, "wse2")  # SdkLayout's second argument is a platform
    with pytest.raises(UsageError, match="simfab_numthreads"):
        wsemu.SdkRuntime(bindir, simfab_numthreads=0)
    with pytest.raises(UsageError, match="msg_level"):
        wsemu.SdkRuntime(bindir, msg_level="LOUD")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "out.wsx").write_bytes(b"not an executable")
    with pytest.raises(Exception, match="out.wsx"):
        wsemu.SdkRuntime(str(tmp_path / "bad"))


def test_unknown_symbols_and_ids(gemv01):
    with pytest.raises(UnknownSymbolError, match="'nope' is not exported.*A, x, b, y, compute"):
        gemv01.get_id("nope")
    assert isinstance(UnknownSymbolError("m"), ValueError)
    with pytest.raises(UnknownSymbolError, match="999 is not an id"):
        gemv01.memcpy_h2d(999, np.zeros(4, np.float32), 0, 0, 1, 1, 4)
    with pytest.raises(UnknownSymbolError, match="no exported symbol 'q'"):
        gemv01.memcpy_d2h(np.zeros(4, np.float32), "q", 0, 0, 1, 1, 4)
    with pytest.raises(UnknownSymbolError, match="no exported function 'main'.*compute"):
        gemv01.launch("main")
    with pytest.raises(UnknownSymbolError, match="no exported symbol"):
        gemv01.read_symbol(0, 0, "nope")
    with pytest.raises(UnknownSymbolError):
        gemv01.memcpy_h2d("nope", np.zeros(4, np.float32), 0, 0, 1, 1, 4, streaming=True)


def test_wrong_dtypes(gemv01):
    y_id = gemv01.get_id("y")
    for bad in (np.zeros(4, np.float64), np.zeros(4, np.int64), np.zeros(4, np.int8), np.zeros(4, bool),
                np.zeros(4, np.float16)):
        with pytest.raises(DtypeError, match="dtype"):
            gemv01.memcpy_h2d(gemv01.get_id("b"), bad, 0, 0, 1, 1, 4)
        with pytest.raises(TypeError):
            gemv01.memcpy_d2h(bad, y_id, 0, 0, 1, 1, 4)
    with pytest.raises(DtypeError, match="numpy array"):
        gemv01.memcpy_h2d("b", [1.0, 2.0, 3.0, 4.0], 0, 0, 1, 1, 4)
    with pytest.raises(DtypeError, match="not an integer"):
        gemv01.memcpy_h2d("b", np.zeros(4, np.float32), 0.5, 0, 1, 1, 4)
    with pytest.raises(DtypeError, match="MemcpyDataType"):
        gemv01.memcpy_h2d("b", np.zeros(4, np.float32), 0, 0, 1, 1, 4, data_type=7)
    with pytest.raises(UsageError, match="use MEMCPY_32BIT"):  # f32 symbol, 16-bit copy
        gemv01.memcpy_h2d("b", np.zeros(4, np.uint32), 0, 0, 1, 1, 4, data_type=wsemu.MemcpyDataType.MEMCPY_16BIT)
    with pytest.raises(DtypeError, match="launch argument type"):
        gemv01.launch("compute", "seven")
    with pytest.raises(DtypeError):
        gemv01.read_symbol(0, 0, "y", dtype=np.float64)


def test_wrong_sizes_and_rectangles(gemv01):
    with pytest.raises(UsageError, match="4 elements, but the data holds 3"):
        gemv01.memcpy_h2d("b", np.zeros(3, np.float32), 0, 0, 1, 1, 4)
    with pytest.raises(UsageError, match="but the output holds 5"):
        gemv01.memcpy_d2h(np.zeros(5, np.float32), "y", 0, 0, 1, 1, 4)
    with pytest.raises(UsageError, match="outside rectangle"):
        gemv01.memcpy_h2d("b", np.zeros(4, np.float32), 1, 0, 1, 1, 4)
    with pytest.raises(UsageError, match="outside rectangle"):
        gemv01.memcpy_d2h(np.zeros(8, np.float32), "y", 0, 0, 1, 2, 4)
    with pytest.raises(UsageError, match="must be positive"):
        gemv01.memcpy_h2d("b", np.zeros(0, np.float32), 0, 0, 0, 1, 4)
    with pytest.raises(UsageError, match="holds 4 per PE"):
        gemv01.memcpy_h2d("b", np.zeros(5, np.float32), 0, 0, 1, 1, 5)
    with pytest.raises(UsageError, match="out of range"):
        gemv01.memcpy_h2d("b", np.zeros(4, np.float32), 2**31 - 1, 0, 2, 1, 4)
    with pytest.raises(UsageError, match="not a cycle count"):
        gemv01.run_cycles(-1)
    with pytest.raises(UsageError, match="outside rectangle"):
        gemv01.read_symbol(0, 1, "y")
    with pytest.raises(UsageError, match="3 x 3 fabric"):
        gemv01.core_text(3, 0)
    with pytest.raises(UsageError, match="C-contiguous"):
        gemv01.memcpy_d2h(np.zeros(8, np.float32)[::2], "y", 0, 0, 1, 1, 4)
    ro = np.zeros(4, np.float32)
    ro.flags.writeable = False
    with pytest.raises(UsageError, match="read-only"):
        gemv01.memcpy_d2h(ro, "y", 0, 0, 1, 1, 4)
    with pytest.raises(UsageError, match="at most 8"):
        gemv01.launch("compute", *range(9))
    with pytest.raises(UsageError, match="does not fit in 32 bits"):
        gemv01.launch("compute", 1 << 32)
    with pytest.raises(UsageError, match="not a 32-bit word"):
        gemv01.call("compute", [-(1 << 40)])
    with pytest.raises(UsageError, match="not a task"):
        gemv01.task_wait("task 1")


def test_the_order_of_calls(kernels):
    runner = wsemu.SdkRuntime(kernels(GEMV01))
    with pytest.raises(UsageError, match="load"):
        runner.run()
    with pytest.raises(UsageError, match="load"):
        runner.memcpy_h2d("b", np.zeros(4, np.float32), 0, 0, 1, 1, 4)
    runner.load()
    with pytest.raises(UsageError, match="already loaded"):
        runner.load()
    runner.stop()
    runner.stop()  # a second stop does nothing
    with pytest.raises(UsageError, match="stopped"):
        runner.launch("compute")


def test_usage_errors_leave_the_wafer_unchanged(gemv01):
    before = gemv01.cycles()
    with pytest.raises(UsageError):
        gemv01.memcpy_h2d("b", np.zeros(3, np.float32), 0, 0, 1, 1, 4)
    assert gemv01.cycles() == before
    gemv01.memcpy_h2d("b", np.ones(4, np.float32), 0, 0, 1, 1, 4)  # still usable
    np.testing.assert_array_equal(gemv01.read_symbol(0, 0, "b"), np.ones(4, np.float32))


def test_stream_nobody_reads_is_a_hang_with_the_report(kernels):
    runner = wsemu.SdkRuntime(kernels(GEMV09, M=6, N=8, kx=4, ky=3))
    runner.load()
    # init was never launched: no kernel reads the stream; once the input queue is full, the
    # firmware cannot deliver the rest.
    with pytest.raises(HangError) as e:
        runner.memcpy_h2d("gemv", np.zeros(64, np.float32), 0, 0, 1, 1, 64, streaming=True)
    assert str(e.value).startswith("memcpy_h2d gemv: hang at cycle")
    assert e.value.report and "PE(1,1)" in e.value.report and "color 23" in e.value.report
    assert e.value.report in str(e.value)


def test_a_blocked_kernel_is_a_hang_at_run_until_quiescent(kernels):
    runner = wsemu.SdkRuntime(kernels(HOST_API))
    runner.load()
    runner.launch("wait_forever")  # waiting is not an error while the host may still send
    assert "PE(1,1)" in runner.hang_report()
    with pytest.raises(HangError) as e:
        runner.run_until_quiescent()
    assert "color 3" in e.value.report


def test_a_kernel_fault_raises_fault_error(kernels):
    runner = wsemu.SdkRuntime(kernels(HOST_API))
    runner.load()
    with pytest.raises(FaultError) as e:
        runner.launch("fault")
    assert e.value.category == "kernel error"
    assert "PE(1,1)" in e.value.report and "ld32" in e.value.report


def test_cycle_limit(kernels):
    runner = wsemu.SdkRuntime(kernels(GEMV01), max_cycles=50)
    with pytest.raises(CycleLimitError, match="cycle limit"):
        runner.load()
        runner.memcpy_h2d("A", np.zeros(24, np.float32), 0, 0, 1, 1, 24)


def test_two_threads_on_one_runtime_never_crash(kernels):
    """The wafer runs without the GIL: a second thread's call while one is running is refused."""
    import threading

    runner = wsemu.SdkRuntime(kernels(GEMV01))
    runner.load()
    refused, unexpected = [], []

    def copy_many(name, size):
        for _ in range(200):
            try:
                runner.memcpy_h2d(name, np.ones(size, np.float32), 0, 0, 1, 1, size)
                runner.stats_json()
            except UsageError as e:
                refused.append(str(e))
            except Exception as e:  # noqa: BLE001 - anything else is the failure under test
                unexpected.append(repr(e))

    threads = [threading.Thread(target=copy_many, args=a) for a in (("A", 24), ("b", 4))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not unexpected
    assert all("another thread" in m for m in refused)
    runner.memcpy_h2d("b", np.ones(4, np.float32), 0, 0, 1, 1, 4)  # usable afterwards
    np.testing.assert_array_equal(runner.read_symbol(0, 0, "b"), np.ones(4, np.float32))
