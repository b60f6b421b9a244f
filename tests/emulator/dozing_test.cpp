// Dozing and edge-driven runs: a tile whose core only counts down a bulk vector op while its
// microthreads stall and its router holds blocked wavelets is not stepped until the op ends
// or input arrives, and a host that runs the wafer only up to the next edge event
// (RunStops) instead of stepping it cycle by cycle. Every observable effect must equal the
// reference: the same wafer with WaferOptions::wake_on_input off, stepped (and pumped) every
// cycle. The results are checked against the hand-worked sums as well.
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::RunResult;
using emu::Wafer;

constexpr int kCount = 20;  // weights the sender streams
constexpr int kLength = 8;  // elements of the receiver's fmacs (it is busy ~kLength cycles per weight)

// The receiver: an async copy of two late wavelets (color 4, queue 1) stalls for most of the
// run while the main thread does acc[i] += a[i] * w for each weight w from queue 0 (color 3), a
// bulk op over memory. So it dozes: its microthread stalls, its main thread counts down, and
// its router holds the next weights, which wait for the full input queue.
std::shared_ptr<const isa::ObjectImage> receiver_program() {
  return assemble(R"(
.arch   wse2
.param  COUNT, LENGTH
.iqinit 0, 3
.data
acc:    .f32 [LENGTH]
a:      .f32 1, 2, 3, 4, 5, 6, 7, 8
late:   .u32 [2]
done:   .u32 0
.dsd    acc_d = mem1d(acc, LENGTH)
.dsd    a_d = mem1d(a, LENGTH)
.dsd    late_in = fabin(4, 1, 2)
.dsd    late_d = mem1d(late, 2)
.code
.task   main, local, 10
main:
  mov32.async late_d, late_in
  li r7, 0
  li r8, COUNT
loop:
  recv r0, 0
  fmacs acc_d, acc_d, a_d, r0
  addi r7, r7, 1
  bne r7, r8, loop
  st32 [done], r7
  exit
)",
                  {{"COUNT", kCount}, {"LENGTH", kLength}});
}

// Two PEs: PE(0,0) sends the weights 1..COUNT east as fast as the receiver takes them, then
// the two late wavelets (COUNT, COUNT); PE(1,0) is the receiver.
std::unique_ptr<Wafer> sender_and_receiver(bool wake) {
  auto sender = assemble(R"(
.arch   wse2
.param  COUNT
.oqinit 1, 3
.oqinit 2, 4
.task   main, local, 10
main:
  li r5, 0
  li r6, COUNT
again:
  addi r5, r5, 1
  sfcvt r4, r5
  send 1, r4
  bne r5, r6, again
  send 2, r5
  send 2, r6
  exit
)",
                         {{"COUNT", kCount}});
  emu::WaferOptions options;
  options.wake_on_input = wake;
  auto w = std::make_unique<Wafer>(emu::arch_profile("wse2"), 2, 1, options);
  w->load_program(0, 0, sender);
  w->load_program(1, 0, receiver_program());
  for (int color : {3, 4}) {
    w->set_route(0, 0, color, route("R", "E"));
    w->set_route(1, 0, color, route("W", "R"));
  }
  w->activate_task(0, 0, 10);
  w->activate_task(1, 0, 10);
  return w;
}

void expect_receiver_results(Wafer& w) {
  const isa::ObjectImage& p = *w.program_at(1, 0);
  const float weights = float(kCount * (kCount + 1) / 2);  // 1 + 2 + ... + COUNT, exact in fp32
  std::vector<float> expected;
  for (int i = 1; i <= kLength; ++i) expected.push_back(float(i) * weights);
  EXPECT_EQ(read<float>(w, 1, 0, addr(p, "acc"), kLength), expected);
  EXPECT_EQ(read<uint32_t>(w, 1, 0, addr(p, "late"), 2), (std::vector<uint32_t>{kCount, kCount}));
  EXPECT_EQ(read<uint32_t>(w, 1, 0, addr(p, "done"), 1)[0], uint32_t(kCount));
}

TEST(Dozing, SameCyclesResultsAndStatsAsSteppingEveryTile) {
  auto dozing = sender_and_receiver(true), stepped = sender_and_receiver(false);
  const RunResult a = dozing->run(100000), b = stepped->run(100000);
  ASSERT_EQ(a.status, RunResult::Status::QUIESCENT) << a.to_string();
  ASSERT_EQ(b.status, RunResult::Status::QUIESCENT) << b.to_string();
  EXPECT_EQ(a.cycle, b.cycle);
  expect_receiver_results(*dozing);
  expect_receiver_results(*stepped);
  EXPECT_EQ(dozing->stats_json().dump(), stepped->stats_json().dump());
  // The microthread stalls until the late wavelets pass the weights (about 120 of ~270 cycles),
  // counted also in the cycles nobody stepped.
  const emu::CoreStats s = dozing->core_view(1, 0).stats;
  EXPECT_GT(s.microthread_stall_cycles[size_t(emu::StallReason::INPUT_QUEUE_EMPTY)], a.cycle / 3);
  // The receiver is stepped about once per instruction instead of every busy cycle.
  EXPECT_LT(dozing->totals().tile_steps * 3 / 2, stepped->totals().tile_steps)
      << dozing->totals().tile_steps << " tile-steps dozing, " << stepped->totals().tile_steps << " stepping, "
      << a.cycle << " cycles";
}

