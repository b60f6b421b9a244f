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

// The grids of solver_grids (ITERS 6), and on request (WSEMU_KERNEL_LARGE=1) a 16 x 16 x 64 grid.
WSEMU_SOLVER_TESTS(ConjugateGradient, kSpec, 6, SolverCase{16, 16, 64, 6, "wse2"})

}  // namespace
}  // namespace wsemu::testing
