// `wsemu train` at 16 wafers on the cluster shapes of issue #18: a deep SwarmX tree (fan-out 2,
// four levels), a middle one (fan-out 4) and a flat one (fan-out 16), over 1, 2 and 4 MemoryX
// shards, each with a node killed (SIGKILL) mid-run and restarted. The reference is the host
// ReferenceTrainer reducing in the same tree (--verify): the weights must be bit-identical
// after every step, whatever died.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "runtime/wstrain/orchestrator.hpp"
#include "tests/wstrain/train_test_support.hpp"

namespace wsemu::wstrain {
namespace {

TrainOptions sixteen_wafers(uint32_t fanout, uint32_t shards) {
  TrainOptions o = synthetic_run(16, 4);
  o.run.batch = 32;  // two samples per wafer
  o.fanout = fanout;
  o.memoryx_shards = shards;
  o.checkpoint_every = 1;
  return o;
}

void expect_bit_identical(const TrainReport& report, const std::string& progress) {
  ASSERT_EQ(report.steps.size(), 4u) << progress;
  for (const StepFigures& s : report.steps) {
    EXPECT_TRUE(s.verified) << progress;
    EXPECT_EQ(s.loss, s.reference_loss) << "step " << s.step;
    EXPECT_EQ(s.max_weight_difference, 0.0) << "step " << s.step;
  }
  EXPECT_TRUE(report.final_weights_identical) << progress;
}

TEST(ClusterScale, DeepTreeOfFanoutTwoOverFourShardsSurvivesAKilledLeafSwarmX) {
  TrainOptions o = sixteen_wafers(2, 4);
  o.kill_swarmx_after_step = 2;
  o.kill_swarmx_index = 0;  // serves wafers 0 and 1
  std::ostringstream progress;
  const TrainReport report = run_training(o, progress);
  EXPECT_EQ(report.swarmx_restarts, 1u);
  // 16 leaves in pairs: 8 + 4 + 2 + 1 nodes.
  EXPECT_NE(report.cluster_description.find("swarmx 14 level 3 "), std::string::npos) << report.cluster_description;
  EXPECT_EQ(report.cluster_description.find("swarmx 15 "), std::string::npos) << report.cluster_description;
  expect_bit_identical(report, progress.str());
}

TEST(ClusterScale, FanoutFourOverTwoShardsSurvivesAKilledMemoryX) {
  TrainOptions o = sixteen_wafers(4, 2);
  o.kill_memoryx_after_step = 2;
  std::ostringstream progress;
  const TrainReport report = run_training(o, progress);
  EXPECT_EQ(report.memoryx_restarts, 1u);
  EXPECT_NE(report.cluster_description.find("memoryx shard 1/2 "), std::string::npos) << report.cluster_description;
  expect_bit_identical(report, progress.str());
}

TEST(ClusterScale, FlatTreeOfSixteenSurvivesAKilledRoot) {
  TrainOptions o = sixteen_wafers(16, 1);
  o.kill_swarmx_after_step = 2;  // the root, the only SwarmX node
  std::ostringstream progress;
  const TrainReport report = run_training(o, progress);
  EXPECT_EQ(report.swarmx_restarts, 1u);
  expect_bit_identical(report, progress.str());
}

}  // namespace
}  // namespace wsemu::wstrain
