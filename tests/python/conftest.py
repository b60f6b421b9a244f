"""Shared fixtures of the Python tests: kernels built with `wsemu build` into a compile output
directory (DIR/out.wsx, what SdkRuntime(DIR) opens), and the paths CTest passes in."""

import os
import subprocess

import numpy as np
import pytest

WSEMU = os.environ.get("WSEMU_BIN", "wsemu")
SOURCE_DIR = os.environ.get("WSEMU_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def build(tmp_dir, layout, params=None, arch=None):
    """Builds `layout` (relative to the source tree) into tmp_dir/out.wsx; returns tmp_dir."""
    os.makedirs(tmp_dir, exist_ok=True)
    cmd = [WSEMU, "build", os.path.join(SOURCE_DIR, layout), "-o", os.path.join(tmp_dir, "out.wsx"), "-q"]
    for k, v in (params or {}).items():
        cmd += ["--param", f"{k}={v}"]
    if arch:
        cmd += ["--arch", arch]
    subprocess.run(cmd, check=True)
    return str(tmp_dir)


@pytest.fixture(scope="session")
def kernels(tmp_path_factory):
    """A builder with a cache: kernels("kernels/gemv-01-single-pe/layout.wsl", M=4) -> bindir."""
    cache = {}

    def get(layout, arch=None, **params):
        key = (layout, arch, tuple(sorted(params.items())))
        if key not in cache:
            cache[key] = build(tmp_path_factory.mktemp("bin"), layout, params, arch)
        return cache[key]

    return get


@pytest.fixture
def rng():
    return np.random.default_rng(20261201)


GEMV01 = "kernels/gemv-01-single-pe/layout.wsl"
GEMV01_F16 = "kernels/gemv-01-single-pe/layout_f16.wsl"
GEMV09 = "kernels/gemv-09-streaming/layout.wsl"
HOST_API = "tests/python/kernels/host_api.wsl"
