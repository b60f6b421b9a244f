// topic-03: a data task on the host stream accumulates into a global. Seeded random u32 words
// are streamed in; the sum (mod 2^32, as numpy's uint32) and the count are checked against a
// plain C++ loop, on wse2 (task on color 23) and wse3 (task on input queue 1).
#include <random>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

struct Case {
  std::string layout;
  size_t n;
};

class Topic03 : public ::testing::TestWithParam<Case> {};

TEST_P(Topic03, SumOfStreamMatchesReference) {
  const Case c = GetParam();
  std::mt19937 gen(uint32_t(300 + c.n));
  std::vector<uint32_t> data(c.n);
  uint32_t expected = 0;
  for (uint32_t& v : data) {
    v = gen();
    expected += v;
  }
  LoadedRuntime rt(build_kernel("topic-03-streaming-wavelet-data", {}, "", c.layout));
  runtime::host::MemcpyOptions stream;
  stream.streaming = true;
  rt.memcpy_h2d("stream", data, 0, 0, 1, 1, int(c.n), stream);
  std::vector<uint32_t> sum = read_back(rt, "sum", 0, 0, 1, 1, 1);
  std::vector<uint32_t> count = read_back(rt, "count", 0, 0, 1, 1, 1);
  EXPECT_EQ(sum[0], expected);
  EXPECT_EQ(count[0], c.n);
  std::printf("topic-03 %s, %zu wavelets: %llu cycles\n", c.layout.c_str(), c.n, (unsigned long long)rt.cycles());
}

INSTANTIATE_TEST_SUITE_P(Streams, Topic03,
                         ::testing::Values(Case{"layout.wsl", 5}, Case{"layout.wsl", 100},
                                           Case{"layout_wse3.wsl", 64}),
                         [](const auto& info) {
                           const Case& c = info.param;
                           return case_name(c.layout == "layout.wsl" ? "wse2_" : "wse3_", c.n);
                         });

}  // namespace
}  // namespace wsemu::testing
