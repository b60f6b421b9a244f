// One emulated wafer running the weight-streaming kernels (kernels/weight-streaming) for one
// WaferPlan: it builds the layout for the plan, loads it through the host runtime (SdkRuntime,
// so activations, labels and launches go through the memcpy firmware and its host-channel
// model), and drives one micro-batch at a time: load inputs, stream each layer's weights in for
// the forward pass, run the loss, stream them again for the backward pass and collect the
// weight gradients that leave at the south edge.
//
// Contract: weight streams enter the north edge port of each column directly
// (emu::Wafer::push_edge, one wavelet per cycle per column at most, as the edge's links allow)
// and gradients are popped from the south edge ports of the bottom row: that is the wafer's
// weight-streaming I/O, apart from the host memcpy path. Both move on the cluster network's
// clock (network.hpp): the edge pump (runtime/host/channel_pump.hpp, its weight_stream policy)
// steps the wafer one cycle at a time, pushes a wavelet only from
// the cycle the network model says it arrived and pops gradients no faster than the upward
// link's rate, so the cycle counts depend on the model alone, never on how the pump batches its
// work. Every value computed on the wafer;
// this class only moves data in and out and never does arithmetic on weights or gradients.
// A fault, hang or kernel mistake becomes a std::runtime_error naming the phase and layer with
// the emulator's report. Not thread-safe; one session per process in `wsemu train-worker`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/host/sdk_runtime.hpp"
#include "runtime/wstrain/network.hpp"
#include "runtime/wstrain/wafer_plan.hpp"

namespace wsemu::wstrain {

struct SessionOptions {
  int threads = 1;              // emulator threads
  bool backdoor_inputs = false; // copy activations and labels through the SRAM back door
  std::string kernel_dir;       // folder of layout.wsl; empty: $WSEMU_WS_KERNEL_DIR or the source tree
  NetworkProfile network;       // the cluster network the weights come through
  uint32_t swarmx_levels = 1;   // SwarmX levels between MemoryX and this wafer
};

// Emulated cycles and wavelets, cumulative since the session started.
struct WaferCounters {
  uint64_t cycles = 0;             // the wafer's cycle counter
  uint64_t input_cycles = 0;       // loading activations and labels (memcpy)
  uint64_t forward_cycles = 0;     // forward weight streams
  uint64_t loss_cycles = 0;
  uint64_t backward_cycles = 0;    // backward weight streams and the delta all-gather
  uint64_t launch_cycles = 0;      // phase launches through the firmware
  uint64_t stream_wait_cycles = 0; // pump cycles in which a column's next weight had not arrived
  uint64_t weight_wavelets_in = 0; // pushed into the north edge
  uint64_t gradient_wavelets_out = 0;
  uint64_t pe_busy_cycles = 0;     // summed over the PEs: main thread busy
  uint64_t pe_wait_cycles = 0;     // summed over the PEs: idle or stalled (waiting for data)
  uint64_t host_transactions = 0;
  uint64_t tile_steps = 0;         // the emulator's work: tile-cycles it computed
  uint64_t skipped_cycles = 0;     // cycles it jumped over (every active tile only counting down)
};

struct MicroBatchResult {
  float loss_sum = 0.0f;  // sum of the per-sample losses in sample order, from +0
  size_t correct = 0;
  size_t samples = 0;
};

class WaferSession {
 public:
  WaferSession(WaferPlan plan, SessionOptions options);
  ~WaferSession();
  WaferSession(const WaferSession&) = delete;
  WaferSession& operator=(const WaferSession&) = delete;

  const WaferPlan& plan() const { return plan_; }

  // count samples of input_dim floats each (row-major) and their labels; count <= the plan's
  // largest micro-batch.
  void load_micro_batch(std::span<const float> inputs, std::span<const uint32_t> labels, size_t count);
  // The forward pass of layer l with these weights ([in][out]) and biases; mask empty = dense.
  void forward_layer(size_t layer, std::span<const float> weights, std::span<const float> biases,
                     std::span<const uint8_t> mask);
  // After the last layer's forward: softmax cross-entropy on the wafer; returns the loss sum.
  MicroBatchResult loss();
  // The backward pass of layer l (call from the last layer down): streams the weights again
  // and writes the wafer's gradient sums over the micro-batch into the outputs (pruned entries
  // untouched). For l > 0 it then all-gathers the deltas of layer l - 1 on the wafer.
  void backward_layer(size_t layer, std::span<const float> weights, std::span<const float> biases,
                      std::span<const uint8_t> mask, std::span<float> weight_gradient,
                      std::span<float> bias_gradient);

  // The step is done (every gradient of it left): schedules its gradients' reduce and update
  // on the network clock and returns the step's critical path.
  StepPath finish_step();

  WaferCounters counters();
  double clock_mhz() const;
  const WaferNetwork& network() const { return clock_->network(); }
  std::string layout_path() const { return layout_path_; }

 private:
  void launch(const std::string& function, std::span<const uint32_t> args, uint64_t& phase_cycles);
  // Pushes the streams into the north edge and runs the wafer until every stream is consumed,
  // every expected gradient arrived and the wafer is idle.
  void pump(size_t layer, const ColumnStreams& streams, std::vector<std::vector<uint32_t>>* gradients,
            const std::string& what, uint64_t& phase_cycles);
  uint32_t acts_address(size_t layer) const;

  WaferPlan plan_;
  SessionOptions options_;
  std::string layout_path_;
  std::unique_ptr<runtime::host::SdkRuntime> runtime_;
  uint32_t acts_base_ = 0;
  size_t loaded_count_ = 0;
  WaferCounters counters_;
  uint64_t transactions_ = 0;
  std::unique_ptr<StreamClock> clock_;
  uint64_t step_started_at_ = 0;
};

}  // namespace wsemu::wstrain
