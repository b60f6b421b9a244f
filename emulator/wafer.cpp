#include "emulator/wafer.hpp"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string_view>
#include <thread>

#include "isa/disassembler.hpp"

namespace wsemu::emu {

namespace {
constexpr size_t kAutoParallelMinTiles = 1024;
constexpr size_t kPrefetchMinTiles = 32;  // compute_band's walk asks for lines ahead from here on

#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
constexpr bool kThreadSanitizer = __has_feature(thread_sanitizer);
#else
constexpr bool kThreadSanitizer = false;
#endif
}  // namespace

struct Wafer::ThreadPool {
  explicit ThreadPool(int n) : arena(n) {}
  tbb::task_arena arena;
};

Wafer::Wafer(ArchProfile profile, int width, int height, WaferOptions options)
    : profile_(std::move(profile)), width_(width), height_(height), options_(options) {
  if (width < 1 || height < 1 || width > 4096 || height > 4096)
    config_error(fmt::format("fabric size {}x{} (each side 1..4096)", width, height));
  tile_state_.assign(size_t(width) * size_t(height), kNone);
  // Test hooks (emulator/README.md, "Speed"): the same programs under other thread counts and
  // stepping modes, compared through a digest of every wafer's run.
  if (const char* wake = std::getenv("WSEMU_WAKE_ON_INPUT")) options_.wake_on_input = std::string_view(wake) != "0";
  if (const char* digest = std::getenv("WSEMU_RUN_DIGEST")) digest_path_ = digest;
  set_threads(options.threads);
}

Wafer::~Wafer() {
  if (!digest_path_.empty()) append_digest();
}

void Wafer::set_threads(int threads) {
  if (const char* forced = std::getenv("WSEMU_THREADS")) {
    threads = std::atoi(forced);
    options_.parallel_min_tiles = 1;  // parallel even for the smallest kernel
  }
  if (threads == 0) {
    // The machine's cores, for large fabrics only: below kAutoParallelMinTiles active tiles a
    // cycle is too short to share.
    threads = int(std::max(1u, std::thread::hardware_concurrency()));
    options_.parallel_min_tiles = std::max(options_.parallel_min_tiles, kAutoParallelMinTiles);
  }
  if (threads < 1 || threads > 1024) config_error(fmt::format("threads = {} (0: the machine's cores, 1..1024)", threads));
  options_.threads = threads;
  pool_ = threads > 1 ? std::make_unique<ThreadPool>(threads) : nullptr;
}

void Wafer::check_xy(int x, int y, const char* what) const {
  if (x < 0 || y < 0 || x >= width_ || y >= height_)
    config_error(fmt::format("{}: PE({},{}) is outside the {}x{} fabric", what, x, y, width_, height_));
}

uint32_t Wafer::state_at(int x, int y) const {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) return kNone;
  return tile_state_[size_t(y) * size_t(width_) + size_t(x)];
}

uint32_t Wafer::ensure_state(int x, int y) {
  const uint32_t existing = state_at(x, y);
  if (existing != kNone) return existing;
  const uint32_t s = uint32_t(states_.size());
  TileState t;
  t.x = uint16_t(x);
  t.y = uint16_t(y);
  std::array<uint32_t, kNumLinkDirections> neighbor{kNone, kNone, kNone, kNone};
  for (int d = 0; d < kNumLinkDirections; ++d) {
    const auto dir = Direction(d);
    const int nx = x + dx(dir), ny = y + dy(dir);
    if (nx < 0 || ny < 0 || nx >= width_ || ny >= height_) {
      t.router.off_fabric |= bit(dir);
      t.router.edge_out[d].capacity = uint8_t(profile_.router_buffer_depth);
      continue;
    }
    const uint32_t n = state_at(nx, ny);
    neighbor[d] = n;
    if (n != kNone) neighbors_[n][int(opposite(dir))] = s;
  }
  states_.push_back(std::move(t));
  neighbors_.push_back(neighbor);
  clocks_.emplace_back();
  fabric_pos_.push_back(uint32_t(y) * uint32_t(width_) + uint32_t(x));
  in_active_.push_back(0);
  tile_flags_.push_back(0);
  tile_state_[size_t(y) * size_t(width_) + size_t(x)] = s;
  return s;
}

