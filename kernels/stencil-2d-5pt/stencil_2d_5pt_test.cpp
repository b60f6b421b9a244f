// stencil-2d-5pt: Jacobi iterations of the 5-point heat stencil on a kx x ky rectangle with
// M x N points per PE and a zero (Dirichlet) boundary, against a double-precision reference
// that sweeps the whole (ky * M) x (kx * N) grid at once (no tiles, no halos), so it checks
// the halo exchange as well as the arithmetic.
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

struct Case {
  int kx, ky, m, n, iters;
};

// Readable (and stable) CTest names.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.kx << "x" << c.ky << " PEs of " << c.m << "x" << c.n << ", " << c.iters << " iterations";
}

// cN, cS, cW, cC, cE: four distinct neighbour weights (summing with cC to 1, a stable
// anisotropic heat step), so that a kernel applying one direction's weight to another, or
// mixing up a halo side, fails every case (the symmetric 0.1, 0.1, 0.1, 0.6, 0.1 of the heat
// step with alpha = 0.1 let a kernel that used cN for all four neighbours pass).
const std::vector<float> kCoeff = {0.11f, 0.13f, 0.17f, 0.4f, 0.19f};

xt::xarray<double> jacobi_reference(const xt::xarray<float>& u0, int iters) {
  const size_t rows = u0.shape(0), cols = u0.shape(1);
  xt::xarray<double> u = xt::cast<double>(u0);
  auto at = [&](const xt::xarray<double>& a, long i, long j) {
    return (i < 0 || j < 0 || i >= long(rows) || j >= long(cols)) ? 0.0 : a(size_t(i), size_t(j));
  };
  for (int t = 0; t < iters; ++t) {
    xt::xarray<double> next = xt::zeros<double>({rows, cols});
    for (long i = 0; i < long(rows); ++i)
      for (long j = 0; j < long(cols); ++j)
        next(size_t(i), size_t(j)) = kCoeff[0] * at(u, i - 1, j) + kCoeff[1] * at(u, i + 1, j) +
                                     kCoeff[2] * at(u, i, j - 1) + kCoeff[3] * at(u, i, j) +
                                     kCoeff[4] * at(u, i, j + 1);
    u = next;
  }
  return u;
}

struct StencilRun {
  xt::xarray<float> u;               // the whole grid after the iterations
  uint64_t min_cycles = 0, max_cycles = 0;  // per-PE end - start stamps
  std::vector<uint64_t> cycles;      // per PE, row-major py * kx + px
};

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
  const compiler::Executable exe = build_kernel(
      "stencil-2d-5pt", {{"kx", c.kx}, {"ky", c.ky}, {"M", c.m}, {"N", c.n}, {"ITERS", c.iters}});
  const size_t P = size_t(c.n) + 2, tile = (size_t(c.m) + 2) * P, pes = size_t(c.kx * c.ky);
  std::vector<uint32_t> padded(pes * tile, 0), coeff;
  for (int py = 0; py < c.ky; ++py)
    for (int px = 0; px < c.kx; ++px)
      for (int i = 0; i < c.m; ++i)
        for (int j = 0; j < c.n; ++j)
          padded[size_t(py * c.kx + px) * tile + size_t(i + 1) * P + size_t(j + 1)] =
              std::bit_cast<uint32_t>(grid(size_t(py * c.m + i), size_t(px * c.n + j)));
  for (int p = 0; p < c.kx * c.ky; ++p)
    for (float v : kCoeff) coeff.push_back(std::bit_cast<uint32_t>(v));
  runtime::host::RuntimeOptions options;
  options.backdoor = backdoor;
  runtime::host::SdkRuntime rt(exe, options);
  rt.load();
  rt.memcpy_h2d("u0", padded, 0, 0, c.kx, c.ky, int(tile));
  rt.memcpy_h2d("coeff", coeff, 0, 0, c.kx, c.ky, 5);
  launch_and_settle(rt, "compute");
  std::vector<uint32_t> out = read_back(rt, c.iters % 2 == 0 ? "u0" : "u1", 0, 0, c.kx, c.ky, int(tile));
  std::vector<uint32_t> t = read_back(rt, "maxmin_time", 0, 0, c.kx, c.ky, 4);
  StencilRun r;
  r.u = xt::zeros<float>(grid.shape());
  for (int py = 0; py < c.ky; ++py)
    for (int px = 0; px < c.kx; ++px)
      for (int i = 0; i < c.m; ++i)
        for (int j = 0; j < c.n; ++j)
          r.u(size_t(py * c.m + i), size_t(px * c.n + j)) =
              std::bit_cast<float>(out[size_t(py * c.kx + px) * tile + size_t(i + 1) * P + size_t(j + 1)]);
  r.min_cycles = UINT64_MAX;
  for (size_t p = 0; p < pes; ++p) {
    const uint64_t start = (uint64_t(t[p * 4 + 1] & 0xFFFF) << 32) | t[p * 4];
    const uint64_t end = (uint64_t(t[p * 4 + 3] & 0xFFFF) << 32) | t[p * 4 + 2];
    r.cycles.push_back(end - start);
    r.min_cycles = std::min(r.min_cycles, end - start);
    r.max_cycles = std::max(r.max_cycles, end - start);
  }
  return r;
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
