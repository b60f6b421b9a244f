"""<message_passing> (wse3, compiler/csl/lib/message_passing.csl): every PE of a rectangle sends
two messages (N 32-bit words, then M 16-bit halves) to the PE a random permutation gives it and
receives the two sent to it; the received buffers are checked against the permutation applied to
the sent ones with numpy. Every PE sends to one PE, which must get every sender's buffer whole,
once. Then the uses the library refuses: a wse2 build, a destination outside the rectangle with
enable_asserts, a buffer of bools."""

import os
import shutil
import subprocess

import numpy as np
import pytest

from conftest import SOURCE_DIR, WSEMU

KERNEL = os.path.join(SOURCE_DIR, "tests/python/kernels/message_passing")


def cslc(out, arch="wse3", W=3, H=3, N=5, M=3, layout=None):
    """Compiles the test kernel (fabric: the rectangle plus the memcpy support PEs); the result."""
    return subprocess.run([WSEMU, "cslc", layout or os.path.join(KERNEL, "layout.csl"), f"--arch={arch}",
                           f"--fabric-dims={W + 4},{H + 2}", "--fabric-offsets=2,1",
                           f"--params=W:{W},H:{H},N:{N},M:{M}", "-o", str(out)],
                          capture_output=True, text=True)


def exchange(runner, dest, out32, out16, W, H, N, M):
    """Runs one exchange; returns (in32, in16, done) read back once every PE counts 4 completions."""
    from cerebras.sdk.runtime.sdkruntimepybind import MemcpyDataType
    m16 = MemcpyDataType.MEMCPY_16BIT
    runner.memcpy_h2d(runner.get_id("dest"), dest.ravel(), 0, 0, W, H, 2)
    runner.memcpy_h2d(runner.get_id("out32"), out32.ravel(), 0, 0, W, H, N)
    runner.memcpy_h2d(runner.get_id("out16"), out16.astype(np.uint32).ravel(), 0, 0, W, H, M, data_type=m16)
    runner.launch("exchange", nonblock=False)
    done = np.zeros(W * H * 4, np.uint32)
    for _ in range(200):  # the sends and receives finish in the background; each read advances
        runner.memcpy_d2h(done, runner.get_id("done"), 0, 0, W, H, 4)
        if np.all(done == 1):
            break
    in32 = np.zeros(W * H * N, np.uint32)
    in16 = np.zeros(W * H * M, np.uint32)
    runner.memcpy_d2h(in32, runner.get_id("in32"), 0, 0, W, H, N)
    runner.memcpy_d2h(in16, runner.get_id("in16"), 0, 0, W, H, M, data_type=m16)
    return in32.reshape(H, W, N), in16.reshape(H, W, M), done.reshape(H, W, 4)