uint32_t Wafer::fabric_index(uint32_t s) const { return fabric_pos_[s]; }

void Wafer::catch_up(uint32_t s) {
  TileState& t = states_[s];
  if (t.waiting_since == kAwake || cycle_ <= t.waiting_since) return;
  const uint64_t missed = cycle_ - t.waiting_since;
  router_replay_idle_cycles(t.router, missed);
  if (t.core != kNone) {
    PeCore& core = cores_[t.core];
    if (clocks_[s].doze_until) core.stats.busy_cycles += missed;  // counting down, as PeCore::step_main would
    core.replay_stalled_cycles(missed);
  }
  t.waiting_since = cycle_;
}

void Wafer::stop_waiting(uint32_t s) {
  states_[s].waiting_since = kAwake;
  --waiting_count_;
  if (clocks_[s].doze_until) --dozing_count_;
}

void Wafer::take_due_dozers(uint64_t cycle, std::vector<uint32_t>& due) {
  while (!dozers_.empty() && dozers_.front().first <= cycle) {
    const auto [until, s] = dozers_.front();
    std::pop_heap(dozers_.begin(), dozers_.end(), std::greater<>());
    dozers_.pop_back();
    const TileState& t = states_[s];
    if (t.waiting_since != kAwake && clocks_[s].doze_until == until) due.push_back(s);
  }
  if (dozing_count_ == 0) dozers_.clear();  // only stale entries are left
}

namespace {
// in_active_ bits: in the active set; listed in waiting_ (once, so the list stays as short as
// the tiles that wait, however often they wake and wait again during one run); listed among this
// cycle's commit receivers (a byte per tile, so that the serial pass that lists them reads no
// tile's state).
constexpr uint8_t kInActiveSet = 1, kInWaitingList = 2, kReceiving = 4;

// Drops the tiles that woke from the waiting list; `waiting(s)` tells the others, and `keep(s)`
// runs for each of them.
template <typename IsWaiting, typename Keep>
void drop_awake(std::vector<uint32_t>& list, std::vector<uint8_t>& flags, IsWaiting waiting, Keep keep) {
  size_t kept = 0;
  for (uint32_t s : list) {
    if (!waiting(s)) {
      flags[s] &= uint8_t(~kInWaitingList);
      continue;
    }
    keep(s);
    list[kept++] = s;
  }
  list.resize(kept);
}
}  // namespace

void Wafer::catch_up_waiting() {
  drop_awake(
      waiting_, in_active_, [this](uint32_t s) { return states_[s].waiting_since != kAwake; },
      [this](uint32_t s) { catch_up(s); });
}

void Wafer::wake_all_waiting() {
  catch_up_waiting();
  for (uint32_t s : std::vector<uint32_t>(waiting_)) activate_state(s);
  for (uint32_t s : waiting_) in_active_[s] &= uint8_t(~kInWaitingList);
  waiting_.clear();
}

void Wafer::set_wake_on_input(bool on) {
  options_.wake_on_input = on;
  if (!on) wake_all_waiting();
}

void Wafer::activate_state(uint32_t s) {
  if (in_active_[s] & kInActiveSet) return;
  if (states_[s].waiting_since != kAwake) {
    catch_up(s);
    stop_waiting(s);
  }
  in_active_[s] |= kInActiveSet;
  const uint32_t key = fabric_index(s);
  active_.insert(std::lower_bound(active_.begin(), active_.end(), key,
                                  [this](uint32_t a, uint32_t k) { return fabric_index(a) < k; }),
                 s);
}

// ---- stepping ----

