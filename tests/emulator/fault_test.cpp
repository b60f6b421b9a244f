// Every fault category, with the PE, cycle, PC, instruction and color where they apply. A
// faulting kernel never crashes the process: run() returns the fault.
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::FaultKind;
using emu::RunResult;
using emu::Wafer;

// Runs `code` (its entry `main` is local task 10) on PE (x, y) of a 2x2 wafer, with a buffer
// `buf` and descriptors over it as 32-bit (`words`) and 16-bit (`halves`, `odd_halves` from its
// second halfword) elements, and one (`beyond`) that runs past the end of the 16-bit address space.
RunResult run_program(const std::string& code, const char* arch = "wse2", int x = 0, int y = 0) {
  auto p = assemble(std::string(".arch ") + arch + R"(
.task   main, local, 10
.data
buf:    .u32 [4]
.dsd    words = mem1d(buf, 4)
.dsd    halves = mem1d.16(buf, 4)
.dsd    odd_halves = mem1d.16(buf + 2, 2)
.dsd    beyond = mem1d(0xFFF0, 4)
.code
)" + code);
  Wafer w(emu::arch_profile(arch), 2, 2);
  w.load_program(x, y, p);
  w.activate_task(x, y, 10);
  return w.run(1000);
}

// A kernel error (wafer_helpers.hpp) at `pc`, with its instruction and cycle.
void expect_kernel_error_at(const RunResult& r, const std::string& text, uint32_t pc) {
  ASSERT_NO_FATAL_FAILURE(expect_kernel_error(r, text));
  ASSERT_TRUE(r.fault->pc);
  EXPECT_EQ(*r.fault->pc, pc);
  EXPECT_FALSE(r.fault->instruction.empty());
  EXPECT_TRUE(r.fault->cycle.has_value());
}

TEST(Fault, StoreIntoCodeIsAKernelError) {
  const RunResult r = run_program("main:\n  li r1, 8\n  st32 [r1 + 0], r1\n  exit\n", "wse2", 1, 1);
  expect_kernel_error_at(r, "inside the code", 1);
  EXPECT_EQ(*r.fault->x, 1);
  EXPECT_EQ(*r.fault->y, 1);
  EXPECT_EQ(r.fault->instruction, "st32 [r1], r1");
  EXPECT_EQ(*r.fault->cycle, 2u);  // pick at 0, li at 1, st32 at 2
  // The assembler records source lines: the st32 is line 12 of run_program's source (9
  // lines of prologue, then `main:` and `li`).
  EXPECT_NE(r.to_string().find("kernel error at PE(1,1), cycle 2, pc 1 (line 12) `st32 [r1], r1`"), std::string::npos)
      << r.to_string();
}

TEST(Fault, LoadOutsideSram) {
  expect_kernel_error_at(run_program("main:\n  li r1, 49152\n  ld32 r2, [r1 + 0]\n  exit\n"), "outside the 49152 bytes", 1);
}

TEST(Fault, MisalignedLoad) {
  expect_kernel_error_at(run_program("main:\n  ld32 r2, [buf + 2]\n  exit\n"), "not 4-byte aligned", 0);
}

TEST(Fault, DivisionByZero) {
  expect_kernel_error_at(run_program("main:\n  li r1, 1\n  divu r3, r1, r2\n  exit\n"), "division by zero", 1);
}

TEST(Fault, CallStackOverflow) {
  expect_kernel_error_at(run_program("main:\n  call main\n"), "call stack overflow", 0);
}

// A 16-bit operation over a 32-bit descriptor is an error; a 32-bit one over a 16-bit memory
// descriptor moves 32-bit elements (isa/descriptor.hpp), from a 4-byte aligned base only.
TEST(Fault, ElementWidthMismatch) {
  expect_kernel_error_at(run_program("main:\n  faddh halves, halves, words\n  exit\n"), "holds 32-bit elements", 0);
  expect_kernel_error_at(run_program("main:\n  fmovs words, odd_halves\n  exit\n"), "at the odd halfword", 0);
}

TEST(Fault, VectorOperandOutsideSram) {
  expect_kernel_error_at(run_program("main:\n  fmovs beyond, words\n  exit\n"), "outside SRAM", 0);
}

TEST(Fault, ActivatingADataTask) {
  SinglePe pe(R"(
.arch wse2
.task main, local, 10
.task on3, data, color 3
main:
  activate 3
  exit
on3:
  exit
)");
  expect_kernel_error_at(pe.wafer.run(100), "data tasks are activated by wavelets", 0);
}

