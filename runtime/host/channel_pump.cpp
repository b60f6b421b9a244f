// The edge pump (channel_pump.hpp) and the host runtime's use of it: each row's wavelets go
// into its west edge port and what leaves its east edge port comes back, no faster than the
// host channel model allows. Also: settling the wafer after a host call.
#include "runtime/host/channel_pump.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "firmware/memcpy_protocol.hpp"
#include "runtime/host/runtime_state.hpp"

namespace wsemu::runtime::host {
namespace {

// One direction of the rate model: a token bucket per channel (none: unlimited).
class ChannelTokens {
 public:
  ChannelTokens(std::optional<double> rate, int channels)
      : rate_(rate), cap_(rate ? std::max(1.0, *rate) : 0.0), tokens_(size_t(channels), cap_) {}
  bool available(int channel) const { return !rate_ || tokens_[size_t(channel)] >= 1.0; }
  void take(int channel) {
    if (rate_) tokens_[size_t(channel)] -= 1.0;
  }
  void refill() {
    if (rate_)
      for (double& t : tokens_) t = std::min(cap_, t + *rate_);
  }
  // `times` refills, stopping once every bucket is full (further refills change nothing).
  void refill(uint64_t times) {
    for (uint64_t i = 0; i < times && rate_ && !full(); ++i) refill();
  }
  // Refills until `channel` may move a wavelet (0: it may now; UINT64_MAX: never).
  uint64_t refills_until_available(int channel) const {
    if (available(channel)) return 0;
    if (*rate_ <= 0.0) return UINT64_MAX;
    uint64_t n = 0;
    for (double t = tokens_[size_t(channel)]; t < 1.0; t = std::min(cap_, t + *rate_)) ++n;
    return n;
  }

