#include "runtime/wstrain/wafer_session.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "emulator/wafer.hpp"
#include "firmware/data_paths.hpp"
#include "firmware/memcpy_protocol.hpp"
#include "compiler/layout/build.hpp"
#include "runtime/host/channel_pump.hpp"
#include "runtime/wstrain/wstrain_paths.hpp"

namespace wsemu::wstrain {

namespace {

namespace host = runtime::host;
using host::HostError;
using runtime::host::MemcpyOptions;
using runtime::host::SdkRuntime;

// Launch flags of ws_pe.wsa (fwd_begin / bwd_begin).
constexpr uint32_t kFlagExtract = 1;  // forward: take this column's inputs from the row buffer
constexpr uint32_t kFlagHasG = 1;     // backward: compute the activation gradient
constexpr uint32_t kFlagLastLayer = 2;
constexpr uint32_t kFlagSparse = 4;
constexpr uint8_t kWeightColor = 0;  // c_w in layout.wsl
constexpr uint32_t kNoLabel = 0xFFFFFFFFu;
// The session's cycle budget: the weight streams' clock decides how long a pass takes.
constexpr uint64_t kMaxCycles = ~uint64_t{0} >> 2;

std::string kernel_folder(const SessionOptions& options) {
  if (!options.kernel_dir.empty()) return options.kernel_dir;
  return firmware::data_dir("kernels/weight-streaming", "WSEMU_WS_KERNEL_DIR", kKernelSourceDir);
}

}  // namespace

WaferSession::WaferSession(WaferPlan plan, SessionOptions options) : plan_(std::move(plan)), options_(std::move(options)) {
  layout_path_ = (std::filesystem::path(kernel_folder(options_)) / "layout.wsl").string();
  if (!std::filesystem::exists(layout_path_))
    throw std::runtime_error(fmt::format("weight-streaming layout {} not found (set $WSEMU_WS_KERNEL_DIR)", layout_path_));
  compiler::layout::BuildOptions build;
  build.params = plan_.build_params();
  build.include_dirs = {firmware::include_dir()};
  compiler::layout::BuildResult built = compiler::layout::build_layout_file(layout_path_, build);
  if (!built.ok())
    throw std::runtime_error(fmt::format("building {} for {} failed:\n{}", layout_path_, plan_.describe(),
                                         compiler::layout::format_diagnostics(built.diagnostics)));
  const isa::Symbol* acts = built.executable->programs.at(0).object.find_symbol("acts");
  if (acts == nullptr) throw std::runtime_error("ws_pe.wsa has no symbol 'acts'");
  acts_base_ = acts->address;
  runtime::host::RuntimeOptions ro;
  ro.threads = options_.threads;
  ro.max_cycles = kMaxCycles;
  ro.backdoor = options_.backdoor_inputs;
  runtime_ = std::make_unique<SdkRuntime>(std::move(*built.executable), ro);
  runtime_->load();
  std::vector<uint64_t> parameters;
  const auto& sizes = plan_.spec().sizes;
  for (size_t l = 0; l + 1 < sizes.size(); ++l) parameters.push_back(sizes[l] * sizes[l + 1] + sizes[l + 1]);
  clock_ = std::make_unique<StreamClock>(
      WaferNetwork::of(options_.network, options_.swarmx_levels, runtime_->clock_mhz()), std::move(parameters));
  step_started_at_ = runtime_->cycles();
}

WaferSession::~WaferSession() = default;

double WaferSession::clock_mhz() const { return runtime_->clock_mhz(); }

uint32_t WaferSession::acts_address(size_t layer) const {
  return acts_base_ + static_cast<uint32_t>(4 * plan_.act_offset_words(layer));
}

void WaferSession::launch(const std::string& function, std::span<const uint32_t> args, uint64_t& phase_cycles) {
  const uint64_t before = runtime_->cycles();
  try {
    runtime_->launch(function, args);
  } catch (const HostError& e) {
    throw std::runtime_error(fmt::format("wafer: launch of {} failed: {}", function, e.what()));
  }
  ++transactions_;
  const uint64_t spent = runtime_->cycles() - before;
  counters_.launch_cycles += spent;
  phase_cycles += spent;
}

void WaferSession::load_micro_batch(std::span<const float> inputs, std::span<const uint32_t> labels, size_t count) {
  const size_t n0 = plan_.spec().input_dim();
  const size_t s = plan_.samples_per_row();
  const int k = plan_.columns(), r = plan_.rows();
  if (count == 0 || count > s * static_cast<size_t>(r))
    throw std::invalid_argument(fmt::format("micro-batch of {} samples: the wafer holds 1 to {}", count,
                                            s * static_cast<size_t>(r)));
  if (inputs.size() != count * n0 || labels.size() != count)
    throw std::invalid_argument("load_micro_batch: inputs or labels do not match the count");
  const size_t elems = plan_.chunk_length(n0) * s;
  std::vector<uint32_t> words(static_cast<size_t>(k * r) * elems, 0u);
  std::vector<uint32_t> label_words(static_cast<size_t>(r) * s, kNoLabel);
  for (int y = 0; y < r; ++y) {
    const train::SampleRange rows = plan_.row_samples(count, y);
    for (size_t b = rows.begin; b < rows.end; ++b) {
      const size_t slot = b - rows.begin;
      label_words[static_cast<size_t>(y) * s + slot] = labels[b];
      for (int x = 0; x < k; ++x) {
        const FeatureChunk c = plan_.chunk(n0, x);
        uint32_t* block = words.data() + static_cast<size_t>(y * k + x) * elems;
        for (size_t i = 0; i < c.count; ++i) block[i * s + slot] = std::bit_cast<uint32_t>(inputs[b * n0 + c.first + i]);
      }
    }
  }
  const uint64_t before = runtime_->cycles();
  try {
    runtime_->memcpy_h2d("acts", words, 0, 0, k, r, static_cast<int>(elems));
    runtime_->memcpy_h2d("labels", label_words, k - 1, 0, 1, r, static_cast<int>(s));
  } catch (const HostError& e) {
    throw std::runtime_error(fmt::format("wafer: loading the micro-batch failed: {}", e.what()));
  }
  transactions_ += 2;
  counters_.input_cycles += runtime_->cycles() - before;
  loaded_count_ = count;
}

void WaferSession::forward_layer(size_t layer, std::span<const float> weights, std::span<const float> biases,
                                 std::span<const uint8_t> mask) {
  const auto& sizes = plan_.spec().sizes;
  const bool last = layer + 2 == sizes.size();
  uint32_t flags = (layer > 0 ? kFlagExtract : 0) | (last ? kFlagLastLayer : 0) | (mask.empty() ? 0 : kFlagSparse);
  const uint32_t args[] = {static_cast<uint32_t>(sizes[layer]), static_cast<uint32_t>(sizes[layer + 1]),
                           acts_address(layer), flags};
  launch("fwd_begin", args, counters_.forward_cycles);
  const ColumnStreams streams = plan_.layer_stream(layer, weights, biases, mask);
  pump(layer, streams, nullptr, fmt::format("forward of layer {}", layer), counters_.forward_cycles);
}

MicroBatchResult WaferSession::loss() {
  const uint32_t args[] = {static_cast<uint32_t>(plan_.spec().num_classes())};
  launch("loss", args, counters_.loss_cycles);
  const size_t s = plan_.samples_per_row();
  const int k = plan_.columns(), r = plan_.rows();
  std::vector<uint32_t> losses(static_cast<size_t>(r) * s), correct(static_cast<size_t>(r) * s);
  const uint64_t before = runtime_->cycles();
  try {
    runtime_->memcpy_d2h(losses, "losses", k - 1, 0, 1, r, static_cast<int>(s));
    runtime_->memcpy_d2h(correct, "correct", k - 1, 0, 1, r, static_cast<int>(s));
  } catch (const HostError& e) {
    throw std::runtime_error(fmt::format("wafer: reading the losses failed: {}", e.what()));
  }
  transactions_ += 2;
  counters_.loss_cycles += runtime_->cycles() - before;
  MicroBatchResult result;
  for (int y = 0; y < r; ++y) {
    const train::SampleRange rows = plan_.row_samples(loaded_count_, y);
    for (size_t slot = 0; slot < rows.size(); ++slot) {
      result.loss_sum = result.loss_sum + std::bit_cast<float>(losses[static_cast<size_t>(y) * s + slot]);
      result.correct += correct[static_cast<size_t>(y) * s + slot] != 0 ? 1 : 0;
    }
  }
  result.samples = loaded_count_;
  return result;
}

void WaferSession::backward_layer(size_t layer, std::span<const float> weights, std::span<const float> biases,
                                  std::span<const uint8_t> mask, std::span<float> weight_gradient,
                                  std::span<float> bias_gradient) {
  const auto& sizes = plan_.spec().sizes;
  const uint32_t flags = (layer > 0 ? kFlagHasG : 0) | (mask.empty() ? 0 : kFlagSparse);
  const uint32_t args[] = {static_cast<uint32_t>(sizes[layer]), static_cast<uint32_t>(sizes[layer + 1]),
                           acts_address(layer), flags};
  launch("bwd_begin", args, counters_.backward_cycles);
  const ColumnStreams streams = plan_.layer_stream(layer, weights, biases, mask);
  std::vector<std::vector<uint32_t>> gradients(static_cast<size_t>(plan_.columns()));
  for (size_t x = 0; x < gradients.size(); ++x) gradients[x].reserve(streams.gradients_expected[x]);
  pump(layer, streams, &gradients, fmt::format("backward of layer {}", layer), counters_.backward_cycles);
  for (size_t x = 0; x < gradients.size(); ++x)
    if (gradients[x].size() != streams.gradients_expected[x])
      throw std::runtime_error(fmt::format("wafer: backward of layer {}: column {} sent {} gradients, expected {}",
                                           layer, x, gradients[x].size(), streams.gradients_expected[x]));
  plan_.scatter_gradients(layer, gradients, mask, weight_gradient, bias_gradient);
  if (layer > 0) {
    const uint32_t gather_args[] = {static_cast<uint32_t>(sizes[layer]), acts_address(layer)};
    launch("bwd_gather", gather_args, counters_.backward_cycles);
  }
}

void WaferSession::pump(size_t layer, const ColumnStreams& streams, std::vector<std::vector<uint32_t>>* gradients,
                        const std::string& what, uint64_t& phase_cycles) {
  emu::Wafer& wafer = runtime_->wafer();
  const size_t k = static_cast<size_t>(plan_.columns());
  const int bottom = plan_.rows() - 1;
  const uint64_t start = wafer.cycle();
  const StreamClock::Pass pass = clock_->begin_pass(layer, streams.total_words(), start);
  // One lane per column: its weights into the north edge, its gradients (backward) out of the
  // south edge of the bottom row, which must stay silent in a forward pass.
  std::vector<host::EdgeLane> lanes(k);
  for (size_t x = 0; x < k; ++x) {
    host::EdgeLane& lane = lanes[x];
    const int column = static_cast<int>(x);
    lane.name = fmt::format("column {}", x);
    lane.in = {column, 0, emu::Direction::NORTH};
    lane.send.reserve(streams.words[x].size());
    emu::Wavelet w;
    w.color = kWeightColor;
    for (uint32_t word : streams.words[x]) {
      w.payload = word;
      lane.send.push_back(w);
    }
    lane.arrival.reserve(streams.words[x].size());
    const host::EdgePort south{column, bottom, emu::Direction::SOUTH};
    if (gradients != nullptr) {
      lane.out = south;
      lane.expect = streams.gradients_expected[x];
      lane.received = std::move((*gradients)[x]);
    } else {
      lane.silent = south;
    }
  }
  // The link carries the columns' streams interleaved, one wavelet of each column in turn.
  for (uint64_t n = 0, more = 1; more != 0;) {
    more = 0;
    for (host::EdgeLane& lane : lanes)
      if (lane.arrival.size() < lane.send.size()) {
        lane.arrival.push_back(clock_->arrival(pass, n++));
        more = 1;
      }
  }
  host::EdgePumpOptions options;
  options.what = what;
  options.cycle_limit = kMaxCycles;
  options.out_rate = clock_->network().up_wavelets_per_cycle;
  options.policy = host::EdgePumpPolicy::weight_stream();
  host::EdgePumpResult moved;
  try {
    moved = host::pump_edges(wafer, lanes, options);
    // Let the wafer finish what the last wavelets started (it then waits for the next launch).
    const emu::RunResult settled = wafer.run(~uint64_t{0} >> 2);
    if (settled.status == emu::RunResult::Status::FAULT || settled.status == emu::RunResult::Status::CYCLE_LIMIT)
      throw std::runtime_error(fmt::format("wafer: {}: {}", what, settled.to_string()));
    host::check_silent_ports(wafer, lanes, what);
  } catch (const HostError& e) {
    throw std::runtime_error(fmt::format("wafer: {}", e.what()));
  }
  const uint64_t spent = wafer.cycle() - start;
  phase_cycles += spent;
  clock_->end_pass(pass, wafer.cycle(), moved.waited_cycles);
  counters_.stream_wait_cycles += moved.waited_cycles;
  counters_.weight_wavelets_in += streams.total_words();
  if (gradients != nullptr) {
    uint64_t out = 0;
    for (size_t x = 0; x < k; ++x) {
      out += lanes[x].received.size();
      (*gradients)[x] = std::move(lanes[x].received);
    }
    counters_.gradient_wavelets_out += out;
    clock_->gradients_left(layer, moved.last_out_cycle, out);
  }
}

StepPath WaferSession::finish_step() {
  const uint64_t now = runtime_->cycles();
  StepPath path = clock_->finish_step(now - step_started_at_);
  step_started_at_ = now;
  return path;
}

WaferCounters WaferSession::counters() {
  WaferCounters c = counters_;
  c.cycles = runtime_->cycles();
  c.host_transactions = transactions_;
  const emu::Wafer& wafer = runtime_->wafer();
  const emu::WaferTotals totals = wafer.totals();
  c.tile_steps = totals.tile_steps;
  c.skipped_cycles = totals.skipped_cycles;
  for (int y = 0; y < plan_.rows(); ++y)
    for (int x = 0; x < plan_.columns(); ++x) {
      const emu::CoreView view = wafer.core_view(x, y);
      const uint64_t elapsed = wafer.cycle() - view.stats.loaded_at;
      c.pe_busy_cycles += view.stats.busy_cycles;
      c.pe_wait_cycles += elapsed - std::min(elapsed, view.stats.busy_cycles);
    }
  return c;
}

}  // namespace wsemu::wstrain
