// The cluster network of `wsemu train` in emulated time: a profile of link bandwidths and
// latencies (MemoryX -> SwarmX -> ... -> wafer and back), SwarmX's broadcast and reduce rates
// and MemoryX's optimizer rate, seen from one wafer in cycles of its clock; and the step clock
// that says when each weight wavelet reaches the wafer's edge, when a layer's reduced gradient
// reaches MemoryX and when its update is applied (so the next step's stream can start), with
// the step's critical path (what was exposed, what hidden behind the wafer's compute).
//
// Contract: plain arithmetic on the profile, deterministic (the same doubles in the same order
// in every process), no I/O, no threads. The model: a pass of a layer's weights starts sending
// once its update of the previous step is applied and the link has sent the pass before; wavelet
// n of a pass of W wavelets reaches the edge at ceil(start + latency + (n + 1) / rate) (SwarmX
// buffers what the wafer does not take yet); gradients leave the edge at the upward rate, reach
// MemoryX `up latency` after the last one, and MemoryX applies layers one at a time at its
// optimizer rate. It never changes a value: only time. Bad profile keys or values throw
// std::invalid_argument naming the key and the accepted form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace wsemu::wstrain {

struct LinkProfile {
  double gbytes_per_s = 150.0;  // one direction of one link
  double latency_us = 1.0;      // first byte in to first byte out, wire and switch included
};

// Defaults and their sources: runtime/wstrain/README.md, "The network in the clock".
struct NetworkProfile {
  LinkProfile memoryx_to_swarmx{150.0, 2.0};
  LinkProfile swarmx_to_swarmx{150.0, 1.0};
  LinkProfile swarmx_to_wafer{150.0, 1.0};
  LinkProfile wafer_to_swarmx{150.0, 1.0};
  LinkProfile swarmx_to_swarmx_up{150.0, 1.0};
  LinkProfile swarmx_to_memoryx{150.0, 2.0};
  double swarmx_broadcast_gbytes_per_s = 150.0;  // bytes a node sends to each child per second
  double swarmx_reduce_gbytes_per_s = 150.0;     // reduced bytes a node sends up per second
  double memoryx_optimizer_gparams_per_s = 2.0;  // parameters MemoryX updates per second (billions)

  // "KEY=VALUE", KEY one of keys(); VALUE a finite number > 0 (latencies: >= 0).
  void set(const std::string& key_value);
  static std::vector<std::string> keys();
  // Every entry as KEY=VALUE (round-trips through set(): the wafer workers get these).
  std::vector<std::string> entries() const;
};

// A number given on the command line (a --net value, a `wsemu train` flag): the whole text as
// std::stod reads it; nullopt when it does not read or leaves something over.
std::optional<double> parse_number(const std::string& text);

// SwarmX levels between MemoryX and a wafer in LocalCluster's tree of `fanout` children per node.
uint32_t swarmx_levels(size_t wafers, uint32_t fanout);

// The network as one wafer sees it, in its cycles.
struct WaferNetwork {
  double down_wavelets_per_cycle = 0;  // weights, 4 bytes a wavelet
  double down_latency_cycles = 0;
  double up_wavelets_per_cycle = 0;    // gradients
  double up_latency_cycles = 0;
  double optimizer_cycles_per_parameter = 0;

  static WaferNetwork of(const NetworkProfile& profile, uint32_t levels, double clock_mhz);
};

// One part of the critical path, in wafer cycles: its whole duration and the part of it the
// wafer spent waiting for it (the rest was hidden behind compute or other parts).
struct PathPart {
  uint64_t total = 0;
  uint64_t exposed = 0;
  uint64_t hidden() const { return total > exposed ? total - exposed : 0; }
};

struct LayerPath {
  PathPart compute, stream, reduce, optimizer;
};

// A step's critical path. compute: the wafer's cycles less every wait (all exposed: it is the
// wafer's own work). stream: the link's sending time of the step's passes plus the latency;
// exposed: cycles the wafer's edge waited for a wavelet not yet arrived. reduce and optimizer:
// the gradients' trip up the tree and MemoryX's update, of the previous step's gradients;
// exposed: the wait of this step's passes for those updates.
struct StepPath {
  uint64_t cycles = 0;  // the wafer's cycles of the step
  PathPart compute, stream, reduce, optimizer;
  std::vector<LayerPath> layers;

  nlohmann::json to_json() const;
  static StepPath from_json(const nlohmann::json& j);  // tolerates a missing field (zeros)
};

// The timeline of one wafer's weight streams and gradient trips, across steps.
class StreamClock {
 public:
  StreamClock(WaferNetwork network, std::vector<uint64_t> layer_parameters);

  struct Pass {
    size_t layer = 0;
    uint64_t words = 0;
    uint64_t begin_cycle = 0;    // when the wafer started waiting for it
    double send_start = 0;       // when the link starts sending it (cycles)
    bool waited_for_update = false;
  };
  // A pass of `words` weight wavelets of `layer`, wanted by the wafer from `now` on.
  Pass begin_pass(size_t layer, uint64_t words, uint64_t now);
  // The cycle at which wavelet n (0-based, link order) of the pass has reached the edge.
  uint64_t arrival(const Pass& pass, uint64_t n) const;
  // The pass is done: `end` the wafer's cycle, `waited` the cycles its edge waited for wavelets.
  void end_pass(const Pass& pass, uint64_t end, uint64_t waited);
  // A backward pass of `layer` sent its last gradient wavelet (of `words`) at `cycle`.
  void gradients_left(size_t layer, uint64_t cycle, uint64_t words);
  // The step is done (its gradients sent): their reduce and update are scheduled, which the
  // next step's passes wait for; returns the step's figures and starts the next step's.
  StepPath finish_step(uint64_t step_cycles);

  const WaferNetwork& network() const { return network_; }

 private:
  struct LayerChain {  // layer l's gradients of the last finished step on their way to MemoryX
    double left = 0, reduced = 0, applied = 0;
  };
  WaferNetwork network_;
  std::vector<uint64_t> parameters_;
  std::vector<LayerChain> chain_;
  std::vector<double> pending_left_;          // this step: last gradient out per layer (-1: none)
  std::vector<uint64_t> pending_words_;
  double link_free_ = 0;                      // when the down link finished its last pass
  double optimizer_free_ = 0;
  StepPath current_;
};

}  // namespace wsemu::wstrain
