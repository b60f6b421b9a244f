// Fault tests: kill -9 a node in the middle of a run, restart it on the same port, or take
// MemoryX's disk away for a while, and the run still ends with the weights of an uninterrupted
// run (the reference, which equals one: see cluster_train_test), with nothing lost or applied
// twice.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstring>
#include <random>
#include <thread>

#include "tests/cluster/cluster_test_support.hpp"

namespace wsemu::cluster::testing {
namespace {

constexpr uint64_t kSteps = 50;

ReferenceOptimizer momentum() { return {.kind = "momentum", .lr = 0.02f, .weight_decay = 0.01f}; }

// Runs the leaves in the background; `fault` runs on this (the cluster's) thread meanwhile.
template <class Fault>
LeafRunResult run_with_fault(LocalCluster& cluster, const SyntheticModel& model, Fault fault) {
  std::atomic<uint64_t> progress{0};
  LeafRunOptions options;
  options.steps = kSteps;
  LeafRunResult result;
  std::thread leaves([&] { result = run_leaves(cluster, model, 4, options, &progress); });
  fault(progress);
  leaves.join();
  return result;
}

void wait_for_step(const std::atomic<uint64_t>& progress, uint64_t step) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (progress.load() < step && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// The MemoryX fault runs: 4 leaves under fan-out 2, momentum, MemoryX writing a checkpoint every
// 7 steps, the synthetic model of `seed` loaded.
struct MemoryXFaultRun {
  explicit MemoryXFaultRun(uint64_t seed)
      : model(SyntheticModel::small(seed)),
        cluster(cluster_options(4, 2, optimizer, {"--checkpoint-every", "7"})) {
    start_with_model(cluster, model, optimizer);
  }
  const ReferenceOptimizer optimizer = momentum();
  const SyntheticModel model;
  LocalCluster cluster;
};

TEST(ClusterFaults, KillingMemoryXAtARandomStepAndRestartingItLosesNothing) {
  Watchdog watchdog(std::chrono::seconds(100), "memoryx kill -9 run");
  MemoryXFaultRun run(21);
  auto& [optimizer, model, cluster] = run;
  std::mt19937 random(std::random_device{}());
  const uint64_t kill_at = 5 + random() % 40;
  const auto downtime = std::chrono::milliseconds(random() % 300);
  SCOPED_TRACE(fmt::format("kill -9 memoryx at step {}, down {} ms", kill_at, downtime.count()));
  const LeafRunResult result =
      run_with_fault(cluster, model, [&](const std::atomic<uint64_t>& progress) {
        wait_for_step(progress, kill_at);
        cluster.kill_memoryx(0, SIGKILL);
        std::this_thread::sleep_for(downtime);
        cluster.restart_memoryx(0);
      });
  ASSERT_TRUE(result.errors.empty()) << result.errors.front();
  EXPECT_TRUE(
      bit_identical(read_model(cluster, model), reference_train(model, optimizer, 4, 2, kSteps)));
  // The root reconnected to the restarted MemoryX.
  ClusterClient root(orchestrator_options(cluster, cluster.root_address()));
  root.connect();
  EXPECT_GE(root.status()["counters"]["upstream_reconnects"].get<uint64_t>(), 1u);
}

TEST(ClusterFaults, KillingSwarmXNodesAndRestartingThemLosesNothing) {
  Watchdog watchdog(std::chrono::seconds(100), "swarmx kill -9 run");
  const auto optimizer = momentum();
  const SyntheticModel model = SyntheticModel::small(22);
  LocalCluster cluster(cluster_options(4, 2, optimizer));
  start_with_model(cluster, model, optimizer);
  std::mt19937 random(std::random_device{}());
  const uint64_t kill_root_at = 3 + random() % 20;
  const uint64_t kill_leaf_node_at = kill_root_at + 3 + random() % 20;
  const size_t leaf_node = random() % 2;
  SCOPED_TRACE(fmt::format("kill -9 the root at step {}, level-0 node {} at step {}", kill_root_at,
                           leaf_node, kill_leaf_node_at));
  const LeafRunResult result =
      run_with_fault(cluster, model, [&](const std::atomic<uint64_t>& progress) {
        wait_for_step(progress, kill_root_at);
        cluster.kill_swarmx(cluster.root_index(), SIGKILL);
        std::this_thread::sleep_for(std::chrono::milliseconds(random() % 200));
        cluster.restart_swarmx(cluster.root_index());
        wait_for_step(progress, kill_leaf_node_at);
        cluster.kill_swarmx(leaf_node, SIGKILL);
        std::this_thread::sleep_for(std::chrono::milliseconds(random() % 200));
        cluster.restart_swarmx(leaf_node);
      });
  ASSERT_TRUE(result.errors.empty()) << result.errors.front();
  EXPECT_TRUE(
      bit_identical(read_model(cluster, model), reference_train(model, optimizer, 4, 2, kSteps)));
  EXPECT_GE(result.reconnects, 2u);  // the two leaves under the killed level-0 node at least
}

// Kills MemoryX 0 with `signal` and restarts it: it must come back with the weights it had,
// which are returned.
std::vector<std::vector<float>> expect_restart_keeps_the_model(LocalCluster& cluster, const SyntheticModel& model,
                                                               int signal) {
  const auto before = read_model(cluster, model);
  cluster.kill_memoryx(0, signal);
  cluster.restart_memoryx(0);
  EXPECT_TRUE(bit_identical(read_model(cluster, model), before));
  return before;
}

TEST(ClusterFaults, MemoryXRestartsFromItsStoreWithIdenticalState) {
  Watchdog watchdog(std::chrono::seconds(60), "memoryx restart");
  const ReferenceOptimizer optimizer{.kind = "adam", .lr = 0.01f};
  const SyntheticModel model = SyntheticModel::small(23);
  LocalCluster cluster(
      cluster_options(1, 1, optimizer, {"--checkpoint-every", "4", "--memory-budget", "8K"}));
  start_with_model(cluster, model, optimizer);
  LeafRunOptions run;
  run.steps = 10;
  ASSERT_TRUE(run_leaves(cluster, model, 1, run).errors.empty());
  // A clean stop (final checkpoint), then a crash with log records after the last checkpoint.
  expect_restart_keeps_the_model(cluster, model, SIGTERM);
  // Ten more steps (checkpoint at 12 and 16, records for 17..19 only in the log), then kill -9.
  LeafRunOptions more = run;
  more.first_step = 10;
  more.steps = 20;
  ASSERT_TRUE(run_leaves(cluster, model, 1, more).errors.empty());
  const auto after = expect_restart_keeps_the_model(cluster, model, SIGKILL);
  EXPECT_TRUE(bit_identical(after, reference_train(model, optimizer, 1, 1, 20)));
}

// A full disk, injected as a file size limit of 0 on the running MemoryX (prlimit): every log
// append fails like ENOSPC would. The run must pause (nothing applied, nothing acknowledged, no
// connection dropped), tell the orchestrator why, and finish bit-identical once space is back;
// the log must then hold exactly the acknowledged updates (kill -9 and restart gives the same
// weights).
TEST(ClusterFaults, AFullDiskPausesTheRunAndLosesNothing) {
  Watchdog watchdog(std::chrono::seconds(100), "memoryx full disk run");
  MemoryXFaultRun run(24);
  auto& [optimizer, model, cluster] = run;
  ClientOptions control_options = orchestrator_options(cluster, cluster.memoryx_addresses().at(0));
  control_options.name = "watcher";
  ClusterClient control(control_options);
  control.connect();
  const pid_t memoryx = cluster.memoryx(0).pid;
  rlimit saved{};
  ASSERT_EQ(::prlimit(memoryx, RLIMIT_FSIZE, nullptr, &saved), 0);
  std::mt19937 random(std::random_device{}());
  const uint64_t full_at = 5 + random() % 30;
  SCOPED_TRACE(fmt::format("disk full at step {}", full_at));
  std::vector<pb::NodeAlert> alerts;
  auto wait_for_alert = [&](bool resolved) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      for (auto& alert : control.take_alerts()) alerts.push_back(alert);
      for (const auto& alert : alerts)
        if (alert.resolved() == resolved) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  };
  uint64_t paused_step = 0, paused_step_later = 0;
  std::string log_error;
  const LeafRunResult result =
      run_with_fault(cluster, model, [&](const std::atomic<uint64_t>& progress) {
        wait_for_step(progress, full_at);
        rlimit full = saved;
        full.rlim_cur = 0;
        ASSERT_EQ(::prlimit(memoryx, RLIMIT_FSIZE, &full, nullptr), 0);
        const bool alerted = wait_for_alert(false);
        if (alerted) {
          paused_step = control.status()["info"]["min_next_step"].get<uint64_t>();
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          const auto status = control.status();
          paused_step_later = status["info"]["min_next_step"].get<uint64_t>();
          log_error = status["info"]["log_error"].get<std::string>();
        }
        ASSERT_EQ(::prlimit(memoryx, RLIMIT_FSIZE, &saved, nullptr), 0);  // space again
        EXPECT_TRUE(alerted) << "no NodeAlert while the log could not be written";
      });
  ASSERT_TRUE(result.errors.empty()) << result.errors.front();
  ASSERT_FALSE(alerts.empty());
  EXPECT_NE(alerts.front().message().find("MemoryX cannot write its log"), std::string::npos)
      << alerts.front().message();
  EXPECT_NE(alerts.front().message().find(std::strerror(EFBIG)), std::string::npos)
      << alerts.front().message();
  EXPECT_NE(log_error.find("cannot write its log"), std::string::npos) << log_error;
  EXPECT_EQ(paused_step_later, paused_step) << "an update was applied while the log was full";
  EXPECT_TRUE(wait_for_alert(true)) << "no NodeAlert saying the log works again";
  const auto expected = reference_train(model, optimizer, 4, 2, kSteps);
  EXPECT_TRUE(bit_identical(read_model(cluster, model), expected));
  // No accept/close storm: the root kept its one connection through the pause.
  const auto counters = control.status()["counters"];
  EXPECT_LE(counters["connections_accepted"].get<uint64_t>(), 6u) << counters.dump();
  EXPECT_GE(counters["log_write_failures"].get<uint64_t>(), 1u) << counters.dump();
  // The log holds exactly the acknowledged updates: a crash now loses nothing.
  cluster.kill_memoryx(0, SIGKILL);
  cluster.restart_memoryx(0);
  EXPECT_TRUE(bit_identical(read_model(cluster, model), expected));
}

}  // namespace
}  // namespace wsemu::cluster::testing
