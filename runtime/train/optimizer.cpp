#include "runtime/train/optimizer.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <array>
#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xtensor.hpp>

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

namespace {

// Scalars of one update, rounded to fp32 once.
struct UpdateScalars {
  float lr, mu, b1, b2, one_minus_b1, one_minus_b2, c1, c2, eps, wd, scale;
};

template <class V>
auto adapt(V* data, size_t n) {
  return xt::adapt(data, n, xt::no_ownership(), std::array<size_t, 1>{n});
}

// One contiguous range [begin, end) of the update. Element-wise only, so any split gives the
// same bits.
void update_range(OptimizerKind kind, const UpdateScalars& s, float* w, float* m, float* v,
                  const float* grad, size_t n) {
  auto W = adapt(w, n);
  auto G0 = adapt(grad, n);
  xt::xtensor<float, 1> g = G0 * s.scale;
  if (kind != OptimizerKind::adamw && s.wd != 0.0f) g = g + s.wd * W;
  switch (kind) {
    case OptimizerKind::sgd:
      xt::noalias(W) = W - s.lr * g;
      break;
    case OptimizerKind::momentum: {
      auto Vel = adapt(m, n);
      xt::noalias(Vel) = s.mu * Vel + g;
      xt::noalias(W) = W - s.lr * Vel;
      break;
    }
    case OptimizerKind::adam:
    case OptimizerKind::adamw: {
      auto M = adapt(m, n);
      auto Vv = adapt(v, n);
      xt::noalias(M) = s.b1 * M + s.one_minus_b1 * g;
      xt::noalias(Vv) = s.b2 * Vv + s.one_minus_b2 * (g * g);
      xt::xtensor<float, 1> step = (M / s.c1) / (xt::sqrt(Vv / s.c2) + s.eps);
      if (kind == OptimizerKind::adamw && s.wd != 0.0f) step = step + s.wd * W;
      xt::noalias(W) = W - s.lr * step;
      break;
    }
    default:
      break;
  }
}

}  // namespace

int optimizer_slot_count(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::sgd: return 0;
    case OptimizerKind::momentum: return 1;
    case OptimizerKind::adam:
    case OptimizerKind::adamw: return 2;
  }
  return 0;
}

void apply_optimizer_step(const OptimizerConfig& config, float grad_scale, uint64_t updates_applied,
                          std::span<float> weights, std::span<float> slot1, std::span<float> slot2,
                          std::span<const float> gradient) {
  const size_t n = weights.size();
  if (gradient.size() != n) throw std::invalid_argument("gradient and weights differ in size");
  const int slots = optimizer_slot_count(config.kind);
  if ((slots >= 1 && slot1.size() != n) || (slots >= 2 && slot2.size() != n)) {
    throw std::invalid_argument("optimizer state does not match the weights' size");
  }
  const double t = static_cast<double>(updates_applied + 1);
  UpdateScalars s{};
  s.lr = config.learning_rate;
  s.mu = config.momentum;
  s.b1 = config.beta1;
  s.b2 = config.beta2;
  s.one_minus_b1 = 1.0f - s.b1;
  s.one_minus_b2 = 1.0f - s.b2;
  s.c1 = static_cast<float>(1.0 - std::pow(static_cast<double>(s.b1), t));
  s.c2 = static_cast<float>(1.0 - std::pow(static_cast<double>(s.b2), t));
  s.eps = config.epsilon;
  s.wd = config.weight_decay;
  s.scale = grad_scale;
  const OptimizerKind kind = config.kind;
  constexpr size_t kGrain = 1 << 16;
  auto run = [&](size_t begin, size_t end) {
    update_range(kind, s, weights.data() + begin, slots >= 1 ? slot1.data() + begin : nullptr,
                 slots >= 2 ? slot2.data() + begin : nullptr, gradient.data() + begin, end - begin);
  };
  if (n <= kGrain) {
    if (n) run(0, n);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, kGrain),
                    [&](const tbb::blocked_range<size_t>& r) { run(r.begin(), r.end()); });
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
  apply_optimizer_step(config, grad_scale, slots.updates_applied, weights, slots.slot1, slots.slot2,
                       gradient_sum);
  slots.updates_applied += 1;
}

}  // namespace wsemu::train
