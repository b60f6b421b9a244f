// One forward and backward pass of the MLP over a micro-batch, with every floating-point sum in
// a fixed, documented order, so that the wafer kernels can reproduce it bit for bit.
//
// Contract (the full definition with formulas is runtime/train/README.md, "The computation"):
// all arithmetic is fp32, each +, -, *, / rounded to nearest, no contraction unless
// ComputeOrder::fused_multiply_add asks for it. Every sum starts from +0.0f and adds its terms
// in increasing index order; ComputeOrder splits a sum into contiguous chunks whose partial sums
// are then added left to right, to mirror a sum spread over several PEs. Terms with a zero factor
// are skipped: an fp32 sum that starts at +0.0f can never become -0.0f, so adding a +-0.0f term
// never changes it, and skipping is bit-identical to adding (for finite values). Results are
// unscaled SUMS over samples; dividing by the global batch size is the caller's job
// (reference_trainer). Nothing here knows about wafers, shards or optimizers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "runtime/train/model.hpp"

namespace wsemu::train {

struct ComputeOrder {
  // K_f: the sum over a layer's inputs (forward) and over its outputs (backward, activation
  // gradient) is split into K_f chunks of ceil(n / K_f) consecutive indices (the last ones may
  // be shorter or empty); each chunk is summed from +0 in index order, then the chunk sums are
  // added left to right (chunk 0 first). K_f = 1 is one plain sequential sum.
  size_t feature_chunks = 1;
  // K_s: likewise for the sums over the samples of a micro-batch (weight and bias gradients).
  size_t sample_chunks = 1;
  // Multiply-accumulate steps acc + x * w rounded once (fma) instead of twice.
  bool fused_multiply_add = false;
};

// The rows of one micro-batch: count samples of input_dim floats each, and their labels.
struct MicroBatchView {
  const float* inputs = nullptr;     // [count][input_dim], row-major
  const uint32_t* labels = nullptr;  // [count]; may be null for forward-only use
  size_t count = 0;
};

struct ForwardPass {
  // z_l = W_l^T a_{l-1} + b_l for every layer l, [count][sizes[l+1]]; the last one is the logits.
  std::vector<xt::xtensor<float, 2>> pre_activations;
  // a_l = max(z_l, 0) for hidden layers (the ReLU output); [count][sizes[l+1]].
  std::vector<xt::xtensor<float, 2>> hidden_activations;
};

ForwardPass forward(const ModelParameters& parameters, MicroBatchView batch, const ComputeOrder& order);

// Softmax cross-entropy of one sample: m = max_j z_j, e_j = float_exp(z_j - m),
// s = sum_j e_j (from +0, j increasing), loss = float_log(s) - (z_label - m), and
// delta_j = dloss/dz_j = e_j / s - (j == label ? 1 : 0). Writes delta[0..classes).
float softmax_cross_entropy(const float* logits, size_t classes, uint32_t label, float* delta);

// The first index of the largest logit.
size_t predicted_class(const float* logits, size_t classes);

// Unscaled sums over samples of the per-sample gradients and losses.
struct GradientSums {
  ModelParameters gradient;  // sum over samples of dloss_n/dparameter
  float loss_sum = 0.0f;     // sum over samples of loss_n, from +0 in sample order
  size_t correct = 0;        // samples whose predicted_class equals the label
  size_t samples = 0;
};

// Forward, loss and backward over one micro-batch (labels required).
GradientSums micro_batch_gradients(const ModelParameters& parameters, MicroBatchView batch,
                                   const ComputeOrder& order);

// accumulator = accumulator + term, elementwise over every gradient entry and the loss sum
// (the order of combining micro-batch sums, and of a reduction-tree node adding a child).
void add_gradient_sums(GradientSums& accumulator, const GradientSums& term);

GradientSums zero_gradient_sums(const ModelSpec& spec);

}  // namespace wsemu::train
