// The end-of-run summary of `wsemu train` (orchestrator.hpp): text and JSON.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/wstrain/orchestrator.hpp"

namespace wsemu::wstrain {

namespace {

// The weight-streaming link of one real wafer (reference/weight-streaming.md §8.2: 12 x 100 GbE).
constexpr double kWaferLinkBytesPerSecond = 150e9;

template <typename F>
double mean_of(const std::vector<StepFigures>& steps, F f) {
  if (steps.empty()) return 0.0;
  double total = 0.0;
  for (const StepFigures& s : steps) total += static_cast<double>(f(s));
  return total / static_cast<double>(steps.size());
}

std::string bytes_text(double b) {
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.2f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} kB", b / 1e3);
  return fmt::format("{:.0f} B", b);
}

std::string part_text(const char* name, double total, double exposed) {
  return fmt::format("{} {:.0f} (exposed {:.0f}, hidden {:.0f})", name, total, exposed, std::max(0.0, total - exposed));
}

// Means over the steps of the slowest wafer's critical path, the whole step and per layer.
void print_critical_path(const TrainOptions& options, const TrainReport& report, std::ostream& out) {
  const auto& steps = report.steps;
  if (steps.empty()) return;
  const RunConfig& run = options.run;
  const uint32_t levels = swarmx_levels(run.network_wafers(), options.fanout);
  const WaferNetwork net = WaferNetwork::of(run.network(), levels, report.clock_mhz);
  out << fmt::format("  network ({} SwarmX level(s)): weights {:.3g} wavelets/cycle after {:.0f} cycles, gradients "
                     "{:.3g} wavelets/cycle + {:.0f} cycles, MemoryX optimizer {:.3g} cycles/parameter\n",
                     levels, net.down_wavelets_per_cycle, net.down_latency_cycles, net.up_wavelets_per_cycle,
                     net.up_latency_cycles, net.optimizer_cycles_per_parameter);
  auto m = [&](auto f) { return mean_of(steps, f); };
  out << fmt::format(
      "  critical path per step (cycles, mean): {}; {}; {}; {}\n",
      part_text("compute", m([](const StepFigures& s) { return s.path.compute.total; }),
                m([](const StepFigures& s) { return s.path.compute.exposed; })),
      part_text("weight stream", m([](const StepFigures& s) { return s.path.stream.total; }),
                m([](const StepFigures& s) { return s.path.stream.exposed; })),
      part_text("gradient reduce", m([](const StepFigures& s) { return s.path.reduce.total; }),
                m([](const StepFigures& s) { return s.path.reduce.exposed; })),
      part_text("optimizer", m([](const StepFigures& s) { return s.path.optimizer.total; }),
                m([](const StepFigures& s) { return s.path.optimizer.exposed; })));
  const size_t layers = steps.back().path.layers.size();
  for (size_t l = 0; l < layers; ++l) {
    auto ml = [&](auto f) {
      return mean_of(steps, [&](const StepFigures& s) { return l < s.path.layers.size() ? f(s.path.layers[l]) : 0; });
    };
    out << fmt::format("    layer {}: {}; {}; {}; {}\n", l,
                       part_text("compute", ml([](const LayerPath& p) { return p.compute.total; }),
                                 ml([](const LayerPath& p) { return p.compute.exposed; })),
                       part_text("stream", ml([](const LayerPath& p) { return p.stream.total; }),
                                 ml([](const LayerPath& p) { return p.stream.exposed; })),
                       part_text("reduce", ml([](const LayerPath& p) { return p.reduce.total; }),
                                 ml([](const LayerPath& p) { return p.reduce.exposed; })),
                       part_text("optimizer", ml([](const LayerPath& p) { return p.optimizer.total; }),
                                 ml([](const LayerPath& p) { return p.optimizer.exposed; })));
  }
}

}  // namespace

