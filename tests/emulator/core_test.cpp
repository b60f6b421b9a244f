// The PE core's scalar side: ALU, loads/stores, branches, calls, timestamps, coordinates and
// the run log. Expected values are worked out by hand in the comments.
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::Wafer;

// Each test assembles one program whose entry `main` is local task 10, loads it on one PE of a
// fresh wafer, activates the task and reads its results back by data symbol.
class Core : public ::testing::Test {
 protected:
  void load(const std::string& source, const char* arch = "wse2", int width = 1, int height = 1, int x = 0,
            int rect_x = 0, int rect_y = 0) {
    program_ = assemble(".task main, local, 10\n" + source);
    wafer_ = std::make_unique<Wafer>(emu::arch_profile(arch), width, height);
    x_ = x;
    wafer_->load_program(x, 0, program_, rect_x, rect_y);
    wafer_->activate_task(x, 0, 10);
  }
  emu::RunResult run(const std::string& source) {
    load(source);
    return run_ok(*wafer_);
  }
  template <typename T>
  std::vector<T> out(std::string_view symbol, size_t n) {
    return read<T>(*wafer_, x_, 0, addr(*program_, symbol), n);
  }

  std::shared_ptr<const isa::ObjectImage> program_;
  std::unique_ptr<Wafer> wafer_;
  int x_ = 0;
};

TEST_F(Core, IntegerAluAndStores) {
  run(R"(
.data
out:    .i32 [11]
.code
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
  li r14, out
  st32 [r14 + 0], r3
  st32 [r14 + 4], r4
  st32 [r14 + 8], r5
  st32 [r14 + 12], r6
  st32 [r14 + 16], r7
  st32 [r14 + 20], r8
  st32 [r14 + 24], r9
  st32 [r14 + 28], r12
  st32 [r14 + 32], r13
  st16 [out + 36], r4
  ld16s r1, [out + 8]  ; low half of -35 = 0xFFDD, sign-extended
  st32 [r14 + 40], r1
  exit
)");
  EXPECT_EQ(out<int32_t>("out", 11), (std::vector<int32_t>{2, 12, -35, -1, 15, 1, 0, 14, 2, 12, -35}));
}

TEST_F(Core, LoopsAndCalls) {
  // sum of 1..10 computed by a called function in a loop: 55.
  run(R"(
.data
sum:    .u32 [1]
.code
main:
  li r1, 0      ; sum
  li r2, 1      ; i
  li r3, 11
loop:
  call accumulate
  addi r2, r2, 1
  bne r2, r3, loop
  st32 [sum], r1
  exit
accumulate:
  add r1, r1, r2
  ret
)");
  EXPECT_EQ(out<uint32_t>("sum", 1)[0], 55u);
}

TEST_F(Core, ScalarFloat) {
  run(R"(
.data
f:      .f32 [4]
i:      .i32 [2]
.code
main:
  li r1, 1.5
  li r2, 0.25
  sfadd r3, r1, r2   ; 1.75
  sfmul r4, r1, r2   ; 0.375
  sfdiv r5, r1, r2   ; 6
  li r6, -7
  sfcvt r7, r6       ; -7.0
  li r8, -2.75
  sfint r9, r8       ; -2 (toward zero)
  sflt r10, r8, r1   ; 1
  st32 [f], r3
  st32 [f + 4], r4
  st32 [f + 8], r5
  st32 [f + 12], r7
  st32 [i], r9
  st32 [i + 4], r10
  exit
)");
  EXPECT_EQ(out<float>("f", 4), (std::vector<float>{1.75f, 0.375f, 6.0f, -7.0f}));
  EXPECT_EQ(out<int32_t>("i", 2), (std::vector<int32_t>{-2, 1}));
}

TEST_F(Core, TimingOfScalarInstructions) {
  // Activation before cycle 0; the picker takes cycle 0 (task_start_cycles = 1), `tsc` runs at
  // cycle 1, `nop` at 2, `mul` (3 cycles) at 3..5, `tsc` at 6.
  const auto r = run(R"(
.data
t:      .u32 [2]
.code
main:
  tsc r1
  nop
  mul r3, r1, r1
  tsc r2
  st32 [t], r1
  st32 [t + 4], r2
  exit
)");
  EXPECT_EQ(out<uint32_t>("t", 2), (std::vector<uint32_t>{1, 6}));
  // st32 at 7, st32 at 8, exit at 9; cycle 10 finds nothing to do.
  EXPECT_EQ(r.cycle, 10u);
  const auto view = wafer_->core_view(0, 0);
  EXPECT_EQ(view.stats.instructions, 7u);
  EXPECT_EQ(view.stats.busy_cycles, 10u);  // pick + 7 issues + 2 extra mul cycles
  EXPECT_EQ(view.stats.tasks_started, 1u);
}

TEST_F(Core, RunLogWithCycleStamps) {
  // PE (1,0) of a 2x1 wse3 wafer, at (5, 255) in its program rectangle.
  load(R"(
main:
  coord r1, 0
  coord r2, 1
  dprintr "x=%d", r1
  dprintr "y=%u hex %x", r2
  dprint "done"
  exit
)",
       "wse3", 2, 1, 1, 5, 255);
  std::vector<std::string> lines;
  wafer_->set_log_sink([&](const emu::LogLine& l) { lines.push_back(l.to_string()); });
  run_ok(*wafer_);
  EXPECT_EQ(lines, (std::vector<std::string>{"@3 P1.0: x=5", "@4 P1.0: y=255 hex ff", "@5 P1.0: done"}));
}

TEST_F(Core, ReturnFromTaskLevelEndsTheTask) {
  run(R"(
.data
v:      .u32 [1]
.code
main:
  li r1, 3
  st32 [v], r1
  ret
)");
  EXPECT_FALSE(wafer_->core_view(0, 0).running);
  EXPECT_EQ(out<uint32_t>("v", 1)[0], 3u);
}

}  // namespace
}  // namespace wsemu::testing
