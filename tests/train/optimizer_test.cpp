// Each optimizer (MemoryX's implementation, reached through train::optimizer_update) for three
// steps on w = [1, -2] with gradients [0.5, -0.25], [0.25, 0.5], [-1, 0.125], against values
// worked out from the formulas (shown in the comments; step 3 of Adam evaluated the same way in
// double precision). The gradients are passed as sums over a batch of 4 with grad_scale 1/4.
#include "runtime/train/optimizer.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

namespace wsemu::train {
namespace {

const std::vector<std::vector<float>> gradients = {{0.5f, -0.25f}, {0.25f, 0.5f}, {-1.0f, 0.125f}};

std::vector<std::vector<float>> run(const OptimizerConfig& config, OptimizerSlots* slots_out = nullptr) {
  std::vector<float> w = {1.0f, -2.0f};
  OptimizerSlots slots;
  std::vector<std::vector<float>> trajectory;
  for (const auto& g : gradients) {
    const std::vector<float> sum = {4.0f * g[0], 4.0f * g[1]};
    optimizer_update(config, slots, w, sum, 0.25f);
    trajectory.push_back(w);
  }
  if (slots_out) *slots_out = slots;
  return trajectory;
}

void expect_near(const std::vector<float>& actual, std::vector<double> expected, double tolerance = 2e-6) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t k = 0; k < actual.size(); ++k) EXPECT_NEAR(actual[k], expected[k], tolerance) << "element " << k;
}

TEST(Optimizer, Momentum) {
  OptimizerConfig config{.kind = OptimizerKind::momentum, .learning_rate = 0.1f, .momentum = 0.9f};
  OptimizerSlots slots;
  const auto w = run(config, &slots);
  expect_near(w[0], {0.95, -1.975});                   // v1 = g1;  w -= 0.1 v1
  expect_near(w[1], {0.95 - 0.07, -1.975 - 0.0275});   // v2 = 0.9 v1 + g2 = [0.7, 0.275]
  expect_near(w[2], {0.88 + 0.037, -2.0025 - 0.03725});  // v3 = 0.9 v2 + g3 = [-0.37, 0.3725]
  expect_near(slots.slot1, {-0.37, 0.3725});
  EXPECT_TRUE(slots.slot2.empty());
}

TEST(Optimizer, Adam) {
  OptimizerConfig config{.kind = OptimizerKind::adam, .learning_rate = 0.1f, .beta1 = 0.9f, .beta2 = 0.999f,
                         .epsilon = 1e-8f};
  OptimizerSlots slots;
  const auto w = run(config, &slots);
  // t = 1: m = 0.1 g, v = 0.001 g^2, m_hat = g, v_hat = g^2: the step is lr * g / (|g| + eps),
  // 0.1 in magnitude: w = [0.9, -1.9].
  expect_near(w[0], {0.9, -1.9});
  // t = 2: m = 0.9 [0.05, -0.025] + 0.1 [0.25, 0.5] = [0.07, 0.0275]
  //        v = 0.999 [0.00025, 0.0000625] + 0.001 [0.0625, 0.25] = [0.00031225, 0.0003124375]
  //        m_hat = m / 0.19 = [0.3684210526, 0.1447368421];  v_hat = v / 0.001999 = [0.1562031016, 0.1562969...]
  //        step = 0.1 m_hat / sqrt(v_hat) = [0.0932179595, 0.0366103558]
  expect_near(w[1], {0.8067820405, -1.9366103558});
  expect_near(w[2], {0.8274177429, -1.9781754745});
  EXPECT_EQ(slots.updates_applied, 3u);
  // The moments use the fp32 constants: b1 = 0.9f = 0.89999997616, 1 - b1 = 0.10000002384,
  // b2 = 0.999f = 0.99900001287, 1 - b2 = 0.00099998713 (the real 0.1 and 0.001 would give
  // m = [-0.037, 0.03725] and v = [0.00131193775, 0.00032775006]).
  expect_near(slots.slot1, {-0.0370000116, 0.0372500088}, 6e-9);  // fp32 ulp here: 3.7e-9
  expect_near(slots.slot2, {0.00131192087, 0.000327745848}, 1e-10);
}

