// The fft tests' reference (the assembly kernel's fft_test.cpp and the CSL version's in
// tests/compiler/csl_kernels_test.cpp): a direct O(N^2) DFT in double precision, numpy's
// conventions (forward sum x_n e^{-2 pi i kn/N}, inverse (1/N) sum X_k e^{+2 pi i kn/N}), and
// the error bound an FFT's output is held to; and the twiddle table every FFT test copies in
// (fft_test, fft2d_test, fft3d_test).
//
// Contract: header-only test support; no FFT, no emulator.
#pragma once

#include <cmath>
#include <algorithm>
#include <complex>
#include <iterator>
#include <numbers>
#include <utility>

#include <xtensor/xarray.hpp>
#include <xtensor/xbuilder.hpp>

namespace wsemu::testing {

inline xt::xarray<std::complex<double>> reference_dft(const xt::xarray<float>& re, const xt::xarray<float>& im,
                                                      bool inverse) {
  const size_t n = re.size();
  xt::xarray<std::complex<double>> out = xt::zeros<std::complex<double>>({n});
  const double sign = inverse ? 1.0 : -1.0;
  for (size_t k = 0; k < n; ++k) {
    std::complex<double> sum = 0;
    for (size_t j = 0; j < n; ++j)
      sum += std::complex<double>(re(j), im(j)) *
             std::polar(1.0, sign * 2.0 * std::numbers::pi * double((j * k) % n) / double(n));
    out(k) = inverse ? sum / double(n) : sum;
  }
  return out;
}

// An FFT's error grows with its radix-2 stages, log2 of the number of outputs (an N x N or
// N x N x N transform has 2 or 3 log2(N)), each rounding relative to the signal's size; allowed:
// 4 roundings per stage plus the twiddles' own, in units of `unit_roundoff`. `ref` is the
// reference's outputs, any sized range of std::complex<double>.
template <class ComplexValues>
double fft_tolerance(const ComplexValues& ref, double unit_roundoff) {
  double scale = 0;
  for (const std::complex<double>& v : ref) scale = std::max(scale, std::abs(v));
  return 4.0 * (std::log2(double(std::size(ref))) + 1.0) * unit_roundoff * scale;
}

// w[k] = e^{-2 pi i k/N}, k < N/2, for each of `pes` PEs: {re, im}, each [pes][N/2] (what the
// SDK's run.py computes for its f_twiddle).
inline std::pair<xt::xarray<float>, xt::xarray<float>> twiddle_tables(size_t n, size_t pes) {
  xt::xarray<float> wre = xt::zeros<float>({pes, n / 2}), wim = xt::zeros<float>({pes, n / 2});
  for (size_t pe = 0; pe < pes; ++pe)
    for (size_t k = 0; k < n / 2; ++k) {
      wre(pe, k) = float(std::cos(2.0 * std::numbers::pi * double(k) / double(n)));
      wim(pe, k) = float(-std::sin(2.0 * std::numbers::pi * double(k) / double(n)));
    }
  return {wre, wim};
}

}  // namespace wsemu::testing
