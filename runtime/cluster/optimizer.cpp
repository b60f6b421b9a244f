#include "runtime/cluster/optimizer.hpp"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cmath>
#include <numbers>
#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>

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
  switch (kind) {
    case pb::SGD:
      return "sgd";
    case pb::MOMENTUM:
      return "momentum";
    case pb::ADAM:
      return "adam";
    case pb::ADAMW:
      return "adamw";
    default:
      return "default";
  }
}

int optimizer_slot_count(pb::OptimizerKind kind) {
  switch (kind) {
    case pb::MOMENTUM:
      return 1;
    case pb::ADAM:
    case pb::ADAMW:
      return 2;
    default:
      return 0;
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
void update_range(pb::OptimizerKind kind, const UpdateScalars& s, float* w, float* m, float* v,
                  const float* grad, size_t n) {
  auto W = adapt(w, n);
  auto G0 = adapt(grad, n);
  xt::xtensor<float, 1> g = G0 * s.scale;
  if (kind != pb::ADAMW && s.wd != 0.0f) g = g + s.wd * W;
  switch (kind) {
    case pb::SGD:
      xt::noalias(W) = W - s.lr * g;
      break;
    case pb::MOMENTUM: {
      auto Vel = adapt(m, n);
      xt::noalias(Vel) = s.mu * Vel + g;
      xt::noalias(W) = W - s.lr * Vel;
      break;
    }
    case pb::ADAM:
    case pb::ADAMW: {
      auto M = adapt(m, n);
      auto Vv = adapt(v, n);
      xt::noalias(M) = s.b1 * M + s.one_minus_b1 * g;
      xt::noalias(Vv) = s.b2 * Vv + s.one_minus_b2 * (g * g);
      xt::xtensor<float, 1> step = (M / s.c1) / (xt::sqrt(Vv / s.c2) + s.eps);
      if (kind == pb::ADAMW && s.wd != 0.0f) step = step + s.wd * W;
      xt::noalias(W) = W - s.lr * step;
      break;
    }
    default:
      break;
  }
}

}  // namespace

void apply_update(const pb::OptimizerConfig& config, uint64_t updates_applied,
                  std::span<float> weights, std::span<float> slot1, std::span<float> slot2,
                  std::span<const float> gradient) {
  const size_t n = weights.size();
  if (gradient.size() != n) throw std::invalid_argument("gradient and weights differ in size");
  const int slots = optimizer_slot_count(config.kind());
  if ((slots >= 1 && slot1.size() != n) || (slots >= 2 && slot2.size() != n)) {
    throw std::invalid_argument("optimizer state does not match the weights' size");
  }
  const double t = static_cast<double>(updates_applied + 1);
  UpdateScalars s{};
  s.lr = config.lr();
  s.mu = config.momentum();
  s.b1 = config.beta1();
  s.b2 = config.beta2();
  s.one_minus_b1 = 1.0f - s.b1;
  s.one_minus_b2 = 1.0f - s.b2;
  s.c1 = static_cast<float>(1.0 - std::pow(static_cast<double>(s.b1), t));
  s.c2 = static_cast<float>(1.0 - std::pow(static_cast<double>(s.b2), t));
  s.eps = config.eps();
  s.wd = config.weight_decay();
  s.scale = config.grad_scale();
  const pb::OptimizerKind kind = config.kind();
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