// The items are in fabric order, so equal slices are row bands: one task per band, each
// walking tiles that lie next to each other in memory and on the fabric. A few bands per
// thread even out bands that hold more work than others.
template <typename F>
void Wafer::for_each_band(const std::vector<uint32_t>& items, F&& f) {
  const size_t n = items.size();
  if (!pool_ || n < options_.parallel_min_tiles) {
    f(items.data(), n);
    return;
  }
  const size_t bands = std::min(n, size_t(options_.threads) * kBandsPerThread);
  auto run_band = [&](size_t b) {
    const size_t lo = n * b / bands, hi = n * (b + 1) / bands;
    f(items.data() + lo, hi - lo);
  };
  if constexpr (kThreadSanitizer) {
    // Debian's libtbb is not built with TSan, which therefore cannot see parallel_for's join
    // and calls every read of a band's writes after it a race. Under TSan the bands run on
    // threads joined in plain sight, so that what it reports is real.
    const size_t threads = size_t(options_.threads);
    std::vector<std::thread> workers;
    for (size_t t = 1; t < threads; ++t)
      workers.emplace_back([&, t] {
        for (size_t b = t; b < bands; b += threads) run_band(b);
      });
    for (size_t b = 0; b < bands; b += threads) run_band(b);
    for (std::thread& w : workers) w.join();
    return;
  }
  pool_->arena.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, bands, 1),
        [&](const tbb::blocked_range<size_t>& r) {
          for (size_t b = r.begin(); b != r.end(); ++b) run_band(b);
        },
        tbb::simple_partitioner());
  });
}

template <typename F>
void Wafer::for_each(const std::vector<uint32_t>& items, F&& f) {
  for_each_band(items, [&](const uint32_t* band, size_t n) {
    for (size_t i = 0; i < n; ++i) f(band[i]);
  });
}

