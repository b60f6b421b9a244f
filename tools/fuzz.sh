#!/usr/bin/env bash
# Fuzz the assembler with libFuzzer for N seconds (default 30), starting from a seed corpus of
# every shipped .wsa program (isa/examples, tests/isa/errors, firmware/, kernels/). Fails (exit
# 1) on a crash, hang (a single input over 10 s), leak, out-of-memory or sanitizer report; the
# input that did it is left in build-fuzz/fuzz-artifacts/.
#
# Usage: tools/fuzz.sh [SECONDS]
# Builds the `fuzz` preset (clang, ASan + UBSan + libFuzzer) into build-fuzz/, installing clang
# and its runtime libraries first if they are missing. Only the fuzz target is built.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}

packages=(clang libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "fuzz: installing missing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -f build-fuzz/CMakeCache.txt ]; then
  cmake --preset fuzz >/dev/null
fi
echo "fuzz: building assembler_fuzz (preset 'fuzz') into build-fuzz/"
cmake --build build-fuzz --target assembler_fuzz -j "$(nproc)"

# Seeds: the shipped programs. The working corpus persists between runs so coverage grows.
seeds=build-fuzz/fuzz-seeds
corpus=build-fuzz/fuzz-corpus
artifacts=build-fuzz/fuzz-artifacts
rm -rf "$seeds"
mkdir -p "$seeds" "$corpus" "$artifacts"
n=0
while IFS= read -r -d '' f; do
  cp "$f" "$seeds/$(printf '%04d' "$n")-$(basename "$f")"
  n=$((n + 1))
done < <(find isa/examples tests/isa/errors firmware kernels -type f \( -name '*.wsa' -o -name '*.inc' \) -print0 2>/dev/null)
echo "fuzz: $n seed programs; running for ${seconds}s"

# A dictionary of the language's words helps the fuzzer past the lexer.
dict=build-fuzz/fuzz-assembler.dict
{
  sed -n 's/^INSN([A-Z0-9]*, *"\([a-z0-9]*\)".*/"\1"/p' isa/isa.def
  for w in .arch .param .equ .include .code .data .i16 .u16 .i32 .u32 .f16 .f32 .align .export \
           .dsd .task .iqinit .oqinit .word .async mem1d mem4d circbuf fabin fabout fifo data local \
           control color queue blocked ut= activate= unblock= on_control= terminate sizeof bits \
           ctl_entry ctl_cmds SWITCH_ADV TEARDOWN r1 d3 wse2 wse3; do
    printf '"%s"\n' "$w"
  done
} > "$dict"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
if ! build-fuzz/bin/assembler_fuzz -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=8192 -dict="$dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
    "$corpus" "$seeds"; then
  echo "fuzz: FAILED: the input that failed is in $artifacts/" >&2
  exit 1
fi
echo "fuzz: no crash, hang, leak or sanitizer report in ${seconds}s"
