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

// The grids of solver_grids (ITERS 6), and on request (WSEMU_KERNEL_LARGE=1) a 16 x 16 x 64 grid.
WSEMU_SOLVER_TESTS(PreconditionedCg, kSpec, 6, SolverCase{16, 16, 64, 6, "wse2"})

}  // namespace
}  // namespace wsemu::testing
