// Color swap (WSE-2, the SDK's topic-14): a wavelet of the pair (c, c ^ 1) arriving over an
// east/west link at a router with swap_x (north/south with swap_y) continues as the other
// color. Hand-worked cases: a row of 4 routers, swap on the last 3, so a wavelet pushed on
// color 0 at the west edge leaves the east edge as 0 -> 1 -> 0 -> 1; many wavelets of both
// colors exercise the credits of the swapped buffers; a pair with one route missing does not
// swap.
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::Wafer;

emu::ColorRoute swapping(std::string_view rx, std::string_view tx, bool x_axis) {
  emu::ColorRoute r = route(rx, tx);
  (x_axis ? r.swap_x : r.swap_y) = true;
  return r;
}

std::vector<std::pair<int, uint32_t>> drain_colored(Wafer& w, int x, int y, Direction side) {
  std::vector<std::pair<int, uint32_t>> out;
  for (int c = 0; c < 1000; ++c) {
    while (auto wl = w.pop_edge(x, y, side)) out.emplace_back(wl->color, wl->payload);
    if (w.run(1).status == emu::RunResult::Status::QUIESCENT) {
      while (auto wl = w.pop_edge(x, y, side)) out.emplace_back(wl->color, wl->payload);
      break;
    }
  }
  return out;
}

TEST(ColorSwap, AlternatesOnEveryHopEast) {
  Wafer w(emu::arch_profile("wse2"), 4, 1);
  for (int color : {0, 1}) {
    w.set_route(0, 0, color, route("W", "E"));
    for (int x = 1; x < 4; ++x) w.set_route(x, 0, color, swapping("W", "E", true));
  }
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(0, 10)));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(1, 11)));
  // Three swapping hops (PE 1, 2, 3): 0 -> 1, 1 -> 0.
  EXPECT_EQ(drain_colored(w, 3, 0, Direction::EAST), (std::vector<std::pair<int, uint32_t>>{{1, 10}, {0, 11}}));
}

TEST(ColorSwap, CreditsFollowTheSwappedBuffersUnderLoad) {
  Wafer w(emu::arch_profile("wse2"), 4, 1);
  for (int color : {0, 1}) {
    w.set_route(0, 0, color, route("W", "E"));
    for (int x = 1; x < 4; ++x) w.set_route(x, 0, color, swapping("W", "E", true));
  }
  std::vector<std::pair<int, uint32_t>> got;
  int pushed = 0;
  const int total = 40;
  for (int c = 0; c < 2000 && int(got.size()) < total; ++c) {
    if (pushed < total && w.push_edge(0, 0, Direction::WEST, data_wavelet(uint8_t(pushed % 2), uint32_t(pushed))))
      ++pushed;
    w.step();
    while (auto wl = w.pop_edge(3, 0, Direction::EAST)) got.emplace_back(wl->color, wl->payload);
  }
  ASSERT_EQ(int(got.size()), total);
  std::vector<uint32_t> even, odd;  // per arriving color, in order
  for (auto [color, payload] : got) {
    EXPECT_EQ(color, int(payload % 2) ^ 1) << "payload " << payload;
    (color == 1 ? even : odd).push_back(payload);
  }
  for (size_t i = 0; i < even.size(); ++i) EXPECT_EQ(even[i], 2 * i);
  for (size_t i = 0; i < odd.size(); ++i) EXPECT_EQ(odd[i], 2 * i + 1);
}

TEST(ColorSwap, SwapYActsOnNorthSouthLinksOnly) {
  Wafer w(emu::arch_profile("wse2"), 1, 3);
  for (int color : {2, 3}) {
    w.set_route(0, 0, color, route("N", "S"));
    w.set_route(0, 1, color, swapping("N", "S", false));
    w.set_route(0, 2, color, swapping("N", "S", true));  // swap_x: a north link does not swap
  }
  ASSERT_TRUE(w.push_edge(0, 0, Direction::NORTH, data_wavelet(2, 5)));
  EXPECT_EQ(drain_colored(w, 0, 2, Direction::SOUTH), (std::vector<std::pair<int, uint32_t>>{{3, 5}}));
}

TEST(ColorSwap, IncompletePairDoesNotSwap) {
  Wafer w(emu::arch_profile("wse2"), 2, 1);
  w.set_route(0, 0, 4, route("W", "E"));
  w.set_route(1, 0, 4, swapping("W", "E", true));  // no route for color 5 at PE 1
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(4, 9)));
  EXPECT_EQ(drain_colored(w, 1, 0, Direction::EAST), (std::vector<std::pair<int, uint32_t>>{{4, 9}}));
}

}  // namespace
}  // namespace wsemu::testing
