#!/usr/bin/env bash
# The GEMV kernels end to end, as a user runs them: `wsemu build` each kernel, make seeded
# random inputs and an independent reference (plain Python, double precision), `wsemu check`
# it through the fabric memcpy and the firmware, and print the shapes, cycles, time at the
# clock and the largest error. gemv-09 (streaming) needs its own host sequence: its test
# program runs it. Called by tools/demo.sh; expects wsemu built in build/ (or $WSEMU_BIN).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${WSEMU_BIN:-build/bin}
wsemu="$bin/wsemu"
[ -x "$wsemu" ] || { echo "demo_kernels.sh: $wsemu not found; build first (tools/setup.sh)" >&2; exit 1; }
# Inputs, references and logs of each kernel go to $WSEMU_DEMO_OUT/<name>/ (kept), or to a
# temporary folder removed at exit.
if [ -n "${WSEMU_DEMO_OUT:-}" ]; then
  out=$WSEMU_DEMO_OUT
  mkdir -p "$out"
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi

# gen.py KIND M N kx ky DIR: writes the per-PE inputs of a kernel and y_ref.npy.
cat > "$out/gen.py" <<'EOF'
import random, struct, sys

def save(path, values, shape):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else ""))
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % len(values), *values))

def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]

kind, M, N, kx, ky, d = sys.argv[1], *map(int, sys.argv[2:6]), sys.argv[6]
rng = random.Random(2024)
A = [[f32(rng.uniform(-1, 1)) for _ in range(N)] for _ in range(M)]
x = [f32(rng.uniform(-1, 1)) for _ in range(N)]
b = [f32(rng.uniform(-1, 1)) for _ in range(M)]
y = [sum(A[i][j] * x[j] for j in range(N)) + b[i] for i in range(M)]

def blocks(L, n):
    out, at = [], 0
    for i in range(n):
        s = L // n + (1 if i < L % n else 0)
        out.append((at, s))
        at += s
    return out

if kind == "single":
    save(d + "/A.npy", [v for row in A for v in row], (M * N,))
    save(d + "/x.npy", x, (N,)); save(d + "/b.npy", b, (M,)); save(d + "/y_ref.npy", y, (M,))
elif kind == "row":  # the same problem on each of kx PEs (np.tile, as the SDK's gemv-05)
    save(d + "/A.npy", [v for _ in range(kx) for row in A for v in row], (1, kx, M * N))
    save(d + "/x.npy", x * kx, (1, kx, N)); save(d + "/b.npy", b * kx, (1, kx, M))
    save(d + "/y_ref.npy", y * kx, (1, kx, M))
else:  # tiles: A per PE padded to MT x NT, x in the north row, b and y in the east column
    rows, cols = blocks(M, ky), blocks(N, kx)
    MT, NT = max(s for _, s in rows), max(s for _, s in cols)
    tiles = []
    for (r0, rs) in rows:
        for (c0, cs) in cols:
            t = [0.0] * (MT * NT)
            for i in range(rs):
                for j in range(cs):
                    t[i * NT + j] = A[r0 + i][c0 + j]
            tiles += t
    xs = []
    for (c0, cs) in cols:
        xs += x[c0:c0 + cs] + [0.0] * (NT - cs)
    bs, ys = [], []
    for (r0, rs) in rows:
        bs += b[r0:r0 + rs] + [0.0] * (MT - rs)
        ys += y[r0:r0 + rs] + [0.0] * (MT - rs)
    shape = lambda n: (ky, kx, n) if kx * ky > 1 else (n,)
    save(d + "/A.npy", tiles, shape(MT * NT))
    # x goes to every PE's symbol; only the north row's copy is used. b likewise, east column.
    save(d + "/x.npy", xs * ky, shape(NT))
    bfull = []
    for py in range(ky):
        bfull += [0.0] * (MT * (kx - 1)) + bs[py * MT:(py + 1) * MT]
    save(d + "/b.npy", bfull, shape(MT))
    yfull = []
    for py in range(ky):
        yfull += [0.0] * (MT * (kx - 1)) + ys[py * MT:(py + 1) * MT]
    save(d + "/y_ref.npy", yfull, shape(MT))
