// The optimizers of a training run (SGD, momentum, Adam, AdamW): their settings as a plain struct
// and the one definition of their update, used by the reference trainer and by MemoryX
// (runtime/cluster/optimizer.hpp converts its wire message to this struct), so both give the
// same bits.
//
// Contract: apply_optimizer_step() is deterministic: every element is computed in fp32 in exactly
// the order written below, independently of the others, so the result does not depend on how the
// work is split (large tensors are split across threads). S is the unscaled reduced gradient
// SUM and g = grad_scale * S (fp32). With t = updates_applied + 1:
//   SGD       g' = g + wd*w;                       w = w - lr*g'
//   MOMENTUM  g' = g + wd*w;  v = mu*v + g';       w = w - lr*v
//   ADAM      g' = g + wd*w;  m = b1*m + (1-b1)*g';  v = b2*v + (1-b2)*(g'*g')
//             w = w - lr * ((m / c1) / (sqrt(v / c2) + eps))
//   ADAMW     as ADAM with g' = g, then w = w - lr * ((m / c1) / (sqrt(v / c2) + eps) + wd*w)
// c1 = float(1 - double(b1)^t), c2 = float(1 - double(b2)^t); (1-b1), (1-b2) rounded to fp32
// once; "+ wd*w" skipped when wd == 0; the w on the right of ADAMW's last line is the value
// before the update. optimizer_update() also sizes the slots (zero-filled) on first use and
// counts the update. Nothing here touches memory outside the spans or does I/O; bad sizes or
// settings throw std::invalid_argument.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

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

// Optimizer slots a kind keeps per element: 0 (SGD), 1 (momentum), 2 (Adam, AdamW).
int optimizer_slot_count(OptimizerKind kind);

// One update in place. slot1/slot2 must have the weights' size when the kind uses them;
// `updates_applied` is the number of earlier updates (Adam's t - 1).
void apply_optimizer_step(const OptimizerConfig& config, float grad_scale, uint64_t updates_applied,
                          std::span<float> weights, std::span<float> slot1, std::span<float> slot2,
                          std::span<const float> gradient_sum);

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
