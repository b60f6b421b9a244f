// Hang detection: the SDK's pipeline-01 stall (a PE adding 1 to a stream nobody drains) and a
// cycle of waits between two PEs. The run stops at the first cycle without progress.
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::RunResult;
using emu::Wafer;

// One PE: add16.async out(color 2, oq 0) = in(color 1, iq 0) + 1, over `n` wavelets. The host
// pushes one wavelet per cycle at the west edge and never drains the east edge port.
struct Pipeline {
  int accepted = 0;
  RunResult result;
  std::vector<uint32_t> drained;
};

Pipeline pipeline(const char* arch, int n) {
  auto p = assemble(std::string(".arch ") + arch + R"(
.param  N
.dsd    inq = fabin.16(1, 0, N)
.dsd    outq = fabout.16(2, 0, N)
.iqinit 0, 1
.oqinit 0, 2
.task   main, local, 10
main:
  li r3, 1
  add16.async outq, inq, r3, ut=0
  exit
)",
                    {{"N", n}});
  Wafer w(emu::arch_profile(arch), 1, 1);
  start_pe(w, p, {{1, "W", "R"}, {2, "R", "E"}});
  Pipeline out;
  for (int c = 0; c < 200 && out.accepted < n; ++c) {
    if (w.push_edge(0, 0, Direction::WEST, data_wavelet(1, uint32_t(100 + out.accepted)))) ++out.accepted;
    w.step();
  }
  out.result = w.run(100000);
  if (out.accepted == n) {  // the "H2D" finished: now the host drains the output ("D2H")
    for (int c = 0; c < 1000 && int(out.drained.size()) < n; ++c) {
      while (auto wl = w.pop_edge(0, 0, Direction::EAST)) out.drained.push_back(wl->payload);
      w.step();
    }
  }
  return out;
}

TEST(Hang, PipelineStallsAbove14WaveletsOnWse2) {
  // Capacity without a consumer: 3 (west router buffer) + 6 (input queue 0) + 2 (output
  // queue 0) + 3 (east edge port) = 14.
  const Pipeline ok = pipeline("wse2", 14);
  EXPECT_EQ(ok.accepted, 14);
  ASSERT_EQ(ok.result.status, RunResult::Status::HANG);  // waits for the host to drain
  EXPECT_TRUE(ok.result.hang->host_waits.size() == 1);
  std::vector<uint32_t> expected;
  for (uint32_t i = 0; i < 14; ++i) expected.push_back(101 + i);
  EXPECT_EQ(ok.drained, expected);

  const Pipeline stuck = pipeline("wse2", 20);
  EXPECT_EQ(stuck.accepted, 14);
  ASSERT_EQ(stuck.result.status, RunResult::Status::HANG) << stuck.result.to_string();
  const emu::HangReport& h = *stuck.result.hang;
  ASSERT_EQ(h.pes.size(), 1u);
  const emu::BlockedPe& pe = h.pes[0];
  EXPECT_EQ(pe.x, 0);
  EXPECT_EQ(pe.y, 0);
  ASSERT_FALSE(pe.waits.empty());
  const emu::Wait& w = pe.waits[0];
  EXPECT_EQ(w.kind, emu::Wait::Kind::MICROTHREAD);
  EXPECT_EQ(w.reason, emu::StallReason::OUTPUT_QUEUE_FULL);
  EXPECT_EQ(w.queue, 0);
  EXPECT_EQ(w.color, 2);
  ASSERT_EQ(h.host_waits.size(), 1u);
  EXPECT_NE(h.host_waits[0].find("EAST edge port of PE(0,0) is full"), std::string::npos);
  const std::string text = stuck.result.to_string();
  EXPECT_NE(text.find("PE(0,0)"), std::string::npos) << text;
  EXPECT_NE(text.find("output queue 0 (color 2) is full"), std::string::npos) << text;
}

TEST(Hang, PipelineCapacityOnWse3) {
  // 3 + 8 (iq 0) + 8 (oq 0) + 3 = 22.
  EXPECT_EQ(pipeline("wse3", 30).accepted, 22);
}

TEST(Hang, TwoPesWaitingForEachOtherFormACycle) {
  // PE0 waits to receive color 2 from PE1 before sending color 1; PE1 waits for color 1.
  // Both receive on input queue 0 and send on output queue 1; only the colors differ.
  const std::string program = R"(
.arch   wse2
.param  IN_COLOR, OUT_COLOR
.iqinit 0, IN_COLOR
.oqinit 1, OUT_COLOR
.task   main, local, 10
main:
  recv r1, 0
  send 1, r1
  exit
)";
  Wafer w(emu::arch_profile("wse2"), 2, 1);
  w.load_program(0, 0, assemble(program, {{"IN_COLOR", 2}, {"OUT_COLOR", 1}}));
  w.load_program(1, 0, assemble(program, {{"IN_COLOR", 1}, {"OUT_COLOR", 2}}));
  w.set_route(0, 0, 1, route("R", "E"));
  w.set_route(1, 0, 1, route("W", "R"));
  w.set_route(1, 0, 2, route("R", "W"));
  w.set_route(0, 0, 2, route("E", "R"));
  w.activate_task(0, 0, 10);
  w.activate_task(1, 0, 10);
  const RunResult r = w.run(1000);
  ASSERT_EQ(r.status, RunResult::Status::HANG);
  EXPECT_LT(r.cycles_run, 10u);  // found at once, not waited out
  const emu::HangReport& h = *r.hang;
  ASSERT_EQ(h.pes.size(), 2u);
  for (const emu::BlockedPe& pe : h.pes) {
    EXPECT_EQ(pe.task, 10);
    ASSERT_EQ(pe.waits.size(), 1u);
    EXPECT_EQ(pe.waits[0].reason, emu::StallReason::INPUT_QUEUE_EMPTY);
  }
  EXPECT_EQ(h.wait_cycle, (std::vector<std::pair<int, int>>{{0, 0}, {1, 0}}));
  EXPECT_NE(r.to_string().find("cycle of waits: PE(0,0) -> PE(1,0) -> PE(0,0)"), std::string::npos) << r.to_string();
}

TEST(Hang, ActivatedButBlockedTaskIsReported) {
  SinglePe pe(R"(
.task t10, local, 10
.task t11, local, 11
t11:
  exit
t10:
  block 11
  activate 11
  exit
)");
  const RunResult r = pe.wafer.run(1000);
  ASSERT_EQ(r.status, RunResult::Status::HANG);
  ASSERT_EQ(r.hang->pes.size(), 1u);
  EXPECT_EQ(r.hang->pes[0].waits[0].kind, emu::Wait::Kind::TASK_BLOCKED);
  EXPECT_EQ(r.hang->pes[0].waits[0].task, 11);
}

}  // namespace
}  // namespace wsemu::testing
