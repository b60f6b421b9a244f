// fft: radix-2 1-D FFT on one PE, fp32 and fp16, forward and inverse, against a direct O(N^2)
// DFT computed here in double precision (numpy's conventions: forward sum x_n e^{-2 pi i kn/N},
// inverse (1/N) sum X_k e^{+2 pi i kn/N}). Inputs are seeded uniform [-1, 1) (rounded to fp16
// for the fp16 kernel); the twiddle table the host supplies is cos / sin in double, rounded.
#include <cmath>
#include <complex>
#include <cstdio>
#include <numbers>

#include "kernels/fft/dft_reference.hpp"
#include "kernels/fft/fft_case.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::MemcpyDataType;
using runtime::host::MemcpyOptions;

void run_case(const FftCase& c) {
  const compiler::Executable exe =
      build_kernel("fft", {{"N", int64_t(c.n)}, {"INVERSE", c.inverse ? 1 : 0}}, c.arch,
                   c.half ? "layout_f16.wsl" : "layout.wsl");
  xt::xarray<float> re = random_array({c.n}, 91), im = random_array({c.n}, 92);
  const auto [wre, wim] = twiddle_tables(c.n, 1);
  if (c.half) re = to_half_precision(re), im = to_half_precision(im);
  auto encode = [&](const xt::xarray<float>& a) { return c.half ? half_words(a) : words(a); };
  MemcpyOptions o;
  if (c.half) o.data_type = MemcpyDataType::MEMCPY_16BIT;

  runtime::host::SdkRuntime rt(exe);
  rt.load();
  rt.memcpy_h2d("re", encode(re), 0, 0, 1, 1, int(c.n), o);
  rt.memcpy_h2d("im", encode(im), 0, 0, 1, 1, int(c.n), o);
  rt.memcpy_h2d("wre", encode(wre), 0, 0, 1, 1, int(c.n / 2), o);
  rt.memcpy_h2d("wim", encode(wim), 0, 0, 1, 1, int(c.n / 2), o);
  const uint64_t before = rt.cycles();
  rt.launch("compute");
  const uint64_t compute = rt.cycles() - before;
  std::vector<uint32_t> out_re = read_back(rt, "re", 0, 0, 1, 1, int(c.n), o);
  std::vector<uint32_t> out_im = read_back(rt, "im", 0, 0, 1, 1, int(c.n), o);
  const xt::xarray<float> got_re = c.half ? halves(out_re, {c.n}) : floats(out_re, {c.n});
  const xt::xarray<float> got_im = c.half ? halves(out_im, {c.n}) : floats(out_im, {c.n});

  const xt::xarray<std::complex<double>> ref = reference_dft(re, im, c.inverse);
  const double unit = c.half ? std::ldexp(1.0, -11) : std::ldexp(1.0, -24);
  const double tol = fft_tolerance(ref, unit);
  double worst = 0;
  size_t bad = 0;
  for (size_t k = 0; k < c.n; ++k) {
    const double err = std::abs(std::complex<double>(got_re(k), got_im(k)) - ref(k));
    worst = std::max(worst, err);
    if (err > tol && ++bad <= 5)
      ADD_FAILURE() << "X[" << k << "]: got (" << got_re(k) << ", " << got_im(k) << "), expected " << ref(k)
                    << ", error " << err << " > " << tol;
  }
  EXPECT_EQ(bad, 0u);
  std::printf("fft 1-D N=%zu %s %s (%s): %llu cycles total, %llu in compute (%.3f us at %.0f MHz); max error %.3g "
              "(tolerance %.3g)\n",
              c.n, c.half ? "fp16" : "fp32", c.inverse ? "inverse" : "forward", c.arch.c_str(),
              (unsigned long long)rt.cycles(), (unsigned long long)compute, double(compute) / rt.clock_mhz(),
              rt.clock_mhz(), worst, tol);
}

class Fft1d : public ::testing::TestWithParam<FftCase> {};
TEST_P(Fft1d, MatchesDirectDft) { run_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(
    Sizes, Fft1d,
    ::testing::Values(FftCase{2, false, false, "wse2"}, FftCase{16, false, false, "wse2"},
                      FftCase{16, false, true, "wse2"}, FftCase{64, false, false, "wse3"},
                      FftCase{64, false, true, "wse2"}, FftCase{16, true, false, "wse2"},
                      FftCase{16, true, true, "wse3"}, FftCase{64, true, false, "wse2"},
                      FftCase{64, true, true, "wse2"}),
    fft_case_name());

// The larger size, on request: --gtest_also_run_disabled_tests --gtest_filter='*Large*'.
TEST(Fft1dLarge, DISABLED_Fp32ForwardN2048) {
  run_case(FftCase{2048, false, false, "wse2"});
}

}  // namespace
}  // namespace wsemu::testing
