#include "runtime/train/optimizer.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "runtime/cluster/optimizer.hpp"

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

cluster::pb::OptimizerConfig to_cluster_config(const OptimizerConfig& config, float grad_scale) {
  cluster::pb::OptimizerConfig out;
  switch (config.kind) {
    case OptimizerKind::sgd: out.set_kind(cluster::pb::SGD); break;
    case OptimizerKind::momentum: out.set_kind(cluster::pb::MOMENTUM); break;
    case OptimizerKind::adam: out.set_kind(cluster::pb::ADAM); break;
    case OptimizerKind::adamw: out.set_kind(cluster::pb::ADAMW); break;
  }
  out.set_lr(config.learning_rate);
  out.set_momentum(config.momentum);
  out.set_beta1(config.beta1);
  out.set_beta2(config.beta2);
  out.set_eps(config.epsilon);
  out.set_weight_decay(config.weight_decay);
  out.set_grad_scale(grad_scale);
  return out;
}

void optimizer_update(const OptimizerConfig& config, OptimizerSlots& slots, std::span<float> weights,
                      std::span<const float> gradient_sum, float grad_scale) {
  if (weights.size() != gradient_sum.size())
    throw std::invalid_argument(fmt::format("optimizer: {} weights but {} gradient values", weights.size(),
                                            gradient_sum.size()));
  const size_t n = weights.size();
  const bool velocity = config.kind != OptimizerKind::sgd;
  const bool second_moment = config.kind == OptimizerKind::adam || config.kind == OptimizerKind::adamw;
  auto size_slot = [n](std::vector<float>& slot, bool used, const char* name) {
    if (used && slot.empty()) slot.assign(n, 0.0f);
    if (used && slot.size() != n)
      throw std::invalid_argument(fmt::format("optimizer: {} has {} values for {} weights", name, slot.size(), n));
  };
  size_slot(slots.slot1, velocity, "slot 1 (velocity / first moment)");
  size_slot(slots.slot2, second_moment, "slot 2 (second moment)");
  cluster::apply_update(to_cluster_config(config, grad_scale), slots.updates_applied, weights, slots.slot1,
                        slots.slot2, gradient_sum);
  slots.updates_applied += 1;
}

}  // namespace wsemu::train
