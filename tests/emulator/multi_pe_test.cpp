// Multi-PE programs with hand-computed results: a row passing and adding values, a 2x2
// broadcast and reduce, and a 4-direction send from a centre PE on one color using switch
// positions.
#include <gtest/gtest.h>

#include "tests/emulator/row_chain.hpp"

namespace wsemu::testing {
namespace {

using emu::RunResult;
using emu::Wafer;

TEST(MultiPe, RowPassingAndAdding) {
  Wafer w(emu::arch_profile("wse2"), 5, 1);
  const RowChainPrograms chain = row_chain_programs("wse2");
  place_row_chain(w, chain, 0, 0, 5, 1);
  const RunResult r = run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 4, 0, chain.sum_address, 1)[0], 15u);  // 1 + 2 + 3 + 4 + 5
  // Hand timing (ramp up and down 2 cycles each, emulator/README.md): PE0 picks at 0, coord 1,
  // addi 2, send 3; each hop then costs 10: the router takes it at s+1+2, the next router
  // delivers it to its core (s+4), usable after the ramp down (s+6): pick (s+6), coord, addi,
  // add, send (s+10). PE1 sends at 13, PE2 23, PE3 33; PE4 picks at 39, stores at 43, exits at
  // 44.
  EXPECT_EQ(r.cycle, 45u);
}

TEST(MultiPe, RowChainOnWse3UsesQueueTriggeredTasks) {
  Wafer w(emu::arch_profile("wse3"), 6, 2);
  const RowChainPrograms chain = row_chain_programs("wse3");
  place_row_chain(w, chain, 0, 0, 6, 2);
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 5, 0, chain.sum_address, 1)[0], 21u);
  EXPECT_EQ(read<uint32_t>(w, 5, 1, chain.sum_address, 1)[0], 21u);
}

TEST(MultiPe, BroadcastAndReduceOn2x2) {
  // The root broadcasts x = 3 (color 1) to the other PEs; PE (i) contributes x * a_i with
  // a = 1 (root), 2 (1,0), 4 (0,1), 5 (1,1); (1,1) -> (0,1) on color 2, (0,1) adds its own
  // and sends north on color 3, (1,0) sends west on color 2. Sum: 3 + 6 + 12 + 15 = 36.
  // The root and (0,1) keep their running sum in `acc` and the number of contributions in
  // `count`.
  const std::string data = ".arch wse2\n.data\nacc: .f32 [1]\ncount: .u32 [1]\n.code\n";
  auto root = assemble(data + R"(
.task main, local, 10
.task gather2, data, color 2
.task gather3, data, color 3
.oqinit 0, 1
main:
  li r1, 3.0
  send 0, r1
  li r2, 1.0
  sfmul r3, r1, r2
  st32 [acc], r3
  exit
gather2:          ; both colors run the same code: two task names, one entry
gather3:
  ld32 r5, [acc]
  sfadd r5, r5, r0
  st32 [acc], r5
  ld32 r6, [count]
  addi r6, r6, 1
  st32 [count], r6
  exit
)");
  // (1,0) and (1,1) scale x by their a and send it west on color 2.
  auto scale = [&](const std::string& a) {
    return assemble(".arch wse2\n.task on1, data, color 1\n.oqinit 0, 2\non1:\n  li r1, " + a +
                    "\n  sfmul r2, r0, r1\n  send 0, r2\n  exit\n");
  };
  auto right = scale("2.0");   // (1,0)
  auto corner = scale("5.0");  // (1,1)
  auto below = assemble(data + R"(
.task on1, data, color 1
.task on2, data, color 2
.oqinit 1, 3
on1:
  li r1, 4.0
  sfmul r2, r0, r1
  jmp accumulate
on2:
  mov r2, r0
accumulate:
  ld32 r5, [acc]
  sfadd r5, r5, r2
  st32 [acc], r5
  ld32 r6, [count]
  addi r6, r6, 1
  st32 [count], r6
  li r7, 2
  bne r6, r7, done
  send 1, r5
done:
  exit
)");
  Wafer w(emu::arch_profile("wse2"), 2, 2);
  w.load_program(0, 0, root);
  w.load_program(1, 0, right);
  w.load_program(0, 1, below);
  w.load_program(1, 1, corner);
  w.set_route(0, 0, 1, route("R", "ES"));
  w.set_route(1, 0, 1, route("W", "RS"));
  w.set_route(0, 1, 1, route("N", "R"));
  w.set_route(1, 1, 1, route("N", "R"));
  w.set_route(1, 0, 2, route("R", "W"));
  w.set_route(0, 0, 2, route("E", "R"));
  w.set_route(1, 1, 2, route("R", "W"));
  w.set_route(0, 1, 2, route("E", "R"));
  w.set_route(0, 1, 3, route("R", "N"));
  w.set_route(0, 0, 3, route("S", "R"));
  w.activate_task(0, 0, 10);
  run_ok(w);
  EXPECT_EQ(read<float>(w, 0, 0, addr(*root, "acc"), 1)[0], 36.0f);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, addr(*root, "count"), 1)[0], 2u);
  EXPECT_EQ(read<float>(w, 0, 1, addr(*below, "acc"), 1)[0], 27.0f);
}