 private:
  bool full() const {
    return std::all_of(tokens_.begin(), tokens_.end(), [this](double t) { return t >= cap_; });
  }
  std::optional<double> rate_;
  double cap_;
  std::vector<double> tokens_;
};

std::string side_name(emu::Direction side) {
  std::string name(emu::direction_name(side));
  for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// The one mapping of a run's end to an error, for every Wafer::step / run of the pump.
void throw_if_failed(const emu::RunResult& r, const std::string& what, bool probe) {
  if (r.status == emu::RunResult::Status::FAULT) throw HostError(*r.fault, what);
  if (probe && r.status == emu::RunResult::Status::HANG) throw HostError(*r.hang, what);
}

// The stall probe found the wafer idle: the first lane that still owes wavelets (or, when
// `untaken_is_error`, that still has wavelets the wafer will not take) ends the pump.
void throw_if_owed(const std::vector<EdgeLane>& lanes, const std::string& what, bool untaken_is_error) {
  if (untaken_is_error)
    for (const EdgeLane& lane : lanes)
      if (lane.inputs_pending())
        throw HostError(HostError::Kind::HANG,
                        fmt::format("{}: the wafer is idle, but {} wavelets were not taken at the {} edge of {}",
                                    what, lane.send.size() - lane.sent, side_name(lane.in.side), lane.name));
  for (const EdgeLane& lane : lanes)
    if (lane.outputs_pending())
      throw HostError(HostError::Kind::HANG,
                      fmt::format("{}: the wafer is idle, but {} more wavelets were expected at the {} edge of {}",
                                  what, lane.expect - lane.received.size(), side_name(lane.out->side), lane.name));
}

}  // namespace

void check_silent_ports(const emu::Wafer& wafer, const std::vector<EdgeLane>& lanes, const std::string& what) {
  for (const EdgeLane& lane : lanes)
    if (lane.silent && wafer.edge_output_count(lane.silent->x, lane.silent->y, lane.silent->side) > 0)
      throw HostError(HostError::Kind::FAULT, fmt::format("{}: {} sent a wavelet out of its {} edge, which must stay silent",
                                                          what, lane.name, side_name(lane.silent->side)));
}

EdgePumpResult pump_edges(emu::Wafer& wafer, std::vector<EdgeLane>& lanes, const EdgePumpOptions& options) {
  const EdgePumpPolicy& policy = options.policy;
  const std::string& what = options.what;
  const int channels = std::max(1, options.channels);
  ChannelTokens tokens_in(options.in_rate, channels), tokens_out(options.out_rate, channels);
  const bool any_output = std::any_of(lanes.begin(), lanes.end(), [](const EdgeLane& l) { return l.out.has_value(); });
  auto pending = [&] {
    return std::any_of(lanes.begin(), lanes.end(),
                       [](const EdgeLane& l) { return l.inputs_pending() || l.outputs_pending(); });
  };
  auto all_sent = [&] {
    return std::none_of(lanes.begin(), lanes.end(), [](const EdgeLane& l) { return l.inputs_pending(); });
  };
  EdgePumpResult result;
  result.last_out_cycle = wafer.cycle();
  size_t turn = 0;
  uint64_t quiet = 0;
  while (pending()) {
    if (wafer.cycle() >= options.cycle_limit)
      throw HostError(HostError::Kind::CYCLE_LIMIT,
                      fmt::format("{}: the cycle limit ({}) was reached while host data was moving", what,
                                  options.cycle_limit));
    const uint64_t now = wafer.cycle();
    bool moved = false, starving = false, blocked = false;
    uint64_t next_arrival = UINT64_MAX;
    for (size_t n = 0; n < lanes.size(); ++n) {
      EdgeLane& lane = lanes[policy.lane_order == EdgePumpPolicy::LaneOrder::ROUND_ROBIN ? (turn + n) % lanes.size() : n];
      if (lane.inputs_pending()) {
        if (!lane.arrival.empty() && lane.arrival[lane.sent] > now) {
          starving = true;
          next_arrival = std::min(next_arrival, lane.arrival[lane.sent]);
        } else if (tokens_in.available(lane.channel)) {
          if (wafer.push_edge(lane.in.x, lane.in.y, lane.in.side, lane.send[lane.sent])) {
            ++lane.sent;
            tokens_in.take(lane.channel);
            moved = true;
          } else {
            blocked = true;
          }
        }
      }
      if (!lane.out) continue;
      for (uint32_t popped = 0; policy.max_pops_per_lane == 0 || popped < policy.max_pops_per_lane; ++popped) {
        if (!(policy.take_beyond_expect || lane.outputs_pending()) || !tokens_out.available(lane.channel)) break;
        const std::optional<emu::Wavelet> w = wafer.pop_edge(lane.out->x, lane.out->y, lane.out->side);
        if (!w) break;
        if (w->control && lane.data_only) continue;  // (a stream's switch commands, spent on the way)
        lane.received.push_back(w->payload);
        tokens_out.take(lane.channel);
        moved = true;
        result.last_out_cycle = now;
      }
    }
    turn = (turn + 1) % std::max<size_t>(1, lanes.size());
    const bool everything_sent = all_sent();
    if (policy.stop_before_step && !pending()) break;
    if (starving && !moved) ++result.waited_cycles;
    if (!any_output && starving && !moved && !blocked && next_arrival > now + 1) {
      // Nothing can enter before the next arrival and nothing leaves: run up to it in one call,
      // which is what stepping cycle by cycle would do, only faster.
      const uint64_t until = std::min(next_arrival - 1, options.cycle_limit);
      throw_if_failed(wafer.run(until - now), what, false);
      while (wafer.cycle() < until) throw_if_failed(wafer.step(), what, false);
      result.waited_cycles += wafer.cycle() - now;
    }
    if (policy.probe == EdgePumpPolicy::Probe::IN_PLACE_OF_STEP) {
      const bool probe = ++quiet >= kStallProbeCycles && !starving;
      if (probe || everything_sent) check_silent_ports(wafer, lanes, what);
      if (moved) quiet = 0;
      const emu::RunResult r = probe ? wafer.run(1) : wafer.step();
      throw_if_failed(r, what, probe);
      if (probe) {
        quiet = 0;
        if (r.status == emu::RunResult::Status::QUIESCENT) throw_if_owed(lanes, what, true);
      }
    } else {
      if (everything_sent) check_silent_ports(wafer, lanes, what);
      throw_if_failed(wafer.step(), what, false);
      quiet = moved ? 0 : quiet + 1;
      if (quiet >= kStallProbeCycles && !starving) {
        quiet = 0;
        check_silent_ports(wafer, lanes, what);
        const emu::RunResult probe = wafer.run(1);
        throw_if_failed(probe, what, true);
        if (probe.status == emu::RunResult::Status::QUIESCENT) throw_if_owed(lanes, what, false);
      }
    }
    tokens_in.refill();
    tokens_out.refill();
    // The turns from here on in which nothing can move (no lane's wavelet arrives, has tokens
    // and room, no output waits with tokens) and no probe is due would each only step the
    // wafer: run them in one call that stops after any edge traffic (a slot freed, a wavelet
    // out), with the same counts (waited cycles, quiet, tokens, the round robin) as stepping.
    const uint64_t next = wafer.cycle();
    uint64_t quiet_turns = next < options.cycle_limit ? options.cycle_limit - next : 0;
    bool starving_next = false;
    for (const EdgeLane& lane : lanes) {
      if (lane.inputs_pending()) {
        if (!lane.arrival.empty() && lane.arrival[lane.sent] > next) {
          starving_next = true;
          quiet_turns = std::min(quiet_turns, lane.arrival[lane.sent] - next);
        } else if (!tokens_in.available(lane.channel)) {
          quiet_turns = std::min(quiet_turns, tokens_in.refills_until_available(lane.channel));
        } else if (wafer.edge_input_space(lane.in.x, lane.in.y, lane.in.side, lane.send[lane.sent].color) > 0) {
          quiet_turns = 0;
        }
      }
      if (lane.out && (policy.take_beyond_expect || lane.outputs_pending()) &&
          wafer.edge_output_count(lane.out->x, lane.out->y, lane.out->side) > 0)
        quiet_turns = std::min(quiet_turns, tokens_out.refills_until_available(lane.channel));
    }
    if (!starving_next) quiet_turns = std::min(quiet_turns, quiet + 1 < kStallProbeCycles ? kStallProbeCycles - 1 - quiet : 0);
    if (quiet_turns > 0 && pending()) {
      emu::RunStops stops;
      stops.on_edge_traffic = true;
      stops.on_idle = false;  // stepping would not stop either: the pump acts again after these turns
      const emu::RunResult r = wafer.run(quiet_turns, stops);
      throw_if_failed(r, what, false);
      if (starving_next) result.waited_cycles += r.cycles_run;
      quiet += r.cycles_run;
      turn = (turn + r.cycles_run) % std::max<size_t>(1, lanes.size());
      tokens_in.refill(r.cycles_run);
      tokens_out.refill(r.cycles_run);
      if (all_sent()) check_silent_ports(wafer, lanes, what);
    }
  }
  return result;
}

uint64_t SdkRuntime::State::cycles_left() const {
  const uint64_t now = wafer->cycle();
  return now >= options.max_cycles ? 0 : options.max_cycles - now;
}

void SdkRuntime::State::pump(std::vector<RowTraffic>& rows, const std::string& what) {
  EdgePumpOptions o;
  o.what = what;
  o.cycle_limit = options.max_cycles;
  o.channels = options.channel.channels;
  o.in_rate = o.out_rate = options.channel.wavelets_per_cycle(wafer->profile().clock_mhz);
  o.policy = EdgePumpPolicy::host_memcpy();
  const int east = int(exe.fabric_width) - 1;
  std::vector<EdgeLane> lanes(rows.size());
  std::vector<size_t> received_before(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const ChainRow* c = chain(rows[i].y);
    EdgeLane& lane = lanes[i];
    lane.name = fmt::format("row {}", rows[i].y);
    lane.channel = c ? c->channel : 0;
    lane.in = {0, rows[i].y, emu::Direction::WEST};
    lane.send.assign(rows[i].out.begin(), rows[i].out.end());
    lane.out = EdgePort{east, rows[i].y, emu::Direction::EAST};
    lane.expect = rows[i].expect_in;
    lane.received = std::move(rows[i].received);
    received_before[i] = lane.received.size();
  }
  // The rows get back what moved, also when the pump throws.
  struct GiveBack {
    std::vector<RowTraffic>& rows;
    std::vector<EdgeLane>& lanes;
    const std::vector<size_t>& received_before;
    HostStats& stats;
    ~GiveBack() {
      for (size_t i = 0; i < rows.size(); ++i) {
        rows[i].out.erase(rows[i].out.begin(), rows[i].out.begin() + std::ptrdiff_t(lanes[i].sent));
        stats.edge_wavelets_in += lanes[i].sent;
        stats.edge_wavelets_out += lanes[i].received.size() - received_before[i];
        rows[i].received = std::move(lanes[i].received);
      }
    }
  } give_back{rows, lanes, received_before, stats};
  try {
    pump_edges(*wafer, lanes, o);
  } catch (const HostError& e) {
    if (e.kind() == HostError::Kind::HANG) rethrow_naming_blocked_streams(e, what);
    throw;
  }
}

// A launch leaves a CSL program's command stream blocked until the kernel calls
// unblock_cmd_stream() (firmware/README.md): a host call stuck behind that says so, per PE.
void SdkRuntime::State::rethrow_naming_blocked_streams(const HostError& e, const std::string& what) const {
  std::string names;
  std::optional<emu::HangReport> hang = e.hang();
  for (const ChainRow& row : chains) {
    for (int x : row.xs) {
      // Only a stream with a command waiting behind it holds the call up.
      if (!wafer->program_at(x, row.y) || wafer->core_view(x, row.y).input_queues[firmware::kChainQueue].empty()) continue;
      uint32_t words[3] = {};
      wafer->peek_sram(x, row.y, firmware::kConfigAddress,
                       std::span<uint8_t>(reinterpret_cast<uint8_t*>(words), sizeof words));
      const uint32_t state = words[2];
      if (!(words[0] & firmware::kConfigCsl) || (state & 0xFF) != firmware::kSentLaunch) continue;
      std::string function = fmt::format("control task {}", state >> 16);
      for (const auto& [name, task] : function_task)
        if (uint32_t(task) == state >> 16) function = "'" + name + "'";
      const std::string line =
          fmt::format("memcpy's command stream is blocked: the launch of {} still waits for unblock_cmd_stream()", function);
      names += fmt::format("{}PE({},{}): {}", names.empty() ? "" : "; ", x, row.y, line);
      if (!hang) continue;
      for (emu::BlockedPe& pe : hang->pes)
        if (pe.x == x && pe.y == row.y)
          for (emu::Wait& w : pe.waits)
            if (w.kind == emu::Wait::Kind::INPUT_UNCONSUMED && w.queue == firmware::kChainQueue)
              w.text = fmt::format("input queue {} holds {} wavelets of the next host command: {}", w.queue, w.waiting, line);
    }
  }
  if (names.empty()) return;
  const std::string why =
      "waits behind a memcpy command stream that a launch left blocked (a launched function, or a task after it, "
      "must call unblock_cmd_stream() on every PE it ran on)";
  if (hang) throw HostError(*hang, what + " " + why);
  throw HostError(HostError::Kind::HANG, fmt::format("{}; it {}: {}", e.what(), why, names));
}

emu::RunResult SdkRuntime::State::settle(const std::string& what) {
  emu::RunResult r = wafer->run(cycles_left());
  if (r.status == emu::RunResult::Status::FAULT) throw HostError(*r.fault, what);
  if (r.status == emu::RunResult::Status::CYCLE_LIMIT)
    throw HostError(HostError::Kind::CYCLE_LIMIT,
                    fmt::format("{}: the cycle limit ({}) was reached at cycle {}", what, options.max_cycles,
                                wafer->cycle()));
  return r;
}

void SdkRuntime::State::check_firmware_idle(const std::vector<int>& ys, const emu::RunResult& r,
                                            const std::string& what) {
  if (r.status != emu::RunResult::Status::HANG) return;
  for (int y : ys) {
    const ChainRow* row = chain(y);
    if (!row) continue;
    for (int x : row->xs) {
      const emu::CoreView v = wafer->core_view(x, y);
      const bool busy = !v.input_queues[firmware::kChainQueue].empty() ||
                        !v.output_queues[firmware::kChainQueue].empty() ||
                        !v.output_queues[firmware::kLoopQueue].empty() ||
                        !v.output_queues[firmware::kLegacyStreamOutQueue].empty() ||
                        v.microthread_busy[firmware::kChainQueue];
      if (busy) {
        const HostError e(*r.hang, what + " could not complete");
        rethrow_naming_blocked_streams(e, what);
        throw e;
      }
    }
  }
}

const ChainRow* SdkRuntime::State::chain(int y) const {
  auto it = std::lower_bound(chains.begin(), chains.end(), y,
                             [](const ChainRow& c, int value) { return c.y < value; });
  return it != chains.end() && it->y == y ? &*it : nullptr;
}

int SdkRuntime::State::stream_color(const std::string& what, int fx, int fy, int requested) const {
  const PeConfig* pc = exe.pe_config_at(uint32_t(fx), uint32_t(fy));
  const std::vector<int>* colors =
      pc && pc->program >= 0 && size_t(pc->program) < stream_colors.size() ? &stream_colors[size_t(pc->program)] : nullptr;
  if (!colors || colors->empty()) return firmware::kStreamColor;
  if (requested < 0 && colors->size() == 1) return colors->front();
  if (std::find(colors->begin(), colors->end(), requested) != colors->end()) return requested;
  throw HostError(HostError::Kind::USAGE,
                  fmt::format("{} (streaming): {} at PE({},{}): its program takes host streams on color{} {} "
                              "(the MEMCPYH2D_* colors its layout gave <memcpy/get_params>)",
                              what, requested < 0 ? std::string("no stream named") : fmt::format("stream {}", requested),
                              fx, fy, colors->size() > 1 ? "s" : "", fmt::join(*colors, ", ")));
}

int SdkRuntime::State::chain_position(int fx, int fy) const {
  auto it = chain_index.find({fx, fy});
  return it == chain_index.end() ? -1 : it->second;
}

void SdkRuntime::State::require_loaded(const char* call) const {
  if (stopped) throw HostError(HostError::Kind::USAGE, fmt::format("{}: the runtime was stopped", call));
  if (!loaded) throw HostError(HostError::Kind::USAGE, fmt::format("{}: call load() first", call));
}

void SdkRuntime::State::add_phase(HostPhase phase) { stats.phases.push_back(std::move(phase)); }

}  // namespace wsemu::runtime::host
