// Run-time route configuration (emulator/README.md "Route writes and pop modes"): the pop
// modes of control-wavelet commands, the ce_ignore bit, colors that start torn down, `tdpend`,
// the route writes `rtcfg` / `rtpos` / `rtinval` / `rtmode`, and the buffers of a route that may
// be rewritten. Expected positions and cycles are worked out by hand in the comments.
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::ColorRoute;
using emu::FaultKind;
using emu::PopMode;
using emu::RouterCommand;
using emu::RunResult;
using emu::Wafer;
using emu::Wavelet;

Wavelet commands(uint8_t color, RouterCommand c0, RouterCommand c1 = RouterCommand::NOP,
                 RouterCommand c2 = RouterCommand::NOP, bool ce_ignore = false) {
  return control_wavelet(color, emu::make_control_payload({c0, c1, c2}, emu::kNoControlTask, 0, ce_ignore));
}

// Whether `color` is in teardown at PE (x, y): the hang report lists every torn-down color.
bool torn_down(const Wafer& w, int x, int y, int color) {
  const emu::HangReport rep = w.hang_report();
  const emu::BlockedPe* pe = rep.find(x, y);
  if (!pe) return false;
  for (const emu::Wait& wait : pe->waits)
    if (wait.kind == emu::Wait::Kind::TEARDOWN && wait.color == color) return true;
  return false;
}

// A row of three routers without cores: color 1 goes west to east at position 0, and south (off
// the fabric) at position 1. One control wavelet enters at the west edge of PE(0,0).
struct Row {
  Wafer w{emu::arch_profile("wse2"), 3, 1};
  explicit Row(PopMode mode) {
    ColorRoute r = route("W", "E");
    r.positions[1] = {dirs("W"), dirs("S")};
    r.num_positions = 2;
    r.pop_mode = mode;
    for (int x = 0; x < 3; ++x) w.set_route(x, 0, 1, r);
  }
  std::vector<int> positions_after(const Wavelet& cw) {
    EXPECT_TRUE(w.push_edge(0, 0, Direction::WEST, cw));
    run_ok(w);
    std::vector<int> out;
    for (int x = 0; x < 3; ++x) out.push_back(w.route(x, 0, 1)->current);
    return out;
  }
};

TEST(PopMode, AlwaysPopGivesEachRouterTheNextCommand) {
  // ADV, ADV, NOP: PE(0,0) and PE(1,0) advance, PE(2,0) sees NOP.
  Row row(PopMode::ALWAYS_POP);
  EXPECT_EQ(row.positions_after(commands(1, RouterCommand::SWITCH_ADV, RouterCommand::SWITCH_ADV)),
            (std::vector<int>{1, 1, 0}));
  // The wavelet itself left every router on position 0 and reaches the east edge of PE(2,0)
  // with its commands popped: only NOPs are left.
  const auto out = row.w.pop_edge(2, 0, Direction::EAST);
  ASSERT_TRUE(out && out->control);
  EXPECT_EQ(emu::control_command(out->payload), RouterCommand::NOP);
}

TEST(PopMode, NoPopGivesEveryRouterTheSameCommand) {
  // ADV, NOP, NOP never popped: all three routers execute ADV.
  Row row(PopMode::NO_POP);
  EXPECT_EQ(row.positions_after(commands(1, RouterCommand::SWITCH_ADV)), (std::vector<int>{1, 1, 1}));
  const auto out = row.w.pop_edge(2, 0, Direction::EAST);
  ASSERT_TRUE(out);
  EXPECT_EQ(emu::control_command(out->payload), RouterCommand::SWITCH_ADV);
}

TEST(PopMode, PopOnAdvancePopsOnlySwitchAdvances) {
  // ADV (popped at PE(0,0)), then NOP, which is never popped: PE(1,0) and PE(2,0) stay.
  Row a(PopMode::POP_ON_ADVANCE);
  EXPECT_EQ(a.positions_after(commands(1, RouterCommand::SWITCH_ADV, RouterCommand::NOP, RouterCommand::SWITCH_ADV)),
            (std::vector<int>{1, 0, 0}));
  // ADV, ADV: popped twice, then NOP for the third router.
  Row b(PopMode::POP_ON_ADVANCE);
  EXPECT_EQ(b.positions_after(commands(1, RouterCommand::SWITCH_ADV, RouterCommand::SWITCH_ADV)),
            (std::vector<int>{1, 1, 0}));
}

