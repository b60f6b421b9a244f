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
  SinglePe pe(R"(
.arch wse2
.data
buf:    .u32 [4]
sum:    .u32 [1]
.dsd    inq = fabin(1, 0, 4)
.dsd    bufd = mem1d(buf, 4)
.dsd    halves = mem1d.16(buf, 8)       ; the same buffer as 8 halves: 4 values, 4 zeros
.code
.task start, local, 10
.task done, local, 11
start:
  mov32.async bufd, inq, activate=11
  exit
done:
  li r3, 0
  add16 r3, r3, halves
  st32 [sum], r3
  exit
)", {{1, "W", "R"}});
  push_all(pe.wafer, 0, 0, Direction::WEST, {data_wavelet(1, 1), data_wavelet(1, 2), data_wavelet(1, 3), data_wavelet(1, 4)});
  pe.run_ok();
  EXPECT_EQ(pe.read<uint32_t>("buf", 4), (std::vector<uint32_t>{1, 2, 3, 4}));
  EXPECT_EQ(pe.word("sum"), 10u);
  EXPECT_EQ(pe.wafer.core_view(0, 0).stats.async_ops, 1u);
}

TEST(AsyncOps, CompletionUnblocksATask) {
  SinglePe pe(R"(
.arch wse3
.data
x:      .f32 1, 2, 3, 4
y:      .f32 [4]
seen:   .f32 [1]
.dsd    xd = mem1d(x, 4)
.dsd    yd = mem1d(y, 4)
.code
.task start, local, 10
.task after, local, 12, blocked
start:
  activate 12
  fmovs.async yd, xd, ut=3, unblock=12
  exit
after:
  ld32 r1, [y + 12]
  st32 [seen], r1
  exit
)");
  pe.run_ok();
  EXPECT_EQ(pe.read<float>("seen", 1)[0], 4.0f);  // task 12 ran after the copy finished
}

TEST(AsyncOps, MicrothreadOverlapsTheMainThread) {
  // An async fmacs over 200 elements (1 per cycle: ~202 cycles) runs while the main thread
  // loops ~150 cycles; the two overlap, so the whole run is far shorter than their sum.
  SinglePe pe(".arch wse3\n.data\n" + xy_vectors("200") + R"(count:  .u32 [1]
done_at: .u32 [1]
.code
.task start, local, 10
.task done, local, 11
start:
  fmacs.async yd, yd, xd, xd, ut=1, activate=11
  li r1, 0
  li r2, 75
loop:
  addi r1, r1, 1
  bne r1, r2, loop
  st32 [count], r1
  exit
done:
  tsc r5
  st32 [done_at], r5
  exit
)");
  const auto r = pe.run_ok();
  EXPECT_EQ(pe.word("count"), 75u);
  const uint32_t done_at = pe.word("done_at");
  // Issue at cycle 1, startup 2, 200 elements in cycles 3..202. Microthreads step before the
  // main thread within a cycle, so the picker sees the activation in 202 and tsc runs at 203.
  EXPECT_EQ(done_at, 203u);
  EXPECT_LT(r.cycle, 220u);
}

TEST(AsyncOps, ControlWaveletEndsTheStreamWhereConfigured) {
  // fabin of up to 100 wavelets with on_control = activate task 13: 3 data wavelets, then a
  // control wavelet ends the stream early.
  SinglePe pe(R"(
.arch wse2
.data
buf:    .u32 [100]
flag:   .u32 [1]
.dsd    inq = fabin(2, 1, 100, on_control=activate:13)
.dsd    bufd = mem1d(buf, 100)
.code
.task start, local, 10
.task ended, local, 13
start:
  mov32.async bufd, inq
  exit
ended:
  li r1, 1
  st32 [flag], r1
  exit
)", {{2, "W", "R"}});
  push_all(pe.wafer, 0, 0, Direction::WEST, {data_wavelet(2, 5), data_wavelet(2, 6), data_wavelet(2, 7), control_wavelet(2, 0)});
  pe.run_ok();
  EXPECT_EQ(pe.read<uint32_t>("buf", 4), (std::vector<uint32_t>{5, 6, 7, 0}));
  EXPECT_EQ(pe.word("flag"), 1u);
  EXPECT_FALSE(pe.wafer.core_view(0, 0).microthread_busy[1]);
}

