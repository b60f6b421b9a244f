// The ramp latencies against the wafer-scale reduce model (Luczynski et al., HPDC'24): the
// pipelined chain reduce of tests/emulator/reduce_row.hpp (PE 0 `fmovs` its vector east, every
// other PE one `fadds` of its west fabric input and its own vector) takes exactly the model's
// T = B + (2 T_R + 2)(P - 1) plus a fixed start and end, and each latency key moves every hop
// by exactly its own cycles.
#include <gtest/gtest.h>

#include "tests/emulator/reduce_row.hpp"

namespace wsemu::testing {
namespace {

using reduce_row::Algorithm;

// The fixed part around the model in wsemu's pipeline: PE 0 reads its start stamp (`tsc`) in
// cycle s; `st32` (s + 1), the `fmovs` issues (s + 2) and takes the vector startup (2 cycles),
// so its first element is computed in s + 4. The model's B elements take B cycles, the first
// to the last B - 1 apart; the `tsc` after the root's op reads one cycle after its last
// element. So end - start = model + 4 + 1 - 1.
constexpr uint64_t kStartAndEnd = 4;

void expect_chain(const emu::ArchProfile& p, int P, int B, int per_hop) {
  const reduce_row::Result r = reduce_row::run(p, Algorithm::CHAIN, P, B);
  EXPECT_EQ(r.cycles(), uint64_t(B + per_hop * (P - 1)) + kStartAndEnd) << "P " << P << ", B " << B;
  for (int k = 0; k < B; ++k) {
    float want = 0;
    for (int i = 0; i < P; ++i) want += reduce_row::value(i, k);
    ASSERT_EQ(r.root_values[size_t(k)], want) << "element " << k;
  }
}

class RampLatency : public ::testing::TestWithParam<const char*> {};

TEST_P(RampLatency, ChainReduceTakesTheModelsTime) {
  const emu::ArchProfile& p = emu::arch_profile(GetParam());
  ASSERT_EQ(p.ramp_up_latency, p.ramp_down_latency) << "the model has one T_R for both ways";
  const int t_r = p.ramp_up_latency;
  for (const auto& [P, B] : {std::pair{4, 1}, {4, 16}, {9, 1}, {16, 64}, {33, 7}, {64, 256}})
    expect_chain(p, P, B, 2 * t_r + 2);
}

TEST_P(RampLatency, EachWayMovesEveryHopByItsCycles) {
  // Per hop: the op's cycle + ramp up, one link, ramp down (the model's 2 T_R + 2). The chain's
  // input queue is 4 deep, so a ramp down of up to 4 keeps the stream at one per cycle.
  for (const auto& [up, down] : {std::pair{0, 1}, {1, 1}, {2, 2}, {3, 1}, {0, 4}}) {
    const emu::ArchProfile p = emu::arch_profile_with(
        GetParam(), {"ramp_up_latency=" + std::to_string(up), "ramp_down_latency=" + std::to_string(down)});
    expect_chain(p, 6, 10, up + down + 2);
  }
}

INSTANTIATE_TEST_SUITE_P(Arch, RampLatency, ::testing::Values("wse2", "wse3"));

TEST(RampLatencyProfile, DefaultsAreTheModelsTrOnBothArchitectures) {
  // T_R = 2 on WSE-2 (the reduce model's CS-2 value); WSE-3: not published, assumed equal.
  for (const char* arch : {"wse2", "wse3"}) {
    EXPECT_EQ(emu::arch_profile(arch).ramp_up_latency, 2) << arch;
    EXPECT_EQ(emu::arch_profile(arch).ramp_down_latency, 2) << arch;
  }
  EXPECT_THROW(emu::arch_profile_with("wse2", {"ramp_down_latency=0"}), emu::FaultError);
  EXPECT_THROW(emu::arch_profile_with("wse2", {"ramp_down_latency=9"}), emu::FaultError);
}

}  // namespace
}  // namespace wsemu::testing
