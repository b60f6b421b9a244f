// What the stencil-2d-5pt tests share (the assembly kernel's and the CSL version's in
// tests/compiler/csl_kernels_test.cpp): the coefficients, the independent double-precision
// reference that sweeps the whole grid at once (no tiles, no halos, so it checks the halo
// exchange as well as the arithmetic), and one run of an executable through the host calls of
// the kernel (u0 and coeff in, launch `compute`, the result array and `maxmin_time` out).
//
// Contract: header-only test support; HostError passes through to the test. Nothing here
// compares a value.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <ostream>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xbuilder.hpp>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"

namespace wsemu::testing {

struct StencilCase {
  int kx, ky, m, n, iters;
  // Readable (and stable) test names: "3x3 PEs of 5x4, 3 iterations".
  friend void PrintTo(const StencilCase& c, std::ostream* os) {
    *os << c.kx << "x" << c.ky << " PEs of " << c.m << "x" << c.n << ", " << c.iters << " iterations";
  }
};

// cN, cS, cW, cC, cE: four distinct neighbour weights (summing with cC to 1, a stable
// anisotropic heat step), so that a kernel applying one direction's weight to another, or
// mixing up a halo side, fails every case (the symmetric 0.1, 0.1, 0.1, 0.6, 0.1 of the heat
// step with alpha = 0.1 let a kernel that used cN for all four neighbours pass).
inline const std::vector<float> kStencilCoeff = {0.11f, 0.13f, 0.17f, 0.4f, 0.19f};

inline xt::xarray<double> jacobi_reference(const xt::xarray<float>& u0, int iters) {
  const size_t rows = u0.shape(0), cols = u0.shape(1);
  xt::xarray<double> u = xt::cast<double>(u0);
  auto at = [&](const xt::xarray<double>& a, long i, long j) {
    return (i < 0 || j < 0 || i >= long(rows) || j >= long(cols)) ? 0.0 : a(size_t(i), size_t(j));
  };
  const std::vector<float>& k = kStencilCoeff;
  for (int t = 0; t < iters; ++t) {
    xt::xarray<double> next = xt::zeros<double>({rows, cols});
    for (long i = 0; i < long(rows); ++i)
      for (long j = 0; j < long(cols); ++j)
        next(size_t(i), size_t(j)) = k[0] * at(u, i - 1, j) + k[1] * at(u, i + 1, j) + k[2] * at(u, i, j - 1) +
                                     k[3] * at(u, i, j) + k[4] * at(u, i, j + 1);
    u = next;
  }
  return u;
}

struct StencilRun {
  xt::xarray<float> u;                      // the whole grid after the iterations
  uint64_t min_cycles = 0, max_cycles = 0;  // per-PE end - start stamps
  std::vector<uint64_t> cycles;             // per PE, row-major py * kx + px
  uint64_t run_cycles = 0;                  // the whole run, copies included
};

inline StencilRun run_stencil(const compiler::Executable& exe, const StencilCase& c, const xt::xarray<float>& grid,
                              bool backdoor) {
  const size_t P = size_t(c.n) + 2, tile = (size_t(c.m) + 2) * P, pes = size_t(c.kx * c.ky);
  std::vector<uint32_t> padded(pes * tile, 0), coeff;
  for (int py = 0; py < c.ky; ++py)
    for (int px = 0; px < c.kx; ++px)
      for (int i = 0; i < c.m; ++i)
        for (int j = 0; j < c.n; ++j)
          padded[size_t(py * c.kx + px) * tile + size_t(i + 1) * P + size_t(j + 1)] =
              std::bit_cast<uint32_t>(grid(size_t(py * c.m + i), size_t(px * c.n + j)));
  for (int p = 0; p < c.kx * c.ky; ++p)
    for (float v : kStencilCoeff) coeff.push_back(std::bit_cast<uint32_t>(v));
  runtime::host::RuntimeOptions options;
  options.backdoor = backdoor;
  LoadedRuntime rt(exe, options);
  rt.memcpy_h2d("u0", padded, 0, 0, c.kx, c.ky, int(tile));
  rt.memcpy_h2d("coeff", coeff, 0, 0, c.kx, c.ky, 5);
  launch_and_settle(rt, "compute");
  std::vector<uint32_t> out = read_back(rt, c.iters % 2 == 0 ? "u0" : "u1", 0, 0, c.kx, c.ky, int(tile));
  std::vector<uint32_t> t = read_back(rt, "maxmin_time", 0, 0, c.kx, c.ky, 4);
  StencilRun r;
  r.u = xt::zeros<float>(grid.shape());
  for (int py = 0; py < c.ky; ++py)
    for (int px = 0; px < c.kx; ++px)
      for (int i = 0; i < c.m; ++i)
        for (int j = 0; j < c.n; ++j)
          r.u(size_t(py * c.m + i), size_t(px * c.n + j)) =
              std::bit_cast<float>(out[size_t(py * c.kx + px) * tile + size_t(i + 1) * P + size_t(j + 1)]);
  r.min_cycles = UINT64_MAX;
  for (size_t p = 0; p < pes; ++p) {
    const uint64_t start = (uint64_t(t[p * 4 + 1] & 0xFFFF) << 32) | t[p * 4];
    const uint64_t end = (uint64_t(t[p * 4 + 3] & 0xFFFF) << 32) | t[p * 4 + 2];
    r.cycles.push_back(end - start);
    r.min_cycles = std::min(r.min_cycles, end - start);
    r.max_cycles = std::max(r.max_cycles, end - start);
  }
  r.run_cycles = rt.cycles();
  return r;
}

}  // namespace wsemu::testing
