// bicgstab: ITERS steps of BiCGSTAB for A x = b on the device against the same algorithm in
// double precision on the host, on the nonsymmetric (skew 0.2), diagonally dominant stencil
// matrix of kernels/7pt-stencil-spmv/stencil7_reference.hpp, on several grids, wse2 and wse3
// (krylov_harness.hpp does the run and the checks). Tolerance: allclose with atol = rtol = 1e-5
// (why: README.md, "Tolerance").
#include "kernels/7pt-stencil-spmv/krylov_harness.hpp"

namespace wsemu::testing {
namespace {

using Vec = xt::xarray<double>;

// The host algorithm, step for step as bicgstab.wsa does it.
double reference(const xt::xarray<float>& c, const Vec& b, Vec& x, int iters) {
  Vec r = b - stencil7::apply(c, x);
  const Vec rhat = r;
  Vec p = r;
  double rho = stencil7::dot(rhat, r);
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
  return rho;
}

const SolverSpec kSpec{"bicgstab", "bicgstab", 0.2, reference};

// The grids of solver_grids (ITERS 4), and on request (WSEMU_KERNEL_LARGE=1) a 16 x 16 x 64 grid
// and the calibration runs of README.md (cycles of one iteration at Z = 128 and 512 on 8 x 8
// PEs: the part linear in Z).
WSEMU_SOLVER_TESTS(Bicgstab, kSpec, 4, SolverCase{16, 16, 64, 4, "wse2"}, SolverCase{8, 8, 128, 2, "wse2"},
                   SolverCase{8, 8, 512, 2, "wse2"})

}  // namespace
}  // namespace wsemu::testing
