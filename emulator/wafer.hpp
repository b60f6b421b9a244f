// The virtual wafer: a W x H grid of tiles (router + optional PE core), stepped cycle by cycle.
//
// Contract:
// - Each cycle has a compute phase (every active tile steps its core and router, touching only
//   its own state and its outbox) and a commit phase (tiles take in what their neighbours sent
//   and the credits they returned). Results, cycle counts, stats, logs and trace events are
//   therefore bit-identical for any thread count.
// - Only tiles that have something to do are stepped (the active set); a tile without routes
//   or program costs a few bytes and no time; a tile that waits for input, or whose core only
//   counts down while its router is blocked (dozing), is not stepped until input or its
//   wake-up cycle comes, and its counters are brought up to date as if it had been. Tile state
//   is allocated when a route or program is set, never during a run.
// - run() stops when the wafer is quiescent, at the cycle limit, on a fault, or on a hang
//   (a cycle in which nothing could make progress while work is pending); it never throws for
//   a kernel's mistakes and never waits a hang out.
// - Host-side configuration calls throw FaultError(CONFIGURATION_ERROR) on bad arguments.
// - State is plain data (indices into the wafer's own tables, not pointers between tiles). The
//   Wafer itself is not copyable (it owns a thread pool and the host's sinks); there are no
//   snapshots yet: the debugger replays a run from its start instead.
// Nothing here opens files or prints; the run log goes to a sink the host installs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "emulator/arch_profile.hpp"
#include "emulator/fault.hpp"
#include "emulator/hang_report.hpp"
#include "emulator/huge_page_allocator.hpp"
#include "emulator/loaded_program.hpp"
#include "emulator/pe_core.hpp"
#include "emulator/router.hpp"
#include "emulator/trace.hpp"
#include "emulator/wavelet.hpp"

namespace wsemu::emu {

struct RunResult {
  enum class Status : uint8_t { QUIESCENT, CYCLE_LIMIT, HANG, FAULT };
  Status status = Status::QUIESCENT;
  uint64_t cycles_run = 0;  // cycles this call stepped
  uint64_t cycle = 0;       // the wafer's cycle counter after the call
  std::optional<Fault> fault;
  std::optional<HangReport> hang;
  bool edge_traffic = false;  // CYCLE_LIMIT: stopped early by RunStops::on_edge_traffic
  std::string to_string() const;
};

// What else ends run() early (besides a fault and max_cycles).
struct RunStops {
  // After a cycle in which a router took a wavelet from a host edge port's buffer or put one
  // into an edge output (the host may then push or pop). The status is CYCLE_LIMIT with
  // RunResult::edge_traffic set.
  bool on_edge_traffic = false;
  // Quiescence and hangs end the run (off: the host will still feed the wafer before
  // max_cycles, so cycles without progress just pass; the run ends at max_cycles).
  bool on_idle = true;
};
std::string_view run_status_name(RunResult::Status s);

// A read-only copy of a core's state for debuggers and tests.
struct CoreView {
  int x = 0, y = 0, rect_x = 0, rect_y = 0;
  std::array<uint32_t, isa::kNumRegs> regs{};
  std::array<isa::Descriptor, isa::kNumDsrs> dsrs{};
  bool running = false;
  uint32_t pc = 0;
  int task = -1;
  uint64_t bound_local = 0, bound_data = 0, bound_control = 0, activated = 0, blocked = 0;
  std::array<int, isa::kNumQueues> input_queue_color{}, output_queue_color{};
  std::array<std::vector<Wavelet>, isa::kNumQueues> input_queues, output_queues;
  std::array<bool, isa::kNumQueues> microthread_busy{};
  CoreStats stats;
};

struct WaferTotals {
  uint64_t cycles = 0;
  uint64_t pe_cycles = 0;  // cycles x PEs with a program
  uint64_t instructions = 0;
  uint64_t vector_elements = 0;
  uint64_t wavelet_hops = 0;  // link traversals (N, E, S, W; edge ports included)
  uint64_t ramp_deliveries = 0;
  uint64_t tile_steps = 0;    // tile-cycles actually computed (active-set size summed)
  uint64_t skipped_cycles = 0;  // cycles in which no tile was stepped because every tile with work only slept
};

struct WaferOptions {
  int threads = 1;               // 1: no TBB at all
  size_t parallel_min_tiles = 64;  // fewer active tiles than this: step them on one thread
  // A tile that made no progress in a cycle (its threads stalled on queues, its wavelets on
  // credits) is not stepped again until a wavelet or a credit reaches it or the host touches
  // it; its stall counters and link statistics are brought up to date as if it had been
  // stepped. Off: every tile with work is stepped every cycle (the reference; same results,
  // cycles, stats, traces and hang reports). Tracing steps every tile with work regardless.
  bool wake_on_input = true;
};

class Wafer {
 public:
  Wafer(ArchProfile profile, int width, int height, WaferOptions options = {});
  ~Wafer();
  Wafer(const Wafer&) = delete;
  Wafer& operator=(const Wafer&) = delete;

