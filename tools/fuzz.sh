#!/usr/bin/env bash
# Fuzz wsemu's parsers with libFuzzer for N seconds each (default 30): the assembler, the layout
# language, the CSL front end (csl: compiled all the way to an executable), the .wsx loader, the .wstrace reader, the .npy reader and the cluster's wire frames.
# Fails (exit 1) on a crash, hang (a single input over 10 s), leak, out-of-memory or sanitizer
# report; the input that did it is left in build-fuzz/fuzz-artifacts/<target>/.
#
# Usage: tools/fuzz.sh [SECONDS] [TARGET...]     (targets: assembler layout csl wsx trace npy frame)
# Builds the `fuzz` preset (clang, ASan + UBSan + libFuzzer) into build-fuzz/, installing clang
# and its runtime libraries first if they are missing. Only the fuzz targets asked for are built.
# Seeds: the shipped programs and layouts, and tests/fuzz/corpus/<target>/ (kept in the tree:
# every input that once failed is added there as a regression seed). Each target's working
# corpus persists in build-fuzz/fuzz-corpus/<target>/ so coverage grows between runs.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(assembler layout csl wsx trace npy frame)

packages=(clang libclang-rt-14-dev)
tools/install_packages.sh fuzz "${packages[@]}"

if [ ! -f build-fuzz/CMakeCache.txt ]; then
  cmake --preset fuzz >/dev/null
fi
binaries=()
for t in "${targets[@]}"; do binaries+=("${t}_fuzz"); done
echo "fuzz: building ${binaries[*]} (preset 'fuzz') into build-fuzz/"
cmake --build build-fuzz --target "${binaries[@]}" -j "$(nproc)"

# seeds_for TARGET DIR: copies the shipped inputs of that kind into DIR.
seeds_for() {
  local n=0 f
  local -a roots patterns
  case "$1" in
    assembler) roots=(isa/examples tests/isa/errors firmware kernels); patterns=(-name '*.wsa' -o -name '*.inc') ;;
    layout) roots=(compiler/layout/examples tests/compiler/bad_layouts kernels); patterns=(-name '*.wsl') ;;
    csl) roots=(kernels tests/compiler/bad tests/compiler/programs compiler/csl/lib); patterns=(-name '*.csl') ;;
    *) roots=(); patterns=() ;;
  esac
  if [ -d "tests/fuzz/corpus/$1" ]; then roots+=("tests/fuzz/corpus/$1"); fi
  [ ${#roots[@]} -gt 0 ] || return 0
  [ ${#patterns[@]} -gt 0 ] || patterns=(-name '*')
  while IFS= read -r -d '' f; do
    cp "$f" "$2/$(printf '%04d' "$n")-$(basename "$f")"
    n=$((n + 1))
  done < <(find "${roots[@]}" -type f \( "${patterns[@]}" \) -print0 2>/dev/null)
  echo "$n"
}

# A dictionary of the assembler's words helps the fuzzer past the lexer.
write_dictionary() {
  case "$1" in
    assembler)
      sed -n 's/^INSN([A-Z0-9]*, *"\([a-z0-9]*\)".*/"\1"/p' isa/isa.def
      for w in .arch .param .equ .include .code .data .i16 .u16 .i32 .u32 .f16 .f32 .align .export \
               .dsd .task .iqinit .oqinit .word .async mem1d mem4d circbuf fabin fabout fifo data local \
               control color queue blocked ut= activate= unblock= on_control= terminate sizeof bits \
               ctl_entry ctl_cmds SWITCH_ADV TEARDOWN r1 d3 wse2 wse3; do
        printf '"%s"\n' "$w"
      done ;;
    csl)
      for w in const var param fn task comptime layout return while for if else switch struct enum \
               export pub align and or true false undefined '.{' '|i|' '->' @range @get_dsd @import_module \
               @set_rectangle @set_tile_code @set_color_config @export_name @export_symbol @get_color \
               @fmacs @fadds @fmovs @mov32 @as mem1d_dsd fabin_dsd fabout_dsd .tensor_access .extent \
               .fabric_color .input_queue .output_queue .async .activate .routes .rx .tx RAMP WEST EAST \
               i16 u16 i32 u32 f16 f32 comptime_struct color; do
        printf '"%s"\n' "$w"
      done ;;
    layout)
      for w in fabric arch param let rect at size program route color rx tx host switch ring filter \
               include export symbol function routes if else min max abs width height fx fy x y \
               N S E W RAMP wse2 wse3; do
        printf '"%s"\n' "$w"
      done ;;
  esac
}

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
for t in "${targets[@]}"; do
  seeds=build-fuzz/fuzz-seeds/$t
  corpus=build-fuzz/fuzz-corpus/$t
  artifacts=build-fuzz/fuzz-artifacts/$t
  rm -rf "$seeds"
  mkdir -p "$seeds" "$corpus" "$artifacts"
  n=$(seeds_for "$t" "$seeds")
  dict_args=()
  dict=build-fuzz/fuzz-$t.dict
  write_dictionary "$t" > "$dict"
  [ -s "$dict" ] && dict_args=(-dict="$dict")
  echo "fuzz: $t: ${n:-0} seeds; running for ${seconds}s"
  set +e
  "build-fuzz/bin/${t}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 "${dict_args[@]}" -artifact_prefix="$artifacts/" -print_final_stats=1 \
    "$corpus" "$seeds" > "build-fuzz/fuzz-$t.log" 2>&1
  rc=$?
  set -e
  grep -E "stat::number_of_executed_units|^==[0-9]+==ERROR|^SUMMARY" "build-fuzz/fuzz-$t.log" || true
  if [ $rc -ne 0 ]; then
    echo "fuzz: $t FAILED: the input that failed is in $artifacts/ (log: build-fuzz/fuzz-$t.log)" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "fuzz: no crash, hang, leak or sanitizer report in ${seconds}s per target"
exit $status
