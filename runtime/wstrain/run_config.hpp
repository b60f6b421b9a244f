// The settings of a `wsemu train` run that the orchestrator and every wafer worker must agree
// on (model, data, batch geometry, sparsity, wafer shape), how they are written as worker
// arguments, and the data set they name.
//
// Contract: plain data. validate() throws std::invalid_argument naming the option and the fix.
// worker_arguments() gives flags that `wsemu train-worker` parses back to an equal config, so
// that a worker never decides anything the orchestrator did not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/train/dataset.hpp"
#include "runtime/train/model.hpp"
#include "runtime/wstrain/network.hpp"

namespace wsemu::wstrain {

struct RunConfig {
  std::string model = "mlp:784,256,10";
  std::string dataset = "fashion-mnist";  // or "synthetic"
  std::string data_dir;                   // fashion-mnist: the IDX folder (default: Debian's)
  size_t synthetic_samples = 4096;        // synthetic: training samples (test: a quarter)
  float synthetic_noise = 1.0f;
  bool standardize = false;               // fashion-mnist: (x - mean) / std before training
  uint64_t seed = 1;
  size_t batch = 64;                      // global batch over all wafers
  size_t wafers = 1;
  size_t micro_batch = 0;                 // 0: each wafer's whole shard at once
  uint64_t first_step = 0;                // resuming: the step MemoryX expects next
  uint64_t steps = 0;                     // total steps of the run (first_step included)
  double sparsity = 0.0;
  bool sparse_stream = false;             // stream only kept weights (with indices)
  int columns = 0, rows = 0;              // wafer rectangle; 0: chosen for the model
  uint32_t fanout = 4;                    // SwarmX children per node (the tree's depth is in the clock)
  size_t tree_wafers = 0;                 // the wafers the SwarmX tree of the clock is sized for; 0: wafers
                                          // (more: these wafers stand for one shard of a larger cluster)
  std::vector<std::string> net;           // --net KEY=VALUE overrides of the NetworkProfile, in order

  NetworkProfile network() const;         // the defaults with `net` applied (throws on a bad entry)

  train::ModelSpec spec() const { return train::ModelSpec::parse(model); }
  size_t largest_micro_batch() const;     // over all wafers
  size_t network_wafers() const { return tree_wafers == 0 ? wafers : tree_wafers; }
  void validate() const;
  std::vector<std::string> worker_arguments() const;
};

// The training or test split the config names, with the inputs standardized when asked.
train::Dataset load_run_dataset(const RunConfig& config, train::DatasetSplit split);

}  // namespace wsemu::wstrain
