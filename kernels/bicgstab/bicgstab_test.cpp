// bicgstab: ITERS steps of BiCGSTAB for A x = b on the device against the same algorithm in
// double precision on the host (kernels/7pt-stencil-spmv/stencil7_reference.hpp builds the
// nonsymmetric (skew 0.2), diagonally dominant stencil matrix and applies it), on several grids, wse2 and wse3.
// Tolerance: allclose with atol = rtol = 1e-5 (why: README.md, "Tolerance"); the residual
// must also have dropped (|b - A x| < |b - A x0| / 4), computed on the host from the device's x.
#include "kernels/7pt-stencil-spmv/stencil7_reference.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

struct Case {
  int kx, ky, z, iters;
  std::string arch;
};

using Vec = xt::xarray<double>;

// The host algorithm, step for step as bicgstab.wsa does it.
void reference(const xt::xarray<float>& c, const Vec& b, Vec& x, double& rho, int iters) {
  Vec r = b - stencil7::apply(c, x);
  const Vec rhat = r;
  Vec p = r;
  rho = stencil7::dot(rhat, r);
  for (int k = 0; k < iters; ++k) {
    const Vec v = stencil7::apply(c, p);
    const double alpha = rho / stencil7::dot(rhat, v);
    const Vec s = r - alpha * v;
    const Vec t = stencil7::apply(c, s);
    const double omega = stencil7::dot(t, s) / stencil7::dot(t, t);
    x += alpha * p + omega * s;
    r = s - omega * t;
    const double rho1 = stencil7::dot(rhat, r);
    const double beta = (rho1 / rho) * (alpha / omega);
    p = r + beta * (p - omega * v);
    rho = rho1;
  }
}

struct Result {
  xt::xarray<float> x;
  double rho;
  double cycles_per_iteration;  // TSC: (max end - min start) / ITERS
};

Result run_device(const Case& c, const xt::xarray<float>& coeff, const xt::xarray<float>& b,
                  const xt::xarray<float>& x0, bool backdoor) {
  const size_t kx = size_t(c.kx), ky = size_t(c.ky), z = size_t(c.z);
  const runtime::Executable exe =
      build_kernel("bicgstab", {{"kx", c.kx}, {"ky", c.ky}, {"Z", c.z}, {"ITERS", c.iters}}, c.arch);
  runtime::host::RuntimeOptions options;
  options.backdoor = backdoor;
  runtime::host::SdkRuntime rt(exe, options);
  rt.load();
  rt.memcpy_h2d("x", words(x0), 0, 0, c.kx, c.ky, c.z);
  rt.memcpy_h2d("b", words(b), 0, 0, c.kx, c.ky, c.z);
  rt.memcpy_h2d("coeff", words(coeff), 0, 0, c.kx, c.ky, 7 * c.z);
  rt.launch("bicgstab");
  rt.run_until_quiescent();
  std::vector<uint32_t> x(kx * ky * z), rho(kx * ky), t(kx * ky * 4);
  rt.memcpy_d2h(x, "x", 0, 0, c.kx, c.ky, c.z);
  rt.memcpy_d2h(rho, "rho", 0, 0, c.kx, c.ky, 1);
  rt.memcpy_d2h(t, "t", 0, 0, c.kx, c.ky, 4);
  uint64_t lo = ~0ull, hi = 0;
  for (size_t p = 0; p < kx * ky; ++p) {
    lo = std::min(lo, uint64_t(t[p * 4]) | uint64_t(t[p * 4 + 1]) << 32);
    hi = std::max(hi, uint64_t(t[p * 4 + 2]) | uint64_t(t[p * 4 + 3]) << 32);
  }
  for (size_t p = 1; p < kx * ky; ++p) EXPECT_EQ(rho[p], rho[0]) << "every PE holds the same rho";
  return {floats(x, {ky, kx, z}), double(std::bit_cast<float>(rho[0])), double(hi - lo) / c.iters};
}

void check(const Case& c, double tol) {
  const size_t kx = size_t(c.kx), ky = size_t(c.ky), z = size_t(c.z);
  const xt::xarray<float> coeff = stencil7::make_coefficients(kx, ky, z, 5001, 1.0, 0.2);
  const xt::xarray<float> b = random_array({ky, kx, z}, 5002);
  const xt::xarray<float> x0 = random_array({ky, kx, z}, 5003) * 0.1f;
  const Result got = run_device(c, coeff, b, x0, false);
  Vec x = xt::cast<double>(x0);
  double rho = 0;
  reference(coeff, xt::cast<double>(b), x, rho, c.iters);
  expect_close(got.x, x, tol, tol, "x");
  EXPECT_NEAR(got.rho, rho, tol * (1e-3 + std::abs(rho))) << "rho";
  const Vec bd = xt::cast<double>(b);
  const Vec r0 = bd - stencil7::apply(coeff, xt::cast<double>(x0));
  const Vec r = bd - stencil7::apply(coeff, xt::cast<double>(got.x));
  EXPECT_LT(std::sqrt(stencil7::dot(r, r)), std::sqrt(stencil7::dot(r0, r0)) / 4) << "the residual must drop";
  std::printf("bicgstab %dx%dx%d, %d steps (%s): |r| %.3e -> %.3e, %.1f cycles per iteration (TSC)\n", c.kx, c.ky,
              c.z, c.iters, c.arch.c_str(), std::sqrt(stencil7::dot(r0, r0)), std::sqrt(stencil7::dot(r, r)),
              got.cycles_per_iteration);
}

class Bicgstab : public ::testing::TestWithParam<Case> {};

TEST_P(Bicgstab, MatchesTheHostAlgorithm) { check(GetParam(), 1e-5); }

INSTANTIATE_TEST_SUITE_P(Grids, Bicgstab,
                         ::testing::Values(Case{5, 5, 5, 4, "wse2"}, Case{3, 3, 4, 4, "wse2"},
                                           Case{1, 1, 6, 3, "wse2"}, Case{4, 3, 5, 4, "wse3"}),
                         [](const auto& info) {
                           const Case& c = info.param;
                           return c.arch + "_" + std::to_string(c.kx) + "x" + std::to_string(c.ky) + "x" +
                                  std::to_string(c.z) + "_it" + std::to_string(c.iters);
                         });

// On request (WSEMU_KERNEL_LARGE=1): a 16 x 16 x 64 grid, and the calibration runs of
// README.md (cycles of one iteration at Z = 128 and 512 on 8 x 8 PEs: the part linear in Z).
TEST(BicgstabLarge, SixteenBySixteenBySixtyFour) {
  if (!std::getenv("WSEMU_KERNEL_LARGE")) GTEST_SKIP() << "set WSEMU_KERNEL_LARGE=1 to run";
  check(Case{16, 16, 64, 4, "wse2"}, 1e-5);
  check(Case{8, 8, 128, 2, "wse2"}, 1e-5);
  check(Case{8, 8, 512, 2, "wse2"}, 1e-5);
}

}  // namespace
}  // namespace wsemu::testing
