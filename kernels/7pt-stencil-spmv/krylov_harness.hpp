// The common test of the Krylov solver kernels (conjugate-gradient, preconditioned-conjugate-
// gradient, bicgstab): build the kernel for a grid, copy x0, b and the stencil coefficients in,
// launch it, read x, its scalar `rho` and its TSC stamps back, and compare with the same
// algorithm run in double precision on the host (the test's own HostSolver, on the matrix of
// stencil7_reference.hpp; conjugate-gradient's and preconditioned-conjugate-gradient's is
// conjugate_gradient_reference here).
//
// Contract: every solver kernel exports x, b, coeff (7 Z per PE), rho (1 per PE) and t (4 words
// per PE: start and end cycle stamps) and a launch function; ITERS, kx, ky, Z are its build
// parameters. check_solver() fails the test when x or rho differ from the host's beyond `tol`
// (allclose, atol = rtol), when the PEs disagree on rho, or when the residual did not drop
// below a quarter of the initial one; it prints the cycles of one iteration.
#pragma once

#include <bit>
#include <cstdio>
#include <functional>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/7pt-stencil-spmv/stencil7_reference.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {

struct SolverCase {
  int kx, ky, z, iters;
  std::string arch;
};

inline std::string solver_case_name(const ::testing::TestParamInfo<SolverCase>& info) {
  const SolverCase& c = info.param;
  return c.arch + "_" + std::to_string(c.kx) + "x" + std::to_string(c.ky) + "x" + std::to_string(c.z) + "_it" +
         std::to_string(c.iters);
}

// The grids every solver kernel is tested on: ITERS = iters, but 3 on the 1 x 1 grid.
inline std::vector<SolverCase> solver_grids(int iters) {
  return {{5, 5, 5, iters, "wse2"}, {3, 3, 4, iters, "wse2"}, {1, 1, 6, 3, "wse2"}, {4, 3, 5, iters, "wse3"}};
}

struct SolverSpec {
  std::string kernel;    // folder under kernels/
  std::string function;  // the exported launch function
  double skew = 0.0;     // 0: symmetric (SPD) matrix; see stencil7::make_coefficients
  // The host algorithm, step for step as the kernel does it: updates x, returns the final rho.
  std::function<double(const xt::xarray<float>& coeff, const xt::xarray<double>& b, xt::xarray<double>& x,
                       int iters)>
      reference;
};

// Conjugate gradients on the host, step for step as cg.wsa (jacobi false) and pcg.wsa (jacobi
// true: z = D^-1 r) do them: updates x, returns the final rho. Without the preconditioner z is r
// itself (z = r * 1, exact), so both kernels are checked against one algorithm.
inline double conjugate_gradient_reference(const xt::xarray<float>& c, const xt::xarray<double>& b,
                                           xt::xarray<double>& x, int iters, bool jacobi) {
  using Vec = xt::xarray<double>;
  const Vec dinv = jacobi ? Vec(1.0 / stencil7::diagonal(c)) : Vec(xt::ones_like(b));
  Vec r = b - stencil7::apply(c, x);
  Vec zv = r * dinv;
  Vec p = zv;
  double rho = stencil7::dot(r, zv);
  for (int k = 0; k < iters; ++k) {
    const Vec ap = stencil7::apply(c, p);
    const double alpha = rho / stencil7::dot(p, ap);
    x += alpha * p;
    r -= alpha * ap;
    zv = r * dinv;
    const double rho1 = stencil7::dot(r, zv);
    p = zv + (rho1 / rho) * p;
    rho = rho1;
  }
  return rho;
}

inline double cg_reference(const xt::xarray<float>& c, const xt::xarray<double>& b, xt::xarray<double>& x, int iters) {
  return conjugate_gradient_reference(c, b, x, iters, /*jacobi=*/false);
}

inline double pcg_reference(const xt::xarray<float>& c, const xt::xarray<double>& b, xt::xarray<double>& x, int iters) {
  return conjugate_gradient_reference(c, b, x, iters, /*jacobi=*/true);
}