void print_report(const TrainOptions& options, const TrainReport& report, std::ostream& out) {
  const RunConfig& run = options.run;
  const auto& steps = report.steps;
  const double wafers = static_cast<double>(run.wafers);
  out << fmt::format("\nwsemu train: {} on {} ({} parameters), {} wafer(s), batch {} ({} per micro-batch), {} steps\n",
                     run.model, run.dataset, report.parameters, run.wafers, run.batch,
                     run.micro_batch == 0 ? std::string("whole shard") : std::to_string(run.micro_batch), steps.size());
  out << fmt::format("  wafer rectangle: {}\n", report.wafer_plan);
  if (!steps.empty())
    out << fmt::format("  loss: {:.4f} (step {}) -> {:.4f} (step {})\n", steps.front().loss, steps.front().step + 1,
                       steps.back().loss, steps.back().step + 1);
  out << fmt::format("  test accuracy: {:.2f}% (loss {:.4f}) on {} test samples\n", 100.0 * report.test_accuracy,
                     report.test_loss, run.dataset);
  if (report.reference_test_accuracy >= 0.0)
    out << fmt::format("  reference trainer test accuracy: {:.2f}% (difference {:+.2f} points)\n",
                       100.0 * report.reference_test_accuracy,
                       100.0 * (report.test_accuracy - report.reference_test_accuracy));

  const double cycles = mean_of(steps, [](const StepFigures& s) { return s.max_cycles; });
  out << fmt::format("  emulated cycles per step (slowest wafer, mean): {:.0f} = input {:.0f}, forward {:.0f}, loss {:.0f}, "
                     "backward {:.0f} (launches included: {:.0f})\n",
                     cycles, mean_of(steps, [](const StepFigures& s) { return s.input_cycles; }),
                     mean_of(steps, [](const StepFigures& s) { return s.forward_cycles; }),
                     mean_of(steps, [](const StepFigures& s) { return s.loss_cycles; }),
                     mean_of(steps, [](const StepFigures& s) { return s.backward_cycles; }),
                     mean_of(steps, [](const StepFigures& s) { return s.launch_cycles; }));
  print_critical_path(options, report, out);
  const double in_bytes = 4.0 * mean_of(steps, [](const StepFigures& s) { return s.weight_wavelets_in; }) / wafers;
  const double out_bytes = 4.0 * mean_of(steps, [](const StepFigures& s) { return s.gradient_wavelets_out; }) / wafers;
  const double net_in = mean_of(steps, [](const StepFigures& s) { return s.net_weight_bytes; }) / wafers;
  const double net_in_dense = mean_of(steps, [](const StepFigures& s) { return s.net_weight_bytes_dense; }) / wafers;
  const double net_out = mean_of(steps, [](const StepFigures& s) { return s.net_gradient_bytes; }) / wafers;
  const double net_out_dense = mean_of(steps, [](const StepFigures& s) { return s.net_gradient_bytes_dense; }) / wafers;
  out << fmt::format("  bytes per step per wafer: wafer edge in {} (weights, {}), out {} (gradients)\n",
                     bytes_text(in_bytes), run.sparse_stream ? "sparse: header + index/value pairs" : "dense",
                     bytes_text(out_bytes));
  out << fmt::format("    MemoryX -> wafer {} (dense would be {}, {:.1f}%), wafer -> SwarmX {} (dense {}, {:.1f}%)\n",
                     bytes_text(net_in), bytes_text(net_in_dense), net_in_dense > 0 ? 100.0 * net_in / net_in_dense : 0.0,
                     bytes_text(net_out), bytes_text(net_out_dense),
                     net_out_dense > 0 ? 100.0 * net_out / net_out_dense : 0.0);
  const double busy = mean_of(steps, [](const StepFigures& s) { return s.pe_busy_cycles; });
  const double wait = mean_of(steps, [](const StepFigures& s) { return s.pe_wait_cycles; });
  const double wall = mean_of(steps, [](const StepFigures& s) { return s.wall_s; });
  const double weight_wait = mean_of(steps, [](const StepFigures& s) { return s.weight_wait_s; }) / wafers;
  out << fmt::format("  on the wafer: PEs computed {:.1f}% of the cycles and waited (for weights, partial sums, "
                     "the host) {:.1f}%\n",
                     busy + wait > 0 ? 100.0 * busy / (busy + wait) : 0.0,
                     busy + wait > 0 ? 100.0 * wait / (busy + wait) : 0.0);
  out << fmt::format("  in this emulation: {:.3f} s per step per wafer, of which {:.3f} s waiting for MemoryX's "
                     "weights ({:.1f}%)\n",
                     wall, weight_wait, wall > 0 ? 100.0 * weight_wait / wall : 0.0);
  if (!steps.empty() && run.wafers > 1) {
    for (size_t w = 0; w < run.wafers; ++w) {
      double c = 0, busy = 0, idle = 0, wall_w = 0, wait_w = 0;
      for (const StepFigures& s : steps) {
        if (w >= s.wafer_cycles.size()) continue;
        c += static_cast<double>(s.wafer_cycles[w]);
        busy += static_cast<double>(s.wafer_busy_cycles[w]);
        idle += static_cast<double>(s.wafer_wait_cycles[w]);
        wall_w += s.wafer_wall_s[w];
        wait_w += s.wafer_weight_wait_s[w];
      }
      const double n = static_cast<double>(steps.size());
      out << fmt::format("    wafer {}: {:.0f} cycles/step, PEs busy {:.1f}% / waiting {:.1f}%; {:.3f} s/step, "
                         "{:.3f} s of it waiting for weights\n",
                         w, c / n, busy + idle > 0 ? 100.0 * busy / (busy + idle) : 0.0,
                         busy + idle > 0 ? 100.0 * idle / (busy + idle) : 0.0, wall_w / n, wait_w / n);
    }
  }
  const double predicted_s = cycles / (report.clock_mhz * 1e6);
  out << fmt::format("  predicted time of one step on real hardware at {:.0f} MHz: {:.3f} ms for this {} x {} "
                     "rectangle (weight link at 150 GB/s: {:.3f} ms per step)\n",
                     report.clock_mhz, 1e3 * predicted_s, report.columns, report.rows,
                     1e3 * (in_bytes + out_bytes) / kWaferLinkBytesPerSecond);
  if (predicted_s > 0)
    out << fmt::format("  wafer-side throughput at that clock: {:.0f} samples/s ({} samples per step over {} wafer(s))\n",
                       static_cast<double>(run.batch) / predicted_s, run.batch, run.wafers);
  const double seconds = report.wall_s > 0 ? report.wall_s : 1.0;
  out << fmt::format("  wall time {:.1f} s, {:.0f} samples/s over the whole run\n", report.wall_s,
                     static_cast<double>(report.samples) / seconds);
  if (report.memoryx_restarts > 0)
    out << fmt::format("  MemoryX was killed (SIGKILL) after step {} and restarted from its checkpoint and log {} time(s)\n",
                       options.kill_memoryx_after_step, report.memoryx_restarts);
  if (report.swarmx_restarts > 0)
    out << fmt::format("  a SwarmX node was killed (SIGKILL) after step {} and restarted; the tree reconnected\n",
                       options.kill_swarmx_after_step);
  if (report.wafer_restarts > 0)
    out << fmt::format("  {} wafer worker(s) died and were restarted at MemoryX's step\n", report.wafer_restarts);
  if (options.verify && !steps.empty()) {
    auto worst_loss = std::max_element(steps.begin(), steps.end(), [](const auto& a, const auto& b) {
      return a.loss_difference < b.loss_difference;
    });
    auto worst_w = std::max_element(steps.begin(), steps.end(), [](const auto& a, const auto& b) {
      return a.max_weight_difference < b.max_weight_difference;
    });
    out << fmt::format("  verify: largest loss difference {:.3g} (step {}), largest weight difference {:.3g} "
                       "(relative {:.3g}, step {}); final weights {}\n",
                       worst_loss->loss_difference, worst_loss->step + 1, worst_w->max_weight_difference,
                       worst_w->max_weight_relative, worst_w->step + 1,
                       report.final_weights_identical
                           ? std::string("bit-identical to the reference trainer")
                           : fmt::format("differ by up to {:.3g}", report.final_max_weight_difference));
  }
  for (const auto& f : report.files) out << "  wrote " << f.string() << "\n";
}

