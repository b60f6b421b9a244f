// Router features, driven through the host edge ports: routes and hop timing, multicast,
// switches (incl. ring mode and command shifting), filters, backpressure, in-order delivery and
// color isolation. Expected outputs are worked out by hand.
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::RouterCommand;
using emu::RunResult;
using emu::Wafer;
using emu::Wavelet;

TEST(Router, OneCyclePerHopAlongARow) {
  Wafer w(emu::arch_profile("wse2"), 4, 1);
  for (int x = 0; x < 4; ++x) w.set_route(x, 0, 3, route("W", "E"));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(3, 42)));
  // Cycle 0: PE0 forwards; 1: PE1; 2: PE2; 3: PE3 puts it on its east edge port.
  for (int c = 0; c < 3; ++c) {
    w.step();
    EXPECT_EQ(w.edge_output_count(3, 0, Direction::EAST), 0u) << "cycle " << c;
  }
  w.step();
  EXPECT_EQ(drain(w, 3, 0, Direction::EAST), std::vector<uint32_t>{42});
  const auto r = w.run(100);
  EXPECT_EQ(r.status, RunResult::Status::QUIESCENT);
  EXPECT_EQ(w.totals().wavelet_hops, 4u);  // three links between PEs plus the edge port
}

TEST(Router, MulticastCopiesToEveryOutputAtOnce) {
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.set_route(0, 0, 2, route("W", "NES"));
  for (uint32_t i = 0; i < 2; ++i) ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(2, i)));
  run_ok(w);
  EXPECT_EQ(drain(w, 0, 0, Direction::NORTH), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(drain(w, 0, 0, Direction::EAST), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(drain(w, 0, 0, Direction::SOUTH), (std::vector<uint32_t>{0, 1}));
}

TEST(Router, MulticastWaitsUntilEveryOutputHasRoom) {
  // Only the east port is drained; north fills up (3), so no output gets more than 3.
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.set_route(0, 0, 2, route("W", "NE"));
  uint32_t pushed = 0;
  std::vector<uint32_t> east;
  for (int cycle = 0; cycle < 30; ++cycle) {
    if (w.push_edge(0, 0, Direction::WEST, data_wavelet(2, pushed))) ++pushed;
    w.step();
    for (uint32_t v : drain(w, 0, 0, Direction::EAST)) east.push_back(v);
  }
  EXPECT_EQ(east, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(drain(w, 0, 0, Direction::NORTH), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(pushed, 6u);  // 3 delivered + 3 waiting in the west input buffer
}

TEST(Router, OneWaveletPerLinkPerCycleInOrderPerColor) {
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.set_route(0, 0, 1, route("W", "E"));
  w.set_route(0, 0, 2, route("W", "E"));
  for (uint32_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(1, 100 + i)));
    ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(2, 200 + i)));
  }
  std::vector<std::vector<Wavelet>> per_cycle;
  for (int c = 0; c < 8; ++c) {
    w.step();
    std::vector<Wavelet> got;
    while (auto wl = w.pop_edge(0, 0, Direction::EAST)) got.push_back(*wl);
    per_cycle.push_back(got);
  }
  std::vector<uint32_t> c1, c2;
  for (int c = 0; c < 6; ++c) {
    ASSERT_EQ(per_cycle[c].size(), 1u) << "cycle " << c;
    (per_cycle[c][0].color == 1 ? c1 : c2).push_back(per_cycle[c][0].payload);
  }
  EXPECT_TRUE(per_cycle[6].empty());
  EXPECT_EQ(c1, (std::vector<uint32_t>{100, 101, 102}));
  EXPECT_EQ(c2, (std::vector<uint32_t>{200, 201, 202}));
  // The colors take turns on the contended link.
  for (int c = 1; c < 6; ++c) EXPECT_NE(per_cycle[c][0].color, per_cycle[c - 1][0].color);
  const auto stats = w.stats_json();
  bool found = false;
  for (const auto& l : stats["links"])
    if (l["direction"] == "EAST") {
      found = true;
      EXPECT_EQ(l["wavelets"], 6);
      EXPECT_GT(l["contention_cycles"].get<int>(), 0);
    }
  EXPECT_TRUE(found);
}