TEST(PopMode, ASwitchAdvanceThatCannotMoveTheSwitchIsNotPopped) {
  // ADV, NOP. Always pop, PE(0,0) without switch positions: its ADV moves nothing and goes on
  // unpopped, so PE(1,0) advances (and pops it) and PE(2,0) sees NOP.
  Row no_switch(PopMode::ALWAYS_POP);
  no_switch.w.set_route(0, 0, 1, route("W", "E"));
  EXPECT_EQ(no_switch.positions_after(commands(1, RouterCommand::SWITCH_ADV)), (std::vector<int>{0, 1, 0}));
  // Pop on advance, PE(0,0) already on its last position without ring mode: the same (the
  // SDK's cholesky: the PE that sent on the row passes ADV, NOP on to the next one east).
  auto on_last = [](Row& row, bool ring_mode) {
    ColorRoute r = *row.w.route(0, 0, 1);
    r.positions[1] = {dirs("W"), dirs("E")};  // so that the wavelet, leaving on position 1, goes on east
    r.current = 1;
    r.ring_mode = ring_mode;
    row.w.set_route(0, 0, 1, r);
  };
  Row at_last(PopMode::POP_ON_ADVANCE);
  on_last(at_last, false);
  EXPECT_EQ(at_last.positions_after(commands(1, RouterCommand::SWITCH_ADV)), (std::vector<int>{1, 1, 0}));
  // With ring mode the last position wraps to 0: that ADV moves, is popped, PE(1,0) sees NOP.
  Row ring(PopMode::POP_ON_ADVANCE);
  on_last(ring, true);
  EXPECT_EQ(ring.positions_after(commands(1, RouterCommand::SWITCH_ADV)), (std::vector<int>{0, 0, 0}));
}

TEST(PopMode, ATeardownNotPoppedTearsTheColorDownAlongItsPath) {
  // The SDK's one-command teardown: with pop on advance every router on the path executes it.
  Row on_advance(PopMode::POP_ON_ADVANCE);
  on_advance.positions_after(commands(1, RouterCommand::TEARDOWN));
  for (int x = 0; x < 3; ++x) EXPECT_TRUE(torn_down(on_advance.w, x, 0, 1)) << "x " << x;
  // Always pop: only the first router.
  Row always(PopMode::ALWAYS_POP);
  always.positions_after(commands(1, RouterCommand::TEARDOWN));
  EXPECT_TRUE(torn_down(always.w, 0, 0, 1));
  EXPECT_FALSE(torn_down(always.w, 1, 0, 1));
  EXPECT_FALSE(torn_down(always.w, 2, 0, 1));
}

TEST(CeIgnore, AControlWaveletWithTheBitNeverReachesTheCore) {
  // Color 3 goes to the RAMP and on east. A control wavelet asking to run control task 5 but
  // carrying ce_ignore goes east only (counted as filtered at the RAMP); the data wavelet after
  // it lands and runs data task 3, which stores its payload.
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.set_route(0, 0, 3, route("W", "RE"));
  auto prog = assemble(R"(
.task   got, data, color 3
        st32    [seen], r0
        exit
.task   ctl, control, 5
        li      r1, 99
        st32    [ctl_ran], r1
        exit
.data
seen:   .u32 0
ctl_ran: .u32 0
)");
  w.load_program(0, 0, prog);
  const uint32_t payload = emu::make_control_payload({}, 5, 0, true);
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, control_wavelet(3, payload)));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(3, 42)));
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, addr(*prog, "seen"), 1)[0], 42u);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, addr(*prog, "ctl_ran"), 1)[0], 0u);
  EXPECT_EQ(w.stats_json()["colors"][0]["filtered"], 1);
  EXPECT_EQ(w.stats_json()["colors"][0]["ramp_deliveries"], 1);
  EXPECT_EQ(w.edge_output_count(0, 0, Direction::EAST), 2u);
}

// Color 1 starts torn down (rx W, tx E). Task 10 reads tdpend (the start is not pending),
// rewrites position 0 to W -> N, adds position 1 (rx RAMP, tx inherited: N), turns ring mode on
// and ends the teardown. Task 29 stores tdpend twice (the set is cleared by the first read).
constexpr const char* kRewrite = R"(
.task   cfg, local, 10
cfg:    tdpend  r1
        st32    [pend0], r1
        rtcfg   1, 3, 8 | (1 << 5)          ; rx W (bit 3), tx N (bit 0 of tx, bit 5)
        rtpos   1, 1, 0x400 | 16            ; position 1: rx RAMP, tx as position 0
        rtmode  1, 0, 1                     ; ring mode
        tdexit  1
        exit
.task   td, local, 29
td:     tdpend  r1
        st32    [pend1], r1
        tdpend  r1
        st32    [pend2], r1
        exit
