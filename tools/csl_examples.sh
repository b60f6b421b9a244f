#!/usr/bin/env bash
# Compiles every example of a checkout of the SDK's example suite (Cerebras/csl-examples or
# sdk-examples) with `wsemu cslc`, using each example's own cslc line from commands_wse2.sh /
# commands_wse3.sh, and prints a Markdown table: the example, then per arch "compiles" or the
# first error. With --run, each example that compiles also runs its whole commands file (every
# cslc and cs_python line, as `wsemu cslc` and `wsemu python`) in a scratch copy of its folder,
# and the cell says SUCCESS (exit 0 and "SUCCESS" printed by every run), PASS (exit 0 and the
# run.py's own "...: PASS ]]" verdict, spmv-hypersparse's form), "runs" (exit 0 from a
# host script that prints no verdict of its own), or the first thing that failed.
# Usage: tools/csl_examples.sh [--run] [--only PATTERN] CHECKOUT [wse2|wse3 ...]  (WSEMU_BIN:
# build/bin); --only keeps the examples whose tutorials/NAME or benchmarks/NAME matches the grep
# pattern, for re-running the one being worked on.
set -u
run=0
only=
while [ $# -gt 0 ]; do
  case "$1" in
    --run) run=1; shift ;;
    --only) only=${2:?--only needs a pattern}; shift 2 ;;
    *) break ;;
  esac
done
root=${1:?usage: tools/csl_examples.sh [--run] [--only PATTERN] CHECKOUT [ARCH...]}
shift
archs=${*:-wse2 wse3}
bin=${WSEMU_BIN:-$(dirname "$0")/../build/bin}
wsemu=$(cd "$bin" && pwd)/wsemu
source=$(cd "$(dirname "$0")/.." && pwd)  # stripped from messages, as the checkout's paths are
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
printf '| example |'; for a in $archs; do printf ' %s |' "$a"; done; printf '\n|---|'
for a in $archs; do printf -- '---|'; done; printf '\n'
# Runs the example's whole commands file as its README says, in a scratch copy of its folder,
# with `cslc` and `cs_python` on PATH standing for `wsemu cslc` and `wsemu python` (a file may
# compile and run more than once: fft-1d-2d's 1-D and 2-D builds, forward and inverse); prints
# the cell: SUCCESS when the file exits 0 and every run printed SUCCESS. The copy's siblings
# are links to the checkout's, so imports such as ../benchmark-libs/... still resolve.
run_example() {
  local dir=$1 cmds=$2 line=$3 parent="$scratch/run/$(basename "$(dirname "$1")")" copy output status sib runs passed
  copy="$parent/$(basename "$dir")"
  rm -rf "$scratch/run" && mkdir -p "$parent" && cp -r "$dir" "$copy"
  for sib in "$(dirname "$dir")"/*; do [ "$sib" = "$dir" ] || ln -s "$sib" "$parent/"; done
  if ! grep -q 'cs_python' "$cmds"; then echo "compiles; no cs_python line"; return; fi
  : > "$scratch/runs"
  output=$(cd "$copy" && PATH="$scratch/shims:$PATH" timeout 900 bash "$cmds" 2>&1)
  status=$?
  runs=$(wc -l < "$scratch/runs")
  passed=$(echo "$output" | grep -c "SUCCESS")
  if [ $status -eq 0 ] && [ "$passed" -ge "$runs" ]; then
    if [ "$runs" -gt 1 ]; then echo "SUCCESS ($runs runs)"; else echo "SUCCESS"; fi
    return
  fi
  # spmv-hypersparse's run.py states its verdict as "[[ Result within tolerance ...: PASS ]]".
  if [ $status -eq 0 ] && [ "$(echo "$output" | grep -c ': PASS ]]')" -ge "$runs" ] && ! echo "$output" | grep -q ': FAIL ]]'; then
    echo "PASS (its run.py's own verdict line)"
    return
  fi
  # A host script with no verdict of its own (bandwidth-test prints figures only) cannot say SUCCESS.
  if [ $status -eq 0 ] && ! grep -rqs SUCCESS "$copy"/*.py; then echo "runs (exit 0; its run.py prints no verdict)"; return; fi
  local which=""
  [ "$(grep -c 'cs_python' "$cmds")" -gt 1 ] && which=" ($passed SUCCESS of $runs runs started)"
  echo "${line:+compiles; }run$which (exit $status): $(echo "$output" | grep -E 'Error|error' | tail -1 | sed 's/|/\\|/g' | cut -c1-150)"
}
# The commands files call the vendor's tools by name; these stand for wsemu's.
mkdir -p "$scratch/shims"
printf '#!/usr/bin/env bash\nexec "%s" cslc "$@"\n' "$wsemu" > "$scratch/shims/cslc"
printf '#!/usr/bin/env bash\necho run >> "%s"\nexec timeout 300 "%s" python "$@"\n' "$scratch/runs" "$wsemu" > "$scratch/shims/cs_python"
chmod +x "$scratch/shims/cslc" "$scratch/shims/cs_python"

for dir in "$root"/tutorials/* "$root"/benchmarks/*; do
  [ -d "$dir" ] || continue
  name=$(basename "$(dirname "$dir")")/$(basename "$dir")
  if [ -n "$only" ] && ! echo "$name" | grep -q -- "$only"; then continue; fi
  printf '| %s |' "$name"
  for a in $archs; do
    cmds="$dir/commands_$a.sh"
    [ -f "$cmds" ] || cmds="$dir/commands.sh"
    line=$(tr '\n' ' ' 2>/dev/null < "$cmds" | sed 's/\\ */ /g' | grep -o 'cslc [^;&|]*' | head -1 | sed 's/ cs_python.*//')
    if [ -z "$line" ]; then
      if ! grep -q "SdkLayout\|sdk_layout" "$dir"/*.py 2>/dev/null; then printf ' no cslc line |'
      elif [ $run -eq 1 ] && [ -f "$cmds" ]; then printf ' %s |' "$(run_example "$dir" "$cmds" "")"
      else printf ' SdkLayout (Python API) |'; fi
      continue
    fi
    args=$(echo "$line" | sed -E 's/^cslc //; s/--arch[= ][a-z0-9]+//; s/ -o[= ][^ ]+//')
    out="$scratch/out"
    rm -rf "$out"
    msg=$(cd "$dir" && eval "\"$wsemu\" cslc --arch=$a -o \"$out\" $args" 2>&1)
    compiled=$?
    if [ $compiled -eq 0 ] && [ $run -eq 1 ]; then
      printf ' %s |' "$(run_example "$dir" "$cmds" "$line")"
    elif [ $compiled -eq 0 ]; then
      printf ' compiles |'
    else
      first=$(echo "$msg" | grep -m1 -E 'error:' | sed "s#$out/##; s#$source/##; s#$root/##; s#$dir/##; s/|/\\\\|/g" | cut -c1-150)
      printf ' %s |' "${first:-failed}"
    fi
  done
  printf '\n'
done
