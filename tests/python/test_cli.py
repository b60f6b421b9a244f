"""`wsemu python SCRIPT`: an SDK-style run script runs unchanged; exit codes; --stats and --trace;
and the same kernel run through `wsemu python` and `wsemu run` gives identical outputs and cycles."""

import json
import subprocess
import sys
import textwrap

import numpy as np

from conftest import GEMV01, GEMV09, SOURCE_DIR, WSEMU

SDK_STYLE_GEMV09 = textwrap.dedent("""\
    import argparse
    import json
    import numpy as np
    from cerebras.sdk.runtime.sdkruntimepybind import SdkRuntime, MemcpyDataType, MemcpyOrder

    parser = argparse.ArgumentParser()
    parser.add_argument("--name", help="the compile output dir")
    parser.add_argument("--cmaddr", help="IP:port of a CS system")
    args = parser.parse_args()

    M, N, kx, ky = 6, 8, 4, 3
    MT, NT = M // ky, N // kx
    rng = np.random.default_rng(5)
    A = rng.standard_normal((M, N)).astype(np.float32)
    x = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(M).astype(np.float32)

    runner = SdkRuntime(args.name, cmaddr=args.cmaddr)
    A_symbol = runner.get_id("A")
    runner.load()
    runner.run()
    A_tiles = A.reshape(ky, MT, kx, NT).transpose(0, 2, 1, 3).ravel()
    runner.memcpy_h2d(A_symbol, A_tiles, 0, 0, kx, ky, MT * NT, streaming=False,
                      order=MemcpyOrder.ROW_MAJOR, data_type=MemcpyDataType.MEMCPY_32BIT, nonblock=False)
    runner.launch("init", nonblock=False)
    runner.memcpy_h2d(1, x, 0, 0, kx, 1, NT, streaming=True, order=MemcpyOrder.ROW_MAJOR,
                      data_type=MemcpyDataType.MEMCPY_32BIT, nonblock=True)
    runner.memcpy_h2d(2, b, kx - 1, 0, 1, ky, MT, streaming=True, order=MemcpyOrder.ROW_MAJOR,
                      data_type=MemcpyDataType.MEMCPY_32BIT, nonblock=True)
    y = np.zeros(M, np.float32)
    runner.memcpy_d2h(y, 3, kx - 1, 0, 1, ky, MT, streaming=True, order=MemcpyOrder.ROW_MAJOR,
                      data_type=MemcpyDataType.MEMCPY_32BIT, nonblock=False)
    runner.stop()
    np.testing.assert_allclose(y, A.astype(np.float64) @ x + b, rtol=1e-5, atol=1e-5)
    print("SUCCESS!")
""")


def wsemu(*args, cwd=None):
    return subprocess.run([WSEMU, *map(str, args)], capture_output=True, text=True, cwd=cwd)


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_help_and_usage():
    r = wsemu("python", "--help")
    assert r.returncode == 0 and "SCRIPT" in r.stdout and "cs_python" in r.stdout
    r = wsemu("python")
    assert r.returncode == 2 and "no SCRIPT" in r.stderr


def test_sdk_style_script_runs_unchanged(kernels, tmp_path):
    bindir = kernels(GEMV09, M=6, N=8, kx=4, ky=3)
    script = write(tmp_path / "run.py", SDK_STYLE_GEMV09)
    r = wsemu("python", script, "--name", bindir)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("SUCCESS!")
    assert "wsemu python: " in r.stderr and " cycles = " in r.stderr


def test_exit_codes(kernels, tmp_path):
    r = wsemu("python", write(tmp_path / "seven.py", "import sys\nprint(sys.argv[1:])\nsys.exit(7)\n"), "a", "--b")
    assert r.returncode == 7 and "['a', '--b']" in r.stdout
    hang = write(tmp_path / "hang.py", textwrap.dedent(f"""\
        import numpy as np
        from cerebras.sdk.runtime.sdkruntimepybind import SdkRuntime
        r = SdkRuntime({kernels(GEMV09, M=6, N=8, kx=4, ky=3)!r})
        r.load()
        r.memcpy_h2d("gemv", np.zeros(64, np.float32), 0, 0, 1, 1, 64, streaming=True)
    """))
    r = wsemu("python", "--stats", tmp_path / "hang.json", hang)
    assert r.returncode == 4 and "HangError" in r.stderr and "PE(1,1)" in r.stderr
    assert json.loads((tmp_path / "hang.json").read_text())["host"]["cycles"] > 0  # written at the failure
    usage = write(tmp_path / "usage.py", "import wsemu\nwsemu.SdkRuntime('.', cmaddr='1.2.3.4:9000')\n")
    r = wsemu("python", usage)
    assert r.returncode == 2 and "no hardware" in r.stderr
    r = wsemu("python", "--max-cycles", 50, write(tmp_path / "long.py", textwrap.dedent(f"""\
        import numpy as np
        from cerebras.sdk.runtime.sdkruntimepybind import SdkRuntime
        r = SdkRuntime({kernels(GEMV01)!r})
        r.load()
        r.memcpy_h2d("A", np.zeros(24, np.float32), 0, 0, 1, 1, 24)
    """)))
    assert r.returncode == 5 and "CycleLimitError" in r.stderr
    r = wsemu("python", tmp_path / "missing.py")
    assert r.returncode != 0


