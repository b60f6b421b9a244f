// single-tile-matvec: every PE computes its own y = A x (A NB x NB, column-major in SRAM),
// checked per PE against the xtensor reference; the kernel's cycle-counter stamps must give
// the documented cost: ITERS * NB columns of (NB fmacs elements at 1 per cycle + vector
// startup + the 4-instruction loop), plus a few cycles of setup.
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

struct Case {
  int kx, ky, nb, iters;
  std::string arch;
};

// Readable (and stable) CTest names.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.arch << " " << c.kx << "x" << c.ky << " NB " << c.nb << " iters " << c.iters;
}

struct MatvecRun {
  std::vector<xt::xarray<float>> A, x, y;  // per PE, row-major index py * kx + px
  std::vector<uint64_t> cycles;            // end - start stamp per PE
};

uint64_t stamp(uint32_t lo, uint32_t hi) { return (uint64_t(hi & 0xFFFF) << 32) | lo; }

MatvecRun run_matvec(const Case& c) {
  const size_t pes = size_t(c.kx * c.ky), nb = size_t(c.nb);
  MatvecRun r;
  std::vector<uint32_t> a_words, x_words;
  for (size_t p = 0; p < pes; ++p) {
    r.A.push_back(random_array({nb, nb}, uint32_t(100 + p)));
    r.x.push_back(random_array({nb}, uint32_t(200 + p)));
    const xt::xarray<float> col_major = xt::transpose(r.A.back());  // column j contiguous
    for (uint32_t w : words(col_major)) a_words.push_back(w);
    for (uint32_t w : words(r.x.back())) x_words.push_back(w);
  }
  LoadedRuntime rt(build_kernel("single-tile-matvec",
                                {{"kx", c.kx}, {"ky", c.ky}, {"NB", c.nb}, {"ITERS", c.iters}},
                                c.arch));
  rt.memcpy_h2d("A", a_words, 0, 0, c.kx, c.ky, c.nb * c.nb);
  rt.memcpy_h2d("x", x_words, 0, 0, c.kx, c.ky, c.nb);
  launch_and_settle(rt, "compute");
  std::vector<uint32_t> y = read_back(rt, "y", 0, 0, c.kx, c.ky, c.nb);
  std::vector<uint32_t> t = read_back(rt, "maxmin_time", 0, 0, c.kx, c.ky, 4);
  for (size_t p = 0; p < pes; ++p) {
    r.y.push_back(floats(std::vector<uint32_t>(y.begin() + long(p * nb), y.begin() + long((p + 1) * nb)), {nb}));
    r.cycles.push_back(stamp(t[p * 4 + 2], t[p * 4 + 3]) - stamp(t[p * 4], t[p * 4 + 1]));
  }
  return r;
}

class SingleTileMatvec : public ::testing::TestWithParam<Case> {};

TEST_P(SingleTileMatvec, EveryPeMatchesReferenceAndCost) {
  const Case c = GetParam();
  const MatvecRun r = run_matvec(c);
  for (size_t p = 0; p < r.y.size(); ++p) {
    const xt::xarray<float> zero_b = xt::zeros<float>({size_t(c.nb)});
    const xt::xarray<double> want = double(c.iters) * gemv_reference(r.A[p], r.x[p], zero_b);
    expect_close(r.y[p], want, 1e-4 * c.iters, 1e-5, "y of PE " + std::to_string(p));
    // Hand-worked cost: per column ld32 + (startup 2 + NB) + dsdinc + addi + bne; per matvec
    // 4 setup instructions and 3 of loop control; plus the tsc and tsch of the first stamp.
    const uint64_t per_matvec = uint64_t(c.nb) * (uint64_t(c.nb) + 2 + 4) + 4 + 3;
    EXPECT_EQ(r.cycles[p], uint64_t(c.iters) * per_matvec + 2) << "PE " << p;
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, SingleTileMatvec,
                         ::testing::Values(Case{2, 2, 25, 1, "wse2"}, Case{2, 2, 10, 3, "wse2"},
                                           Case{3, 1, 17, 1, "wse3"}),
                         named_by(&Case::arch, "_", &Case::kx, "x", &Case::ky, "_nb", &Case::nb, "_iters",
                                  &Case::iters));

}  // namespace
}  // namespace wsemu::testing
