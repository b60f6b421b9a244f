// The training orchestrator of `wsemu train`: starts (or joins) MemoryX and a SwarmX tree,
// creates the model's tensors in MemoryX, starts one wafer worker process per wafer, follows
// their per-step reports (loss reduced in the SwarmX tree's order, emulated cycles, bytes),
// optionally runs the host ReferenceTrainer alongside (--verify), and at the end reads the final
// weights back, evaluates test accuracy on the host and writes the loss curve and a summary.
//
// Contract: run_training() returns a TrainReport or throws std::runtime_error /
// std::invalid_argument with a message a user can act on (a worker's failure carries the tail of
// its log). Every child it started is stopped before it returns or throws. Progress goes to
// `progress_out` (a one-line bar when `progress_bar`, else one line per step); nothing is
// written to stdout by this class.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "runtime/train/loss_curve.hpp"
#include "runtime/train/optimizer.hpp"
#include "runtime/wstrain/network.hpp"
#include "runtime/wstrain/run_config.hpp"

namespace wsemu::wstrain {

struct TrainOptions {
  RunConfig run;
  train::OptimizerConfig optimizer;
  // External cluster: MemoryX shards (in shard order) and the SwarmX nodes the wafers connect
  // to (one for all, one per wafer, or one per group of consecutive wafers). Empty: LocalCluster.
  std::vector<std::string> memoryx;
  std::vector<std::string> swarmx;
  std::string token_file;      // external cluster: the shared token
  std::string tls_ca;          // external cluster: connect with TLS, nodes' certificates from this CA
  uint32_t fanout = 4;         // SwarmX children per node (LocalCluster; the tree the loss is reduced in)
  uint32_t memoryx_shards = 1;  // LocalCluster: MemoryX shards (tensors spread over them by id)
  uint64_t checkpoint_every = 10;
  bool verify = false;
  std::filesystem::path out_dir;  // empty: no files
  int worker_threads = 1;
  bool backdoor_inputs = false;
  std::string kernel_dir;
  std::string wsemu_binary;    // the program to run as `train-worker`; empty: this executable
  // Fault injection for the restart procedure and its test: once every wafer reported this many
  // steps, SIGKILL MemoryX shard 0 and start it again on its store (LocalCluster only).
  int64_t kill_memoryx_after_step = -1;
  // The same for a SwarmX node of the LocalCluster's tree: its index (0 = serves the first
  // leaves; the root is the last), -1: the root. Its children and its upstream reconnect.
  int64_t kill_swarmx_after_step = -1;
  int64_t kill_swarmx_index = -1;
  // Fault injection: once every wafer reported this many steps, SIGKILL wafer
  // kill_wafer_seed % wafers after a delay drawn from the seed (0 to 1.5 times the last step's
  // wall time, so the kill lands mid-step or just after it). A wafer that dies is restarted at
  // MemoryX's step (its updates are step-atomic), at most max_wafer_restarts times per wafer.
  int64_t kill_wafer_after_step = -1;
  uint64_t kill_wafer_seed = 1;
  uint32_t max_wafer_restarts = 3;
  bool progress_bar = false;
};

struct StepFigures {
  uint64_t step = 0;
  float loss = 0.0f;
  double train_accuracy = 0.0;
  uint64_t max_cycles = 0;          // slowest wafer's emulated cycles for the step
  std::vector<uint64_t> wafer_cycles;       // per wafer (rank order)
  std::vector<double> wafer_wall_s, wafer_weight_wait_s;
  std::vector<uint64_t> wafer_busy_cycles, wafer_wait_cycles;
  double wall_s = 0.0;              // slowest wafer's wall-clock time for the step
  double weight_wait_s = 0.0;       // summed over wafers
  uint64_t weight_wavelets_in = 0;  // summed over wafers (wafer ingress)
  uint64_t gradient_wavelets_out = 0;
  uint64_t net_weight_bytes = 0, net_weight_bytes_dense = 0;
  uint64_t net_gradient_bytes = 0, net_gradient_bytes_dense = 0;
  uint64_t pe_busy_cycles = 0, pe_wait_cycles = 0;
  uint64_t forward_cycles = 0, backward_cycles = 0, input_cycles = 0, loss_cycles = 0, launch_cycles = 0;
  StepPath path;                    // the slowest wafer's critical path (network.hpp)
  // --verify
  bool verified = false;
  float reference_loss = 0.0f;
  double loss_difference = 0.0;
  double max_weight_difference = 0.0;      // absolute, over every parameter
  double max_weight_relative = 0.0;        // |a - b| / max(|b|, 1e-30)
  uint64_t weights_compared_at = 0;        // the step count of MemoryX's weights compared
};

struct TrainReport {
  std::vector<StepFigures> steps;
  std::vector<train::LossRecord> curve;
  double test_accuracy = 0.0, test_loss = 0.0;
  double reference_test_accuracy = -1.0;   // --verify
  bool final_weights_identical = false;    // --verify: MemoryX's final weights == the reference's
  double final_max_weight_difference = 0.0;
  size_t parameters = 0;
  std::string wafer_plan;
  int columns = 0, rows = 0;
  double clock_mhz = 850.0;
  double wall_s = 0.0;
  uint64_t samples = 0;
  std::string cluster_description;
  size_t memoryx_restarts = 0;             // --kill-memoryx-after-step
  size_t swarmx_restarts = 0;              // --kill-swarmx-after-step
  size_t wafer_restarts = 0;               // wafer workers that died and were started again
  std::vector<std::filesystem::path> files;
};

TrainReport run_training(const TrainOptions& options, std::ostream& progress_out);

// The human-readable summary printed at the end of `wsemu train`.
void print_report(const TrainOptions& options, const TrainReport& report, std::ostream& out);
// Every figure of the report, per step too, as JSON (written to <out>/summary.json).
void write_summary_json(const std::filesystem::path& path, const TrainOptions& options, const TrainReport& report);

}  // namespace wsemu::wstrain
