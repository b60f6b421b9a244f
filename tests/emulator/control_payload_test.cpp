// The control-wavelet payload in the hardware's layout (isa/control_payload.hpp): encodings
// checked against the values the SDK's own sources print or build (the references are named at
// each value), and a row of routers showing which router executes which slot and which task gets
// which data. Every expected value is worked out by hand in the comments.
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::PopMode;
using emu::RouterCommand;
using emu::Wafer;

constexpr RouterCommand NOP = RouterCommand::NOP;
constexpr RouterCommand ADV = RouterCommand::SWITCH_ADV;

// 25-pt-stencil's first control wavelet for a pattern of 5 (switches.csl ctrl(), cmds[0], [1]
// and [4] = ADV, every slot with its no-CE bit, task 31): slots 5,5,4,4,5,4,4,4 (ADV|no-CE = 5,
// NOP|no-CE = 4) give 5<<22 | 5<<25 | (0<<28 | 1) | 4<<1 | 5<<4 | 4<<7 | 4<<10 | 4<<13 |
// 31<<16 = 0x0B5F9259.
constexpr uint32_t kStencilFirst = 0x0B5F9259u;

TEST(ControlPayload, EncodesAsTheSdkSourcesDo) {
  // benchmark-libs/allreduce/pe.csl: "teardown wavelet = 0x9df 9249" for memcpy_switches'
  // ctrl(teardown_cmd_1()): TEARDOWN|no-CE (7) in slot 0, NOP|no-CE (4) in slots 1..7, task 31.
  EXPECT_EQ(emu::make_control_payload({RouterCommand::TEARDOWN}, emu::kNoControlTask, 0, true),
            0x09DF9249u);
  // spmv-hypersparse's allreduce2R1E/pe.csl: popping that wavelet gives 0x91f 9249 (slot 0 now
  // NOP|no-CE, the other slots as they were).
  EXPECT_EQ(emu::control_pop(0x09DF9249u), 0x091F9249u);
  EXPECT_EQ(emu::make_control_payload({ADV, ADV, NOP, NOP, ADV}, emu::kNoControlTask, 0, true),
            kStencilFirst);
  // cholesky/pe.csl: (5 << 22) | (4 << 25), "ADV + NO_CE, NOP + NO_CE": slot 0 ADV not to the
  // core, slot 1 NOP not to the core, slot 2 (bits 29:28 and 0 all clear) NOP to the core, task 0.
  constexpr uint32_t cholesky = (5u << 22) | (4u << 25);
  EXPECT_EQ(emu::control_command(cholesky), ADV);
  EXPECT_TRUE(emu::control_ce_ignore(cholesky));
  EXPECT_EQ(emu::control_slot(cholesky, 1), 4u);
  EXPECT_EQ(emu::control_slot(cholesky, 2), 0u);
  EXPECT_EQ(emu::control_task(cholesky), 0);
  // <control>'s encode_single_payload(SWITCH_ADV, false, 40, 0x1234): 40 << 16 | 1 << 22 | data.
  EXPECT_EQ(emu::make_control_payload({ADV}, 40, 0x1234), 0x00681234u);
}

// Six routers in a row on color 3, each forwarding W -> E and to its core; position 1 forwards
// east only. 25-pt-stencil's wavelet enters router 0 from the west edge: router k executes slot
// k, so routers 0, 1 and 4 advance, 2, 3 and 5 stay; no core receives it (no-CE in every slot).
TEST(ControlPayload, EachRouterExecutesItsOwnSlot) {
  Wafer w(emu::arch_profile("wse2"), 6, 1);
  const auto sink = assemble(
      ".arch wse2\n.data\ngot: .u32 [1]\n.code\n.task on3, data, color 3\non3:\n"
      "  st32 [got], r0\n  exit\n");
  for (int x = 0; x < 6; ++x) {
    emu::ColorRoute r = route("W", "ER");
    r.positions[1] = {dirs("W"), dirs("E")};
    r.num_positions = 2;
    r.pop_mode = PopMode::ALWAYS_POP;
    w.set_route(x, 0, 3, r);
    w.load_program(x, 0, sink);
  }
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, control_wavelet(3, kStencilFirst)));
  run_ok(w);
  const int expected_position[6] = {1, 1, 0, 0, 1, 0};
  for (int x = 0; x < 6; ++x) {
    EXPECT_EQ(w.route(x, 0, 3)->current, expected_position[x]) << "router " << x;
    EXPECT_EQ(w.core_view(x, 0).stats.tasks_started, 0u) << "core " << x;
  }
  // Six pops leave slots 6 and 7 in slots 0 and 1 and slot 7 repeated: NOP|no-CE everywhere,
  // which is the 0x091F9249 of the SDK's popped teardown wavelet.
  const auto out = w.pop_edge(5, 0, Direction::EAST);
  ASSERT_TRUE(out);
  EXPECT_TRUE(out->control);
  EXPECT_EQ(out->payload, 0x091F9249u);
}

// encode_single_payload(SWITCH_ADV, false, 40, 0x1234) from the west edge through router 0
// (a switch) to router 1's core, which runs control task 40 with r0 = data. Without a pop (the
// default) the data arrives as sent; with router 0 popping, slots 3..7 move into the data bits:
// 0x1234 holds slots 3..7 = 2, 3, 4, 4, 0, which become slots 2..6 (slot 7 keeps 0), so the
// bits are 2 << 28 (slot 2's command), 3 << 1, 4 << 4, 4 << 7: r0 = 0x0246, as the SDK says
// (data means nothing once a command beyond the first is in play).
uint32_t data_seen_by_task(PopMode first_router) {
  Wafer w(emu::arch_profile("wse2"), 2, 1);
  emu::ColorRoute r0 = route("W", "E");
  r0.positions[1] = {dirs("W"), dirs("E")};
  r0.num_positions = 2;
  r0.pop_mode = first_router;
  w.set_route(0, 0, 6, r0);
  w.set_route(1, 0, 6, route("W", "R"));
  const auto p = assemble(
      ".arch wse2\n.data\ngot: .u32 [1]\n.code\n.task ctl, control, 40\n.task on6, data, color 6\n"
      "ctl:\n  st32 [got], r0\n  exit\non6:\n  exit\n");
  w.load_program(1, 0, p);
  EXPECT_TRUE(w.push_edge(0, 0, Direction::WEST, control_wavelet(6, 0x00681234u)));
  run_ok(w);
  EXPECT_EQ(w.route(0, 0, 6)->current, 1);
  return read<uint32_t>(w, 1, 0, addr(*p, "got"), 1)[0];
}

TEST(ControlPayload, TheTaskGetsTheDataItsRouterReceived) {
  EXPECT_EQ(data_seen_by_task(PopMode::NO_POP), 0x1234u);
  EXPECT_EQ(data_seen_by_task(PopMode::ALWAYS_POP), 0x0246u);
}

// A wavelet naming task 31 (no router command, every slot delivering) reaches the core and runs
// nothing: it is dropped.
TEST(ControlPayload, TaskThirtyOneRunsNothing) {
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.set_route(0, 0, 6, route("W", "R"));
  const auto p = assemble(".arch wse2\n.task on6, data, color 6\non6:\n  exit\n");
  w.load_program(0, 0, p);
  ASSERT_TRUE(
      w.push_edge(0, 0, Direction::WEST, control_wavelet(6, emu::make_control_payload({}))));
  run_ok(w);
  EXPECT_EQ(w.core_view(0, 0).stats.control_dropped, 1u);
  EXPECT_EQ(w.core_view(0, 0).stats.tasks_started, 0u);
}

}  // namespace
}  // namespace wsemu::testing
