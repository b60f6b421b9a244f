// The hang report as a wait-for graph between PEs: who waits for whom, on which color, why.
//
// Contract: built from the emulator's HangReport plus the wafer's routes, after a run stopped
// on a hang; building it never changes the wafer. An edge A -> B means "PE A cannot go on
// until PE B does something": A waits for wavelets on color c that only B's core sends (found
// by following c's routes upstream from A through routers without a core), or A cannot send
// on c because B, the consumer downstream, does not take them. Nodes are the blocked PEs plus
// every PE an edge names (a PE that finished its tasks and will never send shows up as idle).
// The first cycle of the graph (in fabric order, deterministic) is the deadlock. Rendered as
// text (for terminals), JSON (the trace's HANG chunk, the html view) and Graphviz dot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "emulator/hang_report.hpp"

namespace wsemu::emu {
class Wafer;
}

namespace wsemu::trace {

struct WaitForNode {
  int x = 0, y = 0;
  int task = -1;          // the running task, -1 when none
  std::string task_name;  // "" when unknown
  bool blocked = true;    // false: named only as the far end of an edge
  std::string state;      // "blocked", or for a PE that is not: "idle (no task running)"
  std::vector<std::string> waits;  // the hang report's lines for this PE
};

struct WaitForEdge {
  int from_x = 0, from_y = 0;  // the waiting PE
  int to_x = 0, to_y = 0;      // the PE it waits for
  int color = -1;
  std::string why;  // "input queue 1 (color 2) is empty", "output queue 2 (color 4) is full"
};

struct WaitForGraph {
  uint64_t cycle = 0;
  std::vector<WaitForNode> nodes;  // fabric order (y, then x)
  std::vector<WaitForEdge> edges;
  std::vector<std::pair<int, int>> deadlock;  // the PEs of the first cycle of waits, in order
  std::vector<std::string> host_waits;        // waits on the host (edge ports)

  static WaitForGraph build(const emu::HangReport& report, const emu::Wafer& wafer);
  const WaitForNode* find(int x, int y) const;

  std::string to_text() const;
  std::string to_dot() const;
  nlohmann::json to_json() const;
  static WaitForGraph from_json(const nlohmann::json& j);  // throws TraceError when malformed
};

}  // namespace wsemu::trace
