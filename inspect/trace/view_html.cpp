// The html view: one self-contained offline page (the data as JSON in a <script> element, the
// page logic and style inline, see html_page_template.cpp). This file gathers the data.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "emulator/queues.hpp"
#include "inspect/markup_escape.hpp"
#include "inspect/trace/trace_views.hpp"
#include "emulator/wavelet.hpp"

namespace wsemu::trace {

std::string_view html_page_template();  // html_page_template.cpp

namespace {

using nlohmann::json;

constexpr int kMaxViewSide = 64;  // PEs per side drawn; larger fabrics show the busiest window

struct PeData {
  int program = -1;
  json tasks = json::array();   // [start, end, task id]
  json insns = json::array();   // [cycle, pc, task]
  json stalls = json::array();  // [start, end, reason]
  uint64_t kept = 0, dropped = 0;
  int task = -1;
  uint64_t task_start = 0, last_activity = 0;
  int stall_reason = -1;
  uint64_t stall_start = 0, stall_last = 0;
  std::map<uint32_t, std::pair<uint32_t, uint32_t>> activity;  // bucket -> (instructions, stall cycles)
};

struct LinkData {
  uint64_t total = 0;
  std::map<uint32_t, uint32_t> buckets;
};

// Escapes what would end the <script> element early.
std::string script_safe(std::string s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' && i + 1 < s.size() && (s[i + 1] == '/' || s[i + 1] == '!')) {
      out += "\\u003c";
      continue;
    }
    out += s[i];
  }
  return out;
}

}  // namespace

