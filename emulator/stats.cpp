// Wafer statistics: totals, the JSON report, and the host memory the wafer holds.
//
// JSON layout (every counter is an integer):
//   {"arch", "width", "height", "cycles", "clock_mhz", "backdoor_bytes_read",
//    "backdoor_bytes_written", "totals": {...},
//    "pes":    [{"x","y","instructions","busy_cycles","idle_cycles","stall_cycles":{reason:n},
//                "microthread_stall_cycles":{reason:n},"tasks_started","vector_elements",
//                "async_ops","wavelets_sent","wavelets_received","control_dropped"}],
//    "links":  [{"x","y","direction","wavelets","backpressure_cycles","contention_cycles"}],
//    "colors": [{"color","hops","ramp_deliveries","filtered","switch_changes"}]}
// PEs and links are in fabric order (y, then x); links with no traffic and no waiting are left out.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>

#include "emulator/wafer.hpp"

namespace wsemu::emu {

WaferTotals Wafer::totals() const {
  settle_all();
  WaferTotals t;
  t.cycles = cycle_;
  t.tile_steps = tile_steps_;
  t.skipped_cycles = skipped_cycles_;
  for (const TileState& s : states_) {
    for (int d = 0; d < kNumLinkDirections; ++d) t.wavelet_hops += s.router.link_wavelets[size_t(d)];
    t.ramp_deliveries += s.router.link_wavelets[size_t(Direction::RAMP)];
    if (s.core == kNone) continue;
    const PeCore& c = cores_[s.core];
    t.instructions += c.stats.instructions;
    t.vector_elements += c.stats.vector_elements;
    t.pe_cycles += cycle_ - c.stats.loaded_at;
  }
  return t;
}

nlohmann::json Wafer::stats_json() const {
  settle_all();
  using nlohmann::json;
  json j;
  j["arch"] = profile_.name;
  j["width"] = width_;
  j["height"] = height_;
  j["cycles"] = cycle_;
  j["clock_mhz"] = profile_.clock_mhz;
  j["backdoor_bytes_read"] = backdoor_read_;
  j["backdoor_bytes_written"] = backdoor_written_;
  const WaferTotals t = totals();
  j["totals"] = {{"pe_cycles", t.pe_cycles},           {"instructions", t.instructions},
                 {"vector_elements", t.vector_elements}, {"wavelet_hops", t.wavelet_hops},
                 {"ramp_deliveries", t.ramp_deliveries}};
  std::vector<uint32_t> order(states_.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [this](uint32_t a, uint32_t b) {
    return std::pair(states_[a].y, states_[a].x) < std::pair(states_[b].y, states_[b].x);
  });
  json pes = json::array(), links = json::array();
  std::array<std::array<uint64_t, 4>, isa::kNumColors> colors{};
  uint32_t colors_seen = 0;
  for (uint32_t i : order) {
    const TileState& s = states_[i];
    if (s.core != kNone) {
      const CoreStats& c = cores_[s.core].stats;
      json stalls = json::object(), ut_stalls = json::object();
      uint64_t stalled = 0;
      for (size_t r = 1; r < size_t(StallReason::COUNT); ++r) {
        stalls[std::string(stall_reason_name(StallReason(r)))] = c.stall_cycles[r];
        ut_stalls[std::string(stall_reason_name(StallReason(r)))] = c.microthread_stall_cycles[r];
        stalled += c.stall_cycles[r];
      }
      const uint64_t elapsed = cycle_ - c.loaded_at;
      const uint64_t used = c.busy_cycles + stalled;
      pes.push_back({{"x", s.x},
                     {"y", s.y},
                     {"instructions", c.instructions},
                     {"busy_cycles", c.busy_cycles},
                     {"idle_cycles", elapsed > used ? elapsed - used : 0},
                     {"stall_cycles", stalls},
                     {"microthread_stall_cycles", ut_stalls},
                     {"tasks_started", c.tasks_started},
                     {"vector_elements", c.vector_elements},
                     {"async_ops", c.async_ops},
                     {"wavelets_sent", c.wavelets_sent},
                     {"wavelets_received", c.wavelets_received},
                     {"control_dropped", c.control_dropped}});
    }
    for (int d = 0; d < kNumDirections; ++d) {
      const LinkStats l = s.router.link_stats(d);
      if (!l.wavelets && !l.backpressure_cycles && !l.contention_cycles) continue;
      links.push_back({{"x", s.x},
                       {"y", s.y},
                       {"direction", std::string(direction_name(Direction(d)))},
                       {"wavelets", l.wavelets},
                       {"backpressure_cycles", l.backpressure_cycles},
                       {"contention_cycles", l.contention_cycles}});
    }
    for (const ColorChannel& ch : s.router.channels) {
      colors_seen |= 1u << ch.color;
      colors[ch.color][0] += ch.forwarded;
      colors[ch.color][1] += ch.delivered;
      colors[ch.color][2] += ch.filtered;
      colors[ch.color][3] += ch.switch_changes;
    }
  }
  json cj = json::array();
  for (int c = 0; c < isa::kNumColors; ++c) {
    if (!(colors_seen & (1u << c))) continue;
    cj.push_back({{"color", c},
                  {"hops", colors[c][0]},
                  {"ramp_deliveries", colors[c][1]},
                  {"filtered", colors[c][2]},
                  {"switch_changes", colors[c][3]}});
  }
  j["pes"] = std::move(pes);
  j["links"] = std::move(links);
  j["colors"] = std::move(cj);
  return j;
}

namespace {
uint64_t fnv_mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001B3ull; }
}  // namespace

