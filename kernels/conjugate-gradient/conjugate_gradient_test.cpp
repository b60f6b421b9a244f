// conjugate-gradient: ITERS steps of conjugate gradients (CG) for A x = b on the device against
// the same algorithm in double precision on the host, on the symmetric (SPD) stencil matrix of
// kernels/7pt-stencil-spmv/stencil7_reference.hpp, on several grids, wse2 and wse3
// (krylov_harness.hpp does the run and the checks). Tolerance: allclose with atol = rtol = 1e-5
// (why: README.md, "Tolerance").
#include "kernels/7pt-stencil-spmv/krylov_harness.hpp"

namespace wsemu::testing {
namespace {

using Vec = xt::xarray<double>;

// The host algorithm, step for step as cg.wsa does it.
double reference(const xt::xarray<float>& c, const Vec& b, Vec& x, int iters) {
  Vec r = b - stencil7::apply(c, x);
  Vec p = r;
  double rho = stencil7::dot(r, r);
  for (int k = 0; k < iters; ++k) {
    const Vec ap = stencil7::apply(c, p);
    const double alpha = rho / stencil7::dot(p, ap);
    x += alpha * p;
    r -= alpha * ap;
    const double rho1 = stencil7::dot(r, r);
    p = r + (rho1 / rho) * p;
    rho = rho1;
  }
  return rho;
}

const SolverSpec kSpec{"conjugate-gradient", "cg", 0.0, reference};

class ConjugateGradient : public ::testing::TestWithParam<SolverCase> {};

TEST_P(ConjugateGradient, MatchesTheHostAlgorithm) { check_solver(kSpec, GetParam(), 1e-5); }

INSTANTIATE_TEST_SUITE_P(Grids, ConjugateGradient,
                         ::testing::Values(SolverCase{5, 5, 5, 6, "wse2"}, SolverCase{3, 3, 4, 6, "wse2"},
                                           SolverCase{1, 1, 6, 3, "wse2"}, SolverCase{4, 3, 5, 6, "wse3"}),
                         solver_case_name);

// On request (WSEMU_KERNEL_LARGE=1): a 16 x 16 x 64 grid.
TEST(ConjugateGradientLarge, SixteenBySixteenBySixtyFour) {
  if (!std::getenv("WSEMU_KERNEL_LARGE")) GTEST_SKIP() << "set WSEMU_KERNEL_LARGE=1 to run";
  check_solver(kSpec, SolverCase{16, 16, 64, 6, "wse2"}, 1e-5);
}

}  // namespace
}  // namespace wsemu::testing
