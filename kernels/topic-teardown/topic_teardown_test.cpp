// topic-teardown: one color broadcasts a eastwards, is torn down at every router of the row and
// switched to position 1 by each teardown task, then broadcasts b westwards. Every PE ends with
// the host's a and b bit-exact (a copy is exact), each teardown task ran once and saw only the
// broadcast color (bit 3) torn down; without `tdexit` the run hangs and the report names it.
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/expect_host_error.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::HostError;

constexpr int kRow = 4;  // the layout's row: one control wavelet carries 4 router commands

TEST(TopicTeardown, OneColorCarriesBothBroadcasts) {
  const int n = 5;
  const xt::xarray<float> a = random_array({size_t(n)}, 2901), b = random_array({size_t(n)}, 2902);
  LoadedRuntime rt(build_kernel("topic-teardown", {{"N", n}}));
  rt.memcpy_h2d("a", words(a), 0, 0, 1, 1, n);         // the west PE sends a
  rt.memcpy_h2d("b", words(b), kRow - 1, 0, 1, 1, n);  // the east PE sends b
  launch_and_settle(rt, "run");
  std::vector<uint32_t> got_a = read_back(rt, "a", 0, 0, kRow, 1, n);
  std::vector<uint32_t> got_b = read_back(rt, "b", 0, 0, kRow, 1, n);
  std::vector<uint32_t> torn = read_back(rt, "torn", 0, 0, kRow, 1, 1);
  std::vector<uint32_t> mask = read_back(rt, "mask", 0, 0, kRow, 1, 1);
  const std::vector<uint32_t> wa = words(a), wb = words(b);
  for (int x = 0; x < kRow; ++x) {
    SCOPED_TRACE(x);
    EXPECT_EQ(std::vector<uint32_t>(got_a.begin() + x * n, got_a.begin() + (x + 1) * n), wa);
    EXPECT_EQ(std::vector<uint32_t>(got_b.begin() + x * n, got_b.begin() + (x + 1) * n), wb);
    EXPECT_EQ(torn[size_t(x)], 1u);
    EXPECT_EQ(mask[size_t(x)], 1u << 3);  // color c_bc = 3
  }
  std::printf("topic-teardown N=%d: %llu cycles\n", n, (unsigned long long)rt.cycles());
}

TEST(TopicTeardown, WithoutTdexitTheHangReportNamesTheTeardown) {
  LoadedRuntime rt(build_kernel("topic-teardown", {{"N", 5}, {"TDEXIT", 0}}));
  const HostError e = run_expecting(rt, {"run"}, HostError::Kind::HANG);
  ASSERT_TRUE(e.hang());
  const std::string report = e.hang()->to_string();
  EXPECT_NE(report.find("color 3 is torn down at this router (teardown task 29 ran without `tdexit 3`)"),
            std::string::npos)
      << report;
}

}  // namespace
}  // namespace wsemu::testing
