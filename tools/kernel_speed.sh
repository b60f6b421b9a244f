#!/usr/bin/env bash
# Emulation speed of every kernel test (the WSEMU_KERNEL_TESTS of kernels/**/CMakeLists.txt),
# for the catalogue's column in kernels/README.md: the simulated cycles of all wafers the test
# runs (summed from the WSEMU_RUN_DIGEST lines, one per wafer) per second of the test process's
# wall time. That time includes building the layouts, the host references and the checks (and
# about 10 ms of process start), so the figure is a lower bound on the emulator's own speed,
# and for the smallest tests mostly measures those. The runtime's default threads.
# Usage: tools/kernel_speed.sh [test-name-regex]; expects the kernel tests built in build/bin
# (or $WSEMU_BIN). A benchmark: it prints figures and asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${WSEMU_BIN:-build/bin}
filter=${1:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tests=$(grep -rhoE '"[a-z0-9_]+_test[|]' --include=CMakeLists.txt kernels | tr -d '"|' | sort -u | grep -E "$filter" || true)
printf '%-40s %6s %12s %8s %12s\n' test wafers cycles wall_s cycles/s
for t in $tests; do
  [ -x "$bin/$t" ] || { printf '%-40s not built\n' "$t"; continue; }
  digest="$tmp/$t.digest"
  start=$(date +%s.%N)
  status=0
  WSEMU_RUN_DIGEST="$digest" "$bin/$t" > "$tmp/$t.log" 2>&1 || status=$?
  end=$(date +%s.%N)
  [ "$status" -eq 0 ] || { printf '%-40s failed (exit %d)\n' "$t" "$status"; continue; }
  awk -v t="$t" -v s="$start" -v e="$end" '
    { for (i = 1; i < NF; ++i) if ($i == "cycle") { c += $(i + 1); ++n } }
    END { w = e - s; printf "%-40s %6d %12d %8.2f %12.3e\n", t, n, c, w, (w > 0 ? c / w : 0) }' "${digest}" 2>/dev/null ||
    printf '%-40s ran no wafer\n' "$t"
done