@pytest.mark.parametrize("W,H", [(3, 3), (4, 2), (1, 5), (8, 6)])
def test_every_pe_sends_to_a_permutation(tmp_path, W, H):
    from cerebras.sdk.runtime.sdkruntimepybind import SdkRuntime
    N, M = 5, 3
    r = cslc(tmp_path / "out", W=W, H=H, N=N, M=M)
    assert r.returncode == 0, r.stderr
    rng = np.random.default_rng(W * 10 + H)
    runner = SdkRuntime(str(tmp_path / "out"))
    runner.load()
    runner.run()
    for round_ in range(2):  # twice: the relay and the queues carry on between launches
        perm = rng.permutation(W * H)  # PE i (i = y * W + x) sends to PE perm[i]
        dest = np.stack([perm % W, perm // W], axis=1).astype(np.uint32).reshape(H, W, 2)
        out32 = rng.integers(0, 2**32, (H, W, N), dtype=np.uint64).astype(np.uint32)
        out16 = rng.integers(0, 2**16, (H, W, M), dtype=np.uint32)
        in32, in16, done = exchange(runner, dest, out32, out16, W, H, N, M)
        assert np.all(done == round_ + 1), done
        want32 = np.zeros_like(out32)
        want16 = np.zeros_like(out16)
        for i, d in enumerate(perm):
            want32[d // W, d % W] = out32[i // W, i % W]
            want16[d // W, d % W] = out16[i // W, i % W]
        np.testing.assert_array_equal(in32, want32)
        np.testing.assert_array_equal(in16, want16)
    runner.stop()


@pytest.mark.parametrize("W,H,tx,ty", [(3, 3, 1, 1), (4, 2, 0, 0), (2, 3, 1, 2)])
def test_every_pe_sends_to_one_pe(tmp_path, W, H, tx, ty):
    """Messages to one PE at once arrive whole, one after the other (in the relay's order): the
    target's inbox holds each sender's buffer exactly once."""
    from cerebras.sdk.runtime.sdkruntimepybind import SdkRuntime
    N = 6
    r = cslc(tmp_path / "out", W=W, H=H, N=N, M=1)
    assert r.returncode == 0, r.stderr
    rng = np.random.default_rng(W * 100 + H * 10 + tx)
    runner = SdkRuntime(str(tmp_path / "out"))
    runner.load()
    runner.run()
    dest = np.tile(np.array([tx, ty], np.uint32), (H, W, 1))
    expect = np.zeros((H, W), np.uint32)
    expect[ty, tx] = W * H
    out32 = rng.integers(0, 2**32, (H, W, N), dtype=np.uint64).astype(np.uint32)
    runner.memcpy_h2d(runner.get_id("dest"), dest.ravel(), 0, 0, W, H, 2)
    runner.memcpy_h2d(runner.get_id("expect"), expect.ravel(), 0, 0, W, H, 1)
    runner.memcpy_h2d(runner.get_id("out32"), out32.ravel(), 0, 0, W, H, N)
    runner.launch("gather", nonblock=False)
    gathered = np.zeros(W * H * 2, np.uint32)
    for _ in range(200):
        runner.memcpy_d2h(gathered, runner.get_id("gathered"), 0, 0, W, H, 2)
        if np.all(gathered.reshape(H, W, 2)[..., 0] == 1) and gathered.reshape(H, W, 2)[ty, tx, 1] == W * H:
            break
    inbox = np.zeros(W * H * W * H * N, np.uint32)
    runner.memcpy_d2h(inbox, runner.get_id("inbox"), 0, 0, W, H, W * H * N)
    runner.stop()
    g = gathered.reshape(H, W, 2)
    assert np.all(g[..., 0] == 1), g
    assert g[ty, tx, 1] == W * H and g[..., 1].sum() == W * H, g
    got = inbox.reshape(H, W, W * H, N)[ty, tx]
    # Each received message is one sender's buffer, whole; every sender's exactly once.
    sent = out32.reshape(W * H, N)
    np.testing.assert_array_equal(got[np.lexsort(got.T[::-1])], sent[np.lexsort(sent.T[::-1])])


def test_wse2_import_is_refused(tmp_path):
    r = cslc(tmp_path / "out", arch="wse2")
    assert r.returncode != 0
    assert "<message_passing> is wse3 only" in r.stderr, r.stderr


@pytest.mark.parametrize("case", ["outside", "too_long"])
def test_enable_asserts_stops_the_run_at_the_check(tmp_path, case):
    """enable_asserts: a message to column W, or of more than max_send_words (256) halves, fails at
    the sending PE on the library's line of that check."""
    from cerebras.sdk.runtime.sdkruntimepybind import SdkRuntime
    W, H, M = 2, 2, 1
    N = 2 if case == "outside" else 129  # 258 halves
    r = cslc(tmp_path / "out", W=W, H=H, N=N, M=M)
    assert r.returncode == 0, r.stderr
    runner = SdkRuntime(str(tmp_path / "out"))
    runner.load()
    runner.run()
    dest = np.zeros((H, W, 2), np.uint32)
    dest[1, 1] = [W, 0] if case == "outside" else [0, 0]  # PE (1, 1) sends past the east edge
    with pytest.raises(Exception) as err:
        exchange(runner, dest, np.zeros((H, W, N), np.uint32), np.zeros((H, W, M), np.uint32), W, H, N, M)
    text = str(err.value)
    lib = open(os.path.join(SOURCE_DIR, "compiler/csl/lib/message_passing.csl")).read().splitlines()
    check = "the destination is outside the rectangle" if case == "outside" else "the message does not fit"
    line = next(i + 1 for i, s in enumerate(lib) if check in s)
    pe = "PE(3,2)" if case == "outside" else "PE("  # PE (1, 1) at fabric offsets (2, 1); any PE
    assert f"kernel error at {pe}" in text, text
    assert f"message_passing.csl:{line}:" in text, text
    assert "division by zero" in text, text


def test_buffer_of_another_width_is_refused(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(KERNEL, src)
    pe = (src / "pe.csl").read_text().replace("var out16 = @zeros([M]u16);", "var out16 = @zeros([M]u16);\nvar bad: [M]bool;")
    pe = pe.replace("&out16, M, .{ .activate = sent16_id }", "&bad, M, .{ .activate = sent16_id }")
    (src / "pe.csl").write_text(pe)
    r = cslc(tmp_path / "out", layout=str(src / "layout.csl"))
    assert r.returncode != 0
    assert "buf must point to a 16- or 32-bit type" in r.stderr, r.stderr
