#!/usr/bin/env bash
# Compiles every example of a checkout of the SDK's example suite (Cerebras/csl-examples or
# sdk-examples) with `wsemu cslc`, using each example's own cslc line from commands_wse2.sh /
# commands_wse3.sh, and prints a Markdown table: the example, then per arch "compiles" or the
# first error. Usage: tools/csl_examples.sh CHECKOUT [wse2|wse3 ...]  (WSEMU_BIN: build/bin)
set -u
root=${1:?usage: tools/csl_examples.sh CHECKOUT [ARCH...]}
shift
archs=${*:-wse2 wse3}
bin=${WSEMU_BIN:-$(dirname "$0")/../build/bin}
wsemu=$(cd "$bin" && pwd)/wsemu
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
printf '| example |'; for a in $archs; do printf ' %s |' "$a"; done; printf '\n|---|'
for a in $archs; do printf -- '---|'; done; printf '\n'
for dir in "$root"/tutorials/* "$root"/benchmarks/*; do
  [ -d "$dir" ] || continue
  name=$(basename "$(dirname "$dir")")/$(basename "$dir")
  printf '| %s |' "$name"
  for a in $archs; do
    cmds="$dir/commands_$a.sh"
    [ -f "$cmds" ] || cmds="$dir/commands.sh"
    line=$(tr '\n' ' ' < "$cmds" 2>/dev/null | sed 's/\\ */ /g' | grep -o 'cslc [^;&|]*' | head -1 | sed 's/ cs_python.*//')
    if [ -z "$line" ]; then
      if grep -q "SdkLayout\|sdk_layout" "$dir"/*.py 2>/dev/null; then printf ' SdkLayout (Python API) |'; else printf ' no cslc line |'; fi
      continue
    fi
    args=$(echo "$line" | sed -E 's/^cslc //; s/--arch[= ][a-z0-9]+//; s/ -o[= ][^ ]+//')
    out="$scratch/out"
    rm -rf "$out"
    msg=$(cd "$dir" && eval "\"$wsemu\" cslc --arch=$a -o \"$out\" $args" 2>&1)
    if [ $? -eq 0 ]; then
      printf ' compiles |'
    else
      first=$(echo "$msg" | grep -m1 -E 'error:' | sed "s#$root/##; s#$dir/##; s/|/\\\\|/g" | cut -c1-150)
      printf ' %s |' "${first:-failed}"
    fi
  done
  printf '\n'
done
