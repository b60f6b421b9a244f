// The hang report: built from the wafer's state when no progress is possible.
#include "emulator/hang_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "isa/disassembler.hpp"
#include "emulator/wafer.hpp"

namespace wsemu::emu {

const BlockedPe* HangReport::find(int x, int y) const {
  for (const BlockedPe& p : pes)
    if (p.x == x && p.y == y) return &p;
  return nullptr;
}

std::string HangReport::to_string() const {
  std::string s = fmt::format("hang at cycle {}: nothing can make progress, {} PE{} blocked\n", cycle, pes.size(),
                              pes.size() == 1 ? "" : "s");
  for (const BlockedPe& p : pes) {
    s += fmt::format("  PE({},{})", p.x, p.y);
    if (p.task >= 0) s += fmt::format(" in task {}{}", p.task, p.task_name.empty() ? "" : " '" + p.task_name + "'");
    s += ":\n";
    for (const Wait& w : p.waits) s += "    " + w.text + "\n";
  }
  for (const std::string& h : host_waits) s += "  host: " + h + "\n";
  if (!wait_cycle.empty()) {
    s += "  cycle of waits: ";
    for (const auto& [x, y] : wait_cycle) s += fmt::format("PE({},{}) -> ", x, y);
    s += fmt::format("PE({},{})\n", wait_cycle.front().first, wait_cycle.front().second);
  }
  return s;
}

nlohmann::json HangReport::to_json() const {
  nlohmann::json j;
  j["cycle"] = cycle;
  j["pes"] = nlohmann::json::array();
  for (const BlockedPe& p : pes) {
    nlohmann::json pj{{"x", p.x}, {"y", p.y}, {"task", p.task}, {"task_name", p.task_name}};
    pj["waits"] = nlohmann::json::array();
    for (const Wait& w : p.waits)
      pj["waits"].push_back({{"reason", stall_reason_name(w.reason)}, {"task", w.task}, {"queue", w.queue},
                             {"color", w.color}, {"dsr", w.dsr}, {"microthread", w.microthread},
                             {"wavelets", w.waiting}, {"source", w.source}, {"text", w.text}});
    j["pes"].push_back(pj);
  }
  j["wait_cycle"] = nlohmann::json::array();
  for (const auto& [x, y] : wait_cycle) j["wait_cycle"].push_back({x, y});
  j["host_waits"] = host_waits;
  return j;
}

namespace {

std::string task_name(const isa::ObjectImage& img, int id, isa::TaskKind kind) {
  for (const isa::TaskBinding& t : img.tasks)
    if (t.id == id && (t.kind == kind || (kind != isa::TaskKind::CONTROL && t.kind != isa::TaskKind::CONTROL)))
      return t.name;
  return "";
}

std::string stall_text(const StallInfo& st) {
  switch (st.reason) {
    case StallReason::INPUT_QUEUE_EMPTY:
      return fmt::format("input queue {} (color {}) is empty", st.queue, st.color);
    case StallReason::OUTPUT_QUEUE_FULL:
      return fmt::format("output queue {} (color {}) is full", st.queue, st.color);
    case StallReason::FIFO_EMPTY: return fmt::format("FIFO d{} is empty", st.dsr);
    case StallReason::FIFO_FULL: return fmt::format("FIFO d{} is full", st.dsr);
    default: return "no stall recorded";
  }
}

}  // namespace

HangReport Wafer::hang_report() const {
  settle_all();
  HangReport rep;
  rep.cycle = cycle_;
  std::vector<uint32_t> order(states_.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [this](uint32_t a, uint32_t b) {
    return std::pair(states_[a].y, states_[a].x) < std::pair(states_[b].y, states_[b].x);
  });
  std::map<uint32_t, std::set<uint32_t>> waits_for;  // wait-for graph between tiles

  // Why color `c` at tile `s` cannot move its head wavelet on; adds wait-for edges.
  auto router_block = [&](uint32_t s, const ColorChannel& ch, const Wavelet& w) -> std::string {
    const TileState& t = states_[s];
    const RoutePosition& pos = ch.route.positions[ch.route.current];
    std::vector<std::string> why;
    for (int d = 0; d < kNumDirections; ++d) {
      if (!(pos.tx & (1u << d))) continue;
      const auto dir = Direction(d);
      if (dir == Direction::RAMP) {
        if (t.core != kNone && cores_[t.core].ramp_can_accept(w) == RampPort::Accept::FULL)
          why.push_back(fmt::format("the core's input for color {} is full", ch.color));
      } else if (t.router.off_fabric & bit(dir)) {
        if (t.router.edge_out[d].full()) {
          why.push_back(fmt::format("edge port {} is full", direction_name(dir)));
          rep.host_waits.push_back(fmt::format("the {} edge port of PE({},{}) is full (color {}): the host is "
                                               "not draining it",
                                               direction_name(dir), t.x, t.y, ch.color));
        }
      } else if (ch.credits[d] == 0) {
        const uint32_t n = neighbors_[s][d];
        why.push_back(fmt::format("PE({},{}) has no room for color {} from {}", t.x + dx(dir), t.y + dy(dir),
                                  ch.color, direction_name(opposite(dir))));
        if (n != kNone && n != s) waits_for[s].insert(n);
      }
    }
    if (why.empty()) return "";
    std::string s2 = why[0];
    for (size_t i = 1; i < why.size(); ++i) s2 += "; " + why[i];
    return s2;
  };
  // Why a color torn down at tile `s` stays so: who could end it, and why they have not.
  auto teardown_why = [&](uint32_t s, int color) -> std::string {
    const TileState& t = states_[s];
    std::string who;
    if (t.core == kNone) {
      who = "this tile has no core to end it";
    } else {
      const PeCore& c = cores_[t.core];
      const int id = profile_.teardown_task;
      const uint64_t b = TaskTable::bit(id);
      const ColorChannel* ch = t.router.channel(color);
      if (ch && ch->route.teardown && !(t.router.td_pending & (1u << color)) && !(c.tasks.activated & b))
        who = fmt::format("it started torn down (layout 'teardown') and no task has run `tdexit {}`", color);
      else if (!(c.tasks.local & b))
        who = fmt::format("no teardown task {} is bound to end it", id);
      else if (c.tasks.activated & c.tasks.blocked & b)
        who = fmt::format("teardown task {} is activated but blocked", id);
      else
        who = fmt::format("teardown task {} ran without `tdexit {}`", id, color);
    }
    // The route as it is now: route writes may have changed it since the layout.
    std::string route;
    if (const ColorChannel* ch = t.router.channel(color)) {
      auto dirs = [](DirectionMask m) {
        std::string out;
        for (int d = 0; d < kNumDirections; ++d)
          if (m & (1u << d)) out += std::string(out.empty() ? "" : ", ") + std::string(direction_name(Direction(d)));
        return "[" + out + "]";
      };
      const RoutePosition& pos = ch->route.positions[ch->route.current];
      static const char* pop_names[] = {"always", "never", "on advance"};
      route = fmt::format("; its route: position {} of {}, rx {}, tx {}, pop {}", ch->route.current,
                          ch->route.num_positions, dirs(pos.rx), dirs(pos.tx), pop_names[int(ch->route.pop_mode) % 3]);
    }
    return fmt::format("color {} is torn down at this router ({}){}", color, who, route);
  };
  // Who could feed color `c` into tile `s` (for waits on an empty input).
  auto upstream = [&](uint32_t s, int color) {
    const TileState& t = states_[s];
    const ColorChannel* ch = t.router.channel(color);
    if (!ch) return;
    // Only the current switch position: a switch moves only when a wavelet passes, and in a
    // hang none does, so the other positions' inputs cannot feed this PE.
    const DirectionMask rx = ch->route.positions[ch->route.current].rx;
    for (int d = 0; d < kNumLinkDirections; ++d) {
      if (!(rx & (1u << d))) continue;
      if (t.router.off_fabric & (1u << d)) {
        rep.host_waits.push_back(fmt::format("PE({},{}) waits for color {} from the host through its {} edge port",
                                             t.x, t.y, color, direction_name(Direction(d))));
      } else if (neighbors_[s][d] != kNone) {
        waits_for[s].insert(neighbors_[s][d]);
      }
    }
  };

  for (uint32_t s : order) {
    const TileState& t = states_[s];
    BlockedPe pe;
    pe.x = t.x;
    pe.y = t.y;
    if (t.core != kNone) {
      const PeCore& c = cores_[t.core];
      const isa::ObjectImage& img = *programs_[c.program_index].image;
      const LoadedProgram& prog = programs_[c.program_index];
      auto insn_at = [&](uint32_t pc) {
        return pc < prog.insns.size() && prog.insns[pc] ? isa::format_instruction(*prog.insns[pc], &img) : std::string("?");
      };
      auto add_stall = [&](Wait::Kind kind, int ut, const StallInfo& st, uint32_t pc) {
        Wait w;
        w.kind = kind;
        w.reason = st.reason;
        w.queue = st.queue;
        w.color = st.color;
        w.dsr = st.dsr;
        w.microthread = ut;
        w.task = c.main.task;
        w.source = img.source_location(pc);
        w.text = fmt::format("{}: `{}` (pc {}{}) waits: {}", ut < 0 ? "main thread" : fmt::format("microthread {}", ut),
                             insn_at(pc), pc, w.source.empty() ? "" : ", " + w.source, stall_text(st));
        pe.waits.push_back(w);
        if (st.reason == StallReason::INPUT_QUEUE_EMPTY) upstream(s, st.color);
        if (st.reason == StallReason::OUTPUT_QUEUE_FULL) {
          if (const ColorChannel* ch = t.router.channel(st.color)) {
            const OutputQueue& q = c.oq[st.queue & 7];
            if (!q.ring.empty()) {
              const std::string why = router_block(s, *ch, q.ring.front().wavelet);
              if (!why.empty()) pe.waits.back().text += fmt::format(" (router: {})", why);
            }
          }
        }
      };
      if (c.main.running) {
        pe.task = c.main.task;
        pe.task_name = task_name(img, c.main.task, c.main.task_kind);
        if (c.main.in_sync_op)
          add_stall(Wait::Kind::MAIN_THREAD, -1, c.ops[kMainThreadOp].stall, c.ops[kMainThreadOp].pc);
        else if (c.main.stall.reason != StallReason::NONE)
          add_stall(Wait::Kind::MAIN_THREAD, -1, c.main.stall, c.main.pc);
      }
      std::set<int> streamed_queues;
      for (int ut = 0; ut < isa::kNumQueues; ++ut) {
        const VectorOp& op = c.ops[ut];
        if (!op.active) continue;
        add_stall(Wait::Kind::MICROTHREAD, ut, op.stall, op.pc);
        for (const VectorOperand& v : op.operands)
          if (v.kind == VectorOperand::Kind::FABIN) streamed_queues.insert(v.d.queue & 7);
      }
      if (c.main.in_sync_op)
        for (const VectorOperand& v : c.ops[kMainThreadOp].operands)
          if (v.kind == VectorOperand::Kind::FABIN) streamed_queues.insert(v.d.queue & 7);
      for (uint64_t m = c.tasks.activated & c.tasks.local & c.tasks.blocked; m; m &= m - 1) {
        const int id = __builtin_ctzll(m);
        Wait w;
        w.kind = Wait::Kind::TASK_BLOCKED;
        w.task = id;
        const std::string name = task_name(img, id, isa::TaskKind::LOCAL);
        w.text = fmt::format("local task {}{} is activated but blocked", id, name.empty() ? "" : " '" + name + "'");
        pe.waits.push_back(w);
      }
      auto unconsumed = [&](int queue, int color, int count, const Wavelet& head) {
        const int trigger = c.color_slots ? color : queue;
        Wait w;
        w.kind = Wait::Kind::INPUT_UNCONSUMED;
        w.queue = queue;
        w.color = color;
        w.waiting = count;
        w.task = trigger;
        const std::string where = queue >= 0 ? fmt::format("input queue {} (color {})", queue, color)
                                             : fmt::format("the color {} landing slot", color);
        std::string why;
        if (trigger >= 0 && (c.tasks.blocked & TaskTable::bit(trigger)))
          why = fmt::format("task id {} is blocked{}", trigger,
                            (c.tasks.data & TaskTable::bit(trigger)) ? "" : " (no data task is bound to it)");
        else if (!head.control && trigger >= 0 && !(c.tasks.data & TaskTable::bit(trigger)))
          why = fmt::format("no data task is bound to id {} and no operation reads it", trigger);
        else
          why = "it waits for the main thread";
        w.text = fmt::format("{} holds {} wavelet{} nobody takes: {}", where, count, count == 1 ? "" : "s", why);
        pe.waits.push_back(w);
      };
      for (int q = 0; q < isa::kNumQueues; ++q)
        if (!c.iq[q].ring.empty() && !streamed_queues.count(q) && !(c.main.stall.reason == StallReason::INPUT_QUEUE_EMPTY))
          unconsumed(q, c.iq[q].color, c.iq[q].ring.size(), c.iq[q].ring.front());
      for (uint32_t m = c.slot_full; m; m &= m - 1) {
        const int color = __builtin_ctz(m);
        unconsumed(-1, color, 1, c.slot[color]);
      }
      for (int q = 0; q < isa::kNumQueues; ++q) {
        const OutputQueue& out = c.oq[q];
        if (out.ring.empty()) continue;
        const ColorChannel* ch = t.router.channel(out.color);
        Wait w;
        w.kind = Wait::Kind::OUTPUT_PENDING;
        w.queue = q;
        w.color = out.color;
        w.waiting = out.ring.size();
        std::string why;
        if (!ch)
          why = fmt::format("this router has no route for color {}", out.color);
        else if (t.router.torn_down & (1u << out.color))
          why = teardown_why(s, out.color);
        else if (!(ch->route.positions[ch->route.current].rx & bit(Direction::RAMP)))
          why = fmt::format("switch position {} of color {} does not receive from RAMP", ch->route.current, out.color);
        else
          why = router_block(s, *ch, out.ring.front().wavelet);
        w.text = fmt::format("output queue {} (color {}) holds {} wavelet{}: {}", q, out.color, w.waiting,
                             w.waiting == 1 ? "" : "s", why.empty() ? "waiting" : why);
        pe.waits.push_back(w);
      }
    }
    for (const ColorChannel& ch : t.router.channels) {
      for (int d = 0; d < kNumLinkDirections; ++d) {
        const WaveletBuffer& b = ch.input[d];
        if (b.empty()) continue;
        Wait w;
        w.kind = Wait::Kind::ROUTER;
        w.color = ch.color;
        w.waiting = b.size();
        std::string why;
        if (t.router.torn_down & (1u << ch.color))
          why = teardown_why(s, ch.color);
        else if (!(ch.route.positions[ch.route.current].rx & (1u << d)))
          why = fmt::format("switch position {} does not receive from {}", ch.route.current,
                            direction_name(Direction(d)));
        else
          why = router_block(s, ch, b.front());
        w.text = fmt::format("router: {} wavelet{} of color {} from {} cannot move: {}", w.waiting,
                             w.waiting == 1 ? "" : "s", ch.color, direction_name(Direction(d)),
                             why.empty() ? "waiting for the link" : why);
        pe.waits.push_back(w);
      }
    }
    // A torn-down color is a wait even with nothing buffered behind it yet: it is why a PE
    // downstream finds its input empty.
    for (uint32_t m = t.router.torn_down; m; m &= m - 1) {
      const int color = __builtin_ctz(m);
      Wait w;
      w.kind = Wait::Kind::TEARDOWN;
      w.color = color;
      w.text = "teardown: " + teardown_why(s, color);
      pe.waits.push_back(w);
    }
    if (!pe.waits.empty()) rep.pes.push_back(std::move(pe));
  }
  std::sort(rep.host_waits.begin(), rep.host_waits.end());
  rep.host_waits.erase(std::unique(rep.host_waits.begin(), rep.host_waits.end()), rep.host_waits.end());

  // The first cycle in the wait-for graph (depth-first, in fabric order: deterministic).
  std::map<uint32_t, int> mark;  // 0 new, 1 on the stack, 2 done
  std::vector<uint32_t> stack;
  std::function<bool(uint32_t)> dfs = [&](uint32_t v) -> bool {
    mark[v] = 1;
    stack.push_back(v);
    if (auto it = waits_for.find(v); it != waits_for.end()) {
      for (uint32_t n : it->second) {
        if (mark[n] == 1) {
          auto from = std::find(stack.begin(), stack.end(), n);
          for (auto i = from; i != stack.end(); ++i) rep.wait_cycle.emplace_back(states_[*i].x, states_[*i].y);
          return true;
        }
        if (mark[n] == 0 && dfs(n)) return true;
      }
    }
    stack.pop_back();
    mark[v] = 2;
    return false;
  };
  for (uint32_t s : order)
    if (waits_for.count(s) && mark[s] == 0 && dfs(s)) break;
  return rep;
}

}  // namespace wsemu::emu
