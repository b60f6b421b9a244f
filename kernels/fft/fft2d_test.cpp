// fft 2-D: an N x N complex FFT on a row of N PEs with an on-fabric transpose, fp32 and fp16,
// forward and inverse, against a direct 2-D DFT computed here in double precision (numpy's
// fft2 / ifft2 conventions: forward sum a[r][c] e^{-2 pi i (kr + lc)/N}, inverse the same with
// + and a factor 1/N^2). No FFT and nothing of the emulator in the reference. Inputs are seeded
// uniform [-1, 1) (rounded to fp16 for the fp16 kernel). PE c receives column c; PE k returns
// row k of the result.
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
using Complex = std::complex<double>;

// out[k][l] = sum_{r,c} a[r][c] w^(kr + lc), w = e^{-+2 pi i / N}: the definition, O(N^4).
std::vector<Complex> reference_dft2(const std::vector<Complex>& a, size_t n, bool inverse) {
  std::vector<Complex> out(n * n);
  const double sign = inverse ? 1.0 : -1.0;
  for (size_t k = 0; k < n; ++k)
    for (size_t l = 0; l < n; ++l) {
      Complex sum = 0;
      for (size_t r = 0; r < n; ++r)
        for (size_t c = 0; c < n; ++c)
          sum += a[r * n + c] * std::polar(1.0, sign * 2.0 * std::numbers::pi * double((k * r + l * c) % n) / double(n));
      out[k * n + l] = inverse ? sum / double(n * n) : sum;
    }
  return out;
}

void run_case(const FftCase& c) {
  const size_t n = c.n;
  const compiler::Executable exe =
      build_kernel("fft", {{"N", int64_t(n)}, {"INVERSE", c.inverse ? 1 : 0}}, c.arch,
                   c.half ? "layout_2d_f16.wsl" : "layout_2d.wsl");
  xt::xarray<float> re = random_array({n, n}, 301), im = random_array({n, n}, 302);
  if (c.half) re = to_half_precision(re), im = to_half_precision(im);
  std::vector<Complex> a(n * n);
  for (size_t r = 0; r < n; ++r)
    for (size_t col = 0; col < n; ++col) a[r * n + col] = Complex(re(r, col), im(r, col));

  // PE col gets column col, interleaved (re, im): the tensor [1][N][2N] in row-major order.
  xt::xarray<float> x = xt::zeros<float>({n, 2 * n});
  for (size_t col = 0; col < n; ++col)
    for (size_t r = 0; r < n; ++r) x(col, 2 * r) = re(r, col), x(col, 2 * r + 1) = im(r, col);
  const auto [wre, wim] = twiddle_tables(n, n);
  auto encode = [&](const xt::xarray<float>& v) { return c.half ? half_words(v) : words(v); };
  MemcpyOptions o;
  if (c.half) o.data_type = MemcpyDataType::MEMCPY_16BIT;

  runtime::host::SdkRuntime rt(exe);
  rt.load();
  const int pes = int(n);
  rt.memcpy_h2d("X", encode(x), 0, 0, pes, 1, int(2 * n), o);
  rt.memcpy_h2d("wre", encode(wre), 0, 0, pes, 1, int(n / 2), o);
  rt.memcpy_h2d("wim", encode(wim), 0, 0, pes, 1, int(n / 2), o);
  const uint64_t before = rt.cycles();
  rt.launch("compute");
  const uint64_t compute = rt.cycles() - before;
  std::vector<uint32_t> out = read_back(rt, "Y", 0, 0, pes, 1, int(2 * n), o);
  std::vector<uint32_t> t = read_back(rt, "maxmin_time", 0, 0, pes, 1, 4);
  const xt::xarray<float> y = c.half ? halves(out, {n, 2 * n}) : floats(out, {n, 2 * n});
  uint64_t t_start = UINT64_MAX, t_end = 0;
  for (size_t pe = 0; pe < n; ++pe) {
    t_start = std::min(t_start, (uint64_t(t[4 * pe + 1] & 0xFFFF) << 32) | t[4 * pe]);
    t_end = std::max(t_end, (uint64_t(t[4 * pe + 3] & 0xFFFF) << 32) | t[4 * pe + 2]);
  }

  const std::vector<Complex> ref = reference_dft2(a, n, c.inverse);
  // The 2-D FFT is 2 log2(N) radix-2 stages (fft_tolerance counts them from the N^2 outputs).
  const double unit = c.half ? std::ldexp(1.0, -11) : std::ldexp(1.0, -24);
  const double tol = fft_tolerance(ref, unit);
  double worst = 0;
  size_t bad = 0;
  for (size_t k = 0; k < n; ++k)
    for (size_t l = 0; l < n; ++l) {
      const Complex got(y(k, 2 * l), y(k, 2 * l + 1));
      const double err = std::abs(got - ref[k * n + l]);
      worst = std::max(worst, err);
      if (err > tol && ++bad <= 5)
        ADD_FAILURE() << "F[" << k << "][" << l << "]: got " << got << ", expected " << ref[k * n + l] << ", error "
                      << err << " > " << tol;
    }
  EXPECT_EQ(bad, 0u);
  std::printf("fft 2-D N=%zu %s %s (%s): launch %llu cycles, kernel (TSC) %llu cycles (%.3f us at %.0f MHz); "
              "session %llu cycles; max error %.3g (tolerance %.3g)\n",
              n, c.half ? "fp16" : "fp32", c.inverse ? "inverse" : "forward", c.arch.c_str(),
              (unsigned long long)compute, (unsigned long long)(t_end - t_start),
              double(t_end - t_start) / rt.clock_mhz(), rt.clock_mhz(), (unsigned long long)rt.cycles(), worst, tol);
}

class Fft2d : public ::testing::TestWithParam<FftCase> {};
TEST_P(Fft2d, MatchesDirectDft) { run_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(
    Sizes, Fft2d,
    ::testing::Values(FftCase{4, false, false, "wse2"}, FftCase{8, false, false, "wse2"},
                      FftCase{8, false, true, "wse3"}, FftCase{16, false, false, "wse2"},
                      FftCase{8, true, false, "wse2"}, FftCase{16, true, true, "wse2"},
                      FftCase{8, true, true, "wse3"}),
    fft_case_name());

// A larger size on request (WSEMU_KERNEL_LARGE=1): 64 x 64 on 64 PEs.
TEST(Fft2dLarge, Fp32ForwardN64) {
  if (!std::getenv("WSEMU_KERNEL_LARGE")) GTEST_SKIP() << "set WSEMU_KERNEL_LARGE=1 to run";
  run_case(FftCase{64, false, false, "wse2"});
}

}  // namespace
}  // namespace wsemu::testing