TEST(MultiPe, CentreSendsFourDirectionsOnOneColorWithSwitches) {
  // Positions: 0 north, 1 east, 2 south, 3 west, ring mode. After each data wavelet the centre
  // sends a control wavelet whose command 0 is SWITCH_ADV; it travels with the data (old
  // position) and the switch moves once it has passed.
  auto centre = assemble(R"(
.arch wse2
.task main, local, 10
.oqinit 0, 5
main:
  li r2, ctl_cmds(SWITCH_ADV)      ; 0x005F0000: ADV in slot 0, no control task
  li r1, 10
  send 0, r1
  sendc 0, r2
  li r1, 20
  send 0, r1
  sendc 0, r2
  li r1, 30
  send 0, r1
  sendc 0, r2
  li r1, 40
  send 0, r1
  sendc 0, r2
  exit
)");
  auto recv = assemble(".arch wse2\n.data\ngot: .u32 [1]\n.code\n.task on5, data, color 5\non5:\n  st32 [got], r0\n  exit\n");
  const uint32_t got = addr(*recv, "got");
  Wafer w(emu::arch_profile("wse2"), 3, 3);
  w.load_program(1, 1, centre);
  emu::ColorRoute sw;
  sw.positions = {emu::RoutePosition{dirs("R"), dirs("N")}, emu::RoutePosition{dirs("R"), dirs("E")},
                  emu::RoutePosition{dirs("R"), dirs("S")}, emu::RoutePosition{dirs("R"), dirs("W")}};
  sw.num_positions = 4;
  sw.ring_mode = true;
  w.set_route(1, 1, 5, sw);
  const struct { int x, y; const char* from; } neighbours[] = {{1, 0, "S"}, {2, 1, "W"}, {1, 2, "N"}, {0, 1, "E"}};
  for (const auto& n : neighbours) {
    w.load_program(n.x, n.y, recv);
    w.set_route(n.x, n.y, 5, route(n.from, "R"));
  }
  w.activate_task(1, 1, 10);
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 1, 0, got, 1)[0], 10u);  // north
  EXPECT_EQ(read<uint32_t>(w, 2, 1, got, 1)[0], 20u);  // east
  EXPECT_EQ(read<uint32_t>(w, 1, 2, got, 1)[0], 30u);  // south
  EXPECT_EQ(read<uint32_t>(w, 0, 1, got, 1)[0], 40u);  // west
  EXPECT_EQ(w.route(1, 1, 5)->current, 0);                // four advances in ring mode
  for (const auto& n : neighbours) {
    const auto v = w.core_view(n.x, n.y);
    EXPECT_EQ(v.stats.tasks_started, 1u);
    EXPECT_EQ(v.stats.control_dropped, 1u);  // the switch command wavelet, no control task
  }
}

}  // namespace
}  // namespace wsemu::testing
