// conjugate-gradient: ITERS steps of conjugate gradients (CG) for A x = b on the device against
// the same algorithm in double precision on the host, on the symmetric (SPD) stencil matrix of
// kernels/7pt-stencil-spmv/stencil7_reference.hpp, on several grids, wse2 and wse3
// (krylov_harness.hpp does the run and the checks). Tolerance: allclose with atol = rtol = 1e-5
// (why: README.md, "Tolerance").
#include "kernels/7pt-stencil-spmv/krylov_harness.hpp"

namespace wsemu::testing {
namespace {

// The host algorithm, step for step as cg.wsa does it, is cg_reference of krylov_harness.hpp.
const SolverSpec kSpec{"conjugate-gradient", "cg", 0.0, cg_reference};

// The grids of solver_grids (ITERS 6), and on request (WSEMU_KERNEL_LARGE=1) a 16 x 16 x 64 grid.
WSEMU_SOLVER_TESTS(ConjugateGradient, kSpec, 6, SolverCase{16, 16, 64, 6, "wse2"})

}  // namespace
}  // namespace wsemu::testing