void Wafer::hash_events(const std::vector<TraceEvent>& events) {
  for (const TraceEvent& e : events) {
    event_hash_ = fnv_mix(event_hash_, e.cycle);
    event_hash_ = fnv_mix(event_hash_, uint64_t(e.x) << 48 | uint64_t(e.y) << 32 | uint64_t(e.kind) << 24 |
                                           uint64_t(e.color) << 16 | uint64_t(e.direction) << 8 | e.task);
    event_hash_ = fnv_mix(event_hash_, uint64_t(e.reason) << 56 | uint64_t(e.aux) << 48 |
                                           uint64_t(e.control) << 40 | uint64_t(e.payload) << 8);
    event_hash_ = fnv_mix(event_hash_, e.pc);
    ++event_count_;
  }
}

// One line per wafer: size, final cycle, a hash of the whole statistics JSON (every PE, link
// and color counter) and of the trace events. Thread counts and stepping modes must agree.
void Wafer::append_digest() const noexcept {
  try {
    uint64_t h = 0xCBF29CE484222325ull;
    const std::string json = stats_json().dump();
    for (const char c : json) h = fnv_mix(h, uint8_t(c));
    if (FILE* f = std::fopen(digest_path_.c_str(), "a")) {
      if (std::getenv("WSEMU_RUN_DIGEST_JSON")) std::fprintf(f, "%s\n", json.c_str());  // to find a difference
      std::fprintf(f, "%dx%d cycle %llu stats %016llx events %llu %016llx\n", width_, height_,
                   static_cast<unsigned long long>(cycle_), static_cast<unsigned long long>(h),
                   static_cast<unsigned long long>(event_count_), static_cast<unsigned long long>(event_hash_));
      std::fclose(f);
    }
  } catch (...) {
    // A digest is a test aid; a wafer that cannot write one still shuts down cleanly.
  }
}

size_t Wafer::host_memory_bytes() const {
  size_t bytes = sizeof(*this);
  bytes += tile_state_.capacity() * sizeof(uint32_t) + active_bits_.capacity() * sizeof(uint64_t) +
           waiting_.capacity() * sizeof(uint32_t);
  bytes += states_.capacity() * sizeof(TileState) + in_active_.capacity() + tile_flags_.capacity() +
           neighbors_.capacity() * sizeof(neighbors_[0]) + clocks_.capacity() * sizeof(TileClock) +
           fabric_pos_.capacity() * sizeof(uint32_t);
  for (const TileState& s : states_) bytes += s.router.channels.capacity() * sizeof(ColorChannel);
  bytes += cores_.capacity() * sizeof(PeCore);
  for (const PeCore& c : cores_) bytes += c.sram.allocated_bytes();
  bytes += (active_.capacity() + scratch_next_.capacity() + scratch_receivers_.capacity() +
            scratch_senders_.capacity()) * sizeof(uint32_t);
  for (const LoadedProgram& p : programs_)
    bytes += sizeof(p) + p.insns.capacity() * sizeof(p.insns[0]) + p.image->code.size() * 8 + p.image->data_init.size();
  return bytes;
}

}  // namespace wsemu::emu
