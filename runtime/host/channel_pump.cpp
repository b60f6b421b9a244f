// The host side of the edge ports: pushes each row's wavelets into its west edge port and pops
// what leaves its east edge port, no faster than the host channel model allows, stepping the
// wafer one cycle at a time meanwhile. Also: settling the wafer after a host call.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "firmware/memcpy_protocol.hpp"
#include "runtime/host/runtime_state.hpp"

namespace wsemu::runtime::host {
namespace {

// Cycles without any edge traffic after which the pump asks the wafer whether it still moves.
constexpr uint64_t kStallProbeCycles = 256;

}  // namespace

uint64_t SdkRuntime::State::cycles_left() const {
  const uint64_t now = wafer->cycle();
  return now >= options.max_cycles ? 0 : options.max_cycles - now;
}

void SdkRuntime::State::pump(std::vector<RowTraffic>& rows, const std::string& what) {
  const double rate = options.channel.wavelets_per_cycle(wafer->profile().clock_mhz);
  const int channels = std::max(1, options.channel.channels);
  // A channel may bank at most one wavelet's worth beyond its rate (it cannot burst).
  const double cap = std::max(1.0, rate);
  std::vector<double> tokens_out(size_t(channels), cap), tokens_in(size_t(channels), cap);
  std::vector<int> channel_of(rows.size(), 0);
  for (size_t i = 0; i < rows.size(); ++i) {
    const ChainRow* c = chain(rows[i].y);
    channel_of[i] = c ? c->channel : 0;
  }
  const int east = int(exe.fabric_width) - 1;
  size_t turn = 0;
  uint64_t quiet = 0;
  auto pending = [&] {
    for (const RowTraffic& r : rows)
      if (!r.out.empty() || r.received.size() < r.expect_in) return true;
    return false;
  };
  while (pending()) {
    if (cycles_left() == 0)
      throw HostError(HostError::Kind::CYCLE_LIMIT,
                      fmt::format("{}: the cycle limit ({}) was reached while host data was moving", what,
                                  options.max_cycles));
    bool moved = false;
    for (size_t n = 0; n < rows.size(); ++n) {
      const size_t i = (turn + n) % rows.size();
      RowTraffic& r = rows[i];
      const size_t c = size_t(channel_of[i]);
      if (!r.out.empty() && tokens_out[c] >= 1.0 &&
          wafer->push_edge(0, r.y, emu::Direction::WEST, r.out.front())) {
        r.out.pop_front();
        tokens_out[c] -= 1.0;
        ++stats.edge_wavelets_in;
        moved = true;
      }
      if (r.received.size() < r.expect_in && tokens_in[c] >= 1.0) {
        if (std::optional<emu::Wavelet> w = wafer->pop_edge(east, r.y, emu::Direction::EAST)) {
          r.received.push_back(w->payload);
          tokens_in[c] -= 1.0;
          ++stats.edge_wavelets_out;
          moved = true;
        }
      }
    }
    turn = (turn + 1) % std::max<size_t>(1, rows.size());
    emu::RunResult step = wafer->step();
    if (step.status == emu::RunResult::Status::FAULT) throw HostError(*step.fault, what);
    for (int c = 0; c < channels; ++c) {
      tokens_out[size_t(c)] = std::min(cap, tokens_out[size_t(c)] + rate);
      tokens_in[size_t(c)] = std::min(cap, tokens_in[size_t(c)] + rate);
    }
    quiet = moved ? 0 : quiet + 1;
    if (quiet >= kStallProbeCycles) {
      quiet = 0;
      emu::RunResult probe = wafer->run(1);
      if (probe.status == emu::RunResult::Status::FAULT) throw HostError(*probe.fault, what);
      if (probe.status == emu::RunResult::Status::HANG) throw HostError(*probe.hang, what);
      if (probe.status == emu::RunResult::Status::QUIESCENT) {
        for (const RowTraffic& r : rows)
          if (r.received.size() < r.expect_in)
            throw HostError(HostError::Kind::HANG,
                            fmt::format("{}: the wafer is idle, but {} more wavelets were expected at the east "
                                        "edge of row {}",
                                        what, r.expect_in - r.received.size(), r.y));
      }
    }
  }
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
      if (busy) throw HostError(*r.hang, what + " could not complete");
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
