// A 2-2-2 MLP worked through by hand (numbers in the comments), and the summation order of the
// chunked sums on values chosen so that every order gives a different fp32 result.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/train/mlp_pass.hpp"
#include "runtime/train/reference_trainer.hpp"

namespace wsemu::train {
namespace {

// x = [1, 2], label 1.
// W1 = [[0.5, -1], [0.25, 0.5]] ([in][out]), b1 = [0.5, -0.25]
//   z1_0 = 1*0.5 + 2*0.25 + 0.5 = 1.5;  z1_1 = 1*(-1) + 2*0.5 - 0.25 = -0.25;  a1 = relu(z1) = [1.5, 0]
// W2 = [[1, -0.5], [2, 1]], b2 = [0, 0.25]
//   z2_0 = 1.5*1 + 0*2 + 0 = 1.5;  z2_1 = 1.5*(-0.5) + 0*1 + 0.25 = -0.5
// softmax: m = 1.5, e = [e^0, e^-2] = [1, 0.1353352832], s = 1.1353352832
//   p = [0.8807970780, 0.1192029220]
//   loss = ln(s) - (z2_1 - m) = 0.1269280110 + 2 = 2.1269280110
// delta2 = p - onehot(1) = [0.8807970780, -0.8807970780]
// dW2 = a1 (outer) delta2 = [[1.5*0.8807970780, 1.5*(-0.8807970780)], [0, 0]]
//     = [[1.3211956170, -1.3211956170], [0, 0]];  db2 = delta2
// g1 = W2 delta2: g1_0 = 1*0.8807970780 + (-0.5)*(-0.8807970780) = 1.3211956170
//                 g1_1 = 2*0.8807970780 + 1*(-0.8807970780) = 0.8807970780
// delta1 = g1 where z1 > 0: [1.3211956170, 0]  (z1_1 = -0.25 is inactive)
// dW1 = x (outer) delta1 = [[1.3211956170, 0], [2.6423912340, 0]];  db1 = [1.3211956170, 0]
ModelParameters hand_parameters() {
  ModelParameters p = ModelParameters::zeros(ModelSpec::parse("mlp:2,2,2"));
  p.layers[0].weight = {{0.5f, -1.0f}, {0.25f, 0.5f}};
  p.layers[0].bias = {0.5f, -0.25f};
  p.layers[1].weight = {{1.0f, -0.5f}, {2.0f, 1.0f}};
  p.layers[1].bias = {0.0f, 0.25f};
  return p;
}

constexpr double tolerance = 2e-7;

TEST(HandWorked, ForwardLossAndGradients) {
  const ModelParameters p = hand_parameters();
  const float x[2] = {1.0f, 2.0f};
  const uint32_t label = 1;
  const ForwardPass pass = forward(p, {x, &label, 1}, {});
  EXPECT_EQ(pass.pre_activations[0](0, 0), 1.5f);
  EXPECT_EQ(pass.pre_activations[0](0, 1), -0.25f);
  EXPECT_EQ(pass.hidden_activations[0](0, 1), 0.0f);
  EXPECT_EQ(pass.pre_activations[1](0, 0), 1.5f);
  EXPECT_EQ(pass.pre_activations[1](0, 1), -0.5f);

  const GradientSums g = micro_batch_gradients(p, {x, &label, 1}, {});
  EXPECT_NEAR(g.loss_sum, 2.1269280110, 4e-7);
  EXPECT_EQ(g.correct, 0u);  // predicted class 0
  EXPECT_NEAR(g.gradient.layers[1].weight(0, 0), 1.3211956170, tolerance);
  EXPECT_NEAR(g.gradient.layers[1].weight(0, 1), -1.3211956170, tolerance);
  EXPECT_EQ(g.gradient.layers[1].weight(1, 0), 0.0f);
  EXPECT_EQ(g.gradient.layers[1].weight(1, 1), 0.0f);
  EXPECT_NEAR(g.gradient.layers[1].bias(0), 0.8807970780, tolerance);
  EXPECT_NEAR(g.gradient.layers[1].bias(1), -0.8807970780, tolerance);
  EXPECT_NEAR(g.gradient.layers[0].weight(0, 0), 1.3211956170, tolerance);
  EXPECT_NEAR(g.gradient.layers[0].weight(1, 0), 2.6423912340, 2 * tolerance);
  EXPECT_EQ(g.gradient.layers[0].weight(0, 1), 0.0f);
  EXPECT_EQ(g.gradient.layers[0].weight(1, 1), 0.0f);
  EXPECT_NEAR(g.gradient.layers[0].bias(0), 1.3211956170, tolerance);
  EXPECT_EQ(g.gradient.layers[0].bias(1), 0.0f);
}

TEST(HandWorked, OneSgdStepOnABatchOfTheSameSampleTwice) {
  // Two copies on two wafers: S = 2 * grad, g = S * (1/2) = grad exactly; w -= 0.5 * g.
  TrainConfig config;
  config.global_batch = 2;
  config.wafers = 2;
  config.optimizer.kind = OptimizerKind::sgd;
  config.optimizer.learning_rate = 0.5f;
  ReferenceTrainer trainer(ModelSpec::parse("mlp:2,2,2"), config);
  trainer.set_weights(hand_parameters());
  Batch batch;
  batch.inputs = {{1.0f, 2.0f}, {1.0f, 2.0f}};
  batch.labels = {1, 1};
  const StepResult result = trainer.step(batch);
  EXPECT_NEAR(result.loss, 2.1269280110, 4e-7);  // the mean over the two copies
  EXPECT_EQ(result.train_accuracy, 0.0);
  const ModelParameters& w = trainer.weights();
  EXPECT_NEAR(w.layers[1].weight(0, 0), 1.0 - 0.5 * 1.3211956170, tolerance);   // 0.3394021915
  EXPECT_NEAR(w.layers[1].weight(0, 1), -0.5 + 0.5 * 1.3211956170, tolerance);  // 0.1605978085
  EXPECT_EQ(w.layers[1].weight(1, 0), 2.0f);
  EXPECT_NEAR(w.layers[1].bias(1), 0.25 + 0.5 * 0.8807970780, tolerance);       // 0.6903985390
  EXPECT_NEAR(w.layers[0].weight(1, 0), 0.25 - 0.5 * 2.6423912340, 2 * tolerance);  // -1.0711956170
  EXPECT_EQ(w.layers[0].weight(1, 1), 0.5f);
  EXPECT_NEAR(w.layers[0].bias(0), 0.5 - 0.5 * 1.3211956170, tolerance);        // -0.1605978085
  EXPECT_NEAR(trainer.last_gradient().layers[0].weight(1, 0), 2.6423912340, 2 * tolerance);
}

// One dense layer 4 -> 2 with weights 1 and inputs [1, 1e8, -1e8, 1] for output 0:
//   sequential:       ((1 + 1e8) + -1e8) + 1 = (1e8 - 1e8) + 1 = 1   (1 + 1e8 rounds to 1e8)
//   2 chunks of 2:    (1 + 1e8) + (-1e8 + 1) = 1e8 + -1e8 = 0
//   4 chunks of 1:    ((1 + 1e8) + -1e8) + 1 = 1 (chunk partials added left to right)
//   3 chunks (2,2,0): same as 2 chunks = 0
TEST(SummationOrder, ChunksAreSummedSeparatelyThenLeftToRight) {
  ModelParameters p = ModelParameters::zeros(ModelSpec::parse("mlp:4,2"));
  p.layers[0].weight = {{1.0f, 0.0f}, {1.0f, 0.0f}, {1.0f, 0.0f}, {1.0f, 0.0f}};
  const float x[4] = {1.0f, 1e8f, -1e8f, 1.0f};
  auto output = [&](size_t chunks) {
    return forward(p, {x, nullptr, 1}, {.feature_chunks = chunks}).pre_activations[0](0, 0);
  };
  EXPECT_EQ(output(1), 1.0f);
  EXPECT_EQ(output(2), 0.0f);
  EXPECT_EQ(output(4), 1.0f);
  EXPECT_EQ(output(3), 0.0f);
}

TEST(SummationOrder, SampleSumsFollowTheSampleChunks) {
  // Four samples with inputs 1e8, 1, -1e8, 1 into a 1 -> 2 layer with zero weights: every
  // sample's logits are [0, 0], so delta = [0.5, -0.5] for label 1; dW[0][0] = sum_b 0.5 * x_b.
  ModelParameters p = ModelParameters::zeros(ModelSpec::parse("mlp:1,2"));
  const float x[4] = {1e8f, 1.0f, -1e8f, 1.0f};
  const uint32_t labels[4] = {1, 1, 1, 1};
  auto dw = [&](size_t chunks) {
    return micro_batch_gradients(p, {x, labels, 4}, {.sample_chunks = chunks}).gradient.layers[0].weight(0, 0);
  };
  // sequential: ((5e7 + 0.5) + -5e7) + 0.5 = (5e7 - 5e7) + 0.5 = 0.5
  // 2 chunks:   (5e7 + 0.5) + (-5e7 + 0.5) = 5e7 - 5e7 = 0
  EXPECT_EQ(dw(1), 0.5f);
  EXPECT_EQ(dw(2), 0.0f);
}

}  // namespace
}  // namespace wsemu::train