TEST(AsyncOps, Wse2MicrothreadIsImpliedByTheQueue) {
  // The op uses output queue 3, so it runs on microthread 3 whatever the instruction says.
  SinglePe pe(R"(
.arch wse2
.data
x:      .u32 1, 2, 3, 4, 5, 6, 7, 8
.dsd    xd = mem1d(x, 8)
.dsd    outq = fabout(4, 3, 8)
.code
.task start, local, 10
start:
  mov32.async outq, xd, ut=0
  exit
)", {{4, "R", "E"}});
  for (int i = 0; i < 4; ++i) pe.wafer.step();  // issue, two startup cycles, first element
  const auto v = pe.wafer.core_view(0, 0);
  EXPECT_TRUE(v.microthread_busy[3]);
  EXPECT_FALSE(v.microthread_busy[0]);
  std::vector<uint32_t> out;
  for (int i = 0; i < 40; ++i) {
    pe.wafer.step();
    while (auto wl = pe.wafer.pop_edge(0, 0, Direction::EAST)) out.push_back(wl->payload);
  }
  EXPECT_EQ(out, (std::vector<uint32_t>{1, 2, 3, 4, 5, 6, 7, 8}));
}

// Pushes n data wavelets of color 1 (first, first + 1, ...) into PE (0, 0) from the west as the
// router takes them, stepping the wafer in between.
void feed_from_west(Wafer& w, uint32_t first, uint32_t n) {
  uint32_t pushed = 0;
  for (int i = 0; i < 100 && pushed < n; ++i) {
    if (w.push_edge(0, 0, Direction::WEST, data_wavelet(1, first + pushed))) ++pushed;
    w.step();
  }
  ASSERT_EQ(pushed, n) << "the PE stopped taking wavelets";
}

// The relay programs: `data` and the body of local task 10 (`start`) are the test's; local task
// 11 (`done`), activated when the last move into `got` completes, sets `flag`.
std::string relay_program(const std::string& data, const std::string& start) {
  return data + ".code\n.task start, local, 10\n.task done, local, 11\nstart:\n" + start +
         "  exit\ndone:\n  li r1, 1\n  st32 [flag], r1\n  exit\n";
}

// Feeds n wavelets (first, first + 1, ...) on color 1 and runs: `got` must hold them in order
// and `flag` must be set.
emu::RunResult expect_relayed(SinglePe& pe, uint32_t first, uint32_t n) {
  feed_from_west(pe.wafer, first, n);
  const emu::RunResult r = pe.wafer.run(100000);
  std::vector<uint32_t> want(n);
  for (uint32_t i = 0; i < n; ++i) want[i] = first + i;
  EXPECT_EQ(pe.read<uint32_t>("got", n), want);
  EXPECT_EQ(pe.word("flag"), 1u);
  return r;
}

TEST(AsyncOps, FifoRelayBetweenTwoMicrothreads) {
  // wse3: ut0 pushes 6 wavelets from the fabric into a 2-deep FIFO, ut1 pops them to memory.
  SinglePe pe(relay_program(R"(
.arch wse3
.data
buf:    .u32 [2]
got:    .u32 [6]
flag:   .u32 [1]
.dsd    inq = fabin(1, 0, 6)
.dsd    fifod = fifo(buf, 2)
.dsd    gotd = mem1d(got, 6)
.iqinit 0, 1
)",
                            "  mov32.async fifod, inq, ut=0\n"
                            "  mov32.async gotd, fifod, ut=1, activate=11\n"),
              {{1, "W", "R"}});
  const emu::RunResult r = expect_relayed(pe, 10, 6);
  EXPECT_EQ(r.status, emu::RunResult::Status::QUIESCENT) << r.to_string();
}

