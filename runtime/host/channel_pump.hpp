// The one edge pump: moves wavelets into the wafer's edge ports and out of them while stepping
// the wafer one cycle at a time, under a channel rate model, a run budget and one mapping of
// faults, hangs and idleness to HostError. The host runtime (memcpy through the west and east
// ports of each row) and the training worker (weight streams into the north ports, gradients
// out of the south ports, runtime/wstrain/wafer_session.cpp) both use it.
//
// Contract:
// - A lane is one stream: wavelets pushed in order into one edge port (each no earlier than its
//   arrival cycle, when arrivals are given) and wavelets popped from another. Lanes use
//   distinct tiles, so within a cycle the order of lanes only matters where they share a
//   channel's tokens: that order (fixed, or round robin from one lane further each cycle) is
//   the policy's lane_order.
// - The rate model: per channel, a token bucket for each direction refilled by `rate`
//   wavelets after every cycle, holding at most max(1, rate) (a channel cannot burst). No rate:
//   the direction moves as fast as the ports take wavelets.
// - The cycle counts depend on the lanes, the rates and the policy alone. The two policies
//   (host_memcpy(), weight_stream()) are the two stepping orders the host runtime and the
//   training worker were calibrated with; they differ where the pump asks the wafer whether it
//   still moves (the stall probe) and where it stops, and each keeps its own callers' cycle
//   counts exactly.
// - Errors are HostError: a fault (FAULT, with the emulator's Fault), a hang found by the probe
//   (HANG, with the HangReport), an idle wafer that still owes wavelets or refuses the rest
//   (HANG, naming the lane and port), the budget reached with traffic pending (CYCLE_LIMIT), a
//   wavelet at a port that must stay silent (FAULT, naming the lane and port). Every message
//   starts with the caller's `what`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emulator/wafer.hpp"

namespace wsemu::runtime::host {

struct EdgePort {
  int x = 0, y = 0;
  emu::Direction side = emu::Direction::WEST;
};

struct EdgeLane {
  std::string name;  // "row 3", "column 2": how errors name the lane
  int channel = 0;   // the channel whose tokens the lane's wavelets use
  EdgePort in;
  std::vector<emu::Wavelet> send;  // pushed in order at `in`
  std::vector<uint64_t> arrival;   // empty, or the cycle from which send[i] may enter
  size_t sent = 0;                 // how many of `send` the wafer took
  std::optional<EdgePort> out;     // where wavelets leave; none: the lane only sends
  uint64_t expect = 0;             // wavelets the lane waits for at `out`
  std::vector<uint32_t> received;  // payloads popped at `out`, in order
  bool data_only = false;          // control wavelets popped at `out` are dropped, not received
  // A port that must never carry a wavelet out (a kernel mistake if it does), checked on
  // the stall probe's cycles, once every input is sent, and by check_silent_ports().
  std::optional<EdgePort> silent;

  bool inputs_pending() const { return sent < send.size(); }
  bool outputs_pending() const { return received.size() < expect; }
};

struct EdgePumpPolicy {
  // Which lane goes first in a cycle: lane 0 every cycle, or one lane further each cycle (the
  // host channel serves its rows in turn).
  enum class LaneOrder { FIXED, ROUND_ROBIN } lane_order = LaneOrder::FIXED;
  // Wavelets popped per lane and cycle at most; 0: as many as the tokens allow.
  uint32_t max_pops_per_lane = 0;
  // Pop what arrives also beyond `expect`, so that a kernel that sends too many is caught by
  // the caller's count instead of being left in the port.
  bool take_beyond_expect = false;
  // The stall probe, after kStallProbeCycles cycles without traffic: Wafer::run(1), which
  // reports a hang or idleness where step() does not. AFTER_STEP: one more cycle after the
  // cycle's step, counting that cycle's traffic. IN_PLACE_OF_STEP: it is the cycle's step,
  // counting the cycles before it; it also ends the pump (HANG) when the idle wafer still has
  // inputs to take.
  enum class Probe { AFTER_STEP, IN_PLACE_OF_STEP } probe = Probe::AFTER_STEP;
  // Stop as soon as the last wavelet moved, before stepping that cycle (else after its step).
  bool stop_before_step = false;

  // memcpy through the host channels: round robin over rows, one wavelet per row and cycle.
  static EdgePumpPolicy host_memcpy() { return {LaneOrder::ROUND_ROBIN, 1, false, Probe::AFTER_STEP, false}; }
  // weight streams and gradients on the cluster network's clock.
  static EdgePumpPolicy weight_stream() { return {LaneOrder::FIXED, 0, true, Probe::IN_PLACE_OF_STEP, true}; }
};

struct EdgePumpOptions {
  std::string what;            // the caller's phase, first in every error message
  uint64_t cycle_limit = ~uint64_t{0};  // the wafer's cycle at which the budget is spent
  int channels = 1;
  std::optional<double> in_rate;   // wavelets per cycle per channel into the wafer; none: unlimited
  std::optional<double> out_rate;  // out of the wafer
  EdgePumpPolicy policy;
};

struct EdgePumpResult {
  uint64_t waited_cycles = 0;   // cycles in which a lane's next wavelet had not arrived
  uint64_t last_out_cycle = 0;  // the cycle of the last pop (the start cycle if none)
};

// Cycles without any edge traffic after which the pump asks the wafer whether it still moves.
inline constexpr uint64_t kStallProbeCycles = 256;

// Moves the lanes' traffic until nothing is pending; the lanes record what moved, also when
// it throws. When no lane has an output port and every lane waits for its next arrival, the
// pump runs up to that arrival in one Wafer::run call (what stepping would do, only faster);
// likewise the turns in which no lane can move and no probe is due run in one Wafer::run that
// stops after any edge traffic (emu::RunStops), with the counts of stepping cycle by cycle.
EdgePumpResult pump_edges(emu::Wafer& wafer, std::vector<EdgeLane>& lanes, const EdgePumpOptions& options);

// Throws (FAULT) when a lane's silent port holds a wavelet.
void check_silent_ports(const emu::Wafer& wafer, const std::vector<EdgeLane>& lanes, const std::string& what);

}  // namespace wsemu::runtime::host
