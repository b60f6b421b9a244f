// power-method: ITERS steps of x <- A x / |A x|_2 on the device against the same iteration in
// double precision on the host (kernels/7pt-stencil-spmv/stencil7_reference.hpp builds the
// matrix and applies it), on several grids, wse2 and wse3. Tolerance: the SDK's allclose 1e-5
// (x is normalized, so its entries are O(1 / sqrt(n)); lambda is O(10)).
#include "kernels/7pt-stencil-spmv/krylov_harness.hpp"
#include "tests/e2e/host_calls.hpp"

namespace wsemu::testing {
namespace {

using Case = SolverCase;

class PowerMethod : public ::testing::TestWithParam<Case> {};

TEST_P(PowerMethod, MatchesTheHostIteration) {
  const Case c = GetParam();
  const size_t kx = size_t(c.kx), ky = size_t(c.ky), z = size_t(c.z);
  const xt::xarray<float> coeff = stencil7::make_coefficients(kx, ky, z, 4001, 1.0);
  const xt::xarray<float> x0 = random_array({ky, kx, z}, 4002);
  LoadedRuntime rt(build_kernel(
      "power-method", {{"kx", c.kx}, {"ky", c.ky}, {"Z", c.z}, {"ITERS", c.iters}}, c.arch));
  rt.memcpy_h2d("x", words(x0), 0, 0, c.kx, c.ky, c.z);
  rt.memcpy_h2d("coeff", words(coeff), 0, 0, c.kx, c.ky, 7 * c.z);
  const uint64_t cycles = settle_cycles(rt, "power");
  std::vector<uint32_t> x = read_back(rt, "x", 0, 0, c.kx, c.ky, c.z);
  std::vector<uint32_t> lambda = read_back(rt, "lambda", 0, 0, c.kx, c.ky, 1);

  xt::xarray<double> xr = xt::cast<double>(x0);
  double lr = 0;
  for (int k = 0; k < c.iters; ++k) {
    const xt::xarray<double> y = stencil7::apply(coeff, xr);
    lr = std::sqrt(stencil7::dot(y, y));
    xr = y / lr;
  }
  expect_close(floats(x, {ky, kx, z}), xr, 1e-5, 1e-5, "x");
  expect_close(floats(lambda, {ky, kx}), xt::xarray<double>(xt::ones<double>({ky, kx}) * lr), 1e-5, 1e-5, "lambda");
  std::printf("power-method %dx%dx%d, %d steps (%s): lambda %.6f, %llu cycles (launch included)\n", c.kx, c.ky, c.z,
              c.iters, c.arch.c_str(), lr, (unsigned long long)cycles);
}

INSTANTIATE_TEST_SUITE_P(Grids, PowerMethod,
                         ::testing::Values(Case{5, 5, 5, 10, "wse2"}, Case{3, 3, 4, 8, "wse2"}, Case{1, 1, 6, 5, "wse2"},
                                           Case{4, 3, 5, 10, "wse3"}),
                         solver_case_name);

}  // namespace
}  // namespace wsemu::testing
