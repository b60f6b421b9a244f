// topic-06: five seeded blocks leave the centre on one color; north must receive blocks 0 and 4
// (the ring wrapped), east block 1, south block 2, west block 3, and the corners nothing.
#include <random>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

TEST(Topic06, OneColorReachesFourNeighboursAndWraps) {
  const int K = 3;
  std::mt19937 gen(600);
  std::vector<uint32_t> blocks(5 * K);
  for (uint32_t& v : blocks) v = gen();
  LoadedRuntime rt(build_kernel("topic-06-switches", {{"K", K}}));
  rt.memcpy_h2d("blocks", blocks, 1, 1, 1, 1, 5 * K);
  launch_and_settle(rt, "send");
  auto block = [&](int b) { return std::vector<uint32_t>(blocks.begin() + b * K, blocks.begin() + (b + 1) * K); };
  struct Neighbour {
    int x, y;
    std::vector<int> blocks;
  };
  const std::vector<Neighbour> expected = {{1, 0, {0, 4}}, {2, 1, {1}}, {1, 2, {2}}, {0, 1, {3}}};
  for (const Neighbour& n : expected) {
    std::vector<uint32_t> want;
    for (int b : n.blocks) {
      const std::vector<uint32_t> part = block(b);
      want.insert(want.end(), part.begin(), part.end());
    }
    std::vector<uint32_t> ngot = read_back(rt, "ngot", n.x, n.y, 1, 1, 1);
    std::vector<uint32_t> got = read_back(rt, "got", n.x, n.y, 1, 1, 2 * K);
    ASSERT_EQ(ngot[0], want.size()) << "PE (" << n.x << ", " << n.y << ")";
    got.resize(want.size());
    EXPECT_EQ(got, want) << "PE (" << n.x << ", " << n.y << ")";
  }
  for (auto [x, y] : std::vector<std::pair<int, int>>{{0, 0}, {2, 0}, {0, 2}, {2, 2}}) {
    std::vector<uint32_t> ngot = read_back(rt, "ngot", x, y, 1, 1, 1);
    EXPECT_EQ(ngot[0], 0u);
  }
  // Four switch changes wrap the ring to position 0; the fifth leaves it at 1.
  const emu::ColorRoute r = *rt.wafer().route(2, 2, 0);
  EXPECT_EQ(r.current, 1);
  std::printf("topic-06: %llu cycles (launch %llu)\n", (unsigned long long)rt.cycles(),
              (unsigned long long)rt.stats().launch_cycles);
}

}  // namespace
}  // namespace wsemu::testing
