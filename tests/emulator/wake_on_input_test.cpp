// Wake-up on input: tiles that wait are not stepped, yet every observable effect equals the
// reference stepping (every tile with work, every cycle): cycles, results, the statistics JSON
// (stall cycles per reason, link backpressure), hang reports. The reference here is the same
// wafer with WaferOptions::wake_on_input off.
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::RunResult;
using emu::Wafer;

// PE(0,0) counts to `spin` before it sends two wavelets east over `hops` relays; PE(hops+1, 0)
// sums what arrives with a recv loop, and a third wavelet it waits for never comes unless
// `complete`. The receiver stalls on its input queue the whole time (main thread), so in the
// woken mode it waits unstepped.
std::unique_ptr<Wafer> chain(bool wake, int hops, int spin, bool complete) {
  auto sender = assemble(R"(
.arch   wse2
.param  SPIN, COUNT
.oqinit 1, 3
.task   main, local, 10
main:
  li r5, 0
  li r6, SPIN
spin:
  addi r5, r5, 1
  bne r5, r6, spin
  li r7, 0
  li r8, COUNT
again:
  send 1, r5
  addi r7, r7, 1
  bne r7, r8, again
  exit
)",
                         {{"SPIN", spin}, {"COUNT", complete ? 3 : 2}});
  auto receiver = assemble(R"(
.arch   wse2
.iqinit 0, 3
.data
sum:    .u32 0
.code
.task   main, local, 10
main:
  recv r1, 0
  recv r2, 0
  add r1, r1, r2
  recv r2, 0
  add r1, r1, r2
  st32 [sum], r1
  exit
)");
  emu::WaferOptions options;
  options.wake_on_input = wake;
  auto w = std::make_unique<Wafer>(emu::arch_profile("wse2"), hops + 2, 1, options);
  w->load_program(0, 0, sender);
  w->load_program(hops + 1, 0, receiver);
  w->set_route(0, 0, 3, route("R", "E"));
  for (int x = 1; x <= hops; ++x) w->set_route(x, 0, 3, route("W", "E"));
  w->set_route(hops + 1, 0, 3, route("W", "R"));
  w->activate_task(0, 0, 10);
  w->activate_task(hops + 1, 0, 10);
  return w;
}

// The chain run with and without wake on input, each to its end: both must end in `status`, in
// the same cycle and with the same stats (only the tiles stepped may differ).
struct WokenAndStepped {
  std::unique_ptr<Wafer> woken, stepped;
  RunResult woken_run, stepped_run;
};

WokenAndStepped run_both(int hops, int spin, bool complete, RunResult::Status status) {
  WokenAndStepped r{chain(true, hops, spin, complete), chain(false, hops, spin, complete), {}, {}};
  r.woken_run = r.woken->run(100000);
  r.stepped_run = r.stepped->run(100000);
  EXPECT_EQ(r.woken_run.status, status) << r.woken_run.to_string();
  EXPECT_EQ(r.stepped_run.status, status) << r.stepped_run.to_string();
  EXPECT_EQ(r.woken_run.cycle, r.stepped_run.cycle);
  EXPECT_EQ(r.woken->stats_json().dump(), r.stepped->stats_json().dump());
  return r;
}

TEST(WakeOnInput, SameCyclesResultsAndStatsAsSteppingEveryTile) {
  const WokenAndStepped r = run_both(5, 300, true, RunResult::Status::QUIESCENT);
  Wafer &woken = *r.woken, &stepped = *r.stepped;
  // The sender's counter reaches 300 and it sends 300 three times.
  EXPECT_EQ(read<uint32_t>(woken, 6, 0, addr(*woken.program_at(6, 0), "sum"), 1)[0], 900u);
  EXPECT_EQ(read<uint32_t>(stepped, 6, 0, addr(*stepped.program_at(6, 0), "sum"), 1)[0], 900u);
  // The receiver's ~600 cycles of waiting are counted as stalls in both, but not stepped here.
  EXPECT_GT(woken.core_view(6, 0).stats.stall_cycles[size_t(emu::StallReason::INPUT_QUEUE_EMPTY)], 500u);
  EXPECT_LT(woken.totals().tile_steps + 500, stepped.totals().tile_steps);
}

TEST(WakeOnInput, CycleByCycleAndHostInterleavingGiveTheSameStats) {
  // step() and a host that looks at the wafer between cycles: the waiting tiles are caught up
  // at the end of every call.
  auto woken = chain(true, 3, 50, true), stepped = chain(false, 3, 50, true);
  for (int c = 0; c < 400; ++c) {
    woken->step();
    stepped->step();
    if (c % 37 == 0) {
      ASSERT_EQ(woken->stats_json().dump(), stepped->stats_json().dump()) << "cycle " << c;
    }
  }
  EXPECT_EQ(woken->stats_json().dump(), stepped->stats_json().dump());
}

TEST(WakeOnInput, SameHangReportWhenTheLastWaveletNeverComes) {
  const WokenAndStepped r = run_both(4, 100, false, RunResult::Status::HANG);
  EXPECT_EQ(r.woken_run.to_string(), r.stepped_run.to_string());
}

}  // namespace
}  // namespace wsemu::testing