// A large fabric's tiles do not fit in the cache, and each step touches a few lines of the
// tile, its router's channels and its core, which depend on each other: waiting for them one
// by one is most of a step. So the band walk asks for them ahead, in four stages, each using
// what the stage before brought in: the tile; its channels' first lines and the core's hot
// fields; the input rings that hold wavelets, the active ops and busy queues; and the queues
// and SRAM words the active ops will touch (an op stalled on an empty input queue reads it
// every cycle). A few tiles stay in the cache from one cycle to the next: asking for their lines
// would only cost time (5 % of the samples of a weight-streaming step, 1 to 8 active tiles).
void Wafer::compute_band(const uint32_t* band, size_t n) {
  if (n < kPrefetchMinTiles) {
    for (size_t i = 0; i < n; ++i) compute_tile(band[i]);
    return;
  }
  auto lines = [](const void* p, size_t count) {
    for (size_t i = 0; i < count; ++i) __builtin_prefetch(static_cast<const char*>(p) + 64 * i);
  };
  // The vector instruction the main thread issues in this cycle, if it issues one: its
  // descriptors and the memory they cover are read at issue (a synchronous op over memory runs
  // whole then), each a miss at a large fabric.
  auto about_to_issue = [this](const PeCore& c) {
    return c.main.running && !c.main.in_sync_op && c.main.busy_until <= cycle_;
  };
  auto issuing_vector = [this, &about_to_issue](const PeCore& c) -> const isa::Instruction* {
    if (!about_to_issue(c)) return nullptr;
    const auto& insns = programs_[c.program_index].insns;
    if (c.main.pc >= insns.size() || !insns[c.main.pc]) return nullptr;
    const isa::Instruction& insn = *insns[c.main.pc];
    return isa::is_vector(isa::info(insn.op).timing) ? &insn : nullptr;
  };
  for (size_t i = 0; i < n; ++i) {
    if (i + 12 < n) lines(&states_[band[i + 12]], 3);  // its own fields and the router's hot part
    if (i + 8 < n) {
      const TileState& t = states_[band[i + 8]];
      for (const ColorChannel& ch : t.router.channels) lines(&ch, 1);  // route, credits, holding
      if (t.core != kNone) {
        lines(&cores_[t.core], 4);  // the hot fields
        lines(&cores_[t.core].arriving, 1);  // PeCore::step asks first whether it is empty
      }
    }
    if (i + 4 < n) {
      const TileState& t = states_[band[i + 4]];
      for (uint32_t m = t.router.link_pending; m; m &= m - 1) {
        const ColorChannel& ch = t.router.channels[size_t(t.router.channel_of_color[__builtin_ctz(m)])];
        for (uint32_t h = ch.holding; h; h &= h - 1) lines(&ch.input[__builtin_ctz(h)], 2);
      }
      if (t.core != kNone) {
        const PeCore& c = cores_[t.core];
        for (uint32_t m = c.ops_active; m; m &= m - 1) lines(&c.ops[__builtin_ctz(m)], 3);
        if (!c.arriving.empty()) {  // its counters, the wavelet that lands next, the next free slot
          lines(&c.arriving, 1);
          lines(&c.arriving.front(), 1);
          lines(&c.arriving.at(c.arriving.size()), 1);
        }
        for (uint32_t m = c.iq_nonempty | c.oq_nonempty; m; m &= m - 1) {
          lines(&c.iq[__builtin_ctz(m)], 1);
          lines(&c.oq[__builtin_ctz(m)], 1);
        }
        // An instruction about to issue reads registers (they straddle two lines).
        if (about_to_issue(c)) lines(&c.regs, 2);
        if (const isa::Instruction* v = issuing_vector(c))
          for (int k = 0; k < isa::info(v->op).num_operands; ++k)
            if (!v->operands[k].is_reg) {
              const isa::Descriptor& d = c.dsrs[size_t(v->operands[k].value) % isa::kNumDsrs];
              __builtin_prefetch(&d);
              __builtin_prefetch(reinterpret_cast<const char*>(&d) + sizeof(d) - 1);
            }
      }
    }
    if (i + 2 < n) {
      const TileState& t = states_[band[i + 2]];
      if (t.core != kNone) {
        const PeCore& c = cores_[t.core];
        for (uint32_t m = c.ops_active; m; m &= m - 1) {
          const VectorOp& op = c.ops[__builtin_ctz(m)];
          for (int k = 0; k < op.num_operands && k < int(op.operands.size()); ++k) {
            const VectorOperand& v = op.operands[k];
            if (v.kind == VectorOperand::Kind::FABIN) {
              lines(&c.iq[v.d.queue & 7], 2);
            } else if (v.kind == VectorOperand::Kind::FABOUT) {
              lines(&c.oq[v.d.queue & 7], 3);
            } else if (v.kind == VectorOperand::Kind::MEM) {
              const int64_t step = v.d.kind == isa::DsdKind::MEM1D ? int64_t(v.d.stride) * (v.d.elem_bits / 8) : 0;
              lines(c.sram.storage_at(uint32_t(int64_t(v.d.base) + int64_t(op.done) * step)), 1);
            }
          }
        }
        // The memory of a mem1d operand of the instruction about to issue, its first 512 bytes
        // (the hardware prefetcher follows a longer one).
        if (const isa::Instruction* v = issuing_vector(c))
          for (int k = 0; k < isa::info(v->op).num_operands; ++k) {
            if (v->operands[k].is_reg) continue;
            const isa::Descriptor& d = c.dsrs[size_t(v->operands[k].value) % isa::kNumDsrs];
            if (d.kind != isa::DsdKind::MEM1D || d.stride != 1 || d.base >= c.sram.stored_bytes()) continue;
            const uint32_t bytes = std::min<uint32_t>({d.length * (d.elem_bits / 8), 512u, c.sram.stored_bytes() - d.base});
            lines(c.sram.storage_at(d.base), (bytes + 63) / 64 + 1);
          }
      }
    }
    compute_tile(band[i]);
  }
}

Fault Wafer::internal_fault(const TileState& t, const char* what) const {
  Fault f;
  f.kind = FaultKind::INTERNAL_ERROR;
  f.message = fmt::format("unexpected exception while stepping: {}", what);
  f.x = t.x;
  f.y = t.y;
  f.cycle = cycle_;
  return f;
}

