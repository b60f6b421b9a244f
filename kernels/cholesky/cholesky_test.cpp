// cholesky: right-looking Cholesky on the lower triangle of a P x P grid (NT x NT tiles),
// checked against a plain Cholesky loop in double precision computed here (no emulator).
//
// The matrix is A = B B^T + N I with B seeded uniform [-1, 1): symmetric positive definite
// with eigenvalues in [N, N + |B|_2^2]; |B|_2^2 <= N^2 in the worst case, so take the loose
// condition bound kappa(A) <= 1 + N. Tolerance, elementwise on L: Higham (Accuracy and
// Stability, Thm 10.3) gives L~ L~^T = A + dA with |dA| <= gamma_{N+1} |L~| |L~^T|; the
// factor's forward error is then at most about kappa(A) gamma_{N+1} |L|_max (first order,
// Thm 10.8's kappa^{1/2} bound is tighter; we keep the simpler, larger one), with
// gamma_{N+1} = (N+1) u / (1 - (N+1) u), u = 2^-24. Measured errors are far below it; the
// SDK's own check (decimal = 2, i.e. 1.5e-2 absolute) is much looser.
#include <cmath>
#include <cstdio>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

struct Case {
  int p, nt;
  std::string arch;
};

// The textbook column Cholesky in double: A = L L^T, L lower triangular.
std::vector<double> reference_cholesky(const std::vector<double>& a, size_t n) {
  std::vector<double> l(n * n, 0.0);
  for (size_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (size_t k = 0; k < j; ++k) d -= l[j * n + k] * l[j * n + k];
    l[j * n + j] = std::sqrt(d);
    for (size_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (size_t k = 0; k < j; ++k) s -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = s / l[j * n + j];
    }
  }
  return l;
}

void run_case(const Case& c, bool backdoor = false) {
  const size_t p = size_t(c.p), nt = size_t(c.nt), n = p * nt;
  const xt::xarray<float> b = random_array({n, n}, 4242);
  std::vector<double> a(n * n);
  xt::xarray<float> a32 = xt::zeros<float>({n, n});
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j <= i; ++j) {
      double s = i == j ? double(n) : 0.0;
      for (size_t k = 0; k < n; ++k) s += double(b(i, k)) * double(b(j, k));
      a32(i, j) = a32(j, i) = float(s);
    }
  for (size_t i = 0; i < n * n; ++i) a[i] = a32.flat(i);  // the reference factors what the kernel gets

  // PE (x, y) gets tile (y, x), row-major: the tensor [P][P][NT * NT] in row-major order.
  xt::xarray<float> tiles = xt::zeros<float>({p, p, nt * nt});
  for (size_t y = 0; y < p; ++y)
    for (size_t x = 0; x < p; ++x)
      for (size_t i = 0; i < nt; ++i)
        for (size_t j = 0; j < nt; ++j) tiles(y, x, i * nt + j) = a32(y * nt + i, x * nt + j);

  runtime::host::RuntimeOptions options;
  options.backdoor = backdoor;
  LoadedRuntime rt(build_kernel("cholesky", {{"P", c.p}, {"NT", c.nt}}, c.arch), options);
  rt.memcpy_h2d("tile", words(tiles), 0, 0, c.p, c.p, int(nt * nt));
  const uint64_t before = rt.cycles();
  rt.launch("cholesky");
  const uint64_t launch = rt.cycles() - before;
  std::vector<uint32_t> out = read_back(rt, "tile", 0, 0, c.p, c.p, int(nt * nt));
  std::vector<uint32_t> t = read_back(rt, "maxmin_time", 0, 0, c.p, c.p, 4);
  const xt::xarray<float> got = floats(out, {p, p, nt * nt});
  uint64_t t_start = UINT64_MAX, t_end = 0;
  for (size_t y = 0; y < p; ++y)
    for (size_t x = 0; x <= y; ++x) {
      const size_t q = 4 * (y * p + x);
      t_start = std::min(t_start, (uint64_t(t[q + 1] & 0xFFFF) << 32) | t[q]);
      t_end = std::max(t_end, (uint64_t(t[q + 3] & 0xFFFF) << 32) | t[q + 2]);
    }

  const std::vector<double> l = reference_cholesky(a, n);
  double lmax = 0;
  for (double v : l) lmax = std::max(lmax, std::abs(v));
  const double u = std::ldexp(1.0, -24);
  const double gamma = double(n + 1) * u / (1.0 - double(n + 1) * u);
  const double tol = (1.0 + double(n)) * gamma * lmax;
  double worst = 0;
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j <= i; ++j) {
      const size_t y = i / nt, x = j / nt;
      const double g = got(y, x, (i % nt) * nt + (j % nt));
      const double err = std::abs(g - l[i * n + j]);
      worst = std::max(worst, err);
      if (!(err <= tol) && ++bad <= 5)
        ADD_FAILURE() << "L[" << i << "][" << j << "]: got " << g << ", expected " << l[i * n + j] << ", error " << err
                      << " > " << tol;
    }
  EXPECT_EQ(bad, 0u);
  std::printf("cholesky P=%d NT=%d N=%zu (%s): launch %llu cycles, kernel (TSC, max end - min start) %llu cycles "
              "(%.3f us at %.0f MHz), session %llu cycles; max error %.3g (tolerance %.3g)\n",
              c.p, c.nt, n, c.arch.c_str(), (unsigned long long)launch, (unsigned long long)(t_end - t_start),
              double(t_end - t_start) / rt.clock_mhz(), rt.clock_mhz(), (unsigned long long)rt.cycles(), worst, tol);
}

class Cholesky : public ::testing::TestWithParam<Case> {};
TEST_P(Cholesky, MatchesHostCholesky) { run_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Grids, Cholesky,
                         ::testing::Values(Case{1, 4, "wse2"}, Case{2, 3, "wse2"}, Case{4, 4, "wse2"},
                                           Case{5, 2, "wse2"}, Case{3, 5, "wse3"}),
                         named_by(&Case::arch, "_P", &Case::p, "_NT", &Case::nt));

// The SDK's size on request (WSEMU_KERNEL_LARGE=1): P = 10, Nt = 4 (N = 40).
TEST(CholeskyLarge, SdkSizeP10Nt4) {
  if (!std::getenv("WSEMU_KERNEL_LARGE")) GTEST_SKIP() << "set WSEMU_KERNEL_LARGE=1 to run";
  run_case(Case{10, 4, "wse2"}, true);
}

}  // namespace
}  // namespace wsemu::testing
