// Queue depths per architecture (reference §5): how many wavelets an input queue absorbs when
// nobody consumes, and how many sends an output queue takes before the sender stalls.
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::RunResult;
using emu::Wafer;

// Wavelets accepted at the west edge port of a 1x1 wafer whose color 1 goes to input queue q,
// which nobody reads: the router input buffer (3) plus the queue.
int input_capacity(const char* arch, int q) {
  auto p = assemble(std::string(".arch ") + arch + "\n.iqinit " + std::to_string(q) + ", 1\nt:\n  exit\n");
  Wafer w(emu::arch_profile(arch), 1, 1);
  w.load_program(0, 0, p);
  w.set_route(0, 0, 1, route("W", "R"));
  int accepted = 0;
  for (int c = 0; c < 100; ++c) {
    if (w.push_edge(0, 0, Direction::WEST, data_wavelet(1, uint32_t(c)))) ++accepted;
    w.step();
  }
  EXPECT_EQ(int(w.core_view(0, 0).input_queues[q].size()), emu::arch_profile(arch).input_queue_depth[q]);
  return accepted;
}

TEST(QueueDepth, InputQueuesPerArchitecture) {
  const int router = emu::arch_profile("wse2").router_buffer_depth;
  ASSERT_EQ(router, 3);
  EXPECT_EQ(input_capacity("wse2", 0), 3 + 6);
  EXPECT_EQ(input_capacity("wse2", 2), 3 + 4);
  EXPECT_EQ(input_capacity("wse2", 5), 3 + 2);
  EXPECT_EQ(input_capacity("wse3", 0), 3 + 8);
  EXPECT_EQ(input_capacity("wse3", 7), 3 + 4);
}

// Sends completed by a loop sending on output queue q (color 2, east edge never drained)
// before it stalls: the queue plus the edge port (3).
uint32_t sends_before_stall(const char* arch, int q, RunResult* result = nullptr) {
  auto p = assemble(std::string(".arch ") + arch + R"(
.param  Q
.oqinit Q, 2
.task   main, local, 10
.data
sent:   .u32 [1]
.code
main:
  li r1, 0
again:
  send Q, r1
  addi r1, r1, 1
  st32 [sent], r1
  jmp again
)",
                    {{"Q", q}});
  Wafer w(emu::arch_profile(arch), 1, 1);
  start_pe(w, p, {{2, "R", "E"}});
  const RunResult r = w.run(10000);
  EXPECT_EQ(r.status, RunResult::Status::HANG) << r.to_string();
  if (result) *result = r;
  return read<uint32_t>(w, 0, 0, addr(*p, "sent"), 1)[0];
}

TEST(QueueDepth, OutputQueuesPerArchitecture) {
  EXPECT_EQ(sends_before_stall("wse2", 0), 2u + 3);
  EXPECT_EQ(sends_before_stall("wse2", 2), 6u + 3);
  EXPECT_EQ(sends_before_stall("wse3", 0), 8u + 3);
  RunResult r;
  sends_before_stall("wse2", 4, &r);
  ASSERT_TRUE(r.hang);
  const emu::BlockedPe* pe = r.hang->find(0, 0);
  ASSERT_NE(pe, nullptr);
  ASSERT_FALSE(pe->waits.empty());
  EXPECT_EQ(pe->waits[0].reason, emu::StallReason::OUTPUT_QUEUE_FULL);
  EXPECT_EQ(pe->waits[0].queue, 4);
  EXPECT_EQ(pe->waits[0].color, 2);
}

TEST(QueueDepth, QueuesTheArchitectureLacksAreKernelErrors) {
  // wse2 has output queues 0..5. The assembler takes queue 6 in the instruction (its range
  // is 0..7 whatever the architecture), so the check is the emulator's, at run time.
  auto p = assemble(".arch wse2\n.task main, local, 10\nmain:\n  oqinit 6, 3\n  exit\n");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  start_pe(w, p);
  const RunResult r = w.run(100);
  ASSERT_EQ(r.status, RunResult::Status::FAULT);
  EXPECT_EQ(r.fault->kind, emu::FaultKind::KERNEL_ERROR);
  EXPECT_NE(r.fault->message.find("output queue 6 does not exist"), std::string::npos) << r.to_string();
}

TEST(QueueDepth, DepthsCanBeOverridden) {
  const auto profile = emu::arch_profile_with("wse2", {"iq_depth.0=1", "router_buffer_depth=2"});
  auto p = assemble(".arch wse2\n.iqinit 0, 1\nt:\n  exit\n");
  Wafer w(profile, 1, 1);
  w.load_program(0, 0, p);
  w.set_route(0, 0, 1, route("W", "R"));
  int accepted = 0;
  for (int c = 0; c < 50; ++c) {
    if (w.push_edge(0, 0, Direction::WEST, data_wavelet(1, 0))) ++accepted;
    w.step();
  }
  EXPECT_EQ(accepted, 2 + 1);
}

}  // namespace
}  // namespace wsemu::testing