// The SDK's microthread priority decides who is served first in a cycle: high, then medium,
// then the main thread, then low (equal levels by microthread id). Three producers push into
// one FIFO from memory, each one element a cycle from 2 cycles after its issue (the startup):
// A (ut0, low: 1, 2, 3) issued at t, B (ut1, medium: 10, 20, 30) at t+1, the main thread's own
// synchronous push (100, 200) at t+2. Worked by hand, the FIFO then holds
//   t+2: 1   t+3: 10, 2   t+4: 20, 100, 3   t+5: 30, 200
// where serving every microthread before the main thread in id order gives 1, 2, 10, 3, 20, 100, 30, 200.
TEST(AsyncOps, PriorityOrdersTheThreadsOfACycle) {
  auto run = [](const std::string& b_priority) {
    auto p = assemble(R"(
.arch wse3
.data
a:      .u32 1, 2, 3
b:      .u32 10, 20, 30
m:      .u32 100, 200
buf:    .u32 [8]
got:    .u32 [8]
.dsd    ad = mem1d(a, 3)
.dsd    bd = mem1d(b, 3)
.dsd    md = mem1d(m, 2)
.dsd    fifod = fifo(buf, 8)
.dsd    gotd = mem1d(got, 8)
.code
.task start, local, 10
.task done, local, 11, blocked
start:
  mov32.async fifod, ad, ut=0
  mov32.async fifod, bd, ut=1, )" + b_priority + R"(unblock=11
  mov32 fifod, md
  activate 11
  exit
done:
  mov32 gotd, fifod
  exit
)");
    Wafer w(emu::arch_profile("wse3"), 1, 1);
    start_pe(w, p);
    run_ok(w);
    return read<uint32_t>(w, 0, 0, addr(*p, "got"), 8);
  };
  EXPECT_EQ(run("priority=medium, "), (std::vector<uint32_t>{1, 10, 2, 20, 100, 3, 30, 200}));
  // Both low: id order, and the main thread before both.
  EXPECT_EQ(run(""), (std::vector<uint32_t>{1, 2, 10, 100, 3, 20, 200, 30}));
}

TEST(AsyncOps, FifoToFifoForwardsWithoutEnd) {
  // wse2: 5 wavelets from the fabric into FIFO a (length 5), a forwarder from a to b with no
  // length of its own (every operand a FIFO: it runs without end), and b into memory (length 5).
  SinglePe pe(relay_program(R"(
.arch wse2
.data
abuf:   .u32 [2]
bbuf:   .u32 [2]
got:    .u32 [5]
flag:   .u32 [1]
.dsd    inq = fabin(1, 0, 5)
.dsd    a = fifo(abuf, 2)
.dsd    b = fifo(bbuf, 2)
.dsd    gotd = mem1d(got, 5)
)",
                            "  mov32.async a, inq\n"
                            "  mov32.async b, a, ut=4\n"
                            "  mov32.async gotd, b, ut=5, activate=11\n"),
              {{1, "W", "R"}});
  const emu::RunResult r = expect_relayed(pe, 20, 5);
  EXPECT_TRUE(pe.wafer.core_view(0, 0).microthread_busy[4]) << "the forwarder waits for more: " << r.to_string();
}

TEST(AsyncOps, SynchronousFifoToFifoIsAKernelError) {
  SinglePe pe(R"(
.arch wse2
.data
abuf:   .u32 [2]
bbuf:   .u32 [2]
.dsd    a = fifo(abuf, 2)
.dsd    b = fifo(bbuf, 2)
.code
.task start, local, 10, activated
start:
  mov32 b, a
  exit
)");
  expect_kernel_error(pe.wafer.run(1000), "FIFO to FIFO runs without end only with .async");
}

}  // namespace
}  // namespace wsemu::testing
