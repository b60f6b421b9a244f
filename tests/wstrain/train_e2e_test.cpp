// `wsemu train` end to end: MemoryX and a SwarmX tree on loopback, one emulated wafer process
// per wafer, against the host ReferenceTrainer run with the order the wafers promise
// (feature_chunks 1, sample_chunks = rows, fused multiply-add, the SwarmX tree's reduction).
// The weights must be bit-identical after every step, also when MemoryX is killed and
// restarted mid-run, and with sparse streams.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "runtime/wstrain/orchestrator.hpp"
#include "tests/wstrain/train_test_support.hpp"

namespace wsemu::wstrain {
namespace {

void expect_bit_identical_every_step(const TrainReport& report) {
  ASSERT_FALSE(report.steps.empty());
  for (const StepFigures& s : report.steps) {
    EXPECT_TRUE(s.verified);
    EXPECT_EQ(s.loss, s.reference_loss) << "step " << s.step;
    EXPECT_EQ(s.max_weight_difference, 0.0) << "step " << s.step;
  }
  EXPECT_TRUE(report.final_weights_identical);
}

TEST(WsTrain, TwoWafersTwentyStepsLearnAndMatchTheReferenceBitForBit) {
  std::ostringstream progress;
  const TrainReport report = run_training(synthetic_run(2, 20), progress);
  ASSERT_EQ(report.steps.size(), 20u);
  expect_bit_identical_every_step(report);
  double first = 0, last = 0;
  for (size_t s = 0; s < 5; ++s) {
    first += report.steps[s].loss;
    last += report.steps[15 + s].loss;
  }
  EXPECT_LT(last, 0.7 * first) << "the loss did not decrease";
  EXPECT_GT(report.test_accuracy, 0.5);
  EXPECT_EQ(report.test_accuracy, report.reference_test_accuracy);
  // Every step streamed each layer in twice and the gradients out once.
  const StepFigures& s = report.steps.back();
  EXPECT_GT(s.max_cycles, 0u);
  EXPECT_EQ(s.net_weight_bytes, s.net_weight_bytes_dense);
  EXPECT_EQ(s.net_weight_bytes, 2u * 2u * 4u * (16 * 12 + 12 + 12 * 4 + 4));
}

TEST(WsTrain, MicroBatchesAndThreeWafersWithAnUnevenBatch) {
  TrainOptions o = synthetic_run(3, 6);
  o.run.model = "mlp:16,10,6,4";
  o.run.batch = 17;       // shards 6, 6, 5
  o.run.micro_batch = 4;  // micro-batches 4+2, 4+2, 4+1
  o.run.rows = 2;
  o.optimizer.kind = train::OptimizerKind::momentum;
  o.optimizer.learning_rate = 0.05f;
  std::ostringstream progress;
  const TrainReport report = run_training(o, progress);
  ASSERT_EQ(report.steps.size(), 6u);
  expect_bit_identical_every_step(report);
}

TEST(WsTrain, KillingMemoryXMidRunResumesFromItsStoreWithTheSameWeights) {
  TrainOptions o = synthetic_run(2, 14);
  o.checkpoint_every = 4;
  o.kill_memoryx_after_step = 6;
  std::ostringstream progress;
  const TrainReport report = run_training(o, progress);
  ASSERT_EQ(report.steps.size(), 14u);
  EXPECT_EQ(report.memoryx_restarts, 1u);
  expect_bit_identical_every_step(report);
}

// A wafer worker killed (SIGKILL) at a random moment of a random step, five seeds: the
// orchestrator restarts it at MemoryX's step and the run ends bit-identical to the reference
// (which an undisturbed run equals, TwoWafersTwentyStepsLearnAndMatchTheReferenceBitForBit).
TEST(WsTrain, AKilledWaferIsRestartedAndTheRunStaysBitIdentical) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    TrainOptions o = synthetic_run(2, 10);
    o.kill_wafer_after_step = static_cast<int64_t>(1 + seed % 7);
    o.kill_wafer_seed = seed;
    std::ostringstream progress;
    const TrainReport report = run_training(o, progress);
    // One kill, one restart. (A restart that reads MemoryX's step just before MemoryX completes
    // it with what the dead wafer had sent is started once more at the next step, and is not
    // counted: it is the same restart.)
    EXPECT_EQ(report.wafer_restarts, 1u) << progress.str();
    EXPECT_NE(progress.str().find("restarting it at step"), std::string::npos) << progress.str();
    EXPECT_TRUE(report.final_weights_identical) << progress.str();
    for (const StepFigures& s : report.steps) EXPECT_EQ(s.max_weight_difference, 0.0) << "step " << s.step;
  }
}

