// topic-14: the SDK's check: values 0..n-1 streamed into the first PE; even PEs (which see
// blue) end with 2 * sum, odd PEs (red) with sum. A second case streams seeded values.
#include <random>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

void check(int width, const std::vector<uint32_t>& values) {
  LoadedRuntime rt(build_kernel("topic-14-color-swap", {{"WIDTH", width}}));
  runtime::host::MemcpyOptions stream;
  stream.streaming = true;
  rt.memcpy_h2d("row", values, 0, 0, 1, 1, int(values.size()), stream);
  rt.run_until_quiescent();
  std::vector<uint32_t> sums = read_back(rt, "sum", 0, 0, width, 1, 1);
  uint32_t total = 0;
  for (uint32_t v : values) total += v;
  for (int x = 0; x < width; ++x) EXPECT_EQ(sums[size_t(x)], (x % 2 == 0 ? 2 : 1) * total) << "PE " << x;
  std::printf("topic-14 width %d, %zu values: %llu cycles\n", width, values.size(), (unsigned long long)rt.cycles());
}

TEST(Topic14, SdkCaseRedBlueAlternate) { check(4, {0, 1, 2, 3, 4}); }

TEST(Topic14, SeededValuesOnALongerRow) {
  std::mt19937 gen(1400);
  std::vector<uint32_t> values(9);
  for (uint32_t& v : values) v = gen() % 100000;
  check(7, values);
}

}  // namespace
}  // namespace wsemu::testing
