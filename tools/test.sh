#!/usr/bin/env bash
# Build wsemu (installing missing Debian packages first) and run the whole test suite with CTest.
# Extra arguments go to ctest, e.g. `tools/test.sh -R router`.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh release
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600 "$@"
