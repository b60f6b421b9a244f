// The network clock in whole `wsemu train` runs: with a weight link slow enough that the wafers
// wait for it, the weights stay bit-identical to the reference, and every wafer's emulated cycles
// of every step are the same in a second run with another emulator thread count (and whatever
// order the network's messages arrived in): the clock depends on the model alone.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "runtime/wstrain/orchestrator.hpp"
#include "tests/wstrain/train_test_support.hpp"

namespace wsemu::wstrain {
namespace {

TEST(WsTrainNetwork, ASlowLinkAddsCyclesNotDifferencesAndTheCyclesRepeat) {
  TrainOptions o = synthetic_run(3, 4);
  o.run.batch = 24;
  o.optimizer.kind = train::OptimizerKind::sgd;
  o.fanout = 2;  // two SwarmX levels
  std::ostringstream progress;
  const TrainReport fast = run_training(o, progress);
  o.run.net = {"down.swarmx-wafer.gbs=0.05", "memoryx.optimizer-gparams=0.001"};
  const TrainReport slow = run_training(o, progress);
  o.worker_threads = 2;
  const TrainReport again = run_training(o, progress);
  for (const TrainReport* r : {&fast, &slow, &again}) {
    ASSERT_EQ(r->steps.size(), 4u);
    EXPECT_TRUE(r->final_weights_identical);
    for (const StepFigures& s : r->steps) EXPECT_EQ(s.max_weight_difference, 0.0) << "step " << s.step;
  }
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_GT(slow.steps[i].max_cycles, fast.steps[i].max_cycles) << "step " << i;
    EXPECT_EQ(slow.steps[i].wafer_cycles, again.steps[i].wafer_cycles) << "step " << i;
    EXPECT_GT(slow.steps[i].path.stream.exposed, 0u) << "step " << i;
    EXPECT_EQ(slow.steps[i].path.cycles, slow.steps[i].max_cycles) << "step " << i;
  }
  // From the second step on, layer 0's next stream waits for its update (1 M parameters/s).
  EXPECT_GT(slow.steps[1].path.optimizer.exposed, 0u);
  EXPECT_EQ(slow.steps[0].path.optimizer.exposed, 0u);
}

}  // namespace
}  // namespace wsemu::wstrain
