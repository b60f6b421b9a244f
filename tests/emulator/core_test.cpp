// The PE core's scalar side: ALU, loads/stores, branches, calls, timestamps, coordinates and
// the run log. Expected values are worked out by hand in the comments.
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::Wafer;

TEST(Core, IntegerAluAndStores) {
  TestProgram p;
  p.code(R"(
main:
  li r1, 7
  li r2, -5
  add r3, r1, r2     ; 2
  sub r4, r1, r2     ; 12
  mul r5, r1, r2     ; -35
  sar r6, r5, r1     ; -35 >> 7 = -1
  shri r7, r5, 28    ; 0xFFFFFFDD >> 28 = 15
  slt r8, r2, r1     ; 1
  sltu r9, r2, r1    ; 0 (0xFFFFFFFB > 7 unsigned)
  li r10, 100
  li r11, 7
  divu r12, r10, r11 ; 14
  remu r13, r10, r11 ; 2
  li r14, 0x1000
  st32 [r14 + 0], r3
  st32 [r14 + 4], r4
  st32 [r14 + 8], r5
  st32 [r14 + 12], r6
  st32 [r14 + 16], r7
  st32 [r14 + 20], r8
  st32 [r14 + 24], r9
  st32 [r14 + 28], r12
  st32 [r14 + 32], r13
  st16 [0x1024], r4
  ld16s r1, [0x1008]  ; low half of -35 = 0xFFDD, sign-extended
  st32 [r14 + 40], r1
  exit
)");
  p.local_task(10, "main");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p.build());
  w.activate_task(0, 0, 10);
  run_ok(w);
  EXPECT_EQ(read<int32_t>(w, 0, 0, 0x1000, 11),
            (std::vector<int32_t>{2, 12, -35, -1, 15, 1, 0, 14, 2, 12, -35}));
}

TEST(Core, LoopsAndCalls) {
  // sum of 1..10 computed by a called function in a loop: 55.
  TestProgram p;
  p.code(R"(
main:
  li r1, 0      ; sum
  li r2, 1      ; i
  li r3, 11
loop:
  call accumulate
  addi r2, r2, 1
  bne r2, r3, loop
  st32 [0x1000], r1
  exit
accumulate:
  add r1, r1, r2
  ret
)");
  p.local_task(10, "main");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p.build());
  w.activate_task(0, 0, 10);
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1000, 1)[0], 55u);
}

TEST(Core, ScalarFloat) {
  TestProgram p;
  p.code(R"(
main:
  li r1, f:1.5
  li r2, f:0.25
  sfadd r3, r1, r2   ; 1.75
  sfmul r4, r1, r2   ; 0.375
  sfdiv r5, r1, r2   ; 6
  li r6, -7
  sfcvt r7, r6       ; -7.0
  li r8, f:-2.75
  sfint r9, r8       ; -2 (toward zero)
  sflt r10, r8, r1   ; 1
  st32 [0x1000], r3
  st32 [0x1004], r4
  st32 [0x1008], r5
  st32 [0x100c], r7
  st32 [0x1010], r9
  st32 [0x1014], r10
  exit
)");
  p.local_task(10, "main");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p.build());
  w.activate_task(0, 0, 10);
  run_ok(w);
  const auto f = read<float>(w, 0, 0, 0x1000, 4);
  EXPECT_EQ(f, (std::vector<float>{1.75f, 0.375f, 6.0f, -7.0f}));
  const auto i = read<int32_t>(w, 0, 0, 0x1010, 2);
  EXPECT_EQ(i, (std::vector<int32_t>{-2, 1}));
}

TEST(Core, TimingOfScalarInstructions) {
  // Activation before cycle 0; the picker takes cycle 0 (task_start_cycles = 1), `tsc` runs at
  // cycle 1, `nop` at 2, `mul` (3 cycles) at 3..5, `tsc` at 6.
  TestProgram p;
  p.code(R"(
main:
  tsc r1
  nop
  mul r3, r1, r1
  tsc r2
  st32 [0x1000], r1
  st32 [0x1004], r2
  exit
)");
  p.local_task(10, "main");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p.build());
  w.activate_task(0, 0, 10);
  const auto r = run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1000, 2), (std::vector<uint32_t>{1, 6}));
  // st32 at 7, st32 at 8, exit at 9; cycle 10 finds nothing to do.
  EXPECT_EQ(r.cycle, 10u);
  const auto view = w.core_view(0, 0);
  EXPECT_EQ(view.stats.instructions, 7u);
  EXPECT_EQ(view.stats.busy_cycles, 10u);  // pick + 7 issues + 2 extra mul cycles
  EXPECT_EQ(view.stats.tasks_started, 1u);
}

TEST(Core, RunLogWithCycleStamps) {
  TestProgram p;
  p.code(R"(
main:
  coord r1, 0
  coord r2, 1
  dprintr "x=%d", r1
  dprintr "y=%u hex %x", r2
  dprint "done"
  exit
)");
  p.local_task(10, "main");
  Wafer w(emu::arch_profile("wse3"), 2, 1);
  w.load_program(1, 0, p.build(), 5, 255);
  w.activate_task(1, 0, 10);
  std::vector<std::string> lines;
  w.set_log_sink([&](const emu::LogLine& l) { lines.push_back(l.to_string()); });
  run_ok(w);
  EXPECT_EQ(lines, (std::vector<std::string>{"@3 P1.0: x=5", "@4 P1.0: y=255 hex ff", "@5 P1.0: done"}));
}

TEST(Core, ReturnFromTaskLevelEndsTheTask) {
  TestProgram p;
  p.code(R"(
main:
  li r1, 3
  st32 [0x1000], r1
  ret
)");
  p.local_task(10, "main");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p.build());
  w.activate_task(0, 0, 10);
  run_ok(w);
  EXPECT_FALSE(w.core_view(0, 0).running);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1000, 1)[0], 3u);
}

}  // namespace
}  // namespace wsemu::testing
