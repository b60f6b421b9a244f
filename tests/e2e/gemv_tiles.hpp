// Host side of the tiled GEMV kernels (gemv-06, -07, -08): cuts A, x and b into the per-PE
// blocks the layouts use (block i of n over a length L: L / n elements, one more for the first
// L % n blocks), copies them in with memcpy_h2d, launches `compute`, and gathers y from the east
// column. The numbers are checked by the caller against the xtensor reference.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {

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
  std::vector<uint32_t> a_tiles(ky * kx * MT * NT, 0), x_tiles(kx * NT, 0), b_tiles(ky * MT, 0);
  for (size_t py = 0; py < ky; ++py)
    for (size_t px = 0; px < kx; ++px)
      for (size_t i = 0; i < rows.size[py]; ++i)
        for (size_t j = 0; j < cols.size[px]; ++j)
          a_tiles[((py * kx + px) * MT + i) * NT + j] =
              std::bit_cast<uint32_t>(A(rows.start[py] + i, cols.start[px] + j));
  for (size_t px = 0; px < kx; ++px)
    for (size_t j = 0; j < cols.size[px]; ++j) x_tiles[px * NT + j] = std::bit_cast<uint32_t>(x(cols.start[px] + j));
  for (size_t py = 0; py < ky; ++py)
    for (size_t i = 0; i < rows.size[py]; ++i) b_tiles[py * MT + i] = std::bit_cast<uint32_t>(b(rows.start[py] + i));

  runtime::host::SdkRuntime rt(exe, options);
  rt.load();
  rt.memcpy_h2d("A", a_tiles, 0, 0, int(kx), int(ky), int(MT * NT));
  rt.memcpy_h2d("x", x_tiles, 0, 0, int(kx), 1, int(NT));
  rt.memcpy_h2d("b", b_tiles, int(kx) - 1, 0, 1, int(ky), int(MT));
  rt.launch("compute");
  rt.run_until_quiescent();
  std::vector<uint32_t> y_tiles(ky * MT, 0);
  rt.memcpy_d2h(y_tiles, "y", int(kx) - 1, 0, 1, int(ky), int(MT));
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

}  // namespace wsemu::testing
