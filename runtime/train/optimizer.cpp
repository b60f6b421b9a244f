#include "runtime/train/optimizer.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace wsemu::train {

OptimizerKind parse_optimizer_kind(std::string_view name) {
  if (name == "sgd") return OptimizerKind::sgd;
  if (name == "momentum") return OptimizerKind::momentum;
  if (name == "adam") return OptimizerKind::adam;
  if (name == "adamw") return OptimizerKind::adamw;
  throw std::invalid_argument(fmt::format("unknown optimizer '{}' (expected one of: sgd, momentum, adam, adamw)", name));
}

std::string_view optimizer_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::sgd: return "sgd";
    case OptimizerKind::momentum: return "momentum";
    case OptimizerKind::adam: return "adam";
    case OptimizerKind::adamw: return "adamw";
  }
  return "?";
}

void OptimizerConfig::validate() const {
  auto require = [](bool ok, std::string_view what, float value) {
    if (!ok) throw std::invalid_argument(fmt::format("optimizer: {} (got {})", what, value));
  };
  require(std::isfinite(learning_rate) && learning_rate > 0.0f, "learning rate must be positive and finite", learning_rate);
  require(std::isfinite(weight_decay) && weight_decay >= 0.0f, "weight decay must be >= 0 and finite", weight_decay);
  if (kind == OptimizerKind::momentum)
    require(momentum >= 0.0f && momentum < 1.0f, "momentum must be in [0, 1)", momentum);
  if (kind == OptimizerKind::adam || kind == OptimizerKind::adamw) {
    require(beta1 >= 0.0f && beta1 < 1.0f, "beta1 must be in [0, 1)", beta1);
    require(beta2 >= 0.0f && beta2 < 1.0f, "beta2 must be in [0, 1)", beta2);
    require(std::isfinite(epsilon) && epsilon > 0.0f, "epsilon must be positive and finite", epsilon);
  }
}

float beta_power(float beta, uint64_t t) {
  float power = 1.0f;
  for (uint64_t k = 0; k < t; ++k) power = power * beta;
  return power;
}

void optimizer_update(const OptimizerConfig& config, OptimizerSlots& slots, std::span<float> weights,
                      std::span<const float> gradient) {
  if (weights.size() != gradient.size())
    throw std::invalid_argument(fmt::format("optimizer: {} weights but {} gradient values", weights.size(),
                                            gradient.size()));
  const size_t n = weights.size();
  const float lr = config.learning_rate, wd = config.weight_decay;
  auto l2 = [&](size_t k) { return wd != 0.0f ? gradient[k] + wd * weights[k] : gradient[k]; };
  auto size_slot = [n](std::vector<float>& slot, const char* name) {
    if (slot.empty()) slot.assign(n, 0.0f);
    if (slot.size() != n)
      throw std::invalid_argument(fmt::format("optimizer: {} has {} values for {} weights", name, slot.size(), n));
  };

  switch (config.kind) {
    case OptimizerKind::sgd:
      for (size_t k = 0; k < n; ++k) weights[k] = weights[k] - lr * l2(k);
      break;
    case OptimizerKind::momentum: {
      size_slot(slots.slot1, "the velocity");
      const float mu = config.momentum;
      for (size_t k = 0; k < n; ++k) {
        slots.slot1[k] = mu * slots.slot1[k] + l2(k);
        weights[k] = weights[k] - lr * slots.slot1[k];
      }
      break;
    }
    case OptimizerKind::adam:
    case OptimizerKind::adamw: {
      size_slot(slots.slot1, "the first moment");
      size_slot(slots.slot2, "the second moment");
      const bool decoupled = config.kind == OptimizerKind::adamw;
      const uint64_t t = slots.updates_applied + 1;
      const float b1 = config.beta1, b2 = config.beta2, eps = config.epsilon;
      const float one_minus_b1 = 1.0f - b1, one_minus_b2 = 1.0f - b2;
      const float correction1 = 1.0f - beta_power(b1, t), correction2 = 1.0f - beta_power(b2, t);
      const float decay = 1.0f - lr * wd;
      for (size_t k = 0; k < n; ++k) {
        float g = gradient[k];
        if (decoupled)
          weights[k] = weights[k] * decay;
        else
          g = l2(k);
        slots.slot1[k] = b1 * slots.slot1[k] + one_minus_b1 * g;
        slots.slot2[k] = b2 * slots.slot2[k] + one_minus_b2 * (g * g);
        const float m_hat = slots.slot1[k] / correction1;
        const float v_hat = slots.slot2[k] / correction2;
        weights[k] = weights[k] - lr * (m_hat / (std::sqrt(v_hat) + eps));
      }
      break;
    }
  }
  slots.updates_applied += 1;
}

}  // namespace wsemu::train