.data
pend0:  .u32 7
pend1:  .u32 7
pend2:  .u32 7
)";

TEST(RouteWrite, AColorStartingTornDownIsRewrittenAndFlowsOnTheNewRoute) {
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  ColorRoute r = route("W", "E");
  r.teardown = true;
  w.set_route(0, 0, 1, r);
  auto prog = assemble(kRewrite);
  w.load_program(0, 0, prog);
  EXPECT_TRUE(torn_down(w, 0, 0, 1));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(1, 10)));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(1, 11)));
  w.activate_task(0, 0, 10);
  // Cycle 0: the picker starts task 10. Cycles 1..5: tdpend, st32, rtcfg, rtpos, rtmode.
  // Cycle 6: tdexit; the router (stepped after the core) sends 10 north in the same cycle.
  for (int c = 0; c <= 5; ++c) {
    w.step();
    EXPECT_EQ(w.edge_output_count(0, 0, Direction::NORTH) + w.edge_output_count(0, 0, Direction::EAST), 0u)
        << "cycle " << c;
  }
  w.step();
  EXPECT_EQ(w.edge_output_count(0, 0, Direction::NORTH), 1u);
  run_ok(w);
  EXPECT_EQ(w.cycle(), 8u);  // 11 leaves in cycle 7
  EXPECT_EQ(w.edge_output_count(0, 0, Direction::NORTH), 2u);
  EXPECT_EQ(w.edge_output_count(0, 0, Direction::EAST), 0u);
  expect_ring_of_two(*w.route(0, 0, 1), "W", "N", "R", "N");
  EXPECT_FALSE(torn_down(w, 0, 0, 1));
  EXPECT_EQ(read<uint32_t>(w, 0, 0, addr(*prog, "pend0"), 1)[0], 0u);

  // A TEARDOWN command now makes color 1 pending: task 29's first tdpend sees bit 1, the second 0.
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, commands(1, RouterCommand::TEARDOWN)));
  run_ok(w);
  EXPECT_TRUE(torn_down(w, 0, 0, 1));
  EXPECT_EQ(read<uint32_t>(w, 0, 0, addr(*prog, "pend1"), 1)[0], 2u);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, addr(*prog, "pend2"), 1)[0], 0u);
}

RunResult run_program(const ColorRoute& r, std::string_view code) {
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.set_route(0, 0, 1, r);
  w.load_program(0, 0, assemble(code));
  w.activate_task(0, 0, 10);
  return w.run(1000);
}

TEST(RouteWrite, BadWritesAreKernelErrors) {
  ColorRoute flowing = route("W", "E");
  RunResult r = run_program(flowing, ".task t, local, 10\n rtcfg 1, 0, 1\n exit\n");
  ASSERT_EQ(r.status, RunResult::Status::FAULT);
  EXPECT_EQ(r.fault->kind, FaultKind::KERNEL_ERROR);
  EXPECT_NE(r.fault->message.find("not in teardown"), std::string::npos) << r.fault->message;

  ColorRoute down = route("W", "E");
  down.teardown = true;
  for (const char* code : {".task t, local, 10\n rtmode 1, 1, 3\n exit\n", ".task t, local, 10\n rtpos 1, 0, 0x400\n exit\n",
                           ".task t, local, 10\n rtpos 1, 2, 16\n exit\n", ".task t, local, 10\n rtcfg 1, 3, 0x400\n exit\n",
                           ".task t, local, 10\n rtinval 2\n exit\n"}) {
    r = run_program(down, code);
    ASSERT_EQ(r.status, RunResult::Status::FAULT) << code;
    EXPECT_EQ(r.fault->kind, FaultKind::KERNEL_ERROR) << code;
  }
}

