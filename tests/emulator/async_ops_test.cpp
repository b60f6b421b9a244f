// Asynchronous vector operations on microthreads: completion hooks (activate, unblock),
// overlap with the main thread, control wavelets ending a stream, explicit microthreads on
// wse3 and the implied microthread on wse2.
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::Wafer;

TEST(AsyncOps, CompletionActivatesATask) {
  // Task 10 starts an async fabin -> memory copy of 4 wavelets and exits; when the copy is
  // done, task 11 sums the buffer.
  TestProgram p("wse2");
  p.dsd(0, fabin(1, 0, 4)).dsd(1, mem1d(0x1000, 4));
  p.code(R"(
start:
  mov32.async d1, d0 | activate=11
  exit
done:
  li r3, 0
  add16 r3, r3, d2
  st32 [0x1100], r3
  exit
)");
  p.dsd(2, mem1d(0x1000, 8, 1, 16));  // the same buffer as 8 halves: 4 values, 4 zeros
  p.local_task(10, "start").local_task(11, "done");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p.build());
  w.set_route(0, 0, 1, route("W", "R"));
  w.activate_task(0, 0, 10);
  push_all(w, 0, 0, Direction::WEST, {data_wavelet(1, 1), data_wavelet(1, 2), data_wavelet(1, 3), data_wavelet(1, 4)});
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1000, 4), (std::vector<uint32_t>{1, 2, 3, 4}));
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1100, 1)[0], 10u);
  EXPECT_EQ(w.core_view(0, 0).stats.async_ops, 1u);
}

TEST(AsyncOps, CompletionUnblocksATask) {
  TestProgram p("wse3");
  p.data<float>(0x1000, {1, 2, 3, 4});
  p.dsd(0, mem1d(0x1000, 4)).dsd(1, mem1d(0x1100, 4));
  p.code(R"(
start:
  activate 12
  fmovs.async d1, d0 | ut=3 unblock=12
  exit
after:
  ld32 r1, [0x110c]
  st32 [0x1200], r1
  exit
)");
  p.local_task(10, "start").local_task(12, "after").blocked_at_start();
  Wafer w(emu::arch_profile("wse3"), 1, 1);
  w.load_program(0, 0, p.build());
  w.activate_task(0, 0, 10);
  run_ok(w);
  EXPECT_EQ(read<float>(w, 0, 0, 0x1200, 1)[0], 4.0f);  // task 12 ran after the copy finished
}

TEST(AsyncOps, MicrothreadOverlapsTheMainThread) {
  // An async fmacs over 200 elements (1 per cycle: ~202 cycles) runs while the main thread
  // loops ~150 cycles; the two overlap, so the whole run is far shorter than their sum.
  TestProgram p("wse3");
  p.dsd(0, mem1d(0x1000, 200)).dsd(1, mem1d(0x1400, 200));
  p.code(R"(
start:
  fmacs.async d1, d1, d0, d0 | ut=1 activate=11
  li r1, 0
  li r2, 75
loop:
  addi r1, r1, 1
  bne r1, r2, loop
  st32 [0x1800], r1
  exit
done:
  tsc r5
  st32 [0x1804], r5
  exit
)");
  p.local_task(10, "start").local_task(11, "done");
  Wafer w(emu::arch_profile("wse3"), 1, 1);
  w.load_program(0, 0, p.build());
  w.activate_task(0, 0, 10);
  const auto r = run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1800, 1)[0], 75u);
  const uint32_t done_at = read<uint32_t>(w, 0, 0, 0x1804, 1)[0];
  // Issue at cycle 1, startup 2, 200 elements in cycles 3..202. Microthreads step before the
  // main thread within a cycle, so the picker sees the activation in 202 and tsc runs at 203.
  EXPECT_EQ(done_at, 203u);
  EXPECT_LT(r.cycle, 220u);
}

TEST(AsyncOps, ControlWaveletEndsTheStreamWhereConfigured) {
  // fabin of up to 100 wavelets with on_control = activate task 13: 3 data wavelets, then a
  // control wavelet ends the stream early.
  TestProgram p("wse2");
  p.dsd(0, fabin(2, 1, 100, 32, isa::OnControl::ACTIVATE, 13)).dsd(1, mem1d(0x1000, 100));
  p.code(R"(
start:
  mov32.async d1, d0
  exit
ended:
  li r1, 1
  st32 [0x1400], r1
  exit
)");
  p.local_task(10, "start").local_task(13, "ended");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p.build());
  w.set_route(0, 0, 2, route("W", "R"));
  w.activate_task(0, 0, 10);
  push_all(w, 0, 0, Direction::WEST, {data_wavelet(2, 5), data_wavelet(2, 6), data_wavelet(2, 7), control_wavelet(2, 0)});
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1000, 4), (std::vector<uint32_t>{5, 6, 7, 0}));
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1400, 1)[0], 1u);
  EXPECT_FALSE(w.core_view(0, 0).microthread_busy[1]);
}

TEST(AsyncOps, Wse2MicrothreadIsImpliedByTheQueue) {
  // The op uses output queue 3, so it runs on microthread 3 whatever the instruction says.
  TestProgram p("wse2");
  p.data<uint32_t>(0x1000, {1, 2, 3, 4, 5, 6, 7, 8});
  p.dsd(0, mem1d(0x1000, 8)).dsd(1, fabout(4, 3, 8));
  p.code("start:\n  mov32.async d1, d0 | ut=0\n  exit\n");
  p.local_task(10, "start");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p.build());
  w.set_route(0, 0, 4, route("R", "E"));
  w.activate_task(0, 0, 10);
  for (int i = 0; i < 4; ++i) w.step();  // issue, two startup cycles, first element
  const auto v = w.core_view(0, 0);
  EXPECT_TRUE(v.microthread_busy[3]);
  EXPECT_FALSE(v.microthread_busy[0]);
  std::vector<uint32_t> out;
  for (int i = 0; i < 40; ++i) {
    w.step();
    while (auto wl = w.pop_edge(0, 0, Direction::EAST)) out.push_back(wl->payload);
  }
  EXPECT_EQ(out, (std::vector<uint32_t>{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(AsyncOps, FifoRelayBetweenTwoMicrothreads) {
  // wse3: ut0 pushes 6 wavelets from the fabric into a 2-deep FIFO, ut1 pops them to memory.
  TestProgram p("wse3");
  p.dsd(0, fabin(1, 0, 6)).dsd(1, fifo(0x1000, 2)).dsd(2, mem1d(0x1100, 6));
  p.code(R"(
start:
  mov32.async d1, d0 | ut=0
  mov32.async d2, d1 | ut=1 activate=11
  exit
done:
  li r1, 1
  st32 [0x1200], r1
  exit
)");
  p.local_task(10, "start").local_task(11, "done").iq(0, 1);
  Wafer w(emu::arch_profile("wse3"), 1, 1);
  w.load_program(0, 0, p.build());
  w.set_route(0, 0, 1, route("W", "R"));
  w.activate_task(0, 0, 10);
  uint32_t pushed = 0;
  for (int i = 0; i < 100 && pushed < 6; ++i) {
    if (w.push_edge(0, 0, Direction::WEST, data_wavelet(1, 10 + pushed))) ++pushed;
    w.step();
  }
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1100, 6), (std::vector<uint32_t>{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1200, 1)[0], 1u);
}

}  // namespace
}  // namespace wsemu::testing
