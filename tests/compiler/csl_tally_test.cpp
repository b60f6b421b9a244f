// <kernels/tally/layout> and <kernels/tally/pe> (compiler/csl/lib/kernels/tally) end to end:
// tests/compiler/programs/tally compiled by compile_csl and run on the host runtime. Every PE
// bumps the tally by random counts the host sends and signals completion; the collector, PE
// (W-1, 0), must run its callback exactly once, having seen the sum of all counts (summed
// here), when the layout waits for that sum, and never when it waits for one more.
#include <numeric>
#include <random>

#include "compiler/csl/cslc.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/compiler/csl_test_support.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::SdkRuntime;

constexpr int kCounts = 4;  // N: counts a PE

class CslTally : public ::testing::TestWithParam<CslGrid> {};

TEST_P(CslTally, CollectorSeesEveryBumpOnce) {
  const CslGrid s = GetParam();
  const int W = s.w, H = s.h;
  std::mt19937 rng(11);
  std::vector<uint32_t> counts(size_t(W * H * kCounts));
  for (auto& c : counts) c = rng() % 1000;
  const uint32_t sum = std::accumulate(counts.begin(), counts.end(), 0u);
  for (const uint32_t wait_for : {sum, sum + 1}) {
    SCOPED_TRACE("waiting for " + std::to_string(wait_for) + " of " + std::to_string(sum));
    LoadedRuntime rt(executable_of(compile_csl_kernel(
        source_dir() + "/tests/compiler/programs/tally/layout.csl",
        {{"W", std::to_string(W)}, {"H", std::to_string(H)}, {"N", std::to_string(kCounts)}, {"TOTAL", std::to_string(wait_for)}},
        s.arch, {W + 2, H + 2, 1, 1}, "wsemu-csl-tally-" + s.arch + "-" + std::to_string(W) + "x" + std::to_string(H))));
    rt.memcpy_h2d("counts", counts, 0, 0, W, H, kCounts);
    rt.launch("run");
    rt.launch("snapshot");
    std::vector<uint32_t> report = read_back(rt, "report", 0, 0, W, H, 3);
    for (int y = 0; y < H; ++y) {
      for (int x = 0; x < W; ++x) {
        SCOPED_TRACE("PE (" + std::to_string(x) + ", " + std::to_string(y) + ")");
        const size_t pe = size_t(y * W + x);
        const uint32_t* r = &report[pe * 3];
        const bool collector = x == W - 1 && y == 0;
        const uint32_t own = std::accumulate(counts.begin() + long(pe * kCounts), counts.begin() + long((pe + 1) * kCounts), 0u);
        EXPECT_EQ(r[2], collector ? sum : own) << "local_tally";
        EXPECT_EQ(r[0], collector && wait_for == sum ? 1u : 0u) << "callback runs";
        if (collector && wait_for == sum) {
          EXPECT_EQ(r[1], sum) << "the tally the callback saw";
        }
      }
    }
    std::printf("tally %s %dx%d: cycles %llu\n", s.arch.c_str(), W, H, (unsigned long long)rt.cycles());
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, CslTally,
                         ::testing::Values(CslGrid{"wse2", 5, 4}, CslGrid{"wse3", 5, 4}, CslGrid{"wse2", 1, 3},
                                           CslGrid{"wse3", 4, 1}, CslGrid{"wse2", 1, 1}, CslGrid{"wse3", 2, 2}),
                         named_by(&CslGrid::arch, "_", &CslGrid::w, "x", &CslGrid::h));

}  // namespace
}  // namespace wsemu::testing
