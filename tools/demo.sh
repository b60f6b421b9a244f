#!/usr/bin/env bash
# The main job: build wsemu (installing missing Debian packages first), then show it working.
# For now: assemble a sample program, disassemble it, and assemble the disassembly again to show
# the round trip is exact. Later issues replace this with kernels on a virtual wafer and a
# weight-streaming training run.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh release

bin=build/bin
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for prog in isa/examples/*.wsa; do
  name=$(basename "$prog" .wsa)
  echo "== $prog"
  "$bin/wsemu" asm "$prog" -o "$out/$name.wso"
  "$bin/wsemu" disasm "$out/$name.wso" -o "$out/$name.dis.wsa"
  "$bin/wsemu" asm "$out/$name.dis.wsa" -o "$out/$name.again.wso"
  "$bin/wsemu" disasm "$out/$name.again.wso" -o "$out/$name.again.wsa"
  if cmp -s "$out/$name.dis.wsa" "$out/$name.again.wsa"; then
    echo "   assembled $(stat -c %s "$out/$name.wso") bytes; disassembly re-assembles identically"
  else
    echo "   MISMATCH after disassembly round trip" >&2
    exit 1
  fi
done
echo
echo "== first lines of the disassembly of $(ls isa/examples/*.wsa | head -1)"
first=$(basename "$(ls isa/examples/*.wsa | head -1)" .wsa)
head -30 "$out/$first.dis.wsa"
