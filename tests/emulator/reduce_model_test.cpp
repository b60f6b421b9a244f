// The chain, star and tree reduce of tests/emulator/reduce_row.hpp on 1-D rows against the
// wafer-scale reduce model's formulas (Luczynski et al., HPDC'24): within 5 % (issue #16) for
// sizes where the model's terms, not wsemu's fixed start and end of a few cycles, dominate, and
// with the right sums. The full table (P = 4..64, B = 1..256) is tests/bench/calibration.
#include <gtest/gtest.h>

#include "tests/emulator/reduce_row.hpp"

namespace wsemu::testing {
namespace {

using reduce_row::Algorithm;

struct Case {
  Algorithm algorithm;
  int P, B;
};

class ReduceModel : public ::testing::TestWithParam<const char*> {};

TEST_P(ReduceModel, ChainStarAndTreeAreWithinFivePercentOfTheModel) {
  const emu::ArchProfile& p = emu::arch_profile(GetParam());
  const int t_r = p.ramp_up_latency;
  // The tree at B = 256: its rounds are store-and-forward, so it runs (P - 1) + log2 P + 4
  // cycles above the model, whose max(C, E/N + L) overlaps the path with the root's intake;
  // that is under 5 % only where B log2 P dominates (tests/bench/calibration shows every size).
  for (const Case& c : {Case{Algorithm::CHAIN, 8, 128}, Case{Algorithm::CHAIN, 32, 64}, Case{Algorithm::CHAIN, 64, 16},
                        Case{Algorithm::STAR, 4, 64}, Case{Algorithm::STAR, 16, 32}, Case{Algorithm::STAR, 32, 8},
                        Case{Algorithm::TREE, 4, 256}, Case{Algorithm::TREE, 16, 256}, Case{Algorithm::TREE, 32, 256}}) {
    const reduce_row::Result r = reduce_row::run(p, c.algorithm, c.P, c.B);
    const double model = reduce_row::model_cycles(c.algorithm, c.P, c.B, t_r);
    const double ratio = double(r.cycles()) / model;
    EXPECT_NEAR(ratio, 1.0, 0.05) << reduce_row::algorithm_name(c.algorithm) << " P " << c.P << " B " << c.B
                                  << ": emulated " << r.cycles() << ", model " << model;
    // The sums: element by element (chain, tree); the total for the star, whose routers
    // interleave the streams. Small integers: exact in any order.
    double want_total = 0, got_total = 0;
    for (int k = 0; k < c.B; ++k) {
      float want = 0;
      for (int i = 0; i < c.P; ++i) want += reduce_row::value(i, k);
      want_total += want;
      got_total += r.root_values[size_t(k)];
      if (c.algorithm != Algorithm::STAR) {
        ASSERT_EQ(r.root_values[size_t(k)], want) << "element " << k;
      }
    }
    EXPECT_EQ(got_total, want_total) << reduce_row::algorithm_name(c.algorithm);
  }
}

INSTANTIATE_TEST_SUITE_P(Arch, ReduceModel, ::testing::Values("wse2", "wse3"));

}  // namespace
}  // namespace wsemu::testing
