#include "inspect/trace/wait_for_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "inspect/trace/trace_filter.hpp"
#include "emulator/wafer.hpp"

namespace wsemu::trace {

namespace {

using emu::Direction;
using Pe = std::pair<int, int>;  // (x, y)

constexpr size_t kMaxTilesVisited = 1u << 20;

emu::DirectionMask tx_union(const emu::ColorRoute& r) {
  emu::DirectionMask m = 0;
  for (int p = 0; p < r.num_positions; ++p) m |= r.positions[p].tx;
  return m;
}

bool inside(const emu::Wafer& w, int x, int y) { return x >= 0 && y >= 0 && x < w.width() && y < w.height(); }

// Follows `color` from (x, y) against (upstream) or with (downstream) the direction of travel
// through the routes and returns the PEs whose cores send (upstream) or receive (downstream)
// it. The starting PE's own current switch position decides where to look first; further
// routers are taken with every switch position, since a switch may move before the wavelets
// come.
std::vector<Pe> far_ends(const emu::Wafer& wafer, int x, int y, int color, bool upstream) {
  std::vector<Pe> found;
  const std::optional<emu::ColorRoute> start = wafer.route(x, y, color);
  if (!start) return found;
  std::set<Pe> seen{{x, y}};
  std::deque<std::pair<Pe, emu::DirectionMask>> todo;
  const emu::RoutePosition& now = start->positions[start->current];
  todo.push_back({{x, y}, upstream ? now.rx : now.tx});
  while (!todo.empty() && seen.size() < kMaxTilesVisited) {
    const auto [at, dirs] = todo.front();
    todo.pop_front();
    for (int d = 0; d < emu::kNumLinkDirections; ++d) {
      if (!(dirs & (1u << d))) continue;
      const auto dir = Direction(d);
      const int nx = at.first + emu::dx(dir), ny = at.second + emu::dy(dir);
      if (!inside(wafer, nx, ny) || seen.count({nx, ny})) continue;
      const std::optional<emu::ColorRoute> r = wafer.route(nx, ny, color);
      if (!r) continue;
      // The neighbour must pass the color toward us (upstream) or take it from us (downstream).
      const emu::DirectionMask back = emu::bit(emu::opposite(dir));
      if (!((upstream ? tx_union(*r) : r->rx_union()) & back)) continue;
      seen.insert({nx, ny});
      const emu::DirectionMask far = upstream ? r->rx_union() : tx_union(*r);
      if ((far & emu::bit(Direction::RAMP)) && wafer.has_core(nx, ny)) found.push_back({nx, ny});
      todo.push_back({{nx, ny}, emu::DirectionMask(far & 0x0F)});
    }
  }
  std::sort(found.begin(), found.end(), [](const Pe& a, const Pe& b) { return std::pair(a.second, a.first) < std::pair(b.second, b.first); });
  return found;
}

std::string pe_name(int x, int y) { return fmt::format("PE({},{})", x, y); }

std::string node_label(const WaitForNode& n) {
  std::string s = pe_name(n.x, n.y);
  if (n.task >= 0) s += fmt::format(" task {}{}", n.task, n.task_name.empty() ? "" : " '" + n.task_name + "'");
  return s;
}

}  // namespace

WaitForGraph WaitForGraph::build(const emu::HangReport& report, const emu::Wafer& wafer) {
  WaitForGraph g;
  g.cycle = report.cycle;
  g.host_waits = report.host_waits;
  std::map<Pe, WaitForNode> nodes;
  std::set<std::tuple<int, int, int, int, int>> edge_keys;
  auto add_edge = [&](int fx, int fy, Pe to, int color, const std::string& why) {
    if (to == Pe{fx, fy}) return;
    if (!edge_keys.insert({fx, fy, to.first, to.second, color}).second) return;
    g.edges.push_back({fx, fy, to.first, to.second, color, why});
  };
  for (const emu::BlockedPe& p : report.pes) {
    WaitForNode& n = nodes[{p.x, p.y}];
    n.x = p.x;
    n.y = p.y;
    n.task = p.task;
    n.task_name = p.task_name;
    n.blocked = true;
    n.state = "blocked";
    for (const emu::Wait& w : p.waits) {
      n.waits.push_back(w.text);
      if (w.color < 0) continue;
      const bool input = w.reason == emu::StallReason::INPUT_QUEUE_EMPTY;
      const bool output = w.reason == emu::StallReason::OUTPUT_QUEUE_FULL || w.kind == emu::Wait::Kind::OUTPUT_PENDING ||
                          w.kind == emu::Wait::Kind::ROUTER;
      if (!input && !output) continue;
      const std::string why = input ? "to receive from it" : "to send to it (it does not take what waits)";
      for (const Pe& other : far_ends(wafer, p.x, p.y, w.color, input)) add_edge(p.x, p.y, other, w.color, why);
    }
  }
  for (const WaitForEdge& e : g.edges) {
    auto [it, added] = nodes.try_emplace({e.to_x, e.to_y});
    if (!added) continue;
    WaitForNode& n = it->second;
    n.x = e.to_x;
    n.y = e.to_y;
    n.blocked = false;
    bool running = false;
    if (wafer.has_core(e.to_x, e.to_y)) {
      const emu::CoreView v = wafer.core_view(e.to_x, e.to_y);
      running = v.running;
      n.task = v.running ? v.task : -1;
    }
    n.state = running ? "running" : "idle (no task running: it will not send or receive again)";
  }
  for (auto& [pe, n] : nodes) g.nodes.push_back(std::move(n));
  std::sort(g.nodes.begin(), g.nodes.end(), [](const WaitForNode& a, const WaitForNode& b) {
    return std::pair(a.y, a.x) < std::pair(b.y, b.x);
  });

  // The first cycle, depth-first in fabric order.
  std::map<Pe, std::vector<Pe>> out;
  for (const WaitForEdge& e : g.edges) out[{e.from_x, e.from_y}].push_back({e.to_x, e.to_y});
  std::map<Pe, int> mark;
  std::vector<Pe> stack;
  std::function<bool(Pe)> dfs = [&](Pe v) {
    mark[v] = 1;
    stack.push_back(v);
    for (const Pe& n : out[v]) {
      if (mark[n] == 1) {
        g.deadlock.assign(std::find(stack.begin(), stack.end(), n), stack.end());
        return true;
      }
      if (mark[n] == 0 && dfs(n)) return true;
    }
    stack.pop_back();
    mark[v] = 2;
    return false;
  };
  for (const WaitForNode& n : g.nodes)
    if (mark[{n.x, n.y}] == 0 && dfs({n.x, n.y})) break;
  if (g.deadlock.empty()) g.deadlock = report.wait_cycle;
  return g;
}

const WaitForNode* WaitForGraph::find(int x, int y) const {
  for (const WaitForNode& n : nodes)
    if (n.x == x && n.y == y) return &n;
  return nullptr;
}

std::string WaitForGraph::to_text() const {
  size_t blocked = 0;
  for (const WaitForNode& n : nodes) blocked += n.blocked;
  std::string s = fmt::format("wait-for graph at cycle {}: {} PE{} blocked\n", cycle, blocked, blocked == 1 ? "" : "s");
  for (const WaitForNode& n : nodes) {
    s += fmt::format("  {}: {}\n", node_label(n), n.state);
    for (const std::string& w : n.waits) s += "      " + w + "\n";
    for (const WaitForEdge& e : edges) {
      if (e.from_x != n.x || e.from_y != n.y) continue;
      const WaitForNode* to = find(e.to_x, e.to_y);
      s += fmt::format("    -> waits for {} on color {}: {}\n", to ? node_label(*to) : pe_name(e.to_x, e.to_y), e.color,
                       e.why);
    }
  }
  for (const std::string& h : host_waits) s += "  host: " + h + "\n";
  if (!deadlock.empty()) {
    s += "  deadlock: ";
    for (const auto& [x, y] : deadlock) s += pe_name(x, y) + " -> ";
    s += pe_name(deadlock.front().first, deadlock.front().second) + "\n";
  } else {
    s += "  no cycle of waits between PEs\n";
  }
  return s;
}

std::string WaitForGraph::to_dot() const {
  std::string s = fmt::format("digraph wait_for {{\n  label=\"wait-for graph at cycle {}\";\n  node [shape=box];\n", cycle);
  std::set<Pe> in_cycle(deadlock.begin(), deadlock.end());
  for (const WaitForNode& n : nodes) {
    std::string label = node_label(n);
    if (!n.blocked) label += "\\n" + n.state.substr(0, n.state.find(' '));
    s += fmt::format("  \"P{}.{}\" [label=\"{}\"{}];\n", n.x, n.y, label,
                     in_cycle.count({n.x, n.y}) ? ", color=red" : (n.blocked ? "" : ", style=dashed"));
  }
  for (const WaitForEdge& e : edges)
    s += fmt::format("  \"P{}.{}\" -> \"P{}.{}\" [label=\"color {}\"];\n", e.from_x, e.from_y, e.to_x, e.to_y, e.color);
  return s + "}\n";
}

nlohmann::json WaitForGraph::to_json() const {
  nlohmann::json j;
  j["cycle"] = cycle;
  j["nodes"] = nlohmann::json::array();
  for (const WaitForNode& n : nodes)
    j["nodes"].push_back({{"x", n.x}, {"y", n.y}, {"task", n.task}, {"task_name", n.task_name}, {"blocked", n.blocked},
                          {"state", n.state}, {"waits", n.waits}});
  j["edges"] = nlohmann::json::array();
  for (const WaitForEdge& e : edges)
    j["edges"].push_back({{"from", {e.from_x, e.from_y}}, {"to", {e.to_x, e.to_y}}, {"color", e.color}, {"why", e.why}});
  j["deadlock"] = nlohmann::json::array();
  for (const auto& [x, y] : deadlock) j["deadlock"].push_back({x, y});
  j["host_waits"] = host_waits;
  return j;
}

WaitForGraph WaitForGraph::from_json(const nlohmann::json& j) {
  WaitForGraph g;
  try {
    g.cycle = j.at("cycle").get<uint64_t>();
    for (const nlohmann::json& n : j.at("nodes"))
      g.nodes.push_back({n.at("x").get<int>(), n.at("y").get<int>(), n.value("task", -1), n.value("task_name", ""),
                         n.value("blocked", true), n.value("state", ""), n.value("waits", std::vector<std::string>{})});
    for (const nlohmann::json& e : j.at("edges"))
      g.edges.push_back({e.at("from").at(0).get<int>(), e.at("from").at(1).get<int>(), e.at("to").at(0).get<int>(),
                         e.at("to").at(1).get<int>(), e.value("color", -1), e.value("why", "")});
    for (const nlohmann::json& p : j.at("deadlock")) g.deadlock.push_back({p.at(0).get<int>(), p.at(1).get<int>()});
    g.host_waits = j.value("host_waits", std::vector<std::string>{});
  } catch (const nlohmann::json::exception& e) {
    throw TraceError(std::string("malformed hang graph in the trace: ") + e.what());
  }
  return g;
}

}  // namespace wsemu::trace
