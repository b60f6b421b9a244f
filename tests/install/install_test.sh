#!/usr/bin/env bash
# `cmake --install` into a scratch prefix, then a project outside the tree builds against it
# with find_package(wsemu) and pkg-config, and the installed tools run and find their data.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
prefix=$scratch/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
"$prefix/bin/wsemu" --version
"$prefix/bin/wsemu-memoryx" --version
"$prefix/bin/wsemu-swarmx" --version
cmake -S "$src/tests/install/consumer" -B "$scratch/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$scratch/consumer" >/dev/null
# Run from a copy of the binary beside the prefix's bin/: it must find share/wsemu/firmware.
cp "$scratch/consumer/consumer" "$prefix/bin/"
"$prefix/bin/consumer" | tee "$scratch/consumer.out"
grep -q "share/wsemu/firmware (found)" "$scratch/consumer.out"
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs wsemu
# The installed wsemu builds a kernel whose program includes the installed firmware.
WSEMU_FIRMWARE_DIR= "$prefix/bin/wsemu" build "$src/kernels/gemv-01-single-pe/layout.wsl" -o "$scratch/g.wsx" -q
# The installed `wsemu cslc` compiles a CSL kernel; its standard library lies where the installed
# binary looks for it (firmware/data_paths.hpp: share/wsemu/csl-lib).
test -f "$prefix/share/wsemu/csl-lib/memcpy/memcpy.csl"
"$prefix/bin/wsemu" cslc "$src/kernels/gemv-01-single-pe/csl/layout.csl" --fabric-dims=8,3 --fabric-offsets=4,1 \
  --params=M:4,N:6 -o "$scratch/cslc-out" >/dev/null
test -f "$scratch/cslc-out/out.wsx"
# The installed `wsemu python` runs a host script with the installed module and SDK shims.
if [ -d "$prefix/lib/wsemu/python/wsemu" ]; then
  mkdir -p "$scratch/gemv" && cp "$scratch/g.wsx" "$scratch/gemv/out.wsx"
  cat > "$scratch/run.py" <<'PY'
import sys
import numpy as np
import wsemu
from cerebras.sdk.runtime.sdkruntimepybind import SdkRuntime
r = SdkRuntime(sys.argv[1])
r.load()
A = np.arange(24, dtype=np.float32)
x = np.ones(6, np.float32)
b = np.full(4, 2.0, np.float32)
for name, data in (("A", A), ("x", x), ("b", b)):
    r.memcpy_h2d(r.get_id(name), data, 0, 0, 1, 1, data.size)
r.launch("compute")
y = np.zeros(4, np.float32)
r.memcpy_d2h(y, r.get_id("y"), 0, 0, 1, 1, 4)
r.stop()
np.testing.assert_allclose(y, A.reshape(4, 6) @ x + b)
print("python module:", wsemu.__file__)
PY
  env -u PYTHONPATH "$prefix/bin/wsemu" python "$scratch/run.py" "$scratch/gemv" | tee "$scratch/python.out"
  grep -q "python module: $prefix/lib/wsemu/python/wsemu/__init__.py" "$scratch/python.out"
fi
echo "install test: OK"
