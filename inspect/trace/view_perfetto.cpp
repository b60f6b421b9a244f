// The Perfetto view: Chrome trace-event JSON (the "JSON trace format" both chrome://tracing and
// ui.perfetto.dev open). Written as a stream of small objects, never built whole in memory.
//
// Tracks: process 1 "PEs" has one thread per PE (task slices, instruction slices nested in
// them, main-thread stall slices, instant events for activate/block/unblock); process 2
// "links" has one thread per link with traffic (a 1-cycle slice per wavelet hop); process 3
// "microthreads" has one thread per PE whose microthreads stalled. Link stalls (a wavelet
// waiting for room downstream or for the link) are slices on the link's track, one per run of
// cycles; a landing is an instant on the PE's track, tied to its RAMP hop by a flow. Wavelets are followed hop
// to hop (same color, next tile, oldest matching payload first) and each hop is linked to the
// previous one by a flow (an "s"/"f" pair), so the UI draws a wavelet's path as arrows.
#include <fmt/format.h>

#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "emulator/queues.hpp"
#include "inspect/trace/trace_views.hpp"
#include "emulator/wavelet.hpp"

namespace wsemu::trace {

namespace {

using nlohmann::json;

constexpr std::string_view kDirLetter[] = {"N", "E", "S", "W", "RAMP"};
constexpr int kPesPid = 1, kLinksPid = 2, kMicrothreadsPid = 3;
constexpr size_t kMaxPendingPerInput = 64;  // router buffers hold at most 4 x 16 wavelets per color

struct HopNode {
  uint64_t tid = 0;
  uint64_t cycle = 0;
  uint32_t payload = 0;
  bool control = false;
};

class PerfettoWriter {
 public:
  PerfettoWriter(const TraceReader& trace, const PerfettoOptions& options, std::ostream& out)
      : trace_(trace), options_(options), out_(out), width_(uint64_t(trace.header().width)),
        clock_(trace.header().clock_mhz > 0 ? trace.header().clock_mhz : 850.0) {}

  void run() {
    out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    emit({{"ph", "M"}, {"name", "process_name"}, {"pid", kPesPid}, {"args", {{"name", "PEs"}}}}, true);
    emit({{"ph", "M"}, {"name", "process_name"}, {"pid", kLinksPid}, {"args", {{"name", "links"}}}}, true);
    emit({{"ph", "M"}, {"name", "process_name"}, {"pid", kMicrothreadsPid}, {"args", {{"name", "microthreads"}}}}, true);
    trace_.for_each_event(options_.filter, [&](const emu::TraceEvent& e) {
      handle(e);
      return true;
    });
    for (auto& [tid, pe] : pes_) {
      close_task(tid, pe);
      close_stall(tid, pe);
    }
    for (auto& [key, run] : link_stalls_) close_link_stall(run);
    json other{{"source", trace_.path()},
               {"arch", trace_.header().arch},
               {"clock_mhz", clock_},
               {"timestamps", "microseconds at the clock; every slice's args.cycle is the emulated cycle"}};
    if (dropped_) other["dropped_events"] = dropped_;
    out_ << "\n],\"otherData\":" << other.dump() << "}\n";
    if (!out_) throw TraceError("cannot write the perfetto JSON (output stream failed)");
  }

 private:
  struct PeTrack {
    int x = 0, y = 0;
    int task = -1;
    uint64_t task_start = 0, last_activity = 0;
    int stall_reason = -1;
    uint64_t stall_start = 0, stall_last = 0;
  };

  double ts(uint64_t cycle) const { return double(cycle) / clock_; }
  double dur(uint64_t cycles) const { return double(cycles) / clock_; }

  void emit(const json& event, bool metadata = false) {
    if (!metadata && written_ >= options_.max_events) {
      ++dropped_;
      return;
    }
    if (!first_) out_ << ",\n";
    first_ = false;
    out_ << event.dump();
    if (!metadata) ++written_;
  }