// The weights after each step, worked by hand, of the optimizers whose state needs no check of
// its own (Momentum and Adam below check their slots too).
struct Trajectory {
  const char* name;
  OptimizerConfig config;
  std::vector<std::vector<double>> weights;  // after step 1, 2, ...
  friend void PrintTo(const Trajectory& t, std::ostream* os) { *os << t.name; }
};

class OptimizerTrajectory : public ::testing::TestWithParam<Trajectory> {};

TEST_P(OptimizerTrajectory, FollowsTheFormulas) {
  const Trajectory& t = GetParam();
  const auto w = run(t.config);
  for (size_t step = 0; step < t.weights.size(); ++step) {
    SCOPED_TRACE("after step " + std::to_string(step + 1));
    expect_near(w[step], t.weights[step]);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Optimizer, OptimizerTrajectory,
    ::testing::Values(
        // w - 0.1 g: [0.95, -1.975], [0.925, -2.025], [1.025, -2.0375]
        Trajectory{"Sgd",
                   {.kind = OptimizerKind::sgd, .learning_rate = 0.1f},
                   {{1 - 0.05, -2 + 0.025}, {0.95 - 0.025, -1.975 - 0.05}, {0.925 + 0.1, -2.025 - 0.0125}}},
        // g' = g + 0.1 w = [0.5 + 0.1, -0.25 - 0.2] = [0.6, -0.45];  w = [0.94, -1.955]
        // g' = [0.25 + 0.094, 0.5 - 0.1955] = [0.344, 0.3045];  w = [0.9056, -1.98545]
        Trajectory{"SgdWithL2WeightDecay",
                   {.kind = OptimizerKind::sgd, .learning_rate = 0.1f, .weight_decay = 0.1f},
                   {{0.94, -1.955}, {0.9056, -1.98545}}},
        // w = w - lr * (adam_step + wd * w), i.e. w * (1 - lr * wd) - lr * adam_step.
        // t = 1: adam_step = [1, -1]: w = [1 - 0.1 * (1 + 0.1), -2 - 0.1 * (-1 - 0.2)] = [0.89, -1.88]
        // t = 2: w * 0.99 = [0.8811, -1.8612], minus lr * the Adam step of the Adam test
        Trajectory{"AdamWAddsTheDecoupledDecayToTheAdamStep",
                   {.kind = OptimizerKind::adamw, .learning_rate = 0.1f, .weight_decay = 0.1f},
                   {{0.89, -1.88},
                    {0.8811 - 0.0932179595, -1.8612 - 0.0366103558},
                    {0.8006389225, -1.9203973709}}},
        // t = 1: g' = [0.6, -0.45], still a step of 0.1 in magnitude
        // t = 2: g' = [0.25 + 0.09, 0.5 - 0.19] = [0.34, 0.31];  m = [0.088, -0.0095]
        Trajectory{"AdamWithL2AddsTheDecayToTheGradient",
                   {.kind = OptimizerKind::adam, .learning_rate = 0.1f, .weight_decay = 0.1f},
                   {{0.9, -1.9}, {0.8050097659, -1.8870586755}}}),
    [](const ::testing::TestParamInfo<Trajectory>& info) { return std::string(info.param.name); });

TEST(Optimizer, RejectsBadConfigurationsAndSizes) {
  std::vector<float> w = {1.0f}, g = {1.0f, 2.0f};
  OptimizerSlots slots;
  EXPECT_THROW(optimizer_update({}, slots, w, g, 1.0f), std::invalid_argument);
  EXPECT_THROW((OptimizerConfig{.learning_rate = 0.0f}.validate()), std::invalid_argument);
  EXPECT_THROW((OptimizerConfig{.kind = OptimizerKind::adam, .beta2 = 1.0f}.validate()), std::invalid_argument);
  EXPECT_THROW((OptimizerConfig{.kind = OptimizerKind::momentum, .momentum = 1.5f}.validate()), std::invalid_argument);
  EXPECT_EQ(parse_optimizer_kind("adamw"), OptimizerKind::adamw);
  try {
    parse_optimizer_kind("rmsprop");
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown optimizer 'rmsprop' (expected one of: sgd, momentum, adam, adamw)");
  }
}

}  // namespace
}  // namespace wsemu::train