def test_python_and_run_give_identical_outputs_and_cycles(kernels, tmp_path, rng):
    bindir = kernels(GEMV01)
    M, N = 4, 6
    A = rng.standard_normal((M, N)).astype(np.float32)
    x = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(M).astype(np.float32)
    for name, data in (("A", A.ravel()), ("x", x), ("b", b)):
        np.save(tmp_path / f"{name}.npy", data)
    r = wsemu("run", f"{bindir}/out.wsx", "--in", f"A={tmp_path}/A.npy", "--in", f"x={tmp_path}/x.npy",
              "--in", f"b={tmp_path}/b.npy", "--out", f"y={tmp_path}/y_run.npy", "--stats", tmp_path / "run.json")
    assert r.returncode == 0, r.stderr
    run_line = [line for line in r.stdout.splitlines() if line.startswith("wsemu run: ")][0]

    # The sequence of `wsemu run`, written as a host script.
    script = write(tmp_path / "same.py", textwrap.dedent(f"""\
        import numpy as np
        from cerebras.sdk.runtime.sdkruntimepybind import SdkRuntime
        r = SdkRuntime({bindir!r})
        r.load()
        r.run()
        for name in "Axb":
            data = np.load({str(tmp_path)!r} + f"/{{name}}.npy")
            r.memcpy_h2d(r.get_id(name), data, 0, 0, 1, 1, data.size)
        r.launch("compute")
        r.run_until_quiescent()
        y = np.zeros({M}, np.float32)
        r.memcpy_d2h(y, r.get_id("y"), 0, 0, 1, 1, {M})
        np.save({str(tmp_path)!r} + "/y_python.npy", y)
        r.stop()
    """))
    r = wsemu("python", "--stats", tmp_path / "python.json", "--trace", tmp_path / "python.wstrace", script)
    assert r.returncode == 0, r.stderr
    python_line = [line for line in r.stderr.splitlines() if line.startswith("wsemu python: ") and "cycles" in line][0]

    y_run, y_python = np.load(tmp_path / "y_run.npy"), np.load(tmp_path / "y_python.npy")
    np.testing.assert_array_equal(y_run.view(np.uint32), y_python.view(np.uint32))
    np.testing.assert_allclose(y_python, A.astype(np.float64) @ x + b, rtol=1e-5, atol=1e-5)
    stats_run = json.loads((tmp_path / "run.json").read_text())
    stats_python = json.loads((tmp_path / "python.json").read_text())
    assert stats_run["host"]["cycles"] > 0
    assert stats_python == stats_run  # every counter, every phase, every cycle
    assert python_line.removeprefix("wsemu python: ") == run_line.removeprefix("wsemu run: ")
    summary = wsemu("trace", tmp_path / "python.wstrace", "summary")
    assert summary.returncode == 0, summary.stderr


