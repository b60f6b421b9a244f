// Host side of the tiled GEMV kernels (gemv-06 to -09, checkerboard): cuts A, x and b into the per-PE
// blocks the layouts use (block i of n over a length L: L / n elements, one more for the first
// L % n blocks), copies them in with memcpy_h2d, launches `compute`, and gathers y from the east
// column. The numbers are checked by the caller against the xtensor reference. The tiled
// kernels' parameterised tests share their case (M x N on kx x ky PEs of an arch), its build and
// its test name.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {

// An M x N GEMV on kx x ky PEs of `arch`.
struct TiledGemvCase {
  size_t M, N, kx, ky;
  std::string arch;
};
inline std::ostream& operator<<(std::ostream& o, const TiledGemvCase& c) {
  return o << c.arch << " " << c.M << "x" << c.N << " on " << c.kx << "x" << c.ky;
}

// kernels/<folder> built with the case's M, N, kx and ky.
inline compiler::Executable build_tiled_gemv(const std::string& folder, const TiledGemvCase& c) {
  return build_kernel(folder, {{"M", int64_t(c.M)}, {"N", int64_t(c.N)}, {"kx", int64_t(c.kx)}, {"ky", int64_t(c.ky)}},
                      c.arch);
}

// The test name of a case: "wse2_6x8_on_4x3".
inline auto tiled_gemv_name() {
  return named_by(&TiledGemvCase::arch, "_", &TiledGemvCase::M, "x", &TiledGemvCase::N, "_on_", &TiledGemvCase::kx,
                  "x", &TiledGemvCase::ky);
}

struct Blocks {
  std::vector<size_t> start, size;
  size_t max = 0;
};

inline Blocks split(size_t length, size_t parts) {
  Blocks b;
  size_t at = 0;
  for (size_t i = 0; i < parts; ++i) {
    const size_t n = length / parts + (i < length % parts ? 1 : 0);
    b.start.push_back(at);
    b.size.push_back(n);
    b.max = std::max(b.max, n);
    at += n;
  }
  return b;
}

// A's ky x kx tiles as the layouts hold them: PE (px, py) gets rows.size[py] x cols.size[px]
// elements in an MT x NT block (row-major, zero-padded), each element as `word(value)`.
template <class Word>
std::vector<uint32_t> a_tiles(const xt::xarray<float>& A, const Blocks& rows, const Blocks& cols, Word word) {
  const size_t kx = cols.size.size(), ky = rows.size.size(), MT = rows.max, NT = cols.max;
  std::vector<uint32_t> tiles(ky * kx * MT * NT, 0);
  for (size_t py = 0; py < ky; ++py)
    for (size_t px = 0; px < kx; ++px)
      for (size_t i = 0; i < rows.size[py]; ++i)
        for (size_t j = 0; j < cols.size[px]; ++j)
          tiles[((py * kx + px) * MT + i) * NT + j] = word(A(rows.start[py] + i, cols.start[px] + j));
  return tiles;
}

inline uint32_t fp32_word(float v) { return std::bit_cast<uint32_t>(v); }

struct TiledRun {
  xt::xarray<float> y;
  uint64_t cycles = 0;
  uint64_t memcpy_cycles = 0;
  uint64_t launch_cycles = 0;
};

inline TiledRun run_tiled_gemv(const compiler::Executable& exe, const xt::xarray<float>& A,
                               const xt::xarray<float>& x, const xt::xarray<float>& b, size_t kx, size_t ky,
                               runtime::host::RuntimeOptions options = {}) {
  const size_t M = b.size(), N = x.size();
  const Blocks rows = split(M, ky), cols = split(N, kx);
  const size_t MT = rows.max, NT = cols.max;
  const std::vector<uint32_t> a = a_tiles(A, rows, cols, fp32_word);
  std::vector<uint32_t> x_tiles(kx * NT, 0), b_tiles(ky * MT, 0);
  for (size_t px = 0; px < kx; ++px)
    for (size_t j = 0; j < cols.size[px]; ++j) x_tiles[px * NT + j] = std::bit_cast<uint32_t>(x(cols.start[px] + j));
  for (size_t py = 0; py < ky; ++py)
    for (size_t i = 0; i < rows.size[py]; ++i) b_tiles[py * MT + i] = std::bit_cast<uint32_t>(b(rows.start[py] + i));

  LoadedRuntime rt(exe, options);
  rt.memcpy_h2d("A", a, 0, 0, int(kx), int(ky), int(MT * NT));
  rt.memcpy_h2d("x", x_tiles, 0, 0, int(kx), 1, int(NT));
  rt.memcpy_h2d("b", b_tiles, int(kx) - 1, 0, 1, int(ky), int(MT));
  launch_and_settle(rt, "compute");
  std::vector<uint32_t> y_tiles = read_back(rt, "y", int(kx) - 1, 0, 1, int(ky), int(MT));
  TiledRun r;
  r.y = xt::zeros<float>({M});
  for (size_t py = 0; py < ky; ++py)
    for (size_t i = 0; i < rows.size[py]; ++i)
      r.y(rows.start[py] + i) = std::bit_cast<float>(y_tiles[py * MT + i]);
  r.cycles = rt.cycles();
  r.memcpy_cycles = rt.stats().memcpy_cycles;
  r.launch_cycles = rt.stats().launch_cycles;
  return r;
}

// Runs `exe` (an M x N GEMV on kx x ky PEs) on seeded inputs (A from `seed`, x from seed + 1,
// b from seed + 2) and checks y against the reference within 1e-5.
inline void expect_tiled_gemv_matches(const compiler::Executable& exe, size_t M, size_t N, size_t kx, size_t ky,
                                      uint32_t seed) {
  const xt::xarray<float> A = random_array({M, N}, seed), x = random_array({N}, seed + 1), b = random_array({M}, seed + 2);
  expect_close(run_tiled_gemv(exe, A, x, b, kx, ky).y, gemv_reference(A, x, b), 1e-5, 1e-5, "y");
}

// The same for kernels/<folder> built for case `c`.
inline void expect_tiled_gemv_matches(const std::string& folder, const TiledGemvCase& c, uint32_t seed) {
  expect_tiled_gemv_matches(build_tiled_gemv(folder, c), c.M, c.N, c.kx, c.ky, seed);
}

}  // namespace wsemu::testing
