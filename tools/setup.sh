#!/usr/bin/env bash
# Shared first step of tools/demo.sh and tools/test.sh: install the Debian packages wsemu needs
# (only those missing), then configure and build a CMake preset. A second run installs nothing
# and rebuilds only what changed (Ninja).
#
# Usage: tools/setup.sh [PRESET] [EXTRA_PACKAGES...]     (PRESET defaults to release)
set -euo pipefail
cd "$(dirname "$0")/.."

preset=${1:-release}
shift || true

# python3-pandas: the SDK examples' host scripts import it (spmv-hypersparse's run.py).
packages=(
  g++ cmake ninja-build pkg-config python3
  libboost-dev libtbb-dev xtensor-dev libxsimd-dev libprotobuf-dev protobuf-compiler
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev libfmt-dev libspdlog-dev
  nlohmann-json3-dev libstb-dev zlib1g-dev dataset-fashion-mnist clang libclang-rt-14-dev libssl-dev
  pybind11-dev python3-dev python3-pytest
  python3-numpy python3-matplotlib python3-pandas xxd openssl
  "$@"
)

tools/install_packages.sh setup "${packages[@]}"

build_dir=build
[ "$preset" = release ] || build_dir="build-$preset"
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake --preset "$preset" >/dev/null
fi
echo "setup: building preset '$preset' into $build_dir/"
cmake --build "$build_dir" -j "$(nproc)"