void write_summary_json(const std::filesystem::path& path, const TrainOptions& options, const TrainReport& report) {
  nlohmann::json steps = nlohmann::json::array();
  for (const StepFigures& s : report.steps) {
    nlohmann::json j = {{"step", s.step},
                        {"loss", s.loss},
                        {"train_accuracy", s.train_accuracy},
                        {"cycles", s.wafer_cycles},
                        {"wafer_weight_wait_s", s.wafer_weight_wait_s},
                        {"wafer_pe_busy_cycles", s.wafer_busy_cycles},
                        {"wafer_pe_wait_cycles", s.wafer_wait_cycles},
                        {"wall_s", s.wall_s},
                        {"weight_wait_s", s.weight_wait_s},
                        {"weight_wavelets_in", s.weight_wavelets_in},
                        {"gradient_wavelets_out", s.gradient_wavelets_out},
                        {"net_weight_bytes", s.net_weight_bytes},
                        {"net_weight_bytes_dense", s.net_weight_bytes_dense},
                        {"net_gradient_bytes", s.net_gradient_bytes},
                        {"net_gradient_bytes_dense", s.net_gradient_bytes_dense},
                        {"pe_busy_cycles", s.pe_busy_cycles},
                        {"pe_wait_cycles", s.pe_wait_cycles},
                        {"critical_path", s.path.to_json()}};
    if (s.verified) {
      j["reference_loss"] = s.reference_loss;
      j["loss_difference"] = s.loss_difference;
      j["max_weight_difference"] = s.max_weight_difference;
      j["max_weight_relative"] = s.max_weight_relative;
      j["weights_compared_at"] = s.weights_compared_at;
    }
    steps.push_back(std::move(j));
  }
  const RunConfig& run = options.run;
  nlohmann::json doc = {{"model", run.model},
                        {"dataset", run.dataset},
                        {"wafers", run.wafers},
                        {"batch", run.batch},
                        {"micro_batch", run.micro_batch},
                        {"sparsity", run.sparsity},
                        {"sparse_stream", run.sparse_stream},
                        {"columns", report.columns},
                        {"rows", report.rows},
                        {"clock_mhz", report.clock_mhz},
                        {"test_accuracy", report.test_accuracy},
                        {"test_loss", report.test_loss},
                        {"wall_s", report.wall_s},
                        {"steps", steps}};
  if (report.reference_test_accuracy >= 0) {
    doc["reference_test_accuracy"] = report.reference_test_accuracy;
    doc["final_weights_identical"] = report.final_weights_identical;
    doc["final_max_weight_difference"] = report.final_max_weight_difference;
  }
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path.string());
  f << doc.dump(1) << '\n';
}

}  // namespace wsemu::wstrain
