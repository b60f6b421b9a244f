// Color teardown (emulator/README.md "Color teardown"): a TEARDOWN router command stops a color
// at the router that executes it and activates teardown task 29; `tdmask`, `tdswitch` and
// `tdexit` let the core read the torn-down set, pick another switch position and let the color
// flow again. Expected values and cycles are worked out by hand in the comments.
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::FaultKind;
using emu::RouterCommand;
using emu::RunResult;
using emu::TraceEvent;
using emu::TraceKind;
using emu::Wafer;
using emu::Wavelet;

// A control wavelet whose commands are `c0` at the first router it passes, `c1` at the second...
Wavelet commands(uint8_t color, RouterCommand c0, RouterCommand c1 = RouterCommand::NOP) {
  return control_wavelet(color, emu::make_control_payload({c0, c1}));
}

// Color 1 enters from the west; position 0 sends it east, position 1 north.
emu::ColorRoute east_then_north() {
  emu::ColorRoute r = route("W", "E");
  r.positions[1] = {dirs("W"), dirs("N")};
  r.num_positions = 2;
  return r;
}

class RecordingSink : public emu::EventSink {
 public:
  void on_events(std::span<const TraceEvent> events) override { all.insert(all.end(), events.begin(), events.end()); }
  bool has(TraceKind kind, uint64_t cycle, int task_or_color) const {
    for (const TraceEvent& e : all) {
      if (e.kind != kind || e.cycle != cycle) continue;
      if (kind == TraceKind::SWITCH_CHANGED ? e.color == task_or_color : e.task == task_or_color) return true;
    }
    return false;
  }
  std::vector<TraceEvent> all;
};

constexpr const char* kReconfigure = R"(
.task   td, local, 29
td:
        tdmask  r1
        st32    [mask], r1
        tdswitch 1, 1
        tdexit  1
        exit
.data
mask:   .u32 0
)";

TEST(Teardown, StopsTheColorRunsTask29AndFlowsOnTheNewRoute) {
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.set_route(0, 0, 1, east_then_north());
  auto prog = assemble(kReconfigure);
  w.load_program(0, 0, prog);
  RecordingSink sink;
  w.set_event_sink(&sink);
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, commands(1, RouterCommand::TEARDOWN)));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(1, 10)));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(1, 11)));
  // Cycle 0: the router forwards the control wavelet east (position 0), then executes TEARDOWN:
  //   color 1 stops here and task 29 is activated.
  // Cycle 1: the picker starts task 29; the router moves nothing of color 1.
  // Cycles 2, 3, 4: tdmask (r1 = bit 1 = 2), st32, tdswitch 1, 1.
  // Cycle 5: tdexit 1; the router, stepped after the core, forwards 10 north in the same cycle.
  // Cycles 6, 7: 11 and 12 go north (one wavelet per color per cycle).
  for (int c = 0; c <= 4; ++c) {
    w.step();
    EXPECT_EQ(w.edge_output_count(0, 0, Direction::NORTH), 0u) << "cycle " << c;
    EXPECT_EQ(w.edge_output_count(0, 0, Direction::EAST), 1u) << "cycle " << c;  // the control wavelet only
    if (c == 1) {
      ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(1, 12)));  // a slot is free
    }
    EXPECT_EQ(w.route(0, 0, 1)->current, c < 4 ? 0 : 1) << "cycle " << c;
  }
  w.step();  // cycle 5
  EXPECT_EQ(w.edge_output_count(0, 0, Direction::NORTH), 1u);
  run_ok(w);
  EXPECT_EQ(w.cycle(), 8u);  // cycle 7 moved the last wavelet; nothing is left after it
  EXPECT_EQ(drain(w, 0, 0, Direction::NORTH), (std::vector<uint32_t>{10, 11, 12}));
  const auto east = w.pop_edge(0, 0, Direction::EAST);
  ASSERT_TRUE(east && east->control);
  EXPECT_FALSE(w.pop_edge(0, 0, Direction::EAST));
  EXPECT_EQ(read<uint32_t>(w, 0, 0, addr(*prog, "mask"), 1)[0], 2u);  // bit 1: color 1
  EXPECT_EQ(w.core_view(0, 0).stats.tasks_started, 1u);
  EXPECT_EQ(w.stats_json()["colors"][0]["switch_changes"], 1);
  EXPECT_TRUE(sink.has(TraceKind::TASK_ACTIVATED, 0, 29));
  EXPECT_TRUE(sink.has(TraceKind::TASK_PICKED, 1, 29));
  EXPECT_TRUE(sink.has(TraceKind::SWITCH_CHANGED, 4, 1));
}

