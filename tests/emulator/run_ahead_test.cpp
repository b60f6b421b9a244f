// Run-ahead: a core whose main thread issues straight-line scalar instructions and bulk vector
// ops over memory executes several of them in one step (emulator/README.md, "Run-ahead"); a
// host that looks at it between runs, an instruction ahead that faults and a fault on another
// PE must all see the core as if it had been stepped cycle by cycle. The reference is the same
// wafer with WaferOptions::wake_on_input off (every tile with work stepped every cycle, nothing
// run ahead); the results are checked against hand-worked values too.
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::RunResult;
using emu::Wafer;

constexpr int kRounds = 12;

// Round k = 1..ROUNDS: acc[i] += a[i] * k (a bulk fmacs over memory), sq += k * k (in a call),
// sum += k, quot += 360 / (k + OFFSET) (an integer division: with OFFSET = -j it divides by zero
// in round j), a descriptor write, all through SRAM. PE(1,0), when loaded, counts to STOP and
// divides by zero: a fault on another PE while this one may have run ahead.
std::shared_ptr<const isa::ObjectImage> rounds_program(int offset) {
  return assemble(R"(
.arch   wse2
.param  ROUNDS, OFFSET
.data
acc:    .f32 [4]
a:      .f32 1, 2, 3, 4
sum:    .u32 0
sq:     .u32 0
quot:   .u32 0
.dsd    acc_d = mem1d(acc, 4)
.dsd    a_d = mem1d(a, 4)
.code
.task   main, local, 10
main:
  li r7, 0
  li r8, ROUNDS
loop:
  addi r7, r7, 1
  sfcvt r4, r7
  fmacs acc_d, acc_d, a_d, r4
  call square
  ld32 r5, [sum]
  add r5, r5, r7
  st32 [sum], r5
  li r3, 360
  addi r6, r7, OFFSET
  divu r3, r3, r6
  ld32 r5, [quot]
  add r5, r5, r3
  st32 [quot], r5
  dsdinc a_d, 0
  bne r7, r8, loop
  exit
square:
  mul r1, r7, r7
  ld32 r2, [sq]
  add r2, r2, r1
  st32 [sq], r2
  ret
)",
                  {{"ROUNDS", kRounds}, {"OFFSET", offset}});
}

std::shared_ptr<const isa::ObjectImage> faulting_program(int stop) {
  return assemble(R"(
.arch   wse2
.param  STOP
.task   main, local, 10
main:
  li r1, 0
  li r2, STOP
count:
  addi r1, r1, 1
  bne r1, r2, count
  divu r3, r2, r15
  exit
)",
                  {{"STOP", stop}});
}

// PE(0,0) runs the rounds; with `fault_stop` > 0, PE(1,0) faults after about 2 * fault_stop cycles.
std::unique_ptr<Wafer> wafer(bool wake, int offset, int fault_stop = 0) {
  emu::WaferOptions options;
  options.wake_on_input = wake;
  auto w = std::make_unique<Wafer>(emu::arch_profile("wse2"), 2, 1, options);
  w->load_program(0, 0, rounds_program(offset));
  w->activate_task(0, 0, 10);
  if (fault_stop > 0) {
    w->load_program(1, 0, faulting_program(fault_stop));
    w->activate_task(1, 0, 10);
  }
  return w;
}

// What anyone can see of PE(0,0): registers, descriptors, program counter, SRAM, counters.
void expect_same_core(Wafer& a, Wafer& b, const std::string& when) {
  const emu::CoreView x = a.core_view(0, 0), y = b.core_view(0, 0);
  EXPECT_EQ(x.regs, y.regs) << when;
  EXPECT_EQ(x.dsrs, y.dsrs) << when;
  EXPECT_EQ(x.pc, y.pc) << when;
  EXPECT_EQ(x.running, y.running) << when;
  const isa::ObjectImage& p = *a.program_at(0, 0);
  EXPECT_EQ(read<uint32_t>(a, 0, 0, addr(p, "acc"), 12), read<uint32_t>(b, 0, 0, addr(p, "acc"), 12)) << when;
  EXPECT_EQ(a.stats_json().dump(), b.stats_json().dump()) << when;
}

