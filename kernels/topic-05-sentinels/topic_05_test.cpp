// topic-05: the receiver's sum, closed by the sentinel control task, against the sum of the
// seeded values (fp32 in stream order, and the double-precision sum within tolerance).
#include "kernels/topic-05-sentinels/sentinel_sums.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

class Topic05 : public ::testing::TestWithParam<int> {};

TEST_P(Topic05, SentinelClosesTheSum) {
  const int n = GetParam();
  const xt::xarray<float> values = random_array({size_t(n)}, uint32_t(500 + n));
  const SentinelSums sums = sentinel_sums(values);
  const float in_order = sums.in_order;
  const double exact = sums.exact;
  LoadedRuntime rt(build_kernel("topic-05-sentinels", {{"N", n}}));
  rt.memcpy_h2d("values", words(values), 0, 0, 1, 1, n);
  rt.launch("send");
  std::vector<uint32_t> result = read_back(rt, "result", 1, 0, 1, 1, 1);
  std::vector<uint32_t> count = read_back(rt, "count", 1, 0, 1, 1, 1);
  EXPECT_EQ(count[0], uint32_t(n));
  EXPECT_EQ(std::bit_cast<float>(result[0]), in_order);
  EXPECT_NEAR(std::bit_cast<float>(result[0]), exact, 1e-5 * n);
  std::printf("topic-05 N=%d: %llu cycles\n", n, (unsigned long long)rt.cycles());
}

INSTANTIATE_TEST_SUITE_P(Sizes, Topic05, ::testing::Values(4, 1, 37));

}  // namespace
}  // namespace wsemu::testing