TEST(Teardown, TdmaskShowsEveryTornDownColorAndOneActivationServesThem) {
  // Colors 1 (west to east) and 2 (west to north) use different output links, so both control
  // wavelets leave in cycle 0 and both colors are torn down in that cycle. Task 29 is activated
  // twice in cycle 0 but runs once (activation is a flag): picked at 1, tdmask at 2 sees bits 1
  // and 2 (6). (Had both gone east, the second would leave in cycle 1, while the task already
  // runs, and activate it a second time.)
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.set_route(0, 0, 1, route("W", "E"));
  w.set_route(0, 0, 2, route("W", "N"));
  auto prog = assemble(R"(
.task   td, local, 29
td:
        tdmask  r1
        st32    [mask], r1
        tdexit  1
        tdexit  2
        exit
.data
mask:   .u32 0
)");
  w.load_program(0, 0, prog);
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, commands(1, RouterCommand::TEARDOWN)));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, commands(2, RouterCommand::TEARDOWN)));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(1, 1)));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(2, 2)));
  // Cycle 0: both control wavelets leave. 1: pick. 2: tdmask. 3: st32. 4: tdexit 1 (1 goes east).
  for (int c = 0; c <= 4; ++c) w.step();
  auto data = [&](Direction d) {
    std::vector<uint32_t> out;
    while (auto wl = w.pop_edge(0, 0, d))
      if (!wl->control) out.push_back(wl->payload);
    return out;
  };
  EXPECT_EQ(data(Direction::EAST), std::vector<uint32_t>{1});
  EXPECT_EQ(data(Direction::NORTH), std::vector<uint32_t>{});
  w.step();  // cycle 5: tdexit 2, 2 goes north
  EXPECT_EQ(data(Direction::NORTH), std::vector<uint32_t>{2});
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, addr(*prog, "mask"), 1)[0], 6u);
  EXPECT_EQ(w.core_view(0, 0).stats.tasks_started, 1u);
}