TEST(Fault, MicrothreadAlreadyBusy) {
  SinglePe pe(".arch wse3\n.task main, local, 10\n.data\n" + xy_vectors("50") + R"(.code
main:
  fmovs.async yd, xd, ut=2
  fmovs.async xd, yd, ut=2
  exit
)");
  expect_kernel_error_at(pe.wafer.run(100), "microthread 2 is still running", 1);
}

TEST(Fault, InvalidInstructionWord) {
  SinglePe pe(R"(
.task main, local, 10
main:
  nop
  .word 0xFFFF      ; no such opcode
)");
  expect_kernel_error(pe.wafer.run(100), "invalid instruction word");
}

TEST(Fault, WaveletSentTowardARouterThatDoesNotReceiveIt) {
  Wafer w(emu::arch_profile("wse2"), 2, 1);
  w.set_route(0, 0, 4, route("W", "E"));
  w.set_route(1, 0, 4, route("N", "S"));  // does not receive color 4 from WEST
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(4, 1)));
  const RunResult r = w.run(100);
  ASSERT_EQ(r.status, RunResult::Status::FAULT);
  EXPECT_EQ(r.fault->kind, FaultKind::KERNEL_ERROR);
  EXPECT_EQ(*r.fault->color, 4);
  EXPECT_EQ(*r.fault->x, 0);
  EXPECT_NE(r.fault->message.find("does not receive color 4 from WEST"), std::string::npos) << r.to_string();
}

TEST(Fault, WaveletToACoreWithoutAnInputQueueOnWse3) {
  auto p = assemble(".arch wse3\nmain:\n  exit\n");
  Wafer w(emu::arch_profile("wse3"), 1, 1);
  w.load_program(0, 0, p);
  w.set_route(0, 0, 9, route("W", "R"));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(9, 1)));
  const RunResult r = w.run(100);
  ASSERT_EQ(r.status, RunResult::Status::FAULT);
  EXPECT_NE(r.fault->message.find("no input queue is bound to color 9"), std::string::npos) << r.to_string();
}

TEST(Fault, ConfigurationErrors) {
  auto expect_config = [](auto&& f, const std::string& text) {
    try {
      f();
      ADD_FAILURE() << "no error for: " << text;
    } catch (const emu::FaultError& e) {
      EXPECT_EQ(e.fault().kind, FaultKind::CONFIGURATION_ERROR) << e.what();
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  expect_config([] { emu::arch_profile("wse9"); }, "unknown architecture 'wse9'");
  expect_config([] { emu::arch_profile_with("wse2", {"clock_mhz=abc"}); }, "not a number");
  expect_config([] { emu::arch_profile_with("wse2", {"nonsense=1"}); }, "unknown profile key");
  expect_config([] { emu::arch_profile_with("wse2", {"router_buffer_depth=99"}); }, "out of range");
  expect_config([] { Wafer w(emu::arch_profile("wse2"), 0, 3); }, "fabric size");
  Wafer w(emu::arch_profile("wse2"), 2, 2);
  expect_config([&] { w.set_route(5, 0, 1, route("W", "E")); }, "outside the 2x2 fabric");
  expect_config([&] { w.activate_task(0, 0, 10); }, "has no program");
  auto big = assemble("main:\n  exit\n.data\nhuge: .u32 [15000]\n");  // 60000 bytes of data
  expect_config([&] { w.load_program(0, 0, big); }, "needs");
  w.load_program(1, 1, assemble(".task main, local, 10\nmain:\n  exit\n"));
  const std::vector<uint8_t> bytes(4, 0);
  expect_config([&] { w.write_sram(1, 1, 0, bytes); }, "inside the code");
  expect_config([&] { w.activate_task(1, 1, 11); }, "not bound to a local task");
  auto wrong_arch = assemble(".arch wse3\nmain:\n  exit\n");
  expect_config([&] { w.load_program(0, 1, wrong_arch); }, "assembled for wse3");
}

TEST(Fault, InternalErrorCategoryFormats) {
  emu::Fault f;
  f.kind = FaultKind::INTERNAL_ERROR;
  f.message = "invariant broken";
  f.x = 3;
  f.y = 4;
  f.cycle = 9;
  EXPECT_EQ(f.to_string(), "internal error at PE(3,4), cycle 9: invariant broken");
}

TEST(Fault, TheWaferStaysUsableForInspectionAfterAFault) {
  auto p = assemble(".task main, local, 10\nmain:\n  li r7, 42\n  divu r1, r7, r0\n  exit\n");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  start_pe(w, p);
  ASSERT_EQ(w.run(100).status, RunResult::Status::FAULT);
  EXPECT_EQ(w.core_view(0, 0).regs[7], 42u);
}

}  // namespace
}  // namespace wsemu::testing