  uint64_t pe_tid(int x, int y) {
    const uint64_t tid = uint64_t(y) * width_ + uint64_t(x) + 1;
    if (!pes_.count(tid)) {
      PeTrack& t = pes_[tid];
      t.x = x;
      t.y = y;
      emit({{"ph", "M"}, {"name", "thread_name"}, {"pid", kPesPid}, {"tid", tid}, {"args", {{"name", fmt::format("P{}.{}", x, y)}}}}, true);
      emit({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", kPesPid}, {"tid", tid}, {"args", {{"sort_index", tid}}}}, true);
    }
    return tid;
  }

  uint64_t link_tid(int x, int y, int dir) {
    const uint64_t tid = (uint64_t(y) * width_ + uint64_t(x)) * 5 + uint64_t(dir) + 1;
    if (links_seen_.insert(tid).second) {
      emit({{"ph", "M"}, {"name", "thread_name"}, {"pid", kLinksPid}, {"tid", tid},
            {"args", {{"name", fmt::format("P{}.{} {}", x, y, kDirLetter[dir % 5])}}}}, true);
      emit({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", kLinksPid}, {"tid", tid}, {"args", {{"sort_index", tid}}}}, true);
    }
    return tid;
  }

  std::string task_label(int x, int y, int task) const {
    const TraceProgram* p = trace_.programs().at(x, y);
    const std::string name = p ? p->task_name(task) : "";
    return name.empty() ? fmt::format("task {}", task) : fmt::format("task {} {}", task, name);
  }

  void close_task(uint64_t tid, PeTrack& pe) {
    if (pe.task < 0) return;
    const uint64_t end = std::max(pe.last_activity + 1, pe.task_start + 1);
    emit({{"ph", "X"}, {"cat", "task"}, {"name", task_label(pe.x, pe.y, pe.task)}, {"pid", kPesPid}, {"tid", tid},
          {"ts", ts(pe.task_start)}, {"dur", dur(end - pe.task_start)},
          {"args", {{"cycle", pe.task_start}, {"cycles", end - pe.task_start}, {"task", pe.task}}}});
    pe.task = -1;
  }

  void close_stall(uint64_t tid, PeTrack& pe) {
    if (pe.stall_reason < 0) return;
    emit({{"ph", "X"}, {"cat", "stall"}, {"name", fmt::format("stall: {}", emu::stall_reason_name(emu::StallReason(pe.stall_reason)))},
          {"pid", kPesPid}, {"tid", tid}, {"ts", ts(pe.stall_start)}, {"dur", dur(pe.stall_last + 1 - pe.stall_start)},
          {"args", {{"cycle", pe.stall_start}, {"cycles", pe.stall_last + 1 - pe.stall_start}}}});
    pe.stall_reason = -1;
  }

  void handle(const emu::TraceEvent& e) {
    switch (e.kind) {
      case emu::TraceKind::WAVELET_HOP: hop(e); return;
      case emu::TraceKind::WAVELET_LANDED: {
        const uint64_t tid = pe_tid(e.x, e.y);
        emit({{"ph", "i"}, {"s", "t"}, {"cat", "wavelet"}, {"name", fmt::format("land c{}", e.color)}, {"pid", kPesPid}, {"tid", tid},
              {"ts", ts(e.cycle)},
              {"args", {{"cycle", e.cycle}, {"payload", fmt::format("{:#010x}", e.payload)},
                        {"queue", e.aux == 255 ? json("color slot") : json(e.aux)}}}});
        // The router records the RAMP hop just before the landing it caused: draw the last step.
        if (options_.flows && last_ramp_.cycle == e.cycle && last_ramp_.x == e.x && last_ramp_.y == e.y &&
            last_ramp_.color == e.color) {
          const uint64_t id = ++flow_id_;
          emit({{"ph", "s"}, {"cat", "wavelet"}, {"name", "wavelet"}, {"id", id}, {"pid", kLinksPid}, {"tid", last_ramp_.tid},
                {"ts", ts(e.cycle)}});
          emit({{"ph", "f"}, {"bp", "e"}, {"cat", "wavelet"}, {"name", "wavelet"}, {"id", id}, {"pid", kPesPid}, {"tid", tid},
                {"ts", ts(e.cycle)}});
        }
        return;
      }
      case emu::TraceKind::LINK_STALL: link_stall(e); return;
      case emu::TraceKind::SWITCH_CHANGED: {
        const uint64_t tid = pe_tid(e.x, e.y);
        emit({{"ph", "i"}, {"s", "t"}, {"cat", "router"}, {"name", fmt::format("switch c{} -> {}", e.color, e.aux)},
              {"pid", kPesPid}, {"tid", tid}, {"ts", ts(e.cycle)}, {"args", {{"cycle", e.cycle}}}});
        return;
      }
      default: break;
    }
    const uint64_t tid = pe_tid(e.x, e.y);
    PeTrack& pe = pes_[tid];
    switch (e.kind) {
      case emu::TraceKind::TASK_PICKED:
        close_stall(tid, pe);
        close_task(tid, pe);
        pe.task = e.task;
        pe.task_start = pe.last_activity = e.cycle;
        return;
      case emu::TraceKind::INSTRUCTION: {
        close_stall(tid, pe);
        pe.last_activity = e.cycle;
        if (!options_.instructions) return;
        const TraceProgram* p = trace_.programs().at(e.x, e.y);
        const std::string text = p ? p->instruction(e.pc) : "";
        emit({{"ph", "X"}, {"cat", "instruction"}, {"name", text.empty() ? fmt::format("pc {}", e.pc) : text}, {"pid", kPesPid},
              {"tid", tid}, {"ts", ts(e.cycle)}, {"dur", dur(1)}, {"args", {{"cycle", e.cycle}, {"pc", e.pc}}}});
        return;
      }
      case emu::TraceKind::STALL: {
        if (e.aux != 255) {
          const uint64_t ut_tid = uint64_t(e.y) * width_ + uint64_t(e.x) + 1;
          if (ut_seen_.insert(ut_tid).second)
            emit({{"ph", "M"}, {"name", "thread_name"}, {"pid", kMicrothreadsPid}, {"tid", ut_tid},
                  {"args", {{"name", fmt::format("P{}.{} microthreads", e.x, e.y)}}}}, true);
          emit({{"ph", "X"}, {"cat", "stall"}, {"name", fmt::format("ut{} stall: {}", e.aux, emu::stall_reason_name(emu::StallReason(e.reason)))},
                {"pid", kMicrothreadsPid}, {"tid", ut_tid}, {"ts", ts(e.cycle)}, {"dur", dur(1)}, {"args", {{"cycle", e.cycle}, {"pc", e.pc}}}});
          return;
        }
        pe.last_activity = e.cycle;
        if (pe.stall_reason == int(e.reason) && pe.stall_last + 1 == e.cycle) {
          pe.stall_last = e.cycle;
          return;
        }
        close_stall(tid, pe);
        pe.stall_reason = e.reason;
        pe.stall_start = pe.stall_last = e.cycle;
        return;
      }
      case emu::TraceKind::TASK_ACTIVATED:
      case emu::TraceKind::TASK_BLOCKED:
      case emu::TraceKind::TASK_UNBLOCKED: {
        const std::string_view what = e.kind == emu::TraceKind::TASK_ACTIVATED ? "activate"
                                      : e.kind == emu::TraceKind::TASK_BLOCKED ? "block" : "unblock";
        emit({{"ph", "i"}, {"s", "t"}, {"cat", "task"}, {"name", fmt::format("{} {}", what, task_label(e.x, e.y, e.task))},
              {"pid", kPesPid}, {"tid", tid}, {"ts", ts(e.cycle)}, {"args", {{"cycle", e.cycle}}}});
        return;
      }
      default: return;
    }
  }

  static uint64_t input_key(int x, int y, int color) { return (uint64_t(uint32_t(y)) << 40) | (uint64_t(uint32_t(x)) << 8) | uint64_t(color & 31); }

  static bool same_wavelet(const HopNode& a, const emu::TraceEvent& e) {
    if (a.control != e.control) return false;
    // A router may pop the command slot of a control wavelet it forwards (its pop mode).
    return a.payload == e.payload || (a.control && emu::control_pop(a.payload) == e.payload);
  }

  // A wavelet waiting to leave by a link: one slice per run of consecutive cycles of the same
  // color and reason on the link's track.
  struct LinkStallRun {
    uint64_t tid = 0, first = 0, last = 0;
    int color = 0, reason = 0;
    bool open = false;
  };
  void close_link_stall(LinkStallRun& run) {
    if (!run.open) return;
    const std::string_view why = emu::link_stall_reason_name(emu::LinkStallReason(run.reason));
    emit({{"ph", "X"}, {"cat", "link_stall"}, {"name", fmt::format("c{} blocked: {}", run.color, why)}, {"pid", kLinksPid},
          {"tid", run.tid}, {"ts", ts(run.first)}, {"dur", dur(run.last + 1 - run.first)},
          {"args", {{"cycle", run.first}, {"cycles", run.last + 1 - run.first}, {"color", run.color}, {"reason", why}}}});
    run.open = false;
  }
  void link_stall(const emu::TraceEvent& e) {
    const uint64_t tid = link_tid(e.x, e.y, e.direction);
    LinkStallRun& run = link_stalls_[(tid << 5) | (e.color & 31)];
    if (run.open && run.reason == e.reason && run.last + 1 == e.cycle) {
      run.last = e.cycle;
      return;
    }
    close_link_stall(run);
    run = {tid, e.cycle, e.cycle, e.color & 31, e.reason, true};
  }

  void hop(const emu::TraceEvent& e) {
    const uint64_t tid = link_tid(e.x, e.y, e.direction);
    if (e.direction == uint8_t(emu::Direction::RAMP)) last_ramp_ = {tid, e.cycle, e.x, e.y, e.color};
    emit({{"ph", "X"}, {"cat", "wavelet"}, {"name", fmt::format("c{}{}", e.color, e.control ? " ctl" : "")}, {"pid", kLinksPid},
          {"tid", tid}, {"ts", ts(e.cycle)}, {"dur", dur(1)},
          {"args", {{"cycle", e.cycle}, {"color", e.color}, {"payload", fmt::format("{:#010x}", e.payload)}, {"control", e.control}}}});
    if (!options_.flows) return;
    // The wavelet this hop carries: a multicast copy of the previous hop's, or one that waited
    // at this router, or (none found) one that entered here from the core or the host.
    const uint64_t key = input_key(e.x, e.y, e.color);
    std::optional<HopNode> source;
    if (last_hop_key_ == key && last_hop_cycle_ == e.cycle) {
      source = last_source_;
    } else {
      auto it = pending_.find(key);
      if (it != pending_.end()) {
        auto& q = it->second;
        auto match = q.end();
        for (auto i = q.begin(); i != q.end(); ++i)
          if (i->cycle < e.cycle && same_wavelet(*i, e)) {
            match = i;
            break;
          }
        if (match == q.end() && !q.empty() && q.front().cycle < e.cycle) match = q.begin();
        if (match != q.end()) {
          source = *match;
          q.erase(match);
        }
      }
      last_hop_key_ = key;
      last_hop_cycle_ = e.cycle;
      last_source_ = source;
    }
    if (source) {
      const uint64_t id = ++flow_id_;
      emit({{"ph", "s"}, {"cat", "wavelet"}, {"name", "wavelet"}, {"id", id}, {"pid", kLinksPid}, {"tid", source->tid},
            {"ts", ts(source->cycle)}});
      emit({{"ph", "f"}, {"bp", "e"}, {"cat", "wavelet"}, {"name", "wavelet"}, {"id", id}, {"pid", kLinksPid}, {"tid", tid},
            {"ts", ts(e.cycle)}});
    }
    if (e.direction >= emu::kNumLinkDirections) return;
    const auto dir = emu::Direction(e.direction);
    const int nx = e.x + emu::dx(dir), ny = e.y + emu::dy(dir);
    if (nx < 0 || ny < 0 || nx >= trace_.header().width || ny >= trace_.header().height) return;
    auto& q = pending_[input_key(nx, ny, e.color)];
    q.push_back({tid, e.cycle, e.payload, e.control});
    if (q.size() > kMaxPendingPerInput) q.pop_front();
  }

  const TraceReader& trace_;
  const PerfettoOptions& options_;
  std::ostream& out_;
  uint64_t width_;
  double clock_;
  bool first_ = true;
  uint64_t written_ = 0, dropped_ = 0, flow_id_ = 0;
  std::map<uint64_t, PeTrack> pes_;
  std::unordered_set<uint64_t> links_seen_, ut_seen_;
  std::unordered_map<uint64_t, std::deque<HopNode>> pending_;
  uint64_t last_hop_key_ = ~uint64_t{0}, last_hop_cycle_ = 0;
  std::optional<HopNode> last_source_;
  struct {
    uint64_t tid = 0, cycle = ~uint64_t{0};
    int x = -1, y = -1, color = -1;
  } last_ramp_;
  std::map<uint64_t, LinkStallRun> link_stalls_;  // (link tid, color)
};

}  // namespace

void write_perfetto(const TraceReader& trace, const PerfettoOptions& options, std::ostream& out) {
  PerfettoWriter(trace, options, out).run();
}

}  // namespace wsemu::trace