void Wafer::compute_tile(uint32_t s) {
  TileState& t = states_[s];
  bool progressed = false, logged = false;
  TileClock& clock = clocks_[s];
  clock.sleep_until = 0;
  tile_flags_[s] = kFaulted;  // until the step below completes
  EventRecorder* events = event_sink_ ? &t.events : nullptr;
  PeCore* core = t.core == kNone ? nullptr : &cores_[t.core];
  if (core) {
    PeCore::Context ctx;
    ctx.profile = &profile_;
    ctx.program = &programs_[core->program_index];
    ctx.now = cycle_;
    ctx.x = t.x;
    ctx.y = t.y;
    ctx.events = events;
    ctx.log = &t.log;
    ctx.router = &t.router;
    ctx.run_ahead = !events && options_.wake_on_input;
    try {
      const PeCore::CycleResult cr = core->step(ctx);
      progressed = cr.progressed;
      logged = cr.logged;
    } catch (const FaultError& e) {
      Fault f = e.fault();
      f.x = t.x;
      f.y = t.y;
      f.cycle = cycle_;
      if (core->executing_pc >= 0) {
        const LoadedProgram& prog = programs_[core->program_index];
        f.pc = uint32_t(core->executing_pc);
        if (size_t(*f.pc) < prog.insns.size() && prog.insns[*f.pc]) f.instruction = isa::format_instruction(*prog.insns[*f.pc], prog.image.get());
        if (const int line = prog.source_line(*f.pc); line > 0) f.source_line = line;
        f.source_location = prog.image->source_location(*f.pc);
      }
      t.fault = std::move(f);
      return;
    } catch (const std::exception& e) {
      t.fault = internal_fault(t, e.what());
      return;
    }
  }
  RouterCycle rc;
  try {
    const RouterContext rctx{&profile_, cycle_, t.x, t.y, events};
    rc = route_cycle(t.router, core, rctx);
    progressed |= rc.progressed;
  } catch (const FaultError& e) {
    Fault f = e.fault();
    f.x = t.x;
    f.y = t.y;
    f.cycle = cycle_;
    t.fault = std::move(f);
    return;
  } catch (const std::exception& e) {
    t.fault = internal_fault(t, e.what());
    return;
  }
  // Asked after the router: the RAMP may just have landed a wavelet that makes a task runnable.
  const bool holds = t.router.holds_wavelets(), outbox = t.router.has_outbox();
  const bool has_work = (core && core->has_work()) || holds;
  const uint64_t counting_until = core && !outbox ? core->sleeping_until(cycle_) : 0;
  clock.sleep_until = holds || rc.progressed ? 0 : counting_until;
  // No progress: the next cycle would repeat this one until an input arrives (a wavelet or a
  // credit, which makes the tile a receiver in commit, or the host). Dozing: the core only
  // counts down and the router moved nothing, so the cycles up to the core's wake-up repeat
  // this one too, each a busy cycle.
  const bool may_wait = has_work && !outbox && !events && options_.wake_on_input;
  clock.doze_until = may_wait && counting_until && !rc.progressed ? counting_until : 0;
  const bool waiting = may_wait && (!progressed || clock.doze_until);
  tile_flags_[s] = uint8_t((progressed ? kProgressed : 0) | (has_work ? kHasWork : 0) | (outbox ? kOutbox : 0) |
                           (waiting ? kWaiting : 0) | (rc.edge_traffic ? kEdge : 0) |
                           (logged || (events && !events->events().empty()) ? kOutput : 0));
}

void Wafer::commit_tile(uint32_t s) {
  TileState& t = states_[s];
  for (int d = 0; d < kNumLinkDirections; ++d) {
    const uint32_t n = neighbors_[s][d];
    if (n == kNone) continue;
    const RouterState& nr = states_[n].router;
    const int back = int(opposite(Direction(d)));
    if (nr.out_valid & (1u << back)) router_receive(t.router, Direction(d), nr.out_wavelet(back));
    if (nr.out_credits[back]) router_receive_credits(t.router, Direction(d), nr.out_credits[back]);
  }
}

