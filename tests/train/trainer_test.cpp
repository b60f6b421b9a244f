// The reference trainer: it learns the synthetic data, it is deterministic, and its step is the
// documented composition of shards, micro-batches, the reduction tree and the 1/B scaling
// (checked by recomputing a step from per-sample gradients in that order).
#include "runtime/train/reference_trainer.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "runtime/train/synthetic_dataset.hpp"

namespace wsemu::train {
namespace {

bool bit_identical(const ModelParameters& a, const ModelParameters& b) {
  if (a.layers.size() != b.layers.size()) return false;
  for (size_t l = 0; l < a.layers.size(); ++l) {
    if (a.layers[l].weight.shape() != b.layers[l].weight.shape()) return false;
    if (std::memcmp(a.layers[l].weight.data(), b.layers[l].weight.data(), a.layers[l].weight.size() * 4) != 0 ||
        std::memcmp(a.layers[l].bias.data(), b.layers[l].bias.data(), a.layers[l].bias.size() * 4) != 0)
      return false;
  }
  return true;
}

struct TrainingRun {
  std::vector<float> losses;
  ModelParameters weights;
  Evaluation test;
};

TrainingRun train_synthetic(TrainConfig config, size_t steps, const std::string& model = "mlp:16,32,4") {
  SyntheticSpec data;
  const Dataset train = make_synthetic_dataset(data, DatasetSplit::train);
  const Dataset test = make_synthetic_dataset(data, DatasetSplit::test);
  ReferenceTrainer trainer(ModelSpec::parse(model), config);
  DataOrder order(train.num_samples(), config.global_batch, config.seed);
  TrainingRun run;
  for (uint64_t s = 0; s < steps; ++s) run.losses.push_back(trainer.step(gather_batch(train, order.batch_indices(s))).loss);
  run.weights = trainer.weights();
  run.test = trainer.evaluate(test);
  return run;
}

double mean(const std::vector<float>& values, size_t begin, size_t end) {
  double sum = 0;
  for (size_t k = begin; k < end; ++k) sum += values[k];
  return sum / static_cast<double>(end - begin);
}

TEST(ReferenceTrainer, LearnsTheSyntheticDataInFiftySteps) {
  TrainConfig config;
  config.global_batch = 32;
  config.wafers = 2;
  config.micro_batch = 8;
  config.optimizer = {.kind = OptimizerKind::momentum, .learning_rate = 0.05f, .momentum = 0.9f};
  const TrainingRun run = train_synthetic(config, 50);
  EXPECT_GT(run.losses.front(), 1.0);
  EXPECT_LT(mean(run.losses, 40, 50), 0.35 * mean(run.losses, 0, 5));
  EXPECT_GT(run.test.accuracy, 0.85);
}

TEST(ReferenceTrainer, EveryOptimizerAndADeepModelLearn) {
  for (OptimizerKind kind : {OptimizerKind::sgd, OptimizerKind::adam, OptimizerKind::adamw}) {
    TrainConfig config;
    config.global_batch = 32;
    config.optimizer.kind = kind;
    config.optimizer.learning_rate = kind == OptimizerKind::sgd ? 0.2f : 0.01f;
    config.optimizer.weight_decay = kind == OptimizerKind::adamw ? 0.01f : 0.0f;
    const TrainingRun run = train_synthetic(config, 50, "mlp:16,24,24,4");
    EXPECT_LT(mean(run.losses, 40, 50), 0.5 * mean(run.losses, 0, 5)) << optimizer_name(kind);
  }
}

TEST(ReferenceTrainer, SameSeedGivesBitIdenticalWeights) {
  TrainConfig config;
  config.global_batch = 24;
  config.wafers = 3;
  config.micro_batch = 3;
  config.optimizer = {.kind = OptimizerKind::adam, .learning_rate = 0.01f};
  config.seed = 77;
  const TrainingRun a = train_synthetic(config, 20), b = train_synthetic(config, 20);
  EXPECT_TRUE(bit_identical(a.weights, b.weights));
  EXPECT_EQ(a.losses, b.losses);
  config.seed = 78;
  EXPECT_FALSE(bit_identical(a.weights, train_synthetic(config, 20).weights));
}

TEST(ReferenceTrainer, WaferCountChangesOnlyTheRoundingOfTheSum) {
  TrainConfig config;
  config.global_batch = 30;
  config.optimizer = {.kind = OptimizerKind::sgd, .learning_rate = 0.1f};
  const TrainingRun one = train_synthetic(config, 5);
  config.wafers = 4;
  config.micro_batch = 2;
  const TrainingRun four = train_synthetic(config, 5);
  for (size_t l = 0; l < one.weights.layers.size(); ++l)
    for (size_t k = 0; k < one.weights.layers[l].weight.size(); ++k)
      ASSERT_NEAR(one.weights.layers[l].weight.data()[k], four.weights.layers[l].weight.data()[k], 1e-5);
}

// Recomputes one step from per-sample gradients (micro-batches of one sample each give the
// per-sample terms exactly: a one-term sum from +0 is the term) in the documented order.
TEST(ReferenceTrainer, StepIsShardsThenMicroBatchesThenTheTreeThenTheScale) {
  const ModelSpec spec = ModelSpec::parse("mlp:16,8,4");
  SyntheticSpec data;
  data.num_samples = 100;
  const Dataset train = make_synthetic_dataset(data, DatasetSplit::train);
  TrainConfig config;
  config.global_batch = 10;
  config.wafers = 3;       // shards of 4, 3, 3
  config.micro_batch = 2;  // wafer 0: [0,2) [2,4); wafer 1: [4,6) [6,7); wafer 2: [7,9) [9,10)
  config.optimizer = {.kind = OptimizerKind::sgd, .learning_rate = 0.1f};
  ReductionTree tree;  // ((w2 + w0) + w1): any fixed order the orchestrator's tree gives
  tree.children = {ReductionTree::leaf(2), ReductionTree::leaf(0), ReductionTree::leaf(1)};
  config.reduction = tree;
  ReferenceTrainer trainer(spec, config);
  const ModelParameters before = trainer.weights();
  const std::vector<uint32_t> indices = {5, 17, 3, 99, 42, 8, 61, 0, 77, 23};
  const Batch batch = gather_batch(train, indices);
  const StepResult result = trainer.step(batch);

  auto sample_gradient = [&](size_t n) {
    return micro_batch_gradients(before, {batch.inputs.data() + n * 16, batch.labels.data() + n, 1}, {});
  };
  // A micro-batch sums its samples' terms from +0 in sample order: (0 + t_a) + t_b, which is
  // adding the one-sample sums t_a and t_b to a zero accumulator.
  auto micro = [&](std::vector<size_t> samples) {
    GradientSums sum = zero_gradient_sums(spec);
    for (size_t n : samples) add_gradient_sums(sum, sample_gradient(n));
    return sum;
  };
  auto wafer = [&](std::vector<std::vector<size_t>> micro_batches) {
    GradientSums sum = zero_gradient_sums(spec);
    for (const auto& mb : micro_batches) add_gradient_sums(sum, micro(mb));
    return sum;
  };
  const GradientSums w0 = wafer({{0, 1}, {2, 3}}), w1 = wafer({{4, 5}, {6}}), w2 = wafer({{7, 8}, {9}});
  GradientSums total = w2;
  add_gradient_sums(total, w0);
  add_gradient_sums(total, w1);

  const float scale = 1.0f / 10.0f;
  for (size_t l = 0; l < spec.num_layers(); ++l) {
    const auto& expected_weight = total.gradient.layers[l].weight;
    for (size_t k = 0; k < expected_weight.size(); ++k) {
      const float g = expected_weight.data()[k] * scale;
      ASSERT_EQ(trainer.last_gradient().layers[l].weight.data()[k], g) << "layer " << l << " entry " << k;
      ASSERT_EQ(trainer.weights().layers[l].weight.data()[k], before.layers[l].weight.data()[k] - 0.1f * g);
    }
    for (size_t k = 0; k < total.gradient.layers[l].bias.size(); ++k)
      ASSERT_EQ(trainer.last_gradient().layers[l].bias(k), total.gradient.layers[l].bias(k) * scale);
  }
  EXPECT_EQ(result.loss, total.loss_sum * scale);
  ASSERT_EQ(trainer.last_wafer_sums().size(), 3u);
  EXPECT_EQ(trainer.last_wafer_sums()[1].samples, 3u);
  EXPECT_EQ(trainer.last_wafer_sums()[1].loss_sum, w1.loss_sum);
}

TEST(ReferenceTrainer, PrunedWeightsStayZero) {
  TrainConfig config;
  config.global_batch = 16;
  config.sparsity = 0.75;
  config.optimizer = {.kind = OptimizerKind::adamw, .learning_rate = 0.01f, .weight_decay = 0.1f};
  SyntheticSpec data;
  const Dataset train = make_synthetic_dataset(data, DatasetSplit::train);
  ReferenceTrainer trainer(ModelSpec::parse("mlp:16,32,4"), config);
  DataOrder order(train.num_samples(), 16, 1);
  std::vector<float> losses;
  for (uint64_t s = 0; s < 40; ++s) losses.push_back(trainer.step(gather_batch(train, order.batch_indices(s))).loss);
  const SparsityMask& mask = *trainer.sparsity_mask();
  for (size_t l = 0; l < 2; ++l) {
    size_t zeros = 0;
    for (size_t k = 0; k < mask[l].size(); ++k) {
      if (mask[l].data()[k] == 0) {
        ASSERT_EQ(trainer.weights().layers[l].weight.data()[k], 0.0f);
        ASSERT_EQ(trainer.last_gradient().layers[l].weight.data()[k], 0.0f);
        ++zeros;
      } else {
        EXPECT_NE(trainer.weights().layers[l].weight.data()[k], 0.0f);
      }
    }
    EXPECT_EQ(zeros, mask[l].size() * 3 / 4);
  }
  EXPECT_LT(mean(losses, 30, 40), mean(losses, 0, 5));
}

TEST(ReferenceTrainer, RejectsBadConfigurationsAndBatches) {
  const ModelSpec spec = ModelSpec::parse("mlp:16,4");
  TrainConfig config;
  config.global_batch = 2;
  config.wafers = 3;
  EXPECT_THROW(ReferenceTrainer(spec, config), std::invalid_argument);
  config.wafers = 2;
  config.sparsity = 1.0;
  EXPECT_THROW(ReferenceTrainer(spec, config), std::invalid_argument);
  config.sparsity = 0.0;
  config.reduction = ReductionTree::sequential(3);
  EXPECT_THROW(ReferenceTrainer(spec, config), std::invalid_argument);
  config.reduction.reset();
  ReferenceTrainer trainer(spec, config);
  Batch wrong;
  wrong.inputs = xt::zeros<float>({3, 16});
  wrong.labels = {0, 1, 2};
  EXPECT_THROW(trainer.step(wrong), std::invalid_argument);
  wrong.inputs = xt::zeros<float>({2, 15});
  wrong.labels = {0, 1};
  EXPECT_THROW(trainer.step(wrong), std::invalid_argument);
  wrong.inputs = xt::zeros<float>({2, 16});
  wrong.labels = {0, 4};
  EXPECT_THROW(trainer.step(wrong), std::invalid_argument);
}

TEST(ReductionTree, FanInTreesGroupConsecutiveWafers) {
  EXPECT_EQ(ReductionTree::fan_in_tree(1, 4).to_string(), "(0)");
  EXPECT_EQ(ReductionTree::fan_in_tree(3, 4).to_string(), "(0+1+2)");
  EXPECT_EQ(ReductionTree::fan_in_tree(6, 4).to_string(), "((0+1+2+3)+(4+5))");
  EXPECT_EQ(ReductionTree::fan_in_tree(9, 4).to_string(), "((0+1+2+3)+(4+5+6+7)+8)");
  EXPECT_EQ(ReductionTree::fan_in_tree(5, 2).to_string(), "(((0+1)+(2+3))+4)");
  EXPECT_EQ(ReductionTree::sequential(3).to_string(), "(0+1+2)");
  for (size_t n = 1; n < 40; ++n) EXPECT_NO_THROW(ReductionTree::fan_in_tree(n, 4).validate(n));
  EXPECT_THROW(ReductionTree::fan_in_tree(3, 4).validate(4), std::invalid_argument);
  ReductionTree twice;
  twice.children = {ReductionTree::leaf(0), ReductionTree::leaf(0)};
  EXPECT_THROW(twice.validate(2), std::invalid_argument);
}

TEST(ReductionTree, AddsChildrenLeftToRight) {
  // In fp32 (1e8 + 1) + -1e8 = 0 but (1e8 + -1e8) + 1 = 1: the child order decides.
  const float values[3] = {1e8f, 1.0f, -1e8f};
  EXPECT_EQ(ReductionTree::sequential(3).reduce_scalar(values), 0.0f);
  ReductionTree reordered;
  reordered.children = {ReductionTree::leaf(0), ReductionTree::leaf(2), ReductionTree::leaf(1)};
  EXPECT_EQ(reordered.reduce_scalar(values), 1.0f);
}

}  // namespace
}  // namespace wsemu::train