TEST(Router, BackpressureFillsBuffersAndStopsTheSender) {
  // 2 routers, east edge never drained: 3 (edge port) + 3 (PE1 input) + 3 (PE0 input) = 9.
  Wafer w(emu::arch_profile("wse2"), 2, 1);
  w.set_route(0, 0, 1, route("W", "E"));
  w.set_route(1, 0, 1, route("W", "E"));
  uint32_t pushed = 0;
  for (int c = 0; c < 40; ++c) {
    if (w.push_edge(0, 0, Direction::WEST, data_wavelet(1, pushed))) ++pushed;
    w.step();
  }
  EXPECT_EQ(pushed, 9u);
  const RunResult r = w.run(1000);
  ASSERT_EQ(r.status, RunResult::Status::HANG) << r.to_string();
  ASSERT_FALSE(r.hang->host_waits.empty());
  EXPECT_NE(r.hang->host_waits[0].find("EAST edge port of PE(1,0) is full"), std::string::npos) << r.to_string();
  int backpressure = 0;
  const auto stats = w.stats_json();
  for (const auto& l : stats["links"]) backpressure += l["backpressure_cycles"].get<int>();
  EXPECT_GT(backpressure, 0);
  // Draining lets everything through, in order.
  std::vector<uint32_t> out;
  for (int c = 0; c < 20; ++c) {
    for (uint32_t v : drain(w, 1, 0, Direction::EAST)) out.push_back(v);
    w.step();
  }
  for (uint32_t v : drain(w, 1, 0, Direction::EAST)) out.push_back(v);
  EXPECT_EQ(out, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(Router, CongestedColorDoesNotBlockAnother) {
  // Both colors share the PE0 -> PE1 link. Color 1 leaves PE1 north (never drained), color 2
  // leaves east (drained). Color 1 stops after 9; color 2 flows on.
  Wafer w(emu::arch_profile("wse2"), 2, 1);
  w.set_route(0, 0, 1, route("W", "E"));
  w.set_route(0, 0, 2, route("W", "E"));
  w.set_route(1, 0, 1, route("W", "N"));
  w.set_route(1, 0, 2, route("W", "E"));
  uint32_t pushed1 = 0, pushed2 = 0;
  std::vector<uint32_t> out2;
  for (int c = 0; c < 100; ++c) {
    if (w.push_edge(0, 0, Direction::WEST, data_wavelet(1, pushed1))) ++pushed1;
    if (pushed2 < 40 && w.push_edge(0, 0, Direction::WEST, data_wavelet(2, pushed2))) ++pushed2;
    w.step();
    for (uint32_t v : drain(w, 1, 0, Direction::EAST)) out2.push_back(v);
  }
  EXPECT_EQ(pushed1, 9u);
  EXPECT_EQ(pushed2, 40u);
  ASSERT_EQ(out2.size(), 40u);
  for (uint32_t i = 0; i < 40; ++i) EXPECT_EQ(out2[i], i);
}

emu::ColorRoute three_way_switch(bool ring) {
  emu::ColorRoute r;
  r.positions[0] = {dirs("W"), dirs("E")};
  r.positions[1] = {dirs("W"), dirs("N")};
  r.positions[2] = {dirs("W"), dirs("S")};
  r.num_positions = 3;
  r.ring_mode = ring;
  r.pop_mode = emu::PopMode::ALWAYS_POP;
  return r;
}

TEST(Router, SwitchAdvancesAfterTheControlWaveletPassed) {
  for (bool ring : {true, false}) {
    Wafer w(emu::arch_profile("wse2"), 1, 1);
    w.set_route(0, 0, 5, three_way_switch(ring));
    // ADV in slot 0 (bits 24:22), no control task (31 in bits 21:16): 0x005F0000; popped, slot
    // 0 holds slot 1's NOP: 0x001F0000.
    const uint32_t adv = emu::make_control_payload({RouterCommand::SWITCH_ADV});
    ASSERT_EQ(adv, 0x005F0000u);
    const uint32_t popped = 0x001F0000u;
    const std::vector<Wavelet> in = {data_wavelet(5, 10), control_wavelet(5, adv), data_wavelet(5, 11),
                                     control_wavelet(5, adv), data_wavelet(5, 12), control_wavelet(5, adv),
                                     data_wavelet(5, 13)};
    size_t next = 0;
    for (int c = 0; c < 20; ++c) {
      if (next < in.size() && w.push_edge(0, 0, Direction::WEST, in[next])) ++next;
      w.step();
    }
    ASSERT_EQ(next, in.size());
    // The control wavelet uses the old position, so it goes out with the data before it.
    // Its command is consumed here; what leaves carries the shifted (empty) commands.
    EXPECT_EQ(drain(w, 0, 0, Direction::NORTH), (std::vector<uint32_t>{11, popped}));
    if (ring) {
      EXPECT_EQ(drain(w, 0, 0, Direction::EAST), (std::vector<uint32_t>{10, popped, 13}));
      EXPECT_EQ(drain(w, 0, 0, Direction::SOUTH), (std::vector<uint32_t>{12, popped}));
      EXPECT_EQ(w.route(0, 0, 5)->current, 0);
    } else {
      EXPECT_EQ(drain(w, 0, 0, Direction::EAST), (std::vector<uint32_t>{10, popped}));
      // The third ADV finds the switch on its last position: it cannot move it, so it leaves
      // unpopped (ADV still in slot 0) for the next router.
      EXPECT_EQ(drain(w, 0, 0, Direction::SOUTH), (std::vector<uint32_t>{12, adv, 13}));
      EXPECT_EQ(w.route(0, 0, 5)->current, 2);
    }
  }
}

TEST(Router, EachRouterExecutesCommandZeroAndShiftsTheRest) {
  // PE0 executes SWITCH_ADV (0 -> 1) after forwarding east; PE1 (starting at position 1, which
  // sends south) then executes the shifted SWITCH_RST (-> 0).
  Wafer w(emu::arch_profile("wse2"), 2, 1);
  emu::ColorRoute r0;
  r0.positions[0] = {dirs("W"), dirs("E")};
  r0.positions[1] = {dirs("W"), dirs("N")};
  r0.num_positions = 2;
  emu::ColorRoute r1;
  r1.positions[0] = {dirs("W"), dirs("E")};
  r1.positions[1] = {dirs("W"), dirs("S")};
  r1.num_positions = 2;
  r1.current = 1;
  r0.pop_mode = r1.pop_mode = emu::PopMode::ALWAYS_POP;
  w.set_route(0, 0, 7, r0);
  w.set_route(1, 0, 7, r1);
  // ADV in slot 0 (bits 24:22), RST in slot 1 (27:25), no task (31 in 21:16).
  const uint32_t cmds = emu::make_control_payload({RouterCommand::SWITCH_ADV, RouterCommand::SWITCH_RST});
  ASSERT_EQ(cmds, (1u << 22) | (2u << 25) | (31u << 16));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, control_wavelet(7, cmds)));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(7, 99)));
  run_ok(w);
  EXPECT_EQ(w.route(0, 0, 7)->current, 1);
  EXPECT_EQ(w.route(1, 0, 7)->current, 0);
  auto south = w.pop_edge(1, 0, Direction::SOUTH);
  ASSERT_TRUE(south);
  EXPECT_TRUE(south->control);
  EXPECT_EQ(south->payload, 31u << 16);  // both commands consumed: NOPs in every slot
  EXPECT_EQ(drain(w, 0, 0, Direction::NORTH), std::vector<uint32_t>{99});
}