static std::string html_page_unchecked(const TraceReader& trace, const HtmlOptions& options) {
  const TraceHeader& h = trace.header();
  const uint64_t first = trace.first_cycle(), end = std::max(trace.end_cycle(), first + 1);
  const uint64_t span = end - first;
  const uint64_t buckets = std::clamp<uint64_t>(uint64_t(std::max(options.slider_buckets, 1)), 1, span);
  const uint64_t bucket_cycles = (span + buckets - 1) / buckets;
  auto bucket_of = [&](uint64_t cycle) { return uint32_t(cycle < first ? 0 : std::min<uint64_t>((cycle - first) / bucket_cycles, buckets - 1)); };

  std::map<std::pair<int, int>, PeData> pes;  // (y, x)
  std::map<std::tuple<int, int, int>, LinkData> links;  // (y, x, dir)
  auto close_task = [&](PeData& p) {
    if (p.task < 0) return;
    p.tasks.push_back({p.task_start, std::max(p.last_activity + 1, p.task_start + 1), p.task});
    p.task = -1;
  };
  auto close_stall = [&](PeData& p) {
    if (p.stall_reason < 0) return;
    p.stalls.push_back({p.stall_start, p.stall_last + 1, std::string(emu::stall_reason_name(emu::StallReason(p.stall_reason)))});
    p.stall_reason = -1;
  };
  trace.for_each_event([&](const emu::TraceEvent& e) {
    if (e.kind == emu::TraceKind::WAVELET_HOP) {
      LinkData& l = links[{e.y, e.x, e.direction}];
      ++l.total;
      ++l.buckets[bucket_of(e.cycle)];
      return true;
    }
    PeData& p = pes[{e.y, e.x}];
    switch (e.kind) {
      case emu::TraceKind::TASK_PICKED:
        close_stall(p);
        close_task(p);
        p.task = e.task;
        p.task_start = p.last_activity = e.cycle;
        break;
      case emu::TraceKind::INSTRUCTION:
        close_stall(p);
        p.last_activity = e.cycle;
        ++p.activity[bucket_of(e.cycle)].first;
        if (p.kept < options.max_events_per_pe) {
          p.insns.push_back({e.cycle, e.pc, e.task == 255 ? -1 : int(e.task)});
          ++p.kept;
        } else {
          ++p.dropped;
        }
        break;
      case emu::TraceKind::STALL:
        if (e.aux != 255) break;
        p.last_activity = e.cycle;
        ++p.activity[bucket_of(e.cycle)].second;
        if (p.stall_reason == int(e.reason) && p.stall_last + 1 == e.cycle) {
          p.stall_last = e.cycle;
          break;
        }
        close_stall(p);
        p.stall_reason = e.reason;
        p.stall_start = p.stall_last = e.cycle;
        break;
      default: break;
    }
    return true;
  });
  for (auto& [yx, p] : pes) {
    close_stall(p);
    close_task(p);
  }

  // The window drawn: the whole fabric, or for a large one the square around the activity.
  int vx = 0, vy = 0, vw = h.width, vh = h.height;
  if (h.width > kMaxViewSide || h.height > kMaxViewSide) {
    int min_x = h.width, min_y = h.height;
    for (const auto& [yx, p] : pes) min_x = std::min(min_x, yx.second), min_y = std::min(min_y, yx.first);
    for (const auto& [k, l] : links) min_x = std::min(min_x, std::get<1>(k)), min_y = std::min(min_y, std::get<0>(k));
    if (min_x == h.width) min_x = min_y = 0;
    vw = std::min(h.width, kMaxViewSide);
    vh = std::min(h.height, kMaxViewSide);
    vx = std::min(min_x, h.width - vw);
    vy = std::min(min_y, h.height - vh);
  }
  auto in_view = [&](int x, int y) { return x >= vx && y >= vy && x < vx + vw && y < vy + vh; };

  json data;
  data["file"] = trace.path();
  data["arch"] = h.arch;
  data["width"] = h.width;
  data["height"] = h.height;
  data["view"] = {vx, vy, vw, vh};
  data["clock_mhz"] = h.clock_mhz;
  data["first"] = first;
  data["end"] = end;
  data["bucket_cycles"] = bucket_cycles;
  data["buckets"] = buckets;
  data["status"] = trace.end() ? std::string(end_status_name(trace.end()->status)) : std::string("incomplete");
  data["filter"] = trace.filter().to_string();
  json programs = json::array();
  for (const TraceProgram& p : trace.programs().programs()) {
    json tasks = json::object();
    for (const TraceProgram::Task& t : p.tasks)
      if (t.kind != "control" || !tasks.contains(std::to_string(t.id))) tasks[std::to_string(t.id)] = t.name;
    programs.push_back({{"name", p.name}, {"instructions", p.instructions}, {"tasks", tasks}});
  }
  data["programs"] = programs;
  std::map<const TraceProgram*, int> program_index;
  for (size_t i = 0; i < trace.programs().programs().size(); ++i) program_index[&trace.programs().programs()[i]] = int(i);

  json pe_list = json::array();
  for (int y = vy; y < vy + vh; ++y)
    for (int x = vx; x < vx + vw; ++x) {
      const TraceProgram* prog = trace.programs().at(x, y);
      auto it = pes.find({y, x});
      if (!prog && it == pes.end()) continue;
      json pj{{"x", x}, {"y", y}, {"program", prog ? program_index[prog] : -1}};
      if (it != pes.end()) {
        PeData& p = it->second;
        pj["tasks"] = std::move(p.tasks);
        pj["insns"] = std::move(p.insns);
        pj["stalls"] = std::move(p.stalls);
        pj["dropped"] = p.dropped;
        json act = json::array();
        for (const auto& [b, a] : p.activity) act.push_back({b, a.first, a.second});
        pj["activity"] = act;
      }
      pe_list.push_back(std::move(pj));
    }
  data["pes"] = pe_list;
  json link_list = json::array();
  for (const auto& [k, l] : links) {
    const auto [y, x, dir] = k;
    if (!in_view(x, y)) continue;
    json b = json::array();
    for (const auto& [bucket, n] : l.buckets) b.push_back({bucket, n});
    link_list.push_back({{"x", x}, {"y", y}, {"dir", dir}, {"total", l.total}, {"buckets", b}});
  }
  data["links"] = link_list;
  if (trace.hang()) {
    data["hang"] = trace.hang()->to_json();
    data["hang_text"] = trace.hang()->to_text();
  }
  if (trace.stats() && trace.stats()->contains("fault")) data["fault"] = (*trace.stats())["fault"].value("text", "");

  std::string page(html_page_template());
  const auto replace = [&](std::string_view key, const std::string& value) {
    const size_t at = page.find(key);
    if (at != std::string::npos) page.replace(at, key.size(), value);
  };
  replace("@TITLE@", inspect::markup_escape(fmt::format("wsemu trace {}", trace.path())));
  replace("@DATA@", script_safe(data.dump()));
  return page;
}

std::string html_page(const TraceReader& trace, const HtmlOptions& options) {
  return with_json_errors_as_corrupt_trace(trace, [&] { return html_page_unchecked(trace, options); });
}

}  // namespace wsemu::trace
