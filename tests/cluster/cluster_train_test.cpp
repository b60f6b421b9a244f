// Multi-process runs on loopback: MemoryX + a SwarmX tree + test leaves train a synthetic model;
// the final weights must be bit-identical to the single-process reference of
// cluster_test_support.cpp (same gradients, same tree summation order, same optimizer formulas).
#include <gtest/gtest.h>

#include <random>

#include "tests/cluster/cluster_test_support.hpp"

namespace wsemu::cluster::testing {
namespace {

constexpr uint64_t kSteps = 50;

ReferenceOptimizer adamw() { return {.kind = "adamw", .lr = 0.01f, .weight_decay = 0.05f}; }

TEST(ClusterTrain, TwoLevelTreeOfFourLeavesMatchesTheReferenceBitForBit) {
  Watchdog watchdog(std::chrono::seconds(90), "two-level tree run");
  const auto optimizer = adamw();
  const SyntheticModel model = SyntheticModel::small(11);
  LocalCluster cluster(cluster_options(4, 2, optimizer));
  cluster.start();
  ASSERT_EQ(cluster.swarmx_count(), 3u) << cluster.describe();  // two level-0 nodes and the root
  init_model(cluster, model, optimizer);
  LeafRunOptions options;
  options.steps = kSteps;
  const LeafRunResult result = run_leaves(cluster, model, 4, options);
  ASSERT_TRUE(result.errors.empty()) << result.errors.front();
  EXPECT_TRUE(
      bit_identical(read_model(cluster, model), reference_train(model, optimizer, 4, 2, kSteps)));
  // The reduced order matters: a flat sum of the four leaves differs somewhere.
  EXPECT_FALSE(bit_identical(reference_train(model, optimizer, 4, 4, kSteps),
                             reference_train(model, optimizer, 4, 2, kSteps)));
}

TEST(ClusterTrain, RandomOrderAndDelaysStillGiveIdenticalWeights) {
  Watchdog watchdog(std::chrono::seconds(90), "reordering run");
  const ReferenceOptimizer optimizer{.kind = "adam", .lr = 0.005f, .weight_decay = 0.01f};
  const SyntheticModel model = SyntheticModel::small(12);
  LocalCluster cluster(cluster_options(4, 2, optimizer));
  start_with_model(cluster, model, optimizer);
  LeafRunOptions options;
  options.steps = kSteps;
  options.shuffle_chunks = true;
  options.random_delays = true;
  options.gradient_chunk = 100;
  options.seed = std::random_device()();
  SCOPED_TRACE(::testing::Message() << "seed " << options.seed);
  const LeafRunResult result = run_leaves(cluster, model, 4, options);
  ASSERT_TRUE(result.errors.empty()) << result.errors.front();
  EXPECT_TRUE(
      bit_identical(read_model(cluster, model), reference_train(model, optimizer, 4, 2, kSteps)));
}

TEST(ClusterTrain, SparseAndDenseStreamsGiveTheSameWeightsWhenTheDroppedValuesAreZero) {
  Watchdog watchdog(std::chrono::seconds(90), "sparse vs dense runs");
  const ReferenceOptimizer optimizer{.kind = "momentum", .lr = 0.05f};
  SyntheticModel model = SyntheticModel::small(13, 0.7);
  model.multiplicative = true;  // zero weights get zero gradients and stay zero
  constexpr uint64_t kSparseSteps = 20;
  const auto expected = reference_train(model, optimizer, 2, 2, kSparseSteps);

  auto run = [&](bool sparse, LeafRunResult& result) {
    LocalCluster cluster(cluster_options(2, 2, optimizer));
    start_with_model(cluster, model, optimizer);
    LeafRunOptions options;
    options.steps = kSparseSteps;
    if (sparse) {
      options.weights.sparsity.set_mode(pb::Sparsity::THRESHOLD);
      options.weights.sparsity.set_threshold(0.0f);
      options.gradients.drop_zeros = true;
    }
    result = run_leaves(cluster, model, 2, options);
    return read_model(cluster, model);
  };
  LeafRunResult dense_result, sparse_result;
  const auto dense = run(false, dense_result);
  const auto sparse = run(true, sparse_result);
  ASSERT_TRUE(dense_result.errors.empty()) << dense_result.errors.front();
  ASSERT_TRUE(sparse_result.errors.empty()) << sparse_result.errors.front();
  EXPECT_TRUE(bit_identical(dense, expected));
  EXPECT_TRUE(bit_identical(sparse, expected));
  // 70% zeros: the sparse streams carry about 30% of the values plus index overhead.
  EXPECT_EQ(dense_result.weight_bytes_received, dense_result.weight_bytes_dense);
  EXPECT_LT(sparse_result.weight_bytes_received, sparse_result.weight_bytes_dense * 6 / 10);
  EXPECT_EQ(sparse_result.weight_bytes_dense, dense_result.weight_bytes_dense);
  EXPECT_LT(sparse_result.gradient_bytes_sent, dense_result.gradient_bytes_sent * 6 / 10);
}

TEST(ClusterTrain, TwoMemoryXShardsSplitTheTensorsAndMatchTheReference) {
  Watchdog watchdog(std::chrono::seconds(90), "sharded run");
  const ReferenceOptimizer optimizer{.kind = "sgd", .lr = 0.1f};
  const SyntheticModel model = SyntheticModel::small(14);
  auto options = cluster_options(2, 4, optimizer);
  options.shards = 2;
  LocalCluster cluster(options);
  start_with_model(cluster, model, optimizer);
  LeafRunOptions run;
  run.steps = 10;
  const LeafRunResult result = run_leaves(cluster, model, 2, run);
  ASSERT_TRUE(result.errors.empty()) << result.errors.front();
  EXPECT_TRUE(
      bit_identical(read_model(cluster, model), reference_train(model, optimizer, 2, 4, 10)));
  // Each shard holds only its own tensors (id mod 2).
  ClusterClient shard1(orchestrator_options(cluster, cluster.memoryx_addresses()[1]));
  shard1.connect();
  const auto held = shard1.read_tensors();
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0].info.tensor_id(), 1u);
  EXPECT_EQ(held[1].info.tensor_id(), 3u);
  EXPECT_EQ(held[0].next_step, 10u);
}

}  // namespace
}  // namespace wsemu::cluster::testing