TEST(Teardown, CreditsStayExactAcrossAReconfigurationTowardANewNeighbour) {
  // 3x2 fabric, color 1:  (0,0) W->E   (1,0) pos 0 W->E, pos 1 W->S   (2,0) W->E
  //                                    (1,1) N->E                     (2,1) W->E
  // The control wavelet's command 0 (NOP) is for (0,0), which pops it, command 1 (TEARDOWN) for
  // (1,0). Task 29 there only moves the switch to position 1; task 10, activated by the host
  // later, exits the teardown. While torn down the fabric holds exactly 6 wavelets of color 1: 3 in the
  // west buffer of (1,0) and 3 in the west buffer of (0,0). A credit miscount would admit a
  // seventh (a buffer overrun) or fewer; after tdexit every wavelet must reach (2,1)'s east
  // edge in order, through (1,1), whose buffer from the north existed (and was credited to
  // (1,0)) from set_route on, since it belongs to the union of (1,0)'s positions.
  Wafer w(emu::arch_profile("wse2"), 3, 2);
  emu::ColorRoute first = route("W", "E");
  first.pop_mode = emu::PopMode::ALWAYS_POP;  // (0,0) pops its NOP, so (1,0) sees the TEARDOWN
  w.set_route(0, 0, 1, first);
  emu::ColorRoute mid = route("W", "E");
  mid.positions[1] = {dirs("W"), dirs("S")};
  mid.num_positions = 2;
  w.set_route(1, 0, 1, mid);
  w.set_route(2, 0, 1, route("W", "E"));
  w.set_route(1, 1, 1, route("N", "E"));
  w.set_route(2, 1, 1, route("W", "E"));
  w.load_program(1, 0, assemble(R"(
.task   td, local, 29
.task   go, local, 10
td:
        tdswitch 1, 1
        exit
go:
        tdexit  1
        exit
)"));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, commands(1, RouterCommand::NOP, RouterCommand::TEARDOWN)));
  uint32_t next = 100;
  for (int c = 0; c < 40; ++c) {
    while (w.push_edge(0, 0, Direction::WEST, data_wavelet(1, next))) ++next;
    w.step();
  }
  EXPECT_EQ(next - 100, 6u);
  EXPECT_EQ(w.route(1, 0, 1)->current, 1);
  EXPECT_EQ(w.edge_output_count(2, 1, Direction::EAST), 0u);
  w.activate_task(1, 0, 10);
  std::vector<uint32_t> got;
  for (int c = 0; c < 200 && got.size() < 12; ++c) {
    while (next < 112 && w.push_edge(0, 0, Direction::WEST, data_wavelet(1, next))) ++next;
    w.step();
    for (uint32_t v : drain(w, 2, 1, Direction::EAST)) got.push_back(v);
  }
  std::vector<uint32_t> want(12);
  for (uint32_t i = 0; i < 12; ++i) want[i] = 100 + i;
  EXPECT_EQ(got, want);
  run_ok(w);
  // (2,0) saw the control wavelet only: the data went south after the reconfiguration.
  EXPECT_EQ(w.edge_output_count(2, 0, Direction::EAST), 1u);
}

TEST(Teardown, ARouteChangeOutsideTeardownIsAKernelError) {
  struct Case {
    const char* code;
    bool tear_down_first;  // a TEARDOWN wavelet for color 1 arrives before task 10 runs
    int color;
    const char* message;
  };
  const Case cases[] = {
      {"tdswitch 1, 1", false, 1, "tdswitch 1: color 1 is not in teardown at this router"},
      {"tdexit 1", false, 1, "tdexit 1: color 1 is not in teardown at this router"},
      {"tdswitch 2, 0", false, 2, "tdswitch 2: this PE's router has no route for color 2"},
      {"tdswitch 1, 3", true, 1, "tdswitch 1, 3: color 1 has only 2 switch positions at this router"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.code);
    Wafer w(emu::arch_profile("wse3"), 1, 1);
    w.set_route(0, 0, 1, east_then_north());
    w.load_program(0, 0, assemble(std::string(".task main, local, 10\nmain:\n  ") + k.code + "\n  exit\n"));
    if (k.tear_down_first) {
      // Cycle 0: TEARDOWN at the router (task 29 is not bound: nothing is activated).
      ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, commands(1, RouterCommand::TEARDOWN)));
      w.step();
    }
    const uint64_t picked = w.cycle();
    w.activate_task(0, 0, 10);
    // The run's first cycle picks task 10; its first instruction faults in the next one.
    const RunResult r = w.run(100);
    ASSERT_EQ(r.status, RunResult::Status::FAULT) << r.to_string();
    EXPECT_EQ(r.fault->kind, FaultKind::KERNEL_ERROR);
    EXPECT_EQ(*r.fault->x, 0);
    EXPECT_EQ(*r.fault->y, 0);
    EXPECT_EQ(*r.fault->cycle, picked + 1);
    EXPECT_EQ(*r.fault->pc, 0u);
    EXPECT_EQ(*r.fault->color, k.color);
    EXPECT_NE(r.fault->message.find(k.message), std::string::npos) << r.fault->message;
  }
}

TEST(Teardown, AHangWhileTornDownNamesTheTeardown) {
  struct Case {
    const char* program;  // nullptr: no core on the tile
    const char* reason;
  };
  const Case cases[] = {
      {".task main, local, 10\nmain:\n  exit\n", "color 1 is torn down at this router (no teardown task 29 is bound to end it)"},
      {".task td, local, 29\ntd:\n  exit\n", "color 1 is torn down at this router (teardown task 29 ran without `tdexit 1`)"},
      {nullptr, "color 1 is torn down at this router (this tile has no core to end it)"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.reason);
    Wafer w(emu::arch_profile("wse2"), 1, 1);
    w.set_route(0, 0, 1, route("W", "E"));
    if (k.program) w.load_program(0, 0, assemble(k.program));
    ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, commands(1, RouterCommand::TEARDOWN)));
    ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(1, 7)));
    const RunResult r = w.run(100);
    ASSERT_EQ(r.status, RunResult::Status::HANG) << r.to_string();
    ASSERT_TRUE(r.hang);
    const std::string text = r.hang->to_string();
    // The waiting wavelet says why it cannot move, and the torn-down color is listed by itself.
    EXPECT_NE(text.find(std::string("router: 1 wavelet of color 1 from WEST cannot move: ") + k.reason),
              std::string::npos)
        << text;
    EXPECT_NE(text.find(std::string("teardown: ") + k.reason), std::string::npos) << text;
    const emu::BlockedPe* pe = r.hang->find(0, 0);
    ASSERT_NE(pe, nullptr);
    bool teardown_wait = false;
    for (const emu::Wait& wt : pe->waits) teardown_wait |= wt.kind == emu::Wait::Kind::TEARDOWN && wt.color == 1;
    EXPECT_TRUE(teardown_wait);
    EXPECT_EQ(drain(w, 0, 0, Direction::EAST).size(), 1u);  // only the control wavelet got through
  }
}

}  // namespace
}  // namespace wsemu::testing
