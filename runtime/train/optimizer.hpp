// The optimizer settings of a training run and their update, applied through MemoryX's own
// implementation (runtime/cluster/optimizer.hpp) so the reference trainer and MemoryX share one
// definition of SGD, momentum, Adam and AdamW bit for bit.
//
// Contract: optimizer_update(config, slots, w, S, grad_scale) is exactly
// cluster::apply_update(to_cluster_config(config, grad_scale), slots.updates_applied, w,
// slots.slot1, slots.slot2, S), then updates_applied += 1. S is the unscaled reduced gradient
// SUM; g = grad_scale * S (fp32) happens inside, as on MemoryX. The formulas (copied from the
// cluster header; that header is authoritative), with t = updates_applied + 1:
//   SGD       g' = g + wd*w;                       w = w - lr*g'
//   MOMENTUM  g' = g + wd*w;  v = mu*v + g';       w = w - lr*v
//   ADAM      g' = g + wd*w;  m = b1*m + (1-b1)*g';  v = b2*v + (1-b2)*(g'*g')
//             w = w - lr * ((m / c1) / (sqrt(v / c2) + eps))
//   ADAMW     as ADAM with g' = g, then w = w - lr * ((m / c1) / (sqrt(v / c2) + eps) + wd*w)
// c1 = float(1 - double(b1)^t), c2 = float(1 - double(b2)^t); (1-b1), (1-b2) rounded to fp32
// once; "+ wd*w" skipped when wd == 0. Slots are sized (zero-filled) on first use. It never
// touches memory outside the spans; bad sizes or settings throw std::invalid_argument.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/cluster/cluster.pb.h"

namespace wsemu::train {

enum class OptimizerKind { sgd, momentum, adam, adamw };

// "sgd", "momentum", "adam", "adamw"; throws std::invalid_argument listing them otherwise.
OptimizerKind parse_optimizer_kind(std::string_view name);
std::string_view optimizer_name(OptimizerKind kind);

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::sgd;
  float learning_rate = 0.01f;
  float momentum = 0.9f;  // mu (momentum only)
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  float weight_decay = 0.0f;

  void validate() const;  // throws std::invalid_argument with the offending field
};

// The same settings as MemoryX's message, every field set explicitly (no node defaults apply).
cluster::pb::OptimizerConfig to_cluster_config(const OptimizerConfig& config, float grad_scale);

// The state of one tensor, as MemoryX keeps it: slot1 = momentum velocity or Adam first moment,
// slot2 = Adam second moment, updates_applied = the number of updates so far (Adam's t - 1).
struct OptimizerSlots {
  std::vector<float> slot1;
  std::vector<float> slot2;
  uint64_t updates_applied = 0;
};

void optimizer_update(const OptimizerConfig& config, OptimizerSlots& slots, std::span<float> weights,
                      std::span<const float> gradient_sum, float grad_scale);

}  // namespace wsemu::train
