// Shared pieces of the multi-process cluster tests: a synthetic model whose leaf gradients depend
// on the weights they received, an independent single-process reference trainer (plain loops,
// the tree's summation order, the optimizer formulas written out again), and a driver that runs
// N test leaves as threads against a LocalCluster.
//
// Contract: the reference shares no code with MemoryX or SwarmX; the leaves use only the public
// client API. Every wait is bounded; a Watchdog ends a stuck test process (its nodes die with it).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "runtime/cluster/cluster_client.hpp"
#include "runtime/cluster/local_cluster.hpp"

namespace wsemu::cluster::testing {

struct TensorSpec {
  uint64_t id;
  std::string name;
  uint32_t layer;
  std::vector<uint64_t> shape;
  uint64_t elements() const;
};

struct SyntheticModel {
  std::vector<TensorSpec> tensors;
  uint32_t layers = 0;
  std::vector<std::vector<float>> initial;  // by position in `tensors`
  bool multiplicative = false;              // gradient = w * c: zero weights stay zero under SGD

  // Three layers, five tensors (2,830 elements), values from `seed`; a fraction of exact zeros.
  static SyntheticModel small(uint64_t seed, double zero_fraction = 0.0);
  std::vector<float> gradient(uint32_t rank, uint64_t step, const TensorSpec& tensor,
                              const std::vector<float>& weights) const;
};

struct ReferenceOptimizer {
  std::string kind = "sgd";  // sgd, momentum, adam, adamw
  float lr = 0.01f, momentum = 0.9f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.0f,
        grad_scale = 1.0f;
  pb::OptimizerConfig to_config() const;
  std::vector<std::string> memoryx_args() const;
};

// The weights after `steps` steps of N leaves reduced by a tree of the given fanout.
std::vector<std::vector<float>> reference_train(const SyntheticModel& model,
                                                const ReferenceOptimizer& optimizer,
                                                uint32_t leaves, uint32_t fanout, uint64_t steps);

struct LeafRunOptions {
  uint64_t first_step = 0;
  uint64_t steps = 50;  // runs steps [first_step, steps)
  uint32_t gradient_chunk = 256;
  bool shuffle_chunks = false;  // send each layer's gradient chunks in a random order
  bool random_delays = false;   // sleep 0-2 ms at random points
  uint64_t seed = 1;
  WeightEncoding weights;
  GradientEncoding gradients;
  std::chrono::seconds wait_limit{40};  // longest wait for one weight stream or the final acks
  std::string tls_ca;                   // connect with TLS (the nodes' CA)
};

struct LeafRunResult {
  std::vector<std::string> errors;
  uint64_t weight_bytes_received = 0;
  uint64_t weight_bytes_dense = 0;
  uint64_t gradient_bytes_sent = 0;
  uint64_t gradient_bytes_dense = 0;
  uint64_t reconnects = 0;
};

// Runs one thread per leaf. `progress`, when given, holds the highest step any leaf has begun.
LeafRunResult run_leaves(const LocalCluster& cluster, const SyntheticModel& model, uint32_t leaves,
                         const LeafRunOptions& options, std::atomic<uint64_t>* progress = nullptr);

void init_model(const LocalCluster& cluster, const SyntheticModel& model,
                const ReferenceOptimizer& optimizer, const std::string& tls_ca = "");
std::vector<std::vector<float>> read_model(const LocalCluster& cluster,
                                           const SyntheticModel& model, const std::string& tls_ca = "");

::testing::AssertionResult bit_identical(const std::vector<std::vector<float>>& actual,
                                         const std::vector<std::vector<float>>& expected);

// A cluster of `leaves` under a tree of `fanout`, MemoryX running `optimizer` with
// `memoryx_extra` after the optimizer's arguments.
LocalClusterOptions cluster_options(uint32_t leaves, uint32_t fanout,
                                    const ReferenceOptimizer& optimizer,
                                    const std::vector<std::string>& memoryx_extra = {});

// How an orchestrator reaches the node at `address` of `cluster` (its token, no TLS).
ClientOptions orchestrator_options(const LocalCluster& cluster, const std::string& address);

// Starts `cluster` and loads the model's initial weights with the optimizer (init_model).
void start_with_model(LocalCluster& cluster, const SyntheticModel& model,
                      const ReferenceOptimizer& optimizer, const std::string& tls_ca = "");

// Ends the process (exit code 3) if it is still alive after `limit`.
class Watchdog {
 public:
  Watchdog(std::chrono::seconds limit, std::string what);
  ~Watchdog();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace wsemu::cluster::testing
