// The optimizers against values worked out by hand (two steps each), their determinism under
// any split of the work, and the seeded initial-value rules against an independent SplitMix64.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/cluster/optimizer.hpp"

namespace wsemu::cluster {
namespace {

pb::OptimizerConfig config(pb::OptimizerKind kind, float lr, float weight_decay = 0.0f) {
  pb::OptimizerConfig c;
  c.set_kind(kind);
  c.set_lr(lr);
  c.set_weight_decay(weight_decay);
  return resolve_optimizer(c, pb::OptimizerConfig());  // momentum 0.9, betas 0.9/0.999, eps 1e-8
}

struct OptimizerRun {
  std::vector<float> w, m, v;
  uint64_t t = 0;
  void step(const pb::OptimizerConfig& c, std::vector<float> g) {
    apply_update(c, t++, w, m, v, g);
  }
};

OptimizerRun make(std::vector<float> w) {
  OptimizerRun r;
  r.m.assign(w.size(), 0.0f);
  r.v.assign(w.size(), 0.0f);
  r.w = std::move(w);
  return r;
}

TEST(ClusterOptimizer, SgdByHand) {
  OptimizerRun r = make({1.0f, -2.0f});
  r.step(config(pb::SGD, 0.1f), {0.5f, -1.0f});
  EXPECT_FLOAT_EQ(r.w[0], 0.95f);  // 1 - 0.1*0.5
  EXPECT_FLOAT_EQ(r.w[1], -1.9f);  // -2 - 0.1*(-1)
  r.step(config(pb::SGD, 0.1f, 0.5f), {0.5f, 0.0f});
  EXPECT_FLOAT_EQ(r.w[0], 0.8525f);  // g' = 0.5 + 0.5*0.95 = 0.975; 0.95 - 0.0975
  EXPECT_FLOAT_EQ(r.w[1], -1.805f);  // g' = 0.5*(-1.9) = -0.95; -1.9 + 0.095
}

TEST(ClusterOptimizer, MomentumByHand) {
  OptimizerRun r = make({1.0f});
  const auto c = config(pb::MOMENTUM, 0.1f);
  r.step(c, {0.5f});
  EXPECT_FLOAT_EQ(r.m[0], 0.5f);
  EXPECT_FLOAT_EQ(r.w[0], 0.95f);
  r.step(c, {0.5f});
  EXPECT_FLOAT_EQ(r.m[0], 0.95f);   // 0.9*0.5 + 0.5
  EXPECT_FLOAT_EQ(r.w[0], 0.855f);  // 0.95 - 0.095
}

TEST(ClusterOptimizer, AdamByHand) {
  OptimizerRun r = make({1.0f});
  const auto c = config(pb::ADAM, 0.1f);
  r.step(c, {0.5f});
  // m = 0.05, v = 0.00025, m^ = 0.5, v^ = 0.25: step = 0.5 / (0.5 + 1e-8)
  // (1 - beta2) is rounded to fp32 once (0.999f is not exact), hence the tolerances on v.
  EXPECT_FLOAT_EQ(r.m[0], 0.05f);
  EXPECT_NEAR(r.v[0], 0.00025f, 1e-8);
  EXPECT_FLOAT_EQ(r.w[0], 0.9f);
  r.step(c, {0.25f});
  // m = 0.045 + 0.025 = 0.07; v = 0.00024975 + 0.0000625 = 0.00031225
  // m^ = 0.07/0.19 = 0.368421; v^ = 0.00031225/0.001999 = 0.156203; sqrt = 0.395225
  // w = 0.9 - 0.1 * 0.932181 = 0.806782
  EXPECT_FLOAT_EQ(r.m[0], 0.07f);
  EXPECT_NEAR(r.v[0], 0.00031225f, 1e-8);
  EXPECT_NEAR(r.w[0], 0.806782f, 2e-6);
}

TEST(ClusterOptimizer, AdamWithL2AndAdamWByHand) {
  OptimizerRun l2 = make({1.0f});
  l2.step(config(pb::ADAM, 0.1f, 0.1f), {0.5f});
  // g' = 0.5 + 0.1*1 = 0.6; m^ = 0.6, v^ = 0.36: step 1 -> w = 0.9
  EXPECT_NEAR(l2.m[0], 0.06f, 1e-7);
  EXPECT_FLOAT_EQ(l2.w[0], 0.9f);
  OptimizerRun decoupled = make({1.0f});
  decoupled.step(config(pb::ADAMW, 0.1f, 0.1f), {0.5f});
  // step = 1 + 0.1*1 = 1.1 -> w = 1 - 0.11 = 0.89; the moments see only g
  EXPECT_FLOAT_EQ(decoupled.m[0], 0.05f);
  EXPECT_FLOAT_EQ(decoupled.w[0], 0.89f);
}

TEST(ClusterOptimizer, GradScaleMultipliesTheSumFirst) {
  OptimizerRun r = make({1.0f});
  auto c = config(pb::SGD, 0.1f);
  c.set_grad_scale(0.25f);
  r.step(c, {2.0f});
  EXPECT_FLOAT_EQ(r.w[0], 0.95f);
}

TEST(ClusterOptimizer, LargeTensorsSplitAcrossThreadsGiveTheSameBits) {
  const size_t n = 300000;  // several TBB grains
  std::vector<float> w(n), g(n);
  for (size_t i = 0; i < n; ++i) {
    w[i] = std::sin(static_cast<float>(i)) * 0.1f;
    g[i] = std::cos(static_cast<float>(i) * 0.7f);
  }
  const auto c = config(pb::ADAMW, 0.01f, 0.02f);
  std::vector<float> w_all = w, m_all(n), v_all(n);
  apply_update(c, 3, w_all, m_all, v_all, g);
  for (size_t begin = 0; begin < n; begin += 1000) {  // element by element ranges
    const size_t count = std::min<size_t>(1000, n - begin);
    std::vector<float> w_part(w.begin() + begin, w.begin() + begin + count), m(count), v(count);
    apply_update(c, 3, w_part, m, v, std::span<const float>(g.data() + begin, count));
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(w_part[i], w_all[begin + i]) << begin + i;
  }
}

uint64_t reference_splitmix(uint64_t& state) {  // Vigna's reference code
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

TEST(ClusterOptimizer, InitRules) {
  pb::InitRule rule;
  rule.set_kind(pb::InitRule::UNIFORM);
  rule.set_seed(42);
  rule.set_a(-0.5f);
  rule.set_b(0.5f);
  const auto values = fill_initial_values(rule, 100);
  uint64_t state = 42;
  for (size_t i = 0; i < values.size(); ++i) {
    const double u = static_cast<double>(reference_splitmix(state) >> 40) / 16777216.0;
    ASSERT_EQ(values[i], static_cast<float>(-0.5 + u)) << i;
  }
  rule.set_kind(pb::InitRule::NORMAL);
  rule.set_a(0.0f);
  rule.set_b(1.0f);
  const auto normal = fill_initial_values(rule, 20000);
  double mean = 0, square = 0;
  for (float x : normal) {
    mean += x;
    square += static_cast<double>(x) * x;
  }
  mean /= normal.size();
  EXPECT_NEAR(mean, 0.0, 0.03);
  EXPECT_NEAR(square / normal.size() - mean * mean, 1.0, 0.05);
  rule.set_kind(pb::InitRule::CONSTANT);
  rule.set_a(0.25f);
  EXPECT_EQ(fill_initial_values(rule, 3), (std::vector<float>{0.25f, 0.25f, 0.25f}));
  EXPECT_THROW(parse_optimizer_kind("rmsprop"), ConfigError);
}

}  // namespace

TEST(ClusterOptimizer, MessageCarriesEveryPlainSetting) {
  const auto message = to_optimizer_message({.kind = train::OptimizerKind::momentum, .learning_rate = 0.5f, .momentum = 0.8f,
                                     .beta1 = 0.7f, .beta2 = 0.6f, .epsilon = 1e-3f, .weight_decay = 0.2f},
                                    0.125f);
  EXPECT_EQ(message.kind(), pb::MOMENTUM);
  EXPECT_EQ(message.lr(), 0.5f);
  EXPECT_EQ(message.momentum(), 0.8f);
  EXPECT_EQ(message.beta1(), 0.7f);
  EXPECT_EQ(message.beta2(), 0.6f);
  EXPECT_EQ(message.eps(), 1e-3f);
  EXPECT_EQ(message.weight_decay(), 0.2f);
  EXPECT_EQ(message.grad_scale(), 0.125f);
  // and back: the plain settings MemoryX applies are the ones sent
  const train::OptimizerConfig plain = to_train_optimizer(message);
  EXPECT_EQ(plain.kind, train::OptimizerKind::momentum);
  EXPECT_EQ(plain.learning_rate, 0.5f);
  EXPECT_EQ(plain.momentum, 0.8f);
  EXPECT_EQ(plain.beta1, 0.7f);
  EXPECT_EQ(plain.beta2, 0.6f);
  EXPECT_EQ(plain.epsilon, 1e-3f);
  EXPECT_EQ(plain.weight_decay, 0.2f);
}

}  // namespace wsemu::cluster
