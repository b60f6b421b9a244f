// The summary view: per color and per link wavelet counts, link utilization and backpressure,
// per-PE busy/idle/stall breakdown, stall reasons, and the hang's wait-for graph. Built as JSON
// first (summary_json), then rendered as text, so both say the same thing.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "emulator/queues.hpp"
#include "inspect/trace/trace_views.hpp"
#include "emulator/wavelet.hpp"

namespace wsemu::trace {

namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 5> kDirLetter = {"N", "E", "S", "W", "RAMP"};

struct LinkKey {
  int x, y, dir;
  auto operator<=>(const LinkKey&) const = default;
};

struct PeCounts {
  uint64_t instructions = 0, tasks_picked = 0, main_stalls = 0, microthread_stalls = 0;
};

std::string link_name(int x, int y, int dir) { return fmt::format("P{}.{} {}", x, y, kDirLetter[size_t(dir) % 5]); }

double percent(uint64_t part, uint64_t whole) { return whole ? 100.0 * double(part) / double(whole) : 0.0; }

}  // namespace

static json summary_json_unchecked(const TraceReader& trace, const SummaryOptions& options) {
  const TraceHeader& h = trace.header();
  const uint64_t cycles = trace.cycles();
  std::array<uint64_t, 16> kind_counts{};
  // link hops, ramp deliveries, landed, switch changes, blocked (link_stall backpressure events)
  std::array<std::array<uint64_t, 5>, 32> color_counts{};
  std::map<LinkKey, uint64_t> link_hops;
  // Link waiting from LINK_STALL events: a tile's events of one cycle are consecutive, so its
  // blocked outputs are gathered per (cycle, tile) and each link-cycle is counted once, as
  // backpressure when any color found no room downstream, else as contention (as LinkStats).
  std::map<LinkKey, std::pair<uint64_t, uint64_t>> event_waiting;
  struct {
    uint64_t cycle = 0;
    int x = -1, y = -1;
    uint8_t backpressured = 0, contended = 0;
  } group;
  auto flush_group = [&] {
    for (int d = 0; d < 5; ++d) {
      const uint8_t m = uint8_t(1u << d);
      if (group.backpressured & m) ++event_waiting[{group.x, group.y, d}].first;
      else if (group.contended & m) ++event_waiting[{group.x, group.y, d}].second;
    }
    group.backpressured = group.contended = 0;
  };
  std::map<std::pair<int, int>, PeCounts> pes;  // (y, x)
  std::map<std::pair<int, bool>, uint64_t> stall_reasons;  // (reason, microthread)
  std::map<std::pair<int, bool>, std::map<std::pair<int, int>, uint64_t>> stall_pes;
  trace.for_each_event([&](const emu::TraceEvent& e) {
    ++kind_counts[size_t(e.kind) & 15];
    switch (e.kind) {
      case emu::TraceKind::WAVELET_HOP:
        if (e.direction == uint8_t(emu::Direction::RAMP))
          ++color_counts[e.color & 31][1];
        else
          ++color_counts[e.color & 31][0];
        ++link_hops[{e.x, e.y, e.direction}];
        break;
      case emu::TraceKind::WAVELET_LANDED: ++color_counts[e.color & 31][2]; break;
      case emu::TraceKind::SWITCH_CHANGED: ++color_counts[e.color & 31][3]; break;
      case emu::TraceKind::LINK_STALL: {
        if (e.cycle != group.cycle || e.x != group.x || e.y != group.y) {
          flush_group();
          group.cycle = e.cycle, group.x = e.x, group.y = e.y;
        }
        const uint8_t m = uint8_t(1u << (e.direction % 5));
        if (e.reason == uint8_t(emu::LinkStallReason::BACKPRESSURE)) {
          group.backpressured |= m;
          ++color_counts[e.color & 31][4];
        } else {
          group.contended |= m;
        }
        break;
      }
      case emu::TraceKind::INSTRUCTION: ++pes[{e.y, e.x}].instructions; break;
      case emu::TraceKind::TASK_PICKED: ++pes[{e.y, e.x}].tasks_picked; break;
      case emu::TraceKind::STALL: {
        const bool ut = e.aux != 255;
        ++(ut ? pes[{e.y, e.x}].microthread_stalls : pes[{e.y, e.x}].main_stalls);
        ++stall_reasons[{e.reason, ut}];
        ++stall_pes[{e.reason, ut}][{e.y, e.x}];
        break;
      }
      default: break;
    }
    return true;
  });
  flush_group();

  json j;
  j["file"] = trace.path();
  j["arch"] = h.arch;
  j["fabric"] = {h.width, h.height};
  j["clock_mhz"] = h.clock_mhz;
  j["format_version"] = fmt::format("{}.{}", h.version_major, h.version_minor);
  j["first_cycle"] = trace.first_cycle();
  j["end_cycle"] = trace.end_cycle();
  j["cycles"] = cycles;
  j["filter"] = trace.filter().to_string();
  j["complete"] = trace.complete();
  if (trace.end()) j["status"] = std::string(end_status_name(trace.end()->status));
  j["events"] = trace.event_count();
  json kinds = json::object();
  for (int k = 0; k <= int(emu::kLastTraceKind); ++k)
    if (kind_counts[size_t(k)]) kinds[std::string(emu::trace_kind_name(emu::TraceKind(k)))] = kind_counts[size_t(k)];
  j["event_kinds"] = kinds;

  json colors = json::array();
  for (int c = 0; c < 32; ++c) {
    const auto& cc = color_counts[size_t(c)];
    if (!(cc[0] | cc[1] | cc[2] | cc[3] | cc[4])) continue;
    colors.push_back({{"color", c}, {"link_hops", cc[0]}, {"ramp_deliveries", cc[1]}, {"landed", cc[2]}, {"switch_changes", cc[3]},
                      {"backpressure", cc[4]}});
  }
  j["colors"] = colors;

  // Links: wavelets from the events; backpressure and contention from the link_stall events
  // when the recording kept them (then they cover exactly what was recorded), else from the
  // wafer's counters (the whole run, every color).
  std::map<LinkKey, std::pair<uint64_t, uint64_t>> waiting;
  const json* wafer = trace.stats() && trace.stats()->contains("wafer") ? &(*trace.stats())["wafer"] : nullptr;
  const bool waiting_from_events = (trace.filter().kinds & kind_bit(emu::TraceKind::LINK_STALL)) != 0;
  std::string waiting_source = "none";
  if (waiting_from_events) {
    waiting_source = "link_stall events";
    waiting = event_waiting;
    for (const auto& [k, w] : event_waiting) link_hops.try_emplace(k, 0);
  } else if (wafer && wafer->contains("links")) {
    waiting_source = "wafer counters, whole run";
    for (const json& l : (*wafer)["links"]) {
      emu::Direction d;
      if (!emu::parse_direction(l.value("direction", ""), d)) continue;
      const LinkKey k{l.value("x", 0), l.value("y", 0), int(d)};
      waiting[k] = {l.value("backpressure_cycles", uint64_t{0}), l.value("contention_cycles", uint64_t{0})};
      link_hops.try_emplace(k, 0);
    }
  }
  j["link_waiting_source"] = waiting_source;
  std::vector<std::pair<LinkKey, uint64_t>> links(link_hops.begin(), link_hops.end());
  std::stable_sort(links.begin(), links.end(), [&](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return waiting[a.first].first > waiting[b.first].first;
  });
  j["links_in_use"] = links.size();
  json hot = json::array();
  for (size_t i = 0; i < links.size() && int(i) < options.top; ++i) {
    const auto& [k, n] = links[i];
    json l{{"x", k.x}, {"y", k.y}, {"direction", std::string(kDirLetter[size_t(k.dir) % 5])}, {"wavelets", n},
           {"utilization", cycles ? double(n) / double(cycles) : 0.0}};
    if (waiting_source != "none") {
      l["backpressure_cycles"] = waiting[k].first;
      l["contention_cycles"] = waiting[k].second;
    }
    hot.push_back(l);
  }
  j["hottest_links"] = hot;

  // PEs: busy / stall / idle from the wafer's counters when the recording finished normally.
  struct PeRow {
    int x = 0, y = 0;
    uint64_t busy = 0, stall = 0, idle = 0, instructions = 0, tasks = 0;
  };
  std::vector<PeRow> pe_rows;
  std::string pe_source;
  if (wafer && wafer->contains("pes")) {
    pe_source = "wafer counters, whole run";
    for (const json& p : (*wafer)["pes"]) {
      PeRow row{p.value("x", 0), p.value("y", 0), p.value("busy_cycles", uint64_t{0}), 0, p.value("idle_cycles", uint64_t{0}),
                p.value("instructions", uint64_t{0}), p.value("tasks_started", uint64_t{0})};
      const json stalls = p.value("stall_cycles", json::object());
      for (const auto& [reason, n] : stalls.items())
        if (n.is_number()) row.stall += n.get<uint64_t>();
      pe_rows.push_back(row);
    }
  } else {
    pe_source = "events (busy = instructions retired)";
    for (const auto& [yx, c] : pes) {
      const uint64_t used = c.instructions + c.main_stalls;
      pe_rows.push_back({yx.second, yx.first, c.instructions, c.main_stalls, cycles > used ? cycles - used : 0, c.instructions,
                         c.tasks_picked});
    }
  }
  j["pe_count"] = pe_rows.size();
  std::stable_sort(pe_rows.begin(), pe_rows.end(), [](const PeRow& a, const PeRow& b) { return a.busy + a.stall > b.busy + b.stall; });
  json busiest = json::array();
  for (size_t i = 0; i < pe_rows.size() && int(i) < options.top; ++i) {
    const PeRow& r = pe_rows[i];
    busiest.push_back({{"x", r.x}, {"y", r.y}, {"busy_cycles", r.busy}, {"stall_cycles", r.stall}, {"idle_cycles", r.idle},
                       {"instructions", r.instructions}, {"tasks_started", r.tasks}, {"source", pe_source}});
  }
  j["pes"] = busiest;

  std::vector<std::pair<std::pair<int, bool>, uint64_t>> reasons(stall_reasons.begin(), stall_reasons.end());
  std::stable_sort(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  json stalls = json::array();
  for (size_t i = 0; i < reasons.size() && int(i) < options.top; ++i) {
    const auto& [key, n] = reasons[i];
    std::vector<std::pair<std::pair<int, int>, uint64_t>> where(stall_pes[key].begin(), stall_pes[key].end());
    std::stable_sort(where.begin(), where.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    json worst = json::array();
    for (size_t w = 0; w < where.size() && w < 3; ++w)
      worst.push_back({{"x", where[w].first.second}, {"y", where[w].first.first}, {"cycles", where[w].second}});
    stalls.push_back({{"reason", std::string(emu::stall_reason_name(emu::StallReason(key.first)))},
                      {"thread", key.second ? "microthread" : "main"}, {"cycles", n}, {"worst_pes", worst}});
  }
  j["stall_reasons"] = stalls;
  if (trace.hang()) j["hang"] = trace.hang()->to_json();
  if (trace.stats() && trace.stats()->contains("fault")) j["fault"] = (*trace.stats())["fault"];
  j["warnings"] = trace.warnings();
  return j;
}

void write_summary(const TraceReader& trace, const SummaryOptions& options, std::ostream& out) {
  const json j = summary_json(trace, options);
  const uint64_t cycles = j["cycles"];
  out << fmt::format("trace {}: {} fabric {}x{}, {} MHz, format {}\n", trace.path(), j["arch"].get<std::string>(),
                     j["fabric"][0].get<int>(), j["fabric"][1].get<int>(), j["clock_mhz"].get<double>(),
                     j["format_version"].get<std::string>());
  out << fmt::format("recorded cycles {}..{} ({} cycles, {:.3f} us), {}; {} events", j["first_cycle"].get<uint64_t>(),
                     j["end_cycle"].get<uint64_t>(), cycles, double(cycles) / j["clock_mhz"].get<double>(),
                     j["filter"].get<std::string>(), j["events"].get<uint64_t>());
  out << (j.contains("status") ? fmt::format("; ended: {}\n", j["status"].get<std::string>()) : "; INCOMPLETE\n");
  for (const json& w : j["warnings"]) out << "warning: " << w.get<std::string>() << "\n";
  if (!j["event_kinds"].empty()) {
    out << "events:";
    for (const auto& [k, n] : j["event_kinds"].items()) out << fmt::format(" {} {}", k, n.get<uint64_t>());
    out << "\n";
  }
  if (j.contains("fault")) out << "\nfault: " << j["fault"].value("text", "") << "\n";

  out << "\ncolors (wavelets):\n";
  if (j["colors"].empty()) out << "  none recorded\n";
  else out << "  color  link hops  ramp deliveries  landed  switch changes  backpressure\n";
  for (const json& c : j["colors"])
    out << fmt::format("  {:>5}  {:>9}  {:>15}  {:>6}  {:>14}  {:>12}\n", c["color"].get<int>(), c["link_hops"].get<uint64_t>(),
                       c["ramp_deliveries"].get<uint64_t>(), c["landed"].get<uint64_t>(), c["switch_changes"].get<uint64_t>(),
                       c["backpressure"].get<uint64_t>());

  out << fmt::format("\nhottest links ({} of {} in use; utilization = wavelets / {} cycles; waiting cycles from {}):\n",
                     j["hottest_links"].size(), j["links_in_use"].get<size_t>(), cycles, j["link_waiting_source"].get<std::string>());
  if (!j["hottest_links"].empty()) out << "  link        wavelets  utilization  backpressure  contention\n";
  for (const json& l : j["hottest_links"]) {
    const std::string name = link_name(l["x"], l["y"], int(std::find(kDirLetter.begin(), kDirLetter.end(),
                                                                     l["direction"].get<std::string>()) - kDirLetter.begin()));
    out << fmt::format("  {:<10}  {:>8}  {:>10.1f}%  {:>12}  {:>10}\n", name, l["wavelets"].get<uint64_t>(),
                       100.0 * l["utilization"].get<double>(),
                       l.contains("backpressure_cycles") ? std::to_string(l["backpressure_cycles"].get<uint64_t>()) : "n/a",
                       l.contains("contention_cycles") ? std::to_string(l["contention_cycles"].get<uint64_t>()) : "n/a");
  }

  out << fmt::format("\nPEs ({} busiest of {}; {}):\n", j["pes"].size(), j["pe_count"].get<size_t>(),
                     j["pes"].empty() ? std::string("none") : j["pes"][0]["source"].get<std::string>());
  if (!j["pes"].empty()) out << "  PE        busy   stall    idle   busy%  instructions  tasks\n";
  for (const json& p : j["pes"]) {
    const uint64_t busy = p["busy_cycles"], stall = p["stall_cycles"], idle = p["idle_cycles"];
    out << fmt::format("  {:<7} {:>6}  {:>6}  {:>6}  {:>5.1f}%  {:>12}  {:>5}\n", fmt::format("P{}.{}", p["x"].get<int>(), p["y"].get<int>()),
                       busy, stall, idle, percent(busy, busy + stall + idle), p["instructions"].get<uint64_t>(),
                       p["tasks_started"].get<uint64_t>());
  }

  out << "\ntop stall reasons (stall events, one per stalled thread-cycle):\n";
  if (j["stall_reasons"].empty()) out << "  none recorded\n";
  for (const json& s : j["stall_reasons"]) {
    std::string where;
    for (const json& w : s["worst_pes"])
      where += fmt::format("{}P{}.{} {}", where.empty() ? "" : ", ", w["x"].get<int>(), w["y"].get<int>(), w["cycles"].get<uint64_t>());
    out << fmt::format("  {:<18} {:<11} {:>8} cycles  (worst: {})\n", s["reason"].get<std::string>(), s["thread"].get<std::string>(),
                       s["cycles"].get<uint64_t>(), where);
  }
  if (trace.hang()) out << "\n" << trace.hang()->to_text();
}

json summary_json(const TraceReader& trace, const SummaryOptions& options) {
  return with_json_errors_as_corrupt_trace(trace, [&] { return summary_json_unchecked(trace, options); });
}

}  // namespace wsemu::trace
