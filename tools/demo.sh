#!/usr/bin/env bash
# The main job: build wsemu (installing missing Debian packages first), then show it working:
#  1. the toolchain: assemble the sample programs, disassemble them, and check that the
#     disassembly assembles back to the same program;
#  2. the GEMV kernels end to end on a virtual wafer (tools/demo_kernels.sh): build, seeded
#     inputs, run through the fabric memcpy and firmware, cycles, time at the clock, max error;
#  3. weight-streaming training: an MLP on Fashion-MNIST across 2 emulated wafers, with MemoryX
#     and a SwarmX tree started on loopback, checked step by step against the host reference.
#
# Everything it makes stays in demo-out/ (ignored by git; WSEMU_DEMO_OUT=DIR to put it
# elsewhere): the assembled programs, the GEMV inputs and outputs, a trace of gemv-08 with its
# HTML page (open demo-out/gemv-08-trace.html in a browser), and the training run's loss curve
# (demo-out/train/loss.png) and step log.
#
# WSEMU_BIN=DIR uses wsemu from DIR and skips the set-up and build; WSEMU_DEMO_ONLY=toolchain
# stops after part 1 (the CTest test demo_toolchain runs it that way, so the script's own
# commands stay tested).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${WSEMU_BIN:-}" ]; then
  tools/setup.sh release
fi
bin=${WSEMU_BIN:-build/bin}
out=${WSEMU_DEMO_OUT:-demo-out}
mkdir -p "$out"
echo "(outputs in $out/)"

echo "== 1. assembler round trip (isa/examples)"
# Programs with `.param` take their values on the command line, as a layout would give them.
declare -A params=([every_directive]="--param ROWS=4 --param COLS=8" [saxpy]="--param N=16")
for prog in isa/examples/*.wsa; do
  name=$(basename "$prog" .wsa)
  # shellcheck disable=SC2086  # the parameters are separate words on purpose
  "$bin/wsemu" asm "$prog" -o "$out/$name.wso" ${params[$name]:-}
  "$bin/wsemu" disasm "$out/$name.wso" -o "$out/$name.dis.wsa"
  "$bin/wsemu" asm "$out/$name.dis.wsa" -o "$out/$name.again.wso"
  "$bin/wsemu" disasm "$out/$name.again.wso" -o "$out/$name.again.wsa"
  if cmp -s "$out/$name.dis.wsa" "$out/$name.again.wsa"; then
    printf '   %-34s %6d bytes, disassembly re-assembles identically\n' "$prog" "$(stat -c %s "$out/$name.wso")"
  else
    echo "   $prog: MISMATCH after the disassembly round trip" >&2
    exit 1
  fi
done

[ "${WSEMU_DEMO_ONLY:-}" = toolchain ] && exit 0

echo
echo "== 2. GEMV kernels on a virtual wafer"
WSEMU_BIN="$bin" WSEMU_DEMO_OUT="$out/kernels" tools/demo_kernels.sh

echo
echo "== 2b. a fabric trace of gemv-08 (4 x 3 PEs) and its views"
"$bin/wsemu" run "$out/kernels/gemv-08/k.wsx" --in A="$out/kernels/gemv-08/A.npy" \
  --in x="$out/kernels/gemv-08/x.npy" --in b="$out/kernels/gemv-08/b.npy" \
  --out y="$out/kernels/gemv-08/y.npy" --trace "$out/gemv-08.wstrace" | tail -n 1
"$bin/wsemu" trace "$out/gemv-08.wstrace" summary | head -n 12
"$bin/wsemu" trace "$out/gemv-08.wstrace" html -o "$out/gemv-08-trace.html"
"$bin/wsemu" trace "$out/gemv-08.wstrace" heatmap -o "$out/gemv-08-heatmap.png"
echo "   wrote $out/gemv-08-trace.html and $out/gemv-08-heatmap.png"

echo
echo "== 3. weight-streaming training: Fashion-MNIST on 2 wafers (MemoryX + SwarmX on loopback)"
"$bin/wsemu" train --model mlp:784,64,10 --dataset fashion-mnist --wafers 2 --batch 64 \
  --steps 300 --verify --out "$out/train"
