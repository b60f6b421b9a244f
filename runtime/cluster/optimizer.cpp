#include "runtime/cluster/optimizer.hpp"

#include <fmt/format.h>

#include <cmath>
#include <numbers>

namespace wsemu::cluster {

pb::OptimizerConfig resolve_optimizer(const pb::OptimizerConfig& requested,
                                      const pb::OptimizerConfig& node_default) {
  pb::OptimizerConfig config = requested;
  if (config.kind() == pb::OPTIMIZER_DEFAULT) config = node_default;
  if (config.kind() == pb::OPTIMIZER_DEFAULT) config.set_kind(pb::SGD);
  if (config.lr() == 0.0f) config.set_lr(0.01f);
  if (config.momentum() == 0.0f) config.set_momentum(0.9f);
  if (config.beta1() == 0.0f) config.set_beta1(0.9f);
  if (config.beta2() == 0.0f) config.set_beta2(0.999f);
  if (config.eps() == 0.0f) config.set_eps(1e-8f);
  if (config.grad_scale() == 0.0f) config.set_grad_scale(1.0f);
  return config;
}

pb::OptimizerKind parse_optimizer_kind(const std::string& name) {
  if (name == "sgd") return pb::SGD;
  if (name == "momentum") return pb::MOMENTUM;
  if (name == "adam") return pb::ADAM;
  if (name == "adamw") return pb::ADAMW;
  throw ConfigError(fmt::format("unknown optimizer '{}' (sgd, momentum, adam, adamw)", name));
}

std::string optimizer_kind_name(pb::OptimizerKind kind) {
  return enum_word(pb::OptimizerKind_Name(kind), "OPTIMIZER_");
}

int optimizer_slot_count(pb::OptimizerKind kind) {
  switch (kind) {
    case pb::MOMENTUM: return train::optimizer_slot_count(train::OptimizerKind::momentum);
    case pb::ADAM:
    case pb::ADAMW: return train::optimizer_slot_count(train::OptimizerKind::adam);
    default: return 0;
  }
}

train::OptimizerConfig to_train_optimizer(const pb::OptimizerConfig& config) {
  train::OptimizerConfig out;
  switch (config.kind()) {
    case pb::MOMENTUM: out.kind = train::OptimizerKind::momentum; break;
    case pb::ADAM: out.kind = train::OptimizerKind::adam; break;
    case pb::ADAMW: out.kind = train::OptimizerKind::adamw; break;
    default: out.kind = train::OptimizerKind::sgd; break;
  }
  out.learning_rate = config.lr();
  out.momentum = config.momentum();
  out.beta1 = config.beta1();
  out.beta2 = config.beta2();
  out.epsilon = config.eps();
  out.weight_decay = config.weight_decay();
  return out;
}

pb::OptimizerConfig to_optimizer_message(const train::OptimizerConfig& config, float grad_scale) {
  pb::OptimizerConfig out;
  switch (config.kind) {
    case train::OptimizerKind::sgd: out.set_kind(pb::SGD); break;
    case train::OptimizerKind::momentum: out.set_kind(pb::MOMENTUM); break;
    case train::OptimizerKind::adam: out.set_kind(pb::ADAM); break;
    case train::OptimizerKind::adamw: out.set_kind(pb::ADAMW); break;
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

void apply_update(const pb::OptimizerConfig& config, uint64_t updates_applied,
                  std::span<float> weights, std::span<float> slot1, std::span<float> slot2,
                  std::span<const float> gradient) {
  train::apply_optimizer_step(to_train_optimizer(config), config.grad_scale(), updates_applied, weights,
                              slot1, slot2, gradient);
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::vector<float> fill_initial_values(const pb::InitRule& rule, uint64_t elements) {
  std::vector<float> out(elements, 0.0f);
  const double a = rule.a();
  const double b = rule.b();
  for (uint64_t i = 0; i < elements; ++i) {
    const uint64_t x = splitmix64(rule.seed() + i * 0x9E3779B97F4A7C15ull);
    const double u1 = static_cast<double>(x >> 40) * 0x1.0p-24;
    switch (rule.kind()) {
      case pb::InitRule::CONSTANT:
        out[i] = rule.a();
        break;
      case pb::InitRule::UNIFORM:
        out[i] = static_cast<float>(a + (b - a) * u1);
        break;
      case pb::InitRule::NORMAL: {
        const double u2 = static_cast<double>((x >> 16) & 0xFFFFFFull) * 0x1.0p-24;
        out[i] = static_cast<float>(a + b * std::sqrt(-2.0 * std::log(1.0 - u1)) *
                                            std::cos(2.0 * std::numbers::pi * u2));
        break;
      }
      default:
        break;
    }
  }
  return out;
}

}  // namespace wsemu::cluster
