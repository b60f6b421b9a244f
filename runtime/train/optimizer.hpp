// The optimizers of the training computation (SGD, momentum, Adam, AdamW) as exact fp32
// update rules on one flat tensor, the form MemoryX applies them in.
//
// Contract: optimizer_update() applies one step to every element independently, each formula
// below evaluated left to right with every operation an IEEE binary32 operation rounded to
// nearest (no fma), so any re-implementation that follows the formulas gets the same bits.
// `gradient` is the already-scaled batch gradient g = S * (1.0f / B) (see reference_trainer.hpp).
// With wd = weight_decay, lr = learning_rate, t = updates_applied after the increment:
//   L2 term (sgd, momentum, adam):  g' = g + wd * w   (skipped when wd == 0), else g' = g
//   sgd:       w = w - lr * g'
//   momentum:  v = mu * v + g';  w = w - lr * v                      (v starts at 0)
//   adam:      m = b1 * m + (1 - b1) * g';  v = b2 * v + (1 - b2) * (g' * g');
//              w = w - lr * ((m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps))
//   adamw:     w = w * (1 - lr * wd), then adam with g' = g
// (1 - b1), (1 - b2), (1 - lr * wd) are each rounded to fp32 once; b^t is the fp32 product of t
// factors b (p_0 = 1, p_k = p_{k-1} * b), computed from t alone so no extra state is needed.
// It must never read or write outside the spans it is given; it throws std::invalid_argument on
// mismatched sizes or a bad configuration.
#pragma once

#include <cstdint>
#include <span>
#include <string>
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

// The state of one tensor: slot1 = momentum velocity or Adam first moment, slot2 = Adam second
// moment (both empty until the first update sizes them), updates_applied = Adam's t.
struct OptimizerSlots {
  std::vector<float> slot1;
  std::vector<float> slot2;
  uint64_t updates_applied = 0;
};

void optimizer_update(const OptimizerConfig& config, OptimizerSlots& slots, std::span<float> weights,
                      std::span<const float> gradient);

// b^t as defined above.
float beta_power(float beta, uint64_t t);

}  // namespace wsemu::train