  const ArchProfile& profile() const { return profile_; }
  int width() const { return width_; }
  int height() const { return height_; }
  uint64_t cycle() const { return cycle_; }
  void set_threads(int threads);
  int threads() const { return options_.threads; }
  void set_parallel_min_tiles(size_t n) { options_.parallel_min_tiles = n; }
  void set_wake_on_input(bool on);

  // ---- configuration (between runs) ----
  // Loads a program on PE (x,y); (rect_x, rect_y) is what `coord` returns there.
  void load_program(int x, int y, std::shared_ptr<const isa::ObjectImage> image, int rect_x = 0, int rect_y = 0);
  void set_route(int x, int y, int color, const ColorRoute& route);
  std::optional<ColorRoute> route(int x, int y, int color) const;  // current state incl. switch

  // ---- the host ----
  // Ports of boundary routers that face off the fabric. push: false when the port's buffer is
  // full (backpressure); the route of `w.color` must receive from `side`.
  bool push_edge(int x, int y, Direction side, const Wavelet& w);
  int edge_input_space(int x, int y, Direction side, int color) const;  // free slots; 0 if none
  std::optional<Wavelet> pop_edge(int x, int y, Direction side);
  size_t edge_output_count(int x, int y, Direction side) const;
  // Back door to SRAM (counted apart in the stats).
  void read_sram(int x, int y, uint32_t address, std::span<uint8_t> out);
  void write_sram(int x, int y, uint32_t address, std::span<const uint8_t> in);
  void activate_task(int x, int y, int task_id);
  bool has_core(int x, int y) const;
  CoreView core_view(int x, int y) const;
  // For debuggers and trace recorders: the program PE (x,y) runs (nullptr when none), and a
  // read of its SRAM that is not counted as back-door traffic.
  const isa::ObjectImage* program_at(int x, int y) const;
  void peek_sram(int x, int y, uint32_t address, std::span<uint8_t> out) const;

  // ---- running ----
  RunResult run(uint64_t max_cycles, RunStops stops = {});
  RunResult step();  // exactly one cycle (status CYCLE_LIMIT unless it faulted or stopped)

  // ---- observation ----
  void set_log_sink(std::function<void(const LogLine&)> sink);  // none: lines are kept
  std::vector<LogLine> take_log();
  void set_event_sink(EventSink* sink);  // nullptr: tracing off
  WaferTotals totals() const;
  nlohmann::json stats_json() const;
  uint64_t backdoor_bytes_read() const { return backdoor_read_; }
  uint64_t backdoor_bytes_written() const { return backdoor_written_; }
  size_t host_memory_bytes() const;  // what this wafer holds on the host (estimate, no malloc slack)
  size_t allocated_tiles() const { return states_.size(); }
  // Builds the hang report for the current state (also what run() returns on a hang).
  HangReport hang_report() const;
  bool pending_work() const;

 private:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  static constexpr uint64_t kAwake = ~uint64_t{0};
  // A tile-step reads and writes these 8 bytes and the router's hot part (router.hpp): three
  // cache lines, tiles aligned to lines. What serial passes over many tiles read (neighbours,
  // wake-up cycles) is in dense per-state arrays beside states_; the waiting mark, log, fault and
  // trace buffers, read only when the step says it used them, come last.
  struct alignas(64) TileState {
    uint16_t x = 0, y = 0;
    uint32_t core = kNone;  // index into cores_
    RouterState router;
    uint64_t waiting_since = kAwake;  // first cycle it was not stepped while waiting for input
    std::vector<LogLine> log;
    std::optional<Fault> fault;
    EventRecorder events;
  };
  // Per-cycle scratch, written by the tile's own compute (the summary bits are in tile_flags_).
  struct TileClock {
    uint64_t sleep_until = 0;  // > 0: only counting down a multi-cycle instruction until then
    // > 0 while waiting: the core only counts down until then (dozing), so each cycle it is not
    // stepped is a busy cycle, and it wakes at that cycle if no input woke it first.
    uint64_t doze_until = 0;
  };

