// preconditioned-conjugate-gradient: ITERS steps of Jacobi-preconditioned CG for A x = b on the
// device against the same algorithm in double precision on the host, on the symmetric (SPD)
// stencil matrix of kernels/7pt-stencil-spmv/stencil7_reference.hpp, on several grids, wse2 and
// wse3 (krylov_harness.hpp does the run and the checks). Tolerance: allclose with atol = rtol =
// 1e-5 (why: README.md, "Tolerance").
#include "kernels/7pt-stencil-spmv/krylov_harness.hpp"

namespace wsemu::testing {
namespace {

using Vec = xt::xarray<double>;

// The host algorithm, step for step as pcg.wsa does it.
double reference(const xt::xarray<float>& c, const Vec& b, Vec& x, int iters) {
  const Vec dinv = 1.0 / stencil7::diagonal(c);
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

const SolverSpec kSpec{"preconditioned-conjugate-gradient", "pcg", 0.0, reference};

class PreconditionedCg : public ::testing::TestWithParam<SolverCase> {};

TEST_P(PreconditionedCg, MatchesTheHostAlgorithm) { check_solver(kSpec, GetParam(), 1e-5); }

INSTANTIATE_TEST_SUITE_P(Grids, PreconditionedCg,
                         ::testing::Values(SolverCase{5, 5, 5, 6, "wse2"}, SolverCase{3, 3, 4, 6, "wse2"},
                                           SolverCase{1, 1, 6, 3, "wse2"}, SolverCase{4, 3, 5, 6, "wse3"}),
                         solver_case_name);

// On request (WSEMU_KERNEL_LARGE=1): a 16 x 16 x 64 grid.
TEST(PreconditionedCgLarge, SixteenBySixteenBySixtyFour) {
  if (!std::getenv("WSEMU_KERNEL_LARGE")) GTEST_SKIP() << "set WSEMU_KERNEL_LARGE=1 to run";
  check_solver(kSpec, SolverCase{16, 16, 64, 6, "wse2"}, 1e-5);
}

}  // namespace
}  // namespace wsemu::testing