// Killed once its last step is reported: either it had finished (nothing to kill) or MemoryX
// already holds everything it sent; the run ends normally, bit-identical, with no second failure
// (it once ended with "wafer 1 stopped (exit 3)": a worker restarted with no steps left).
TEST(WsTrain, AWaferKilledAfterItsLastStepLeavesTheRunComplete) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    TrainOptions o = synthetic_run(2, 4);
    o.kill_wafer_after_step = 4;
    o.kill_wafer_seed = seed;
    std::ostringstream progress;
    const TrainReport report = run_training(o, progress);
    EXPECT_EQ(report.steps.size(), 4u) << progress.str();
    EXPECT_LE(report.wafer_restarts, 1u) << progress.str();
    EXPECT_TRUE(report.final_weights_identical) << progress.str();
  }
}

TEST(WsTrain, SparseStreamsCarryOnlyKeptWeightsAndStillMatch) {
  TrainOptions o = synthetic_run(2, 5);
  o.run.sparsity = 0.75;
  o.run.sparse_stream = true;
  std::ostringstream progress;
  const TrainReport sparse = run_training(o, progress);
  expect_bit_identical_every_step(sparse);
  o.run.sparse_stream = false;
  const TrainReport dense = run_training(o, progress);
  expect_bit_identical_every_step(dense);
  const StepFigures& s = sparse.steps.back();
  const StepFigures& d = dense.steps.back();
  EXPECT_LT(s.net_weight_bytes, d.net_weight_bytes / 2);
  EXPECT_LT(s.weight_wavelets_in, d.weight_wavelets_in);
  EXPECT_LT(s.gradient_wavelets_out, d.gradient_wavelets_out / 2);
  EXPECT_EQ(sparse.test_accuracy, dense.test_accuracy);  // the same model, the same numbers
}

TEST(WsTrain, BadOptionsAreClearErrors) {
  std::string out;
  EXPECT_EQ(run_cli("train --model mlp:16,4 --dataset synthetic --columns 9 --steps 1", out), 2);
  EXPECT_NE(out.find("without features"), std::string::npos) << out;
  EXPECT_EQ(run_cli("train --model mlp:16,4 --dataset synthetic --wafers 4 --batch 2 --steps 1", out), 2);
  EXPECT_NE(out.find("--batch 2 is smaller than --wafers 4"), std::string::npos) << out;
  EXPECT_EQ(run_cli("train --model mlp:16,4 --dataset mnist --steps 1", out), 2);
  EXPECT_NE(out.find("fashion-mnist or synthetic"), std::string::npos) << out;
  EXPECT_EQ(run_cli("train --model mlp:16,x --dataset synthetic --steps 1", out), 2);
  EXPECT_EQ(run_cli("train --optimizer momentum --momentum 0 --model mlp:16,4 --dataset synthetic --steps 1", out), 2);
  EXPECT_NE(out.find("MemoryX reads 0"), std::string::npos) << out;
  // Two wafers under one SwarmX node: there is no node 3 to kill.
  EXPECT_EQ(run_cli("train --model mlp:16,4 --dataset synthetic --wafers 2 --steps 2 --kill-swarmx-after-step 1 "
                    "--kill-swarmx-index 3", out), 2);
  EXPECT_NE(out.find("the tree has 1 SwarmX nodes (0 to 0)"), std::string::npos) << out;
  // Numbers out of range are usage errors before anything starts: "-5" once wrapped to 2^64 - 5
  // steps, and NaN slipped past every comparison.
  for (const std::string bad : {"--steps -5", "--steps 0", "--epochs 0", "--epochs -1", "--epochs nan",
                                "--micro-batch -1", "--synthetic-noise nan", "--lr nan", "--wafers 0",
                                "--fanout 1", "--batch -3", "--sparsity 1.5", "--steps 1x"}) {
    EXPECT_EQ(run_cli("train --model mlp:16,4 --dataset synthetic " + bad, out), 2) << bad << "\n" << out;
    EXPECT_TRUE(out.find("is outside") != std::string::npos || out.find("is not a number") != std::string::npos)
        << bad << "\n" << out;
  }
}

TEST(WsTrain, CommandLineRunWritesTheLossCurveAndSummary) {
  const std::filesystem::path out_dir = fresh_temp_dir("wsemu-train-cli-test");
  const std::string out = run_cli_ok("train --model mlp:16,12,4 --dataset synthetic --synthetic-samples 256 --wafers 2 "
                                     "--batch 16 --steps 4 --lr 0.01 --verify -q --out " +
                                     out_dir.string());
  EXPECT_TRUE(holds_all(out, {"test accuracy", "bit-identical", "predicted time of one step"}));
  EXPECT_TRUE(std::filesystem::exists(out_dir / "loss.csv"));
  EXPECT_TRUE(std::filesystem::exists(out_dir / "loss.png"));
  EXPECT_TRUE(std::filesystem::exists(out_dir / "summary.json"));
  std::filesystem::remove_all(out_dir);
}

}  // namespace
}  // namespace wsemu::wstrain
