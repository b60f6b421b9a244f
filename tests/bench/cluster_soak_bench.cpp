// Soak benchmark of the cluster (run on request): train the synthetic model through MemoryX and a
// two-level SwarmX tree for a while, kill -9 a random node (MemoryX or any SwarmX) every
// --kill-every-s and restart it, SIGSTOP a random node for --stop-s every --stop-every-s, then
// compare the final weights with the reference trainer's (an undisturbed run equals it:
// cluster_train_test). Prints the kills and stops survived, steps lost (must be 0: the weights
// are bit-identical and every step was applied) and both weight hashes.
//
// Usage: cluster_soak_bench [--minutes M=30] [--kill-every-s 30] [--stop-every-s 60] [--stop-s 5]
//        [--seed S]   (needs wsemu-memoryx and wsemu-swarmx next to it, or WSEMU_BIN_DIR)
// Exit status 0 when nothing was lost, 1 otherwise. Figures only otherwise; not a CTest.
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <random>
#include <string>
#include <thread>

#include "tests/cluster/cluster_test_support.hpp"
#include "tools/cli_conventions.hpp"

using namespace wsemu::cluster;
using namespace wsemu::cluster::testing;
using Clock = std::chrono::steady_clock;

namespace {

uint64_t hash_weights(const std::vector<std::vector<float>>& tensors) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the bits
  for (const auto& t : tensors) {
    for (float v : t) {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      for (int i = 0; i < 4; ++i) h = (h ^ ((bits >> (8 * i)) & 0xFF)) * 1099511628211ull;
    }
  }
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  double minutes = 30, kill_every = 30, stop_every = 60, stop_s = 5;
  uint32_t seed = 1;
  CLI::App app{
      "cluster_soak_bench: train through MemoryX and a SwarmX tree while nodes are killed "
      "and stopped; exit 0 when nothing was lost"};
  using wsemu::cli::add_number;
  add_number(app, "--minutes", minutes, "how long to train", 0, 1e6, true);
  add_number(app, "--kill-every-s", kill_every, "seconds between kill -9s", 0, 1e6, true);
  add_number(app, "--stop-every-s", stop_every, "seconds between SIGSTOPs", 0, 1e6, true);
  add_number(app, "--stop-s", stop_s, "seconds a stopped node stays stopped", 0, 1e6);
  add_number(app, "--seed", seed, "seed of the kills and stops", 0, 4294967295.0);
  wsemu::cli::add_version_flag(app, "cluster_soak_bench");
  WSEMU_CLI_PARSE(app, argc, argv);
  std::mt19937 random(seed);

  ReferenceOptimizer optimizer;
  optimizer.kind = "momentum";
  optimizer.lr = 0.02f;
  const SyntheticModel model = SyntheticModel::small(41);
  LocalCluster cluster(cluster_options(4, 2, optimizer, {"--checkpoint-every", "25"}));
  start_with_model(cluster, model, optimizer);

  // Rounds of 50 steps until the time is up; the faults come from this thread meanwhile.
  std::atomic<bool> stop_training{false};
  std::atomic<uint64_t> steps_done{0};
  std::vector<std::string> errors;  // written by the training thread, read after it ended
  std::atomic<bool> failed{false};
  std::thread training([&] {
    while (!stop_training) {
      LeafRunOptions run;
      run.first_step = steps_done;
      run.steps = steps_done + 50;
      run.wait_limit = std::chrono::seconds(120);
      const LeafRunResult result = run_leaves(cluster, model, 4, run);
      if (!result.errors.empty()) {
        errors = result.errors;
        failed = true;
        return;
      }
      steps_done = run.steps;
    }
  });

  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(60 * minutes);
  auto next_kill = start + std::chrono::duration<double>(kill_every);
  auto next_stop = start + std::chrono::duration<double>(stop_every);
  uint64_t kills = 0, stops = 0;
  const size_t nodes = 1 + cluster.swarmx_count();  // node 0: MemoryX
  while (Clock::now() < end && !failed) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (Clock::now() >= next_kill) {
      const size_t node = random() % nodes;
      if (node == 0) {
        cluster.kill_memoryx(0, SIGKILL);
        cluster.restart_memoryx(0);
      } else {
        cluster.kill_swarmx(node - 1, SIGKILL);
        cluster.restart_swarmx(node - 1);
      }
      ++kills;
      fmt::print("{:7.1f} s: kill -9 {} and restart ({} steps done)\n",
                 std::chrono::duration<double>(Clock::now() - start).count(),
                 node == 0 ? std::string("memoryx") : fmt::format("swarmx {}", node - 1),
                 steps_done.load());
      next_kill += std::chrono::duration<double>(kill_every);
    }
    if (Clock::now() >= next_stop) {
      const size_t node = random() % nodes;
      const pid_t pid = node == 0 ? cluster.memoryx(0).pid : cluster.swarmx(node - 1).pid;
      ::kill(pid, SIGSTOP);
      std::this_thread::sleep_for(std::chrono::duration<double>(stop_s));
      ::kill(pid, SIGCONT);
      ++stops;
      fmt::print("{:7.1f} s: SIGSTOP {} for {} s\n",
                 std::chrono::duration<double>(Clock::now() - start).count(),
                 node == 0 ? std::string("memoryx") : fmt::format("swarmx {}", node - 1), stop_s);
      next_stop += std::chrono::duration<double>(stop_every);
    }
  }
  stop_training = true;
  training.join();
  if (!errors.empty()) {
    fmt::print("training failed after {} steps: {}\n", steps_done.load(), errors.front());
    return 1;
  }
  const uint64_t steps = steps_done;
  const auto actual = read_model(cluster, model);
  const auto expected = reference_train(model, optimizer, 4, 2, steps);
  const uint64_t got = hash_weights(actual), want = hash_weights(expected);
  const nlohmann::json status = [&] {
    ClusterClient c(orchestrator_options(cluster, cluster.memoryx_addresses().at(0)));
    c.connect();
    return c.status();
  }();
  const uint64_t applied_steps = status["info"]["min_next_step"].get<uint64_t>();
  const uint64_t lost = steps > applied_steps ? steps - applied_steps : 0;
  fmt::print("soak: {:.1f} min, {} steps, {} kills survived, {} SIGSTOPs survived, steps lost {}, "
             "final weights {:016x} vs undisturbed {:016x}: {}\n",
             std::chrono::duration<double>(Clock::now() - start).count() / 60, steps, kills, stops,
             lost, got, want, got == want ? "bit-identical" : "DIFFERENT");
  return got == want && lost == 0 ? 0 : 1;
}
