// topic-08: receiver k must get exactly wavelets 3k, 3k + 1, 3k + 2 (index << 16 | value, in
// order), nothing else; the filtered copies are counted by the routers.
#include <random>

#include <nlohmann/json.hpp>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

TEST(Topic08, EachReceiverKeepsItsQuarter) {
  const int receivers = 4, total = 3 * receivers;
  std::mt19937 gen(800);
  std::vector<uint32_t> values(static_cast<size_t>(total));
  for (uint32_t& v : values) v = gen() & 0xFFFF;
  LoadedRuntime rt(build_kernel("topic-08-filters", {}));
  runtime::host::MemcpyOptions half;
  half.data_type = runtime::host::MemcpyDataType::MEMCPY_16BIT;
  rt.memcpy_h2d("values", values, 0, 0, 1, 1, total, half);
  launch_and_settle(rt, "send");
  for (int k = 0; k < receivers; ++k) {
    std::vector<uint32_t> ngot = read_back(rt, "ngot", k + 1, 0, 1, 1, 1);
    std::vector<uint32_t> got = read_back(rt, "got", k + 1, 0, 1, 1, total);
    ASSERT_EQ(ngot[0], 3u) << "receiver " << k;
    for (int j = 0; j < 3; ++j) {
      const uint32_t i = uint32_t(3 * k + j);
      EXPECT_EQ(got[size_t(j)], i << 16 | values[i]) << "receiver " << k << ", wavelet " << j;
    }
  }
  const nlohmann::json stats = rt.wafer().stats_json();
  uint64_t filtered = 0;
  for (const auto& c : stats["colors"])
    if (c["color"] == 0) filtered = c["filtered"].get<uint64_t>();
  EXPECT_EQ(filtered, uint64_t(receivers * total - total));  // every copy but the kept ones
  std::printf("topic-08: %llu cycles (launch %llu)\n", (unsigned long long)rt.cycles(),
              (unsigned long long)rt.stats().launch_cycles);
}

}  // namespace
}  // namespace wsemu::testing
