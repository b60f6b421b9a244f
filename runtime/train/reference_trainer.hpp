// The host reference trainer: the exact training computation that `wsemu train` distributes over
// MemoryX, SwarmX and the wafers, run in one process with xtensor, so that the distributed run
// can be checked against it step by step.
//
// Contract: a step on a global batch of B samples (B = TrainConfig::global_batch) does
//   1. per wafer w (shard_range), per micro-batch in order (micro_batch_ranges):
//      micro_batch_gradients -> unscaled sums; the wafer's sums S_w = ((mb_0 + mb_1) + mb_2) ...
//   2. S = the reduction tree's sum of S_0 .. S_{N-1} (TrainConfig::reduction, default
//      ReductionTree::fan_in_tree(N, 4));
//   3. pruned weights' entries of S set to +0 (when sparsity > 0);
//   4. optimizer_update on every tensor (layer 0 weight, layer 0 bias, layer 1 weight, ...) with
//      S and grad_scale = 1.0f / float(B): MemoryX's update forms g = grad_scale * S elementwise,
//      the only place the batch size scales anything.
//   The step's loss is the tree sum of the wafers' loss sums times (1.0f / float(B)).
// The whole computation is deterministic: same spec, config and batches give bit-identical
// weights. It never reads or depends on anything but its arguments (no globals, no threads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/train/dataset.hpp"
#include "runtime/train/data_order.hpp"
#include "runtime/train/mlp_pass.hpp"
#include "runtime/train/model.hpp"
#include "runtime/train/optimizer.hpp"
#include "runtime/train/reduction_tree.hpp"

namespace wsemu::train {

struct TrainConfig {
  uint64_t seed = 1;           // weight init, shuffling, sparsity mask
  size_t global_batch = 64;    // B: samples per step over all wafers
  size_t wafers = 1;           // N: data-parallel wafers (shards of the global batch)
  size_t micro_batch = 0;      // samples per micro-batch within a wafer; 0 = the whole shard
  OptimizerConfig optimizer;
  ComputeOrder order;
  std::optional<ReductionTree> reduction;  // default: ReductionTree::fan_in_tree(wafers, 4)
  double sparsity = 0.0;       // fraction of each weight matrix pruned (fixed mask), in [0, 1)

  void validate() const;  // throws std::invalid_argument naming the bad field
};

struct StepResult {
  uint64_t step = 0;           // 0-based index of the step just taken
  float loss = 0.0f;           // mean training loss over the global batch (before the update)
  double train_accuracy = 0.0; // fraction of the batch predicted right (before the update)
};

struct Evaluation {
  double loss = 0.0;      // mean softmax cross-entropy (summed in double: a report, not mirrored)
  double accuracy = 0.0;  // fraction whose predicted_class equals the label
  size_t correct = 0;
  size_t samples = 0;
};

// Step 1 of the contract for one wafer: its shard of `batch`, micro-batch by micro-batch.
GradientSums wafer_gradient_sums(const ModelParameters& parameters, const Batch& batch, SampleRange shard,
                                 size_t micro_batch, const ComputeOrder& order);

// Forward passes over the whole data set in blocks; order.feature_chunks applies to the sums.
Evaluation evaluate(const ModelParameters& parameters, const Dataset& dataset, const ComputeOrder& order = {});

class ReferenceTrainer {
 public:
  // Initializes the parameters with initialize_parameters(spec, config.seed) and, when
  // sparsity > 0, prunes them with make_sparsity_mask(spec, sparsity, seed).
  ReferenceTrainer(ModelSpec spec, TrainConfig config);

  // One training step on a global batch of exactly config.global_batch samples.
  StepResult step(const Batch& batch);

  // Replaces the parameters (shapes must match the spec; pruned weights are zeroed again). The
  // optimizer state and the step count are kept. For hand-set tests and for resuming.
  void set_weights(ModelParameters parameters);

  const ModelSpec& spec() const { return spec_; }
  const TrainConfig& config() const { return config_; }
  const ModelParameters& weights() const { return parameters_; }
  uint64_t steps_done() const { return steps_done_; }
  const std::optional<SparsityMask>& sparsity_mask() const { return mask_; }
  // The optimizer state of tensor k (layer l's weight is 2l, its bias 2l + 1).
  const OptimizerSlots& optimizer_slots(size_t tensor) const { return slots_.at(tensor); }

  // The scaled gradient g = S * (1/B) of the last step, and each wafer's unscaled sums S_w (for comparing a
  // distributed run wafer by wafer).
  const ModelParameters& last_gradient() const { return last_gradient_; }
  const std::vector<GradientSums>& last_wafer_sums() const { return last_wafer_sums_; }

  Evaluation evaluate(const Dataset& dataset) const { return train::evaluate(parameters_, dataset, config_.order); }

 private:
  ModelSpec spec_;
  TrainConfig config_;
  ReductionTree reduction_;
  ModelParameters parameters_;
  std::optional<SparsityMask> mask_;
  std::vector<OptimizerSlots> slots_;
  uint64_t steps_done_ = 0;
  ModelParameters last_gradient_;
  std::vector<GradientSums> last_wafer_sums_;
};

}  // namespace wsemu::train