TEST(RunAhead, SameCyclesResultsAndStatsAsSteppingEveryCycle) {
  auto ahead = wafer(true, 0), stepped = wafer(false, 0);
  const RunResult a = ahead->run(100000), b = stepped->run(100000);
  ASSERT_EQ(a.status, RunResult::Status::QUIESCENT) << a.to_string();
  ASSERT_EQ(b.status, RunResult::Status::QUIESCENT) << b.to_string();
  EXPECT_EQ(a.cycle, b.cycle);
  expect_same_core(*ahead, *stepped, "at the end");
  const isa::ObjectImage& p = *ahead->program_at(0, 0);
  // sum 1..12 = 78, squares 650, 360/k summed (integer) 1116; acc[i] = a[i] * 78.
  EXPECT_EQ(read<uint32_t>(*ahead, 0, 0, addr(p, "sum"), 3), (std::vector<uint32_t>{78, 650, 1116}));
  EXPECT_EQ(read<float>(*ahead, 0, 0, addr(p, "acc"), 4), (std::vector<float>{78, 156, 234, 312}));
  EXPECT_EQ(ahead->core_view(0, 0).stats.instructions, uint64_t(3 + kRounds * 20));
  // 20 instructions a round, 64 may run ahead per step: a handful of steps, where the
  // reference steps the tile in every one of its cycles.
  EXPECT_LT(ahead->totals().tile_steps * 10, stepped->totals().tile_steps)
      << ahead->totals().tile_steps << " tile-steps ahead, " << stepped->totals().tile_steps << " stepping";
}

TEST(RunAhead, RunsEndingInsideARunAheadSeeTheSteppedCore) {
  // Runs of 1 to 7 cycles against step() every cycle; after each, the host looks at the core,
  // which undoes what was run ahead past the current cycle.
  auto ahead = wafer(true, 0), stepped = wafer(false, 0);
  emu::RunStops stops;
  stops.on_idle = false;
  for (uint64_t chunk = 1; stepped->cycle() < 400; chunk = chunk % 7 + 1) {
    for (uint64_t c = 0; c < chunk; ++c) stepped->step();
    ahead->run(chunk, stops);
    ASSERT_EQ(ahead->cycle(), stepped->cycle());
    expect_same_core(*ahead, *stepped, "cycle " + std::to_string(stepped->cycle()));
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_FALSE(ahead->pending_work());
}

TEST(RunAhead, AnInstructionAheadThatFaultsFaultsAtItsOwnCycle) {
  auto ahead = wafer(true, -5), stepped = wafer(false, -5);  // round 5 divides by zero
  const RunResult a = ahead->run(100000), b = stepped->run(100000);
  ASSERT_EQ(b.status, RunResult::Status::FAULT) << b.to_string();
  EXPECT_EQ(a.to_string(), b.to_string());
  EXPECT_NE(a.to_string().find("division by zero"), std::string::npos) << a.to_string();
  expect_same_core(*ahead, *stepped, "after the fault");
  const isa::ObjectImage& p = *ahead->program_at(0, 0);
  EXPECT_EQ(read<uint32_t>(*ahead, 0, 0, addr(p, "sum"), 1)[0], 15u);  // rounds 1..5 added
}

TEST(RunAhead, AFaultElsewhereLeavesNothingRunAheadPastIt) {
  for (int stop : {7, 20, 33, 60}) {
    auto ahead = wafer(true, 0, stop), stepped = wafer(false, 0, stop);
    const RunResult a = ahead->run(100000), b = stepped->run(100000);
    ASSERT_EQ(b.status, RunResult::Status::FAULT) << b.to_string();
    EXPECT_EQ(b.fault->x, 1);
    EXPECT_EQ(a.to_string(), b.to_string());
    expect_same_core(*ahead, *stepped, "PE(1,0) counting to " + std::to_string(stop));
  }
}

}  // namespace
}  // namespace wsemu::testing