def test_csl_kernel_compiled_by_cslc_runs_an_sdk_style_script(tmp_path):
    """The SDK's flow end to end: wsemu's own CSL gemv-01, `wsemu cslc` with the SDK's options,
    and a run script that reads out.json and drives SdkRuntime, through `wsemu python`."""
    out = tmp_path / "out"
    r = wsemu("cslc", f"{SOURCE_DIR}/kernels/gemv-01-single-pe/csl/layout.csl", "--arch=wse3", "--fabric-dims=8,3",
              "--fabric-offsets=4,1", "--params=M:5,N:3", "-o", out, "--memcpy", "--channels", "1")
    assert r.returncode == 0, r.stderr
    script = write(tmp_path / "run.py", textwrap.dedent("""\
        import argparse
        import json
        import numpy as np
        from cerebras.sdk.runtime.sdkruntimepybind import SdkRuntime, MemcpyDataType, MemcpyOrder

        parser = argparse.ArgumentParser()
        parser.add_argument("--name")
        parser.add_argument("--cmaddr")
        args = parser.parse_args()
        with open(f"{args.name}/out.json", encoding="utf-8") as f:
            params = json.load(f)["params"]
        M, N = int(params["M"]), int(params["N"])
        rng = np.random.default_rng(3)
        A = rng.standard_normal((M, N)).astype(np.float32)
        x = rng.standard_normal(N).astype(np.float32)
        b = rng.standard_normal(M).astype(np.float32)
        runner = SdkRuntime(args.name, cmaddr=args.cmaddr)
        syms = [runner.get_id(s) for s in ("A", "x", "b", "y")]
        runner.load()
        runner.run()
        for sym, data in zip(syms, (A.ravel(), x, b)):
            runner.memcpy_h2d(sym, data, 0, 0, 1, 1, data.size, streaming=False, order=MemcpyOrder.ROW_MAJOR,
                              data_type=MemcpyDataType.MEMCPY_32BIT, nonblock=False)
        runner.launch("compute", nonblock=False)
        y = np.zeros(M, np.float32)
        runner.memcpy_d2h(y, syms[3], 0, 0, 1, 1, M, streaming=False, order=MemcpyOrder.ROW_MAJOR,
                          data_type=MemcpyDataType.MEMCPY_32BIT, nonblock=False)
        runner.stop()
        np.testing.assert_allclose(y, A.astype(np.float64) @ x + b, rtol=1e-5, atol=1e-5)
        print("SUCCESS!")
    """))
    r = wsemu("python", script, "--name", out, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS!" in r.stdout and "(wse3 8x3;" in r.stderr


def test_threads_give_identical_results(kernels, tmp_path):
    bindir = kernels(GEMV09, M=6, N=8, kx=4, ky=3)
    script = write(tmp_path / "run.py", SDK_STYLE_GEMV09)
    stats = []
    for threads in (1, 3):
        out = tmp_path / f"stats{threads}.json"
        r = wsemu("python", "--threads", threads, "--stats", out, script, "--name", bindir)
        assert r.returncode == 0, r.stderr
        stats.append(json.loads(out.read_text()))
    assert stats[0] == stats[1]


if __name__ == "__main__":
    sys.exit("run with pytest")


def test_profile_overrides_reach_the_runtime_as_in_wsemu_run(kernels, tmp_path):
    bindir = kernels(GEMV01)
    script = write(tmp_path / "gemv.py", textwrap.dedent(f"""\
        import numpy as np
        from cerebras.sdk.runtime.sdkruntimepybind import SdkRuntime
        r = SdkRuntime({bindir!r})
        r.load()
        r.run()
        for name, n in (("A", 24), ("x", 6), ("b", 4)):
            r.memcpy_h2d(r.get_id(name), np.ones(n, np.float32), 0, 0, 1, 1, n)
        r.launch("compute")
        r.run_until_quiescent()
        r.stop()
    """))
    inputs = []
    for name, n in (("A", 24), ("x", 6), ("b", 4)):
        np.save(tmp_path / f"{name}.npy", np.ones(n, np.float32))
        inputs += ["--in", f"{name}={tmp_path}/{name}.npy"]

    def cycles_line(r, prefix, stream):
        assert r.returncode == 0, r.stderr
        return [line for line in stream.splitlines() if line.startswith(prefix) and "cycles" in line][0]

    sets = ("vector_startup_cycles=9", "clock_mhz=425")
    r = wsemu("python", script)
    default = cycles_line(r, "wsemu python: ", r.stderr)
    r = wsemu("python", *[a for s in sets for a in ("--profile", s)], script)
    changed = cycles_line(r, "wsemu python: ", r.stderr)
    r = wsemu("run", f"{bindir}/out.wsx", *inputs, *[a for s in sets for a in ("--profile", s)])
    assert changed.removeprefix("wsemu python: ") == cycles_line(r, "wsemu run: ", r.stdout).removeprefix("wsemu run: ")
    cycles = int(changed.split()[2])
    assert cycles > int(default.split()[2])  # 7 more cycles per vector operation
    assert f"= {cycles / 425:.3f} us at 425 MHz" in changed  # the clock of the override, worked by hand

    r = wsemu("python", "--profile", "no_such_key=1", script)  # a configuration error, as in `wsemu run`
    assert r.returncode == 3 and "unknown profile key 'no_such_key'" in r.stderr