TEST(Router, RangeFilterChoosesWhatReachesTheCore) {
  // wse2 data task on color 4 counts what it receives; the filter passes index 10..20 only.
  auto p = assemble(R"(
.arch wse2
.data
seen:   .u32 [2]      ; count, last payload
.code
.task on_wavelet, data, color 4
on_wavelet:
  ld32 r5, [seen]
  addi r5, r5, 1
  st32 [seen], r5
  st32 [seen + 4], r0
  exit
)");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p);
  emu::ColorRoute r = route("W", "RE");
  r.filter = true;
  r.filter_min = 10;
  r.filter_max = 20;
  w.set_route(0, 0, 4, r);
  for (uint32_t idx : {5u, 15u, 25u}) ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(4, idx << 16 | 7)));
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, addr(*p, "seen"), 2), (std::vector<uint32_t>{1, 15u << 16 | 7}));
  EXPECT_EQ(drain(w, 0, 0, Direction::EAST), (std::vector<uint32_t>{5u << 16 | 7, 15u << 16 | 7, 25u << 16 | 7}));
}

TEST(Router, TooManyFiltersIsAConfigurationError) {
  auto profile = emu::arch_profile_with("wse2", {"num_filters=1"});
  Wafer w(profile, 1, 1);
  emu::ColorRoute r = route("W", "E");
  r.filter = true;
  w.set_route(0, 0, 1, r);
  try {
    w.set_route(0, 0, 2, r);
    FAIL() << "expected a configuration error";
  } catch (const emu::FaultError& e) {
    EXPECT_EQ(e.fault().kind, emu::FaultKind::CONFIGURATION_ERROR);
  }
}

TEST(Router, EdgePortErrorsAreConfigurationErrors) {
  Wafer w(emu::arch_profile("wse2"), 2, 1);
  w.set_route(0, 0, 1, route("W", "E"));
  EXPECT_THROW(w.push_edge(0, 0, Direction::EAST, data_wavelet(1, 0)), emu::FaultError);  // not an edge
  EXPECT_THROW(w.push_edge(0, 0, Direction::WEST, data_wavelet(2, 0)), emu::FaultError);  // color not routed
  EXPECT_THROW(w.set_route(0, 0, 24, route("W", "E")), emu::FaultError);                  // not routable
}

}  // namespace
}  // namespace wsemu::testing
