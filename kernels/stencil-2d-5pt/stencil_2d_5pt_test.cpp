// stencil-2d-5pt: Jacobi iterations of the 5-point heat stencil on a kx x ky rectangle with
// M x N points per PE and a zero (Dirichlet) boundary, against the double-precision whole-grid
// reference of stencil_run.hpp, so it checks the halo exchange as well as the arithmetic.
#include "kernels/stencil-2d-5pt/stencil_run.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using Case = StencilCase;

// The kernel's cycles per PE from the timing model (emulator/README.md "Timing model": fmuls /
// fmacs at one element per cycle plus a 2-cycle startup, 1 cycle per scalar instruction and
// per task pick), counted from stencil.wsa. Per iteration: the stencil, M rows of fmuls + fmacs
// over N points and 5 scalar instructions, N columns of 3 fmacs over M points and 6 scalar
// instructions, 25 instructions around them; the halo, one task per received wavelet (pick +
// 6 instructions), per side with a neighbour the send set-up (6), the end of its receive
// (8) and its completion task (9), start_iter's fixed 17 and 2 per side without a neighbour;
// plus 20 for the prologue and the final stamps. Not itemised: the first halo wavelet's ramp
// and link latency (hidden behind start_iter's instructions when the neighbours start
// together) and the order in which the completion tasks interleave with the receives.
double model_cycles(const Case& c, int px, int py) {
  const int sides = (px > 0) + (px < c.kx - 1) + (py > 0) + (py < c.ky - 1);
  const int halo = ((px > 0) + (px < c.kx - 1)) * c.m + ((py > 0) + (py < c.ky - 1)) * c.n;
  const double stencil = c.m * (2.0 * (c.n + 2) + 5) + c.n * (3.0 * (c.m + 2) + 6) + 25;
  const double exchange = 7.0 * halo + (6 + 8 + 9) * sides + 17 + 2 * (4 - sides);
  return c.iters * (stencil + exchange) + 20;
}

// The window the cycle checks allow around model_cycles: what it does not itemise is a few
// tens of cycles per iteration, under 10 % at the smallest tile tested (4 x 4 points). A PE
// cannot start iteration i + 1 before its neighbours' halo of iteration i has arrived, so
// with more than one iteration the pace is the slowest PE's: the upper end of every PE's
// window is the grid's largest model.
constexpr double kModelTolerance = 0.10;

StencilRun run_stencil(const Case& c, const xt::xarray<float>& grid, bool backdoor) {
  return testing::run_stencil(
      build_kernel("stencil-2d-5pt", {{"kx", c.kx}, {"ky", c.ky}, {"M", c.m}, {"N", c.n}, {"ITERS", c.iters}}), c, grid,
      backdoor);
}

void expect_cycles_within_the_model(const Case& c, const StencilRun& r) {
  double slowest = 0;
  for (int py = 0; py < c.ky; ++py)
    for (int px = 0; px < c.kx; ++px) slowest = std::max(slowest, model_cycles(c, px, py));
  for (int py = 0; py < c.ky; ++py)
    for (int px = 0; px < c.kx; ++px) {
      const double own = model_cycles(c, px, py), upper = c.iters > 1 ? slowest : own;
      const double got = double(r.cycles[size_t(py * c.kx + px)]);
      EXPECT_GE(got, own * (1 - kModelTolerance)) << "PE (" << px << "," << py << "), model " << own;
      EXPECT_LE(got, upper * (1 + kModelTolerance)) << "PE (" << px << "," << py << "), model " << upper;
    }
}

class Stencil2d5pt : public ::testing::TestWithParam<Case> {};

TEST_P(Stencil2d5pt, MatchesWholeGridReference) {
  const Case c = GetParam();
  const xt::xarray<float> grid = random_array({size_t(c.ky * c.m), size_t(c.kx * c.n)}, 77);
  const StencilRun r = run_stencil(c, grid, false);
  expect_close(r.u, jacobi_reference(grid, c.iters), 1e-5, 1e-5, "u");
  expect_cycles_within_the_model(c, r);
}

INSTANTIATE_TEST_SUITE_P(Grids, Stencil2d5pt,
                         ::testing::Values(Case{3, 3, 5, 4, 3}, Case{2, 2, 8, 8, 2}, Case{4, 1, 3, 6, 4},
                                           Case{1, 1, 4, 4, 2}, Case{1, 3, 6, 2, 1}),
                         named_by(&Case::kx, "x", &Case::ky, "_pes_", &Case::m, "x", &Case::n, "_iters",
                                  &Case::iters));

// The community figure's configuration: 4 x 4 PEs, 64 x 64 points each, one iteration (the
// 64 x 64 tile with its halo, twice, fits the 44 KiB below the firmware). The back door keeps
// the copies out of the test's time; the kernel's own stamps are what is compared.
TEST(Stencil2d5ptCalibration, SixtyFourSquarePerPeOnFourByFour) {
  const Case c{4, 4, 64, 64, 1};
  const xt::xarray<float> grid = random_array({256, 256}, 78);
  const StencilRun r = run_stencil(c, grid, true);
  expect_close(r.u, jacobi_reference(grid, 1), 1e-5, 1e-5, "u");
  std::printf("stencil-2d-5pt 4x4 PEs, 64x64 per PE, 1 iteration: %llu .. %llu cycles per PE\n",
              static_cast<unsigned long long>(r.min_cycles), static_cast<unsigned long long>(r.max_cycles));
  expect_cycles_within_the_model(c, r);
}

}  // namespace
}  // namespace wsemu::testing