TEST(RouteWrite, InvalidatingPositionsReturnsToPositionZero) {
  // Positions 0..2, current 2; rtinval leaves position 0 only, current 0; rtpos 3 makes 1 and 2
  // copies of position 0 again.
  ColorRoute r = route("W", "E");
  r.positions[1] = {dirs("W"), dirs("N")};
  r.positions[2] = {dirs("W"), dirs("S")};
  r.num_positions = 3;
  r.current = 2;
  r.teardown = true;
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.set_route(0, 0, 1, r);
  w.load_program(0, 0, assemble(R"(
.task   t, local, 10
        rtinval 1
        exit
.task   u, local, 11
        rtpos   1, 3, 0x800 | (4 << 5)  ; tx S (bit 2 of tx), rx as position 0
        exit
)"));
  w.activate_task(0, 0, 10);
  run_ok(w);
  EXPECT_EQ(w.route(0, 0, 1)->num_positions, 1);
  EXPECT_EQ(w.route(0, 0, 1)->current, 0);
  EXPECT_EQ(w.stats_json()["colors"][0]["switch_changes"], 1);
  w.activate_task(0, 0, 11);
  run_ok(w);
  const ColorRoute now = *w.route(0, 0, 1);
  EXPECT_EQ(now.num_positions, 4);
  EXPECT_EQ(now.positions[1], now.positions[0]);
  EXPECT_EQ(now.positions[2], now.positions[0]);
  EXPECT_EQ(now.positions[3], (emu::RoutePosition{dirs("W"), dirs("S")}));
}

TEST(RouteWrite, AReconfigurableRouteBuffersEveryLink) {
  // PE(1,0) starts torn down with rx N only. Reconfigurable, it buffers its west link too, so
  // PE(0,0) may send it color 1; the wavelet waits there until PE(1,0) receives from the west.
  auto build = [](bool reconfigurable) {
    auto w = std::make_unique<Wafer>(emu::arch_profile("wse2"), 2, 1);
    w->set_route(0, 0, 1, route("W", "E"));
    ColorRoute r = route("N", "E");
    r.reconfigurable = reconfigurable;
    w->set_route(1, 0, 1, r);
    return w;
  };
  auto fixed = build(false);
  ASSERT_TRUE(fixed->push_edge(0, 0, Direction::WEST, data_wavelet(1, 5)));
  RunResult r = fixed->run(100);
  ASSERT_EQ(r.status, RunResult::Status::FAULT);
  EXPECT_NE(r.fault->message.find("does not receive color 1 from WEST"), std::string::npos) << r.fault->message;

  auto w = build(true);
  ASSERT_TRUE(w->push_edge(0, 0, Direction::WEST, data_wavelet(1, 5)));
  r = w->run(100);
  ASSERT_EQ(r.status, RunResult::Status::HANG);  // it waits at PE(1,0)'s west input
  EXPECT_NE(r.hang->to_string().find("switch position 0 does not receive from WEST"), std::string::npos)
      << r.hang->to_string();
}

TEST(RouteWrite, AHangNamesAColorThatStartedTornDownAndItsRoute) {
  // PE(0,0) starts color 1 torn down and never ends the teardown: the wavelet from the west
  // waits, and the report says why and what the route is now.
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  ColorRoute r = route("W", "E");
  r.teardown = true;
  r.pop_mode = PopMode::POP_ON_ADVANCE;
  w.set_route(0, 0, 1, r);
  w.load_program(0, 0, assemble(".task t, local, 29\n exit\n"));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(1, 5)));
  const RunResult res = w.run(100);
  ASSERT_EQ(res.status, RunResult::Status::HANG);
  const std::string text = res.hang->to_string();
  EXPECT_NE(text.find("it started torn down (layout 'teardown') and no task has run `tdexit 1`"), std::string::npos)
      << text;
  EXPECT_NE(text.find("its route: position 0 of 1, rx [WEST], tx [EAST], pop on advance"), std::string::npos) << text;
}

// wse2: one output queue carries the color of each fabout that pushes into it (the SDK's 3-D
// stencil library sends four colors through one queue); wse3 still binds one color per queue.
constexpr const char* kTwoColorsOneQueue = R"(
.dsd    to_east = fabout(1, 2, 1)
.dsd    to_north = fabout(2, 2, 1)
.task   t, local, 10
        li      r1, 7
        mov32   to_east, r1
        li      r1, 8
        mov32   to_north, r1
        li      r1, 9
        mov32   to_east, r1
        exit
)";

TEST(OutputQueue, Wse2CarriesEachFaboutsColor) {
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  start_pe(w, assemble(kTwoColorsOneQueue), {{1, "R", "E"}, {2, "R", "N"}});
  run_ok(w);
  EXPECT_EQ(drain(w, 0, 0, Direction::EAST), (std::vector<uint32_t>{7, 9}));
  EXPECT_EQ(drain(w, 0, 0, Direction::NORTH), std::vector<uint32_t>{8});
}

TEST(OutputQueue, Wse3BindsOneColorPerQueue) {
  Wafer w(emu::arch_profile("wse3"), 1, 1);
  start_pe(w, assemble(kTwoColorsOneQueue), {{1, "R", "E"}, {2, "R", "N"}});
  expect_kernel_error(w.run(1000), "through output queue 2, which is bound to color 1");
}

}  // namespace
}  // namespace wsemu::testing