inline void check_solver(const SolverSpec& spec, const SolverCase& c, double tol) {
  const size_t kx = size_t(c.kx), ky = size_t(c.ky), z = size_t(c.z);
  const xt::xarray<float> coeff = stencil7::make_coefficients(kx, ky, z, 5001, 1.0, spec.skew);
  const xt::xarray<float> b = random_array({ky, kx, z}, 5002);
  const xt::xarray<float> x0 = random_array({ky, kx, z}, 5003) * 0.1f;
  LoadedRuntime rt(build_kernel(
      spec.kernel, {{"kx", c.kx}, {"ky", c.ky}, {"Z", c.z}, {"ITERS", c.iters}}, c.arch));
  rt.memcpy_h2d("x", words(x0), 0, 0, c.kx, c.ky, c.z);
  rt.memcpy_h2d("b", words(b), 0, 0, c.kx, c.ky, c.z);
  rt.memcpy_h2d("coeff", words(coeff), 0, 0, c.kx, c.ky, 7 * c.z);
  launch_and_settle(rt, spec.function);
  std::vector<uint32_t> x_words = read_back(rt, "x", 0, 0, c.kx, c.ky, c.z);
  std::vector<uint32_t> rho_words = read_back(rt, "rho", 0, 0, c.kx, c.ky, 1);
  std::vector<uint32_t> t = read_back(rt, "t", 0, 0, c.kx, c.ky, 4);
  // One iteration: from the earliest start stamp to the latest end stamp, over ITERS.
  uint64_t first = ~0ull, last = 0;
  for (size_t p = 0; p < kx * ky; ++p) {
    first = std::min(first, uint64_t(t[p * 4]) | uint64_t(t[p * 4 + 1]) << 32);
    last = std::max(last, uint64_t(t[p * 4 + 2]) | uint64_t(t[p * 4 + 3]) << 32);
  }
  for (size_t p = 1; p < kx * ky; ++p) EXPECT_EQ(rho_words[p], rho_words[0]) << "every PE holds the same rho";
  const xt::xarray<float> x = floats(x_words, {ky, kx, z});
  const double rho = double(std::bit_cast<float>(rho_words[0]));

  const xt::xarray<double> bd = xt::cast<double>(b);
  xt::xarray<double> x_host = xt::cast<double>(x0);
  const double rho_host = spec.reference(coeff, bd, x_host, c.iters);
  expect_close(x, x_host, tol, tol, "x");
  EXPECT_NEAR(rho, rho_host, tol * (1e-3 + std::abs(rho_host))) << "rho";
  const xt::xarray<double> r0 = bd - stencil7::apply(coeff, xt::cast<double>(x0));
  const xt::xarray<double> r = bd - stencil7::apply(coeff, xt::cast<double>(x));
  const double r0_norm = std::sqrt(stencil7::dot(r0, r0)), r_norm = std::sqrt(stencil7::dot(r, r));
  EXPECT_LT(r_norm, r0_norm / 4) << "the residual must drop";
  std::printf("%s %dx%dx%d, %d steps (%s): |r| %.3e -> %.3e, %.1f cycles per iteration (TSC)\n", spec.kernel.c_str(),
              c.kx, c.ky, c.z, c.iters, c.arch.c_str(), r0_norm, r_norm, double(last - first) / c.iters);
}

}  // namespace wsemu::testing

// A solver kernel's whole test, the same for every solver: Suite.MatchesTheHostAlgorithm on
// solver_grids(iters) (tolerance 1e-5), and Suite##Large.SixteenBySixteenBySixtyFour, on request
// (WSEMU_KERNEL_LARGE=1), over the SolverCases that follow. A macro because GoogleTest registers
// tests by macro; it stands in the test file's anonymous namespace.
#define WSEMU_SOLVER_TESTS(Suite, spec, iters, ...)                                                     \
  class Suite : public ::testing::TestWithParam<::wsemu::testing::SolverCase> {};                       \
  TEST_P(Suite, MatchesTheHostAlgorithm) { ::wsemu::testing::check_solver(spec, GetParam(), 1e-5); }    \
  INSTANTIATE_TEST_SUITE_P(Grids, Suite, ::testing::ValuesIn(::wsemu::testing::solver_grids(iters)),    \
                           ::wsemu::testing::solver_case_name);                                         \
  TEST(Suite##Large, SixteenBySixteenBySixtyFour) {                                                     \
    if (!std::getenv("WSEMU_KERNEL_LARGE")) GTEST_SKIP() << "set WSEMU_KERNEL_LARGE=1 to run";          \
    for (const ::wsemu::testing::SolverCase& c : {__VA_ARGS__}) ::wsemu::testing::check_solver(spec, c, 1e-5); \
  }
