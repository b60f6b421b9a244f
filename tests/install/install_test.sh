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
echo "install test: OK"