bool Wafer::step_cycle(std::optional<Fault>& fault, uint64_t limit) {
  // A plain cycle: every active tile progressed and keeps its work, and none sent, logged,
  // faulted or began to wait, and no dozer wakes next cycle. Then commit has nothing to move
  // and the next active set is this one, so the next cycle is computed at once. Only when woken
  // on input (the reference mode keeps every cycle whole) and untraced (a traced tile that only
  // counts down may be plain, and the jump below must see it).
  constexpr uint8_t kPlain = kProgressed | kHasWork;
  const bool plain_allowed = options_.wake_on_input && !event_sink_;
  uint8_t all_flags = 0;
  for (;;) {
    tile_steps_ += active_.size();
    for_each_band(active_, [this](const uint32_t* band, size_t n) { compute_band(band, n); });
    all_flags = 0;
    bool plain = plain_allowed && cycle_ + 1 < limit && (dozers_.empty() || dozers_.front().first > cycle_ + 1);
    for (uint32_t s : active_) {
      all_flags |= tile_flags_[s];
      plain &= tile_flags_[s] == kPlain;
    }
    if (!plain) break;
    ++cycle_;
  }

  // Faults, logs and events in fabric order, so that they do not depend on the thread count.
  bool progressed = dozing_count_ > 0;  // a dozing tile counts down in this cycle
  const TileState* faulted = nullptr;
  if (all_flags & kFaulted) {
    for (uint32_t s : active_) {
      if (!(tile_flags_[s] & kFaulted)) continue;
      const TileState& t = states_[s];
      all_flags |= kOutput;  // a faulting tile may have logged before it faulted
      if (t.fault && (!faulted || std::pair(t.y, t.x) < std::pair(faulted->y, faulted->x))) faulted = &t;
    }
  }
  progressed |= (all_flags & kProgressed) != 0;
  edge_traffic_ = (all_flags & kEdge) != 0;
  if (all_flags & kOutput) {
    std::vector<TraceEvent> events;
    for (uint32_t s : active_) {  // fabric order
      TileState& t = states_[s];
      for (LogLine& line : t.log) {
        if (log_sink_)
          log_sink_(line);
        else
          log_.push_back(std::move(line));
      }
      t.log.clear();
      auto& ev = t.events.events();
      events.insert(events.end(), ev.begin(), ev.end());
      ev.clear();
    }
    if (event_sink_ && !events.empty()) event_sink_->on_events(events);
    if (!digest_path_.empty()) hash_events(events);
  }
  if (faulted) {
    fault = faulted->fault;
    for (uint32_t s : active_) states_[s].fault.reset();
    ++cycle_;
    return progressed;
  }

  // Commit: every tile next to a sender takes in wavelets and credits.
  scratch_senders_.clear();
  scratch_receivers_.clear();
  for (uint32_t s : active_) {
    if (!(tile_flags_[s] & kOutbox)) continue;
    const RouterState& r = states_[s].router;
    scratch_senders_.push_back(s);
    for (int d = 0; d < kNumLinkDirections; ++d) {
      if (!((r.out_valid >> d) & 1) && !r.out_credits[d]) continue;
      const uint32_t n = neighbors_[s][d];
      if (n == kNone || (in_active_[n] & kReceiving)) continue;
      in_active_[n] |= kReceiving;
      scratch_receivers_.push_back(n);
    }
  }
  // As in compute_band: ahead, the receiver's router and its neighbours' outboxes (the first
  // line of each tile), then the channels the wavelets and credits coming in will touch.
  for_each_band(scratch_receivers_, [this](const uint32_t* band, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      if (i + 4 < n) {
        const uint32_t r = band[i + 4];
        __builtin_prefetch(&states_[r]);
        __builtin_prefetch(reinterpret_cast<const char*>(&states_[r]) + 64);
        for (const uint32_t nb : neighbors_[r])
          if (nb != kNone) __builtin_prefetch(&states_[nb]);
      }
      if (i + 2 < n) {
        const uint32_t r = band[i + 2];
        const TileState& t = states_[r];
        for (int d = 0; d < kNumLinkDirections; ++d) {
          if (neighbors_[r][d] == kNone) continue;
          const RouterState& nr = states_[neighbors_[r][d]].router;
          const int back = int(opposite(Direction(d)));
          uint32_t colors = nr.out_credits[back];
          if (nr.out_valid & (1u << back)) {
            const int c = nr.out_wavelet(back).color;
            colors |= 1u << c;
            if (const int k = t.router.channel_of_color[c]; k >= 0) __builtin_prefetch(&t.router.channels[size_t(k)].input[d]);
          }
          for (; colors; colors &= colors - 1)
            if (const int k = t.router.channel_of_color[__builtin_ctz(colors)]; k >= 0)
              __builtin_prefetch(&t.router.channels[size_t(k)]);
        }
      }
      commit_tile(band[i]);
    }
  });
  for (uint32_t s : scratch_senders_) states_[s].router.clear_outbox();

  // The next active set, in fabric order: tiles that still have work, plus every tile that
  // received something. Without newcomers the survivors are already in order; with some, a
  // bitset over the fabric positions they span gives the order without sorting.
  scratch_next_.clear();
  for (uint32_t s : active_) {
    const uint8_t f = tile_flags_[s];
    if ((f & kHasWork) && !(f & kWaiting)) {
      scratch_next_.push_back(s);
      continue;
    }
    in_active_[s] &= uint8_t(~kInActiveSet);
    if (f & kWaiting) {
      TileState& t = states_[s];
      t.waiting_since = cycle_ + 1;
      if (!(in_active_[s] & kInWaitingList)) {
        in_active_[s] |= kInWaitingList;
        waiting_.push_back(s);
      }
      ++waiting_count_;
      if (const uint64_t until = clocks_[s].doze_until) {
        dozers_.emplace_back(until, s);
        std::push_heap(dozers_.begin(), dozers_.end(), std::greater<>());
        ++dozing_count_;
      }
    }
  }
  scratch_due_.clear();
  take_due_dozers(cycle_ + 1, scratch_due_);
  bool newcomers = !scratch_due_.empty();
  for (uint32_t s : scratch_receivers_) {
    in_active_[s] &= uint8_t(~kReceiving);
    newcomers |= !(in_active_[s] & kInActiveSet);
  }
  if (newcomers) {
    if (active_bits_.empty()) active_bits_.assign((size_t(width_) * size_t(height_) + 63) / 64, 0);
    size_t lo = active_bits_.size(), hi = 0;
    auto mark = [&](uint32_t s) {
      const size_t i = fabric_index(s);
      active_bits_[i / 64] |= uint64_t{1} << (i % 64);
      lo = std::min(lo, i / 64);
      hi = std::max(hi, i / 64);
    };
    for (uint32_t s : scratch_next_) mark(s);
    auto wake = [&](uint32_t s) {
      if (in_active_[s] & kInActiveSet) return;
      in_active_[s] |= kInActiveSet;
      if (states_[s].waiting_since != kAwake) {
        // Woken for cycle_ + 1: it would have stalled (or dozed) in every cycle up to this one.
        ++cycle_;
        catch_up(s);
        --cycle_;
        stop_waiting(s);
      }
      mark(s);
    };
    for (uint32_t s : scratch_receivers_) wake(s);
    for (uint32_t s : scratch_due_) wake(s);
    scratch_next_.clear();
    for (size_t wi = lo; wi <= hi; ++wi) {
      for (uint64_t word = active_bits_[wi]; word; word &= word - 1)
        scratch_next_.push_back(tile_state_[wi * 64 + size_t(__builtin_ctzll(word))]);
      active_bits_[wi] = 0;
    }
  }
  active_.swap(scratch_next_);
  if (waiting_.size() > 2 * waiting_count_ + 1024)
    drop_awake(
        waiting_, in_active_, [this](uint32_t s) { return states_[s].waiting_since != kAwake; }, [](uint32_t) {});
  ++cycle_;
  // Every active tile only counts down a multi-cycle instruction and nothing moved: the cycles
  // until the first wake-up would each just add one busy cycle per tile, so add them at once.
  if (scratch_receivers_.empty() && !active_.empty() && limit > cycle_) {
    // A dozing tile must be in the active set of its wake-up cycle: stop short of it.
    uint64_t wake = dozers_.empty() ? limit : std::min(limit, dozers_.front().first - 1);
    for (uint32_t s : active_) {
      const uint64_t until = clocks_[s].sleep_until;
      if (until <= cycle_) {
        wake = 0;
        break;
      }
      wake = std::min(wake, until);
    }
    if (wake > cycle_) {
      const uint64_t skip = wake - cycle_;
      for (uint32_t s : active_) {
        PeCore& core = cores_[states_[s].core];
        core.stats.busy_cycles += skip;
        core.replay_stalled_cycles(skip);  // its stalled microthreads
        // Its router would have turned its round robin each cycle (it holds nothing to move).
        router_replay_idle_cycles(states_[s].router, skip);
      }
      skipped_cycles_ += skip;
      cycle_ = wake;
    }
  }
  return progressed;
}

}  // namespace wsemu::emu