TEST(Dozing, CycleByCycleAndUnevenRunsGiveTheSameStats) {
  // Runs of 1 to 7 cycles that never stop early (on_idle off), against step() every cycle, a
  // little past the end of the work; the waiting and dozing tiles are caught up after each run.
  auto dozing = sender_and_receiver(true), stepped = sender_and_receiver(false);
  emu::RunStops stops;
  stops.on_idle = false;
  for (uint64_t chunk = 1; stepped->cycle() < 800; chunk = chunk % 7 + 1) {
    for (uint64_t c = 0; c < chunk; ++c) stepped->step();
    dozing->run(chunk, stops);
    ASSERT_EQ(dozing->cycle(), stepped->cycle());
    ASSERT_EQ(dozing->stats_json().dump(), stepped->stats_json().dump()) << "cycle " << stepped->cycle();
  }
  EXPECT_FALSE(dozing->pending_work());
  expect_receiver_results(*dozing);
}

// One PE fed from its west edge port by the host: each weight does the receiver's bulk fmacs.
std::unique_ptr<Wafer> edge_fed(bool wake) {
  emu::WaferOptions options;
  options.wake_on_input = wake;
  auto w = std::make_unique<Wafer>(emu::arch_profile("wse2"), 2, 1, options);
  w->load_program(1, 0, receiver_program());
  for (int color : {3, 4}) {
    w->set_route(0, 0, color, route("W", "E"));
    w->set_route(1, 0, color, route("W", "R"));
  }
  w->activate_task(1, 0, 10);
  return w;
}

// The stream the host pushes: weight i may enter from cycle 5 * i, then the two late ones.
std::vector<std::pair<uint64_t, emu::Wavelet>> edge_stream() {
  std::vector<std::pair<uint64_t, emu::Wavelet>> s;
  for (int i = 1; i <= kCount; ++i) s.push_back({uint64_t(5 * i), data_wavelet(3, fbits(float(i)))});
  s.push_back({uint64_t(5 * kCount), data_wavelet(4, kCount)});
  s.push_back({uint64_t(5 * kCount), data_wavelet(4, kCount)});
  return s;
}

TEST(EdgeDrivenRun, RunningToTheNextEdgeEventEqualsPumpingEveryCycle) {
  const auto stream = edge_stream();
  // Reference: every cycle push the next wavelet if it arrived and the port takes it, then step.
  auto stepped = edge_fed(false);
  for (size_t next = 0; next < stream.size();) {
    ASSERT_LT(stepped->cycle(), 10000u);
    if (stream[next].first <= stepped->cycle() && stepped->push_edge(0, 0, Direction::WEST, stream[next].second))
      ++next;
    stepped->step();
  }
  ASSERT_EQ(stepped->run(100000).status, RunResult::Status::QUIESCENT);

  // The same pump, acting only where it can: after a push, at the next arrival, and when the
  // wafer frees a slot in the port's buffer.
  auto driven = edge_fed(true);
  size_t runs = 0;
  for (size_t next = 0; next < stream.size();) {
    ASSERT_LT(driven->cycle(), 10000u);
    const uint64_t now = driven->cycle();
    uint64_t horizon = 100000;  // a bound for the test; the wafer frees a slot long before
    if (stream[next].first <= now) {
      if (driven->push_edge(0, 0, Direction::WEST, stream[next].second)) {
        ++next;
        if (next < stream.size() &&
            driven->edge_input_space(0, 0, Direction::WEST, stream[next].second.color) > 0)
          horizon = 1;
      }
    }
    if (next < stream.size() && stream[next].first > now) horizon = std::min(horizon, stream[next].first - now);
    emu::RunStops stops;
    stops.on_edge_traffic = true;
    stops.on_idle = false;  // the host pushes more before the horizon or after the next edge event
    const RunResult r = driven->run(horizon, stops);
    ASSERT_NE(r.status, RunResult::Status::FAULT) << r.to_string();
    ++runs;
  }
  ASSERT_EQ(driven->run(100000).status, RunResult::Status::QUIESCENT);
  EXPECT_EQ(driven->cycle(), stepped->cycle());
  EXPECT_EQ(driven->stats_json().dump(), stepped->stats_json().dump());
  expect_receiver_results(*driven);
  EXPECT_LT(runs * 2, stepped->cycle());  // far fewer host turns than cycles
}

TEST(EdgeDrivenRun, EdgeTrafficEndsTheRunAndIdleCyclesPassWhenAsked) {
  auto w = edge_fed(true);
  EXPECT_EQ(w->edge_input_space(0, 0, Direction::WEST, 3), w->profile().router_buffer_depth);
  EXPECT_EQ(w->edge_input_space(0, 0, Direction::WEST, 7), 0);  // no route for color 7
  ASSERT_TRUE(w->push_edge(0, 0, Direction::WEST, data_wavelet(3, fbits(1.0f))));
  EXPECT_EQ(w->edge_input_space(0, 0, Direction::WEST, 3), w->profile().router_buffer_depth - 1);
  emu::RunStops stops;
  stops.on_edge_traffic = true;
  const RunResult first = w->run(1000, stops);
  EXPECT_EQ(first.status, RunResult::Status::CYCLE_LIMIT);
  EXPECT_TRUE(first.edge_traffic);
  EXPECT_EQ(first.cycles_run, 1u);  // PE(0,0)'s router takes it from the port in the first cycle
  // Waiting for the rest of the weights: a hang by default, cycles that pass when the host
  // says more will come.
  const RunResult hung = w->run(1000);
  EXPECT_EQ(hung.status, RunResult::Status::HANG) << hung.to_string();
  stops.on_idle = false;
  const uint64_t before = w->totals().tile_steps;
  const RunResult waited = w->run(500, stops);
  EXPECT_EQ(waited.status, RunResult::Status::CYCLE_LIMIT);
  EXPECT_FALSE(waited.edge_traffic);
  EXPECT_EQ(waited.cycles_run, 500u);
  EXPECT_EQ(w->totals().tile_steps, before);  // every tile waits: nothing is stepped
}

}  // namespace
}  // namespace wsemu::testing