  uint32_t state_at(int x, int y) const;
  uint32_t fabric_index(uint32_t s) const;  // y * width + x of state s: the order of active_
  uint32_t ensure_state(int x, int y);
  void check_xy(int x, int y, const char* what) const;
  PeCore& core_at(int x, int y, const char* what);
  void activate_state(uint32_t s);
  // A waiting tile: add the cycles it was not stepped (up to cycle_) to its counters.
  void catch_up(uint32_t s);
  void catch_up_waiting();  // every waiting tile, so that stats and reports are exact
  void wake_all_waiting();
  void stop_waiting(uint32_t s);  // the counts of waiting and dozing tiles follow
  // Dozing tiles whose wake-up cycle is at most `cycle` (stale heap entries dropped).
  void take_due_dozers(uint64_t cycle, std::vector<uint32_t>& due);
  uint64_t earliest_dozer();        // kAwake when none
  void advance_idle(uint64_t to);   // no tile active: the clock moves to `to`, due dozers wake
  void refresh_credits(uint32_t s, int color);
  // Undoes what a core ran ahead to issue at or after cycle_ (run_ahead.cpp) before anyone looks
  // at it; a dozing tile then wakes at its next issue. Const for the observers: the wafer they
  // see is the one stepped to cycle_, only work done early is taken back.
  void settle(uint32_t s) const;
  void settle_all() const;
  void compute_tile(uint32_t s);
  Fault internal_fault(const TileState& t, const char* what) const;
  void commit_tile(uint32_t s);
  // One cycle (and, when every active tile is only sleeping, a jump of up to `limit` - cycle
  // cycles to the first wake-up), after any plain cycles before it (wafer.cpp: the same active
  // set progressing with nothing to commit), all below `limit`. Returns whether the last progressed.
  bool step_cycle(std::optional<Fault>& fault, uint64_t limit);
  template <typename F>
  void for_each_band(const std::vector<uint32_t>& items, F&& f);  // f(first, count) per band
  template <typename F>
  void for_each(const std::vector<uint32_t>& items, F&& f);
  void compute_band(const uint32_t* band, size_t n);
  RunResult finish(RunResult r, uint64_t start);
  // WSEMU_RUN_DIGEST (stats.cpp): a hash of every trace event, and one line per wafer.
  void hash_events(const std::vector<TraceEvent>& events);
  void append_digest() const noexcept;  // catches up the waiting tiles first

  ArchProfile profile_;
  int width_ = 0, height_ = 0;
  WaferOptions options_;
  struct ThreadPool;  // the oneTBB arena, defined in wafer.cpp
  std::unique_ptr<ThreadPool> pool_;
  uint64_t cycle_ = 0;
  std::vector<uint32_t> tile_state_;  // per tile (y * width + x): index into states_, or kNone
  std::vector<TileState, HugePageAllocator<TileState>> states_;
  std::vector<std::array<uint32_t, kNumLinkDirections>> neighbors_;  // per state: its N, E, S, W, or kNone
  std::vector<TileClock> clocks_;                                    // per state
  // Per state, its y * width + x: the serial pass that orders the next active set reads these
  // instead of each newcomer's state (a miss per tile when thousands wake in one cycle).
  std::vector<uint32_t> fabric_pos_;
  std::vector<PeCore, HugePageAllocator<PeCore>> cores_;
  std::vector<LoadedProgram> programs_;
  std::map<const isa::ObjectImage*, uint32_t> program_index_;
  static constexpr size_t kBandsPerThread = 4;
  std::vector<uint32_t> active_;        // state indices in fabric order (y, then x)
  std::vector<uint64_t> active_bits_;   // per fabric position, all zero between cycles (lazy)
  std::vector<uint8_t> in_active_;      // per state
  // Per state, what its last compute found (kProgressed...): the serial passes between the
  // phases read these bytes instead of every tile's state.
  enum : uint8_t { kProgressed = 1, kHasWork = 2, kFaulted = 4, kOutput = 8, kOutbox = 16, kWaiting = 32, kEdge = 64 };
  std::vector<uint32_t> waiting_;  // tiles that may be waiting (stale entries dropped on catch-up)
  size_t waiting_count_ = 0;
  // Min-heap of (doze_until, state) of dozing tiles; an entry is stale once its tile woke.
  std::vector<std::pair<uint64_t, uint32_t>> dozers_;
  size_t dozing_count_ = 0;
  bool edge_traffic_ = false;  // in the last cycle stepped
  std::vector<uint8_t> tile_flags_;
  std::vector<uint32_t> scratch_senders_, scratch_receivers_, scratch_next_, scratch_due_;
  std::function<void(const LogLine&)> log_sink_;
  std::vector<LogLine> log_;
  EventSink* event_sink_ = nullptr;
  uint64_t backdoor_read_ = 0, backdoor_written_ = 0;
  uint64_t tile_steps_ = 0;
  uint64_t skipped_cycles_ = 0;
  std::string digest_path_;  // WSEMU_RUN_DIGEST; empty: no digest
  uint64_t event_hash_ = 0xCBF29CE484222325ull, event_count_ = 0;
};

}  // namespace wsemu::emu
