#!/bin/sh
# Generates the fp16 programs from the fp32 ones (run from anywhere; rewrites the *_f16.wsa
# here and kernels/fft-3d's fft3d_f16.wsa and layout_f16.wsl).
# The fp16 program is the fp32 one with the fp16 vector operations, .f16 data, 16-bit
# descriptors (memory and fabric) and the fp16 constant for 1/N; state words stay 32-bit, and
# so does a line marked 'keep 32-bit' (the transposes' control wavelets).
set -e
cd "$(dirname "$0")"
to_f16() {
  sed -e '/keep 32-bit/b' -e 's/\bfmuls\b/fmulh/g; s/\bfsubs\b/fsubh/g; s/\bfadds\b/faddh/g; s/\bfmacs\b/fmach/g' \
      -e 's/\bfnegs\b/fnegh/g; s/\bfmovs\b/fmovh/g; s/\bmov32\b/mov16/g' \
      -e 's/\.f32\b/.f16/g; s/\bmem4d(/mem4d.16(/g; s/\bmem1d(/mem1d.16(/g' \
      -e 's/\bfabin(/fabin.16(/g; s/\bfabout(/fabout.16(/g' \
      -e 's/_f32\b/_f16/g; s/\bfp32\b/fp16/g' \
      -e 's/(127 - LOG2N) << 23/(15 - LOG2N) << 10/; s/^\.equ    ES, 4/.equ    ES, 2/' \
      -e 's/^; \([a-z0-9_]*\)_f16\.wsa is generated from this file by gen_f16\.sh\./; Generated from \1_f32.wsa by gen_f16.sh: do not edit./' \
      "$@"
}
for f in fft_batch a2a_chain fft2d; do
  to_f16 "${f}_f32.wsa" > "${f}_f16.wsa"
done
# fft-3d: the program (fft3d.wsa, no _f32 suffix) and its layout (f16 symbols, the fp16 program).
to_f16 -e '/^; fft3d_f16\.wsa is generated from this file/,/^; kernels\/fft\/gen_f16\.sh\./c\
; Generated from fft3d.wsa by kernels/fft/gen_f16.sh: do not edit.' \
  ../fft-3d/fft3d.wsa > ../fft-3d/fft3d_f16.wsa
sed -e 's/"fft3d\.wsa"/"fft3d_f16.wsa"/; s/\bf32\[/f16[/g; s/\bfp32\b/fp16/g; s/_f32\.wsa/_f16.wsa/g' \
    -e '1i\
# Generated from layout.wsl by kernels/fft/gen_f16.sh: do not edit.' \
  ../fft-3d/layout.wsl > ../fft-3d/layout_f16.wsl
