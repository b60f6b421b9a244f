// Determinism: the same multi-PE program on 1, 2 and 4 threads gives identical outputs, cycle
// counts, stats, run log and trace events (compared through a hash of all of them).
#include <gtest/gtest.h>

#include <functional>

#include "tests/emulator/row_chain.hpp"

namespace wsemu::testing {
namespace {

using emu::Wafer;

class HashingSink final : public emu::EventSink {
 public:
  void on_events(std::span<const emu::TraceEvent> events) override {
    for (const emu::TraceEvent& e : events) {
      mix(e.cycle);
      mix(uint64_t(e.x) << 48 | uint64_t(e.y) << 32 | uint64_t(e.kind) << 24 | uint64_t(e.color) << 16 |
          uint64_t(e.direction) << 8 | e.task);
      mix(uint64_t(e.payload) << 32 | e.pc);
      ++count;
    }
  }
  void mix(uint64_t v) { hash = (hash ^ v) * 0x100000001B3ull; }
  uint64_t hash = 0xCBF29CE484222325ull;
  uint64_t count = 0;
};

struct Outcome {
  uint64_t cycle = 0;
  std::string stats;
  std::vector<uint32_t> sums;
  std::vector<std::string> log;
  uint64_t event_hash = 0, events = 0;
};

Outcome run_with_threads(int threads) {
  Wafer w(emu::arch_profile("wse3"), 12, 10, {threads, 1});  // parallel even for few tiles
  const RowChainPrograms chain = row_chain_programs("wse3", 16);
  place_row_chain(w, chain, 0, 0, 10, 10);
  // A PE that also logs, to check the log order across threads.
  auto talk = assemble(".arch wse3\n.task main, local, 10\nmain:\n  tsc r1\n  dprintr \"t=%u\", r1\n  exit\n");
  for (int y = 0; y < 10; ++y) {
    w.load_program(11, y, talk);
    w.activate_task(11, y, 10);
  }
  HashingSink sink;
  w.set_event_sink(&sink);
  Outcome o;
  const auto r = w.run(100000);
  EXPECT_EQ(r.status, emu::RunResult::Status::QUIESCENT) << r.to_string();
  o.cycle = r.cycle;
  o.stats = w.stats_json().dump();
  for (int y = 0; y < 10; ++y) o.sums.push_back(read<uint32_t>(w, 9, y, chain.sum_address, 1)[0]);
  for (const auto& l : w.take_log()) o.log.push_back(l.to_string());
  o.event_hash = sink.hash;
  o.events = sink.count;
  return o;
}

TEST(Determinism, SameResultsOnOneTwoAndFourThreads) {
  const Outcome one = run_with_threads(1);
  EXPECT_GT(one.events, 500u);
  EXPECT_EQ(one.sums, std::vector<uint32_t>(10, 55));
  EXPECT_EQ(one.log.size(), 10u);
  for (int threads : {2, 4, 0}) {  // 0: the machine's cores
    const Outcome other = run_with_threads(threads);
    EXPECT_EQ(other.cycle, one.cycle) << threads;
    EXPECT_EQ(other.sums, one.sums) << threads;
    EXPECT_EQ(other.stats, one.stats) << threads;
    EXPECT_EQ(other.log, one.log) << threads;
    EXPECT_EQ(other.event_hash, one.event_hash) << threads;
    EXPECT_EQ(other.events, one.events) << threads;
  }
}

TEST(Determinism, JumpingOverSleepingCyclesMatchesStepping) {
  // run() jumps over cycles in which every active PE only counts down a bulk vector op;
  // step() never jumps. Same program, same number of cycles: identical state and stats.
  const RowChainPrograms chain = row_chain_programs("wse2", 40);
  auto make = [&] {
    auto w = std::make_unique<Wafer>(emu::arch_profile("wse2"), 6, 3);
    place_row_chain(*w, chain, 0, 0, 6, 3);
    return w;
  };
  auto jumping = make();
  const auto r = run_ok(*jumping);
  EXPECT_GT(jumping->totals().skipped_cycles, 0u);
  auto stepping = make();
  for (uint64_t c = 0; c < r.cycle; ++c) stepping->step();
  EXPECT_EQ(stepping->totals().skipped_cycles, 0u);
  EXPECT_EQ(stepping->cycle(), jumping->cycle());
  EXPECT_EQ(stepping->stats_json().dump(), jumping->stats_json().dump());
  for (int y = 0; y < 3; ++y) EXPECT_EQ(read<uint32_t>(*stepping, 5, y, chain.sum_address, 1)[0], 21u);
}

}  // namespace
}  // namespace wsemu::testing