EOF

printf "%-16s %-8s %-6s %8s %8s %8s %10s %10s  %s\n" kernel "A shape" PEs cycles memcpy compute "time (us)" "max error" result
run() {  # name folder kind M N kx ky params...
  local name=$1 folder=$2 kind=$3 M=$4 N=$5 kx=$6 ky=$7
  shift 7
  local d="$out/$name"
  mkdir -p "$d"
  "$wsemu" build "kernels/$folder/layout.wsl" -o "$d/k.wsx" -q "$@"
  python3 "$out/gen.py" "$kind" "$M" "$N" "$kx" "$ky" "$d"
  local log="$d/check.log" status=0
  # Only the east column's y is compared for the tiled kernels; the zero padding of y_ref on
  # the other PEs matches their untouched y (zero-initialised).
  "$wsemu" check "$d/k.wsx" --in A="$d/A.npy" --in x="$d/x.npy" --in b="$d/b.npy" \
    --expect y="$d/y_ref.npy" --rtol 1e-5 --atol 1e-5 >"$log" 2>&1 || status=$?
  local cycles us err memcpy compute
  cycles=$(sed -n 's/.* \([0-9]*\) cycles = .*/\1/p' "$log" | tail -1)
  memcpy=$(sed -n 's/.*(.*; memcpy \([0-9]*\) cycles.*/\1/p' "$log" | tail -1)
  compute=$(sed -n 's/.*, launch \([0-9]*\), run.*/\1/p' "$log" | tail -1)
  us=$(sed -n 's/.*cycles = \([0-9.]*\) us.*/\1/p' "$log" | tail -1)
  err=$(sed -n 's/.*max abs error \([^;]*\);.*/\1/p' "$log" | tail -1)
  printf "%-16s %-8s %-6s %8s %8s %8s %10s %10s  %s\n" "$name" "${M}x${N}" "${kx}x${ky}" "${cycles:-?}" \
    "${memcpy:-?}" "${compute:-?}" "${us:-?}" "${err:-?}" "$([ $status -eq 0 ] && echo PASS || echo "FAIL (exit $status)")"
  [ $status -eq 0 ] || { cat "$log"; return 1; }
}

run gemv-01            gemv-01-single-pe   single 4  6  1 1 --param M=4 --param N=6
run gemv-01-32x16      gemv-01-single-pe   single 32 16 1 1 --param M=32 --param N=16
run gemv-05            gemv-05-multiple-pes row    4  6  4 1 --param M=4 --param N=6 --param pes=4
run gemv-06            gemv-06-routes-1    tiles  10 9  2 1 --param M=10 --param N=9
run gemv-07            gemv-07-routes-2    tiles  8  6  2 2 --param M=8 --param N=6
run gemv-08            gemv-08-routes-3    tiles  6  8  4 3
run gemv-08-32x16      gemv-08-routes-3    tiles  32 16 4 4 --param M=32 --param N=16 --param kx=4 --param ky=4
run gemv-08-uneven     gemv-08-routes-3    tiles  13 11 3 4 --param M=13 --param N=11 --param kx=3 --param ky=4

echo "(cycles: the whole session at 850 MHz; memcpy: inside memcpy calls at 7 Gbps per host channel;"
echo " compute: from launch until the wafer settles; max error: vs the double-precision reference)"
echo
echo "gemv-09 (x and b streamed in, y streamed out; host sequence in its test):"
if [ -x "$bin/gemv_09_streaming_test" ]; then
  "$bin/gemv_09_streaming_test" --gtest_brief=1 | grep -E "^gemv-09|PASSED|FAILED"
else
  echo "  $bin/gemv_09_streaming_test not built"
fi
