// topic-07: each neighbour gets its block, then exactly one control task with its 16-bit tag
// in r0, after the whole block; the centre's switch ends back at position 0 (ring mode).
#include <random>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

TEST(Topic07, ControlTasksGetTheirTagAfterTheBlock) {
  const int K = 3;
  std::mt19937 gen(700);
  std::vector<uint32_t> blocks(4 * K), tags(4);
  for (uint32_t& v : blocks) v = gen();
  for (uint32_t& t : tags) t = gen() & 0xFFFF;
  LoadedRuntime rt(build_kernel("topic-07-switches-entrypt", {{"K", K}}));
  rt.memcpy_h2d("blocks", blocks, 1, 1, 1, 1, 4 * K);
  rt.memcpy_h2d("tags", tags, 1, 1, 1, 1, 4);
  launch_and_settle(rt, "send");
  const std::vector<std::pair<int, int>> neighbours = {{1, 0}, {2, 1}, {1, 2}, {0, 1}};  // N E S W
  for (size_t k = 0; k < neighbours.size(); ++k) {
    const auto [x, y] = neighbours[k];
    auto read = [&](const char* sym, int n) { return read_back(rt, sym, x, y, 1, 1, n); };
    const std::vector<uint32_t> want(blocks.begin() + long(k) * K, blocks.begin() + long(k + 1) * K);
    EXPECT_EQ(read("got", K), want) << "neighbour " << k;
    EXPECT_EQ(read("ngot", 1)[0], uint32_t(K));
    EXPECT_EQ(read("nctl", 1)[0], 1u) << "neighbour " << k;
    EXPECT_EQ(read("tag", 1)[0], tags[k]) << "neighbour " << k;
    EXPECT_EQ(read("ctl_after", 1)[0], uint32_t(K)) << "the control task ran before the block was in";
  }
  EXPECT_EQ(rt.wafer().route(2, 2, 0)->current, 0);
  std::printf("topic-07: %llu cycles (launch %llu)\n", (unsigned long long)rt.cycles(),
              (unsigned long long)rt.stats().launch_cycles);
}

}  // namespace
}  // namespace wsemu::testing
