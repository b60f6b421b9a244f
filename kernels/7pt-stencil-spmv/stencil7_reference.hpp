// Host side of the 7-point stencil kernels, shared by the solver tests (power-method,
// conjugate-gradient, preconditioned-conjugate-gradient, bicgstab): a diagonally dominant
// stencil matrix with per-point coefficients in spmv7's layout, and y = A x in double precision
// indexing the whole 3-D grid directly (zero outside). Independent of the emulator.
//
// Contract: header-only; vectors are xt::xarray<double> of shape (ky, kx, Z) (the PE grid row by
// row, one z column per PE), coefficients (ky, kx, 7, Z) in the order C, W, E, N, S, B, T.
#pragma once

#include <cmath>
#include <random>

#include <xtensor/xarray.hpp>

namespace wsemu::testing::stencil7 {

// A = D - W with W >= 0 on the edges of the grid graph: every edge (p, q) gets a weight drawn
// uniformly from [0.5, 1); the entry at p toward q is -w * (1 + skew) if q comes after p in
// x, y or z order and -w * (1 - skew) otherwise, so skew = 0 gives a symmetric matrix. The
// diagonal is the sum of the row's off-diagonal magnitudes plus `shift` (> 0): strictly
// diagonally dominant with a positive diagonal, hence SPD when symmetric.
inline xt::xarray<float> make_coefficients(size_t kx, size_t ky, size_t Z, uint32_t seed, double shift,
                                           double skew = 0.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(0.5, 1.0);
  // Edge weights toward +x, +y, +z from each point.
  xt::xarray<double> wx = xt::zeros<double>({ky, kx, Z}), wy = wx, wz = wx;
  for (size_t j = 0; j < ky; ++j)
    for (size_t i = 0; i < kx; ++i)
      for (size_t k = 0; k < Z; ++k) {
        wx(j, i, k) = i + 1 < kx ? dist(gen) : 0.0;
        wy(j, i, k) = j + 1 < ky ? dist(gen) : 0.0;
        wz(j, i, k) = k + 1 < Z ? dist(gen) : 0.0;
      }
  xt::xarray<float> c = xt::zeros<float>({ky, kx, size_t(7), Z});
  const double up = 1.0 + skew, down = 1.0 - skew;
  for (size_t j = 0; j < ky; ++j)
    for (size_t i = 0; i < kx; ++i)
      for (size_t k = 0; k < Z; ++k) {
        const double w = i > 0 ? wx(j, i - 1, k) : 0.0, e = wx(j, i, k);
        const double n = j > 0 ? wy(j - 1, i, k) : 0.0, s = wy(j, i, k);
        const double b = k > 0 ? wz(j, i, k - 1) : 0.0, t = wz(j, i, k);
        c(j, i, 1, k) = float(-w * down);
        c(j, i, 2, k) = float(-e * up);
        c(j, i, 3, k) = float(-n * down);
        c(j, i, 4, k) = float(-s * up);
        c(j, i, 5, k) = float(-b * down);
        c(j, i, 6, k) = float(-t * up);
        double sum = shift;
        for (int d = 1; d < 7; ++d) sum += std::abs(double(c(j, i, size_t(d), k)));
        c(j, i, 0, k) = float(sum);
      }
  return c;
}

// y = A x in double, with the float coefficients the device uses.
inline xt::xarray<double> apply(const xt::xarray<float>& c, const xt::xarray<double>& x) {
  const long ky = long(x.shape(0)), kx = long(x.shape(1)), Z = long(x.shape(2));
  auto X = [&](long j, long i, long k) {
    return (i < 0 || j < 0 || k < 0 || i >= kx || j >= ky || k >= Z) ? 0.0 : x(size_t(j), size_t(i), size_t(k));
  };
  xt::xarray<double> y = xt::zeros<double>(x.shape());
  for (long j = 0; j < ky; ++j)
    for (long i = 0; i < kx; ++i)
      for (long k = 0; k < Z; ++k) {
        auto C = [&](int d) { return double(c(size_t(j), size_t(i), size_t(d), size_t(k))); };
        y(size_t(j), size_t(i), size_t(k)) = C(0) * X(j, i, k) + C(1) * X(j, i - 1, k) + C(2) * X(j, i + 1, k) +
                                             C(3) * X(j - 1, i, k) + C(4) * X(j + 1, i, k) +
                                             C(5) * X(j, i, k - 1) + C(6) * X(j, i, k + 1);
      }
  return y;
}

inline double dot(const xt::xarray<double>& a, const xt::xarray<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a.flat(i) * b.flat(i);
  return s;
}

// The diagonal (the C coefficients) as a vector.
inline xt::xarray<double> diagonal(const xt::xarray<float>& c) {
  const size_t ky = c.shape(0), kx = c.shape(1), Z = c.shape(3);
  xt::xarray<double> d = xt::zeros<double>({ky, kx, Z});
  for (size_t j = 0; j < ky; ++j)
    for (size_t i = 0; i < kx; ++i)
      for (size_t k = 0; k < Z; ++k) d(j, i, k) = c(j, i, 0, k);
  return d;
}

}  // namespace wsemu::testing::stencil7
