#include "runtime/wstrain/run_config.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "runtime/train/data_order.hpp"
#include "runtime/train/synthetic_dataset.hpp"

namespace wsemu::wstrain {

size_t RunConfig::largest_micro_batch() const {
  const size_t shard = train::shard_range(batch, wafers, 0).size();  // wafer 0 has the largest
  return micro_batch == 0 ? shard : std::min(micro_batch, shard);
}

NetworkProfile RunConfig::network() const {
  NetworkProfile profile;
  for (const std::string& entry : net) profile.set(entry);
  return profile;
}

void RunConfig::validate() const {
  (void)spec();  // throws ModelSpecError with the column
  (void)network();
  if (dataset != "fashion-mnist" && dataset != "synthetic")
    throw std::invalid_argument(fmt::format("--dataset {}: expected fashion-mnist or synthetic", dataset));
  if (dataset == "fashion-mnist" && (spec().input_dim() != 784 || spec().num_classes() != 10))
    throw std::invalid_argument(fmt::format(
        "--model {}: Fashion-MNIST needs 784 inputs and 10 classes (e.g. mlp:784,256,10)", model));
  if (spec().num_classes() < 2) throw std::invalid_argument("--model: the last layer needs at least 2 classes");
  if (wafers == 0 || wafers > 64) throw std::invalid_argument("--wafers must be 1 to 64");
  if (tree_wafers != 0 && (tree_wafers < wafers || tree_wafers > 1000000))
    throw std::invalid_argument(fmt::format("--tree-wafers {} must be 0 or {} (--wafers) to 1000000", tree_wafers,
                                            wafers));
  if (batch < wafers)
    throw std::invalid_argument(fmt::format("--batch {} is smaller than --wafers {}: every wafer needs a sample",
                                            batch, wafers));
  if (!(sparsity >= 0.0 && sparsity < 1.0)) throw std::invalid_argument("--sparsity must be in [0, 1)");
  if (sparse_stream && sparsity == 0.0)
    throw std::invalid_argument("sparse streaming needs --sparsity > 0");
  if (steps <= first_step) throw std::invalid_argument("the run has no steps left (--steps / --epochs)");
  if (synthetic_samples < batch && dataset == "synthetic")
    throw std::invalid_argument(fmt::format("--synthetic-samples {} is smaller than --batch {}",
                                            synthetic_samples, batch));
}

std::vector<std::string> RunConfig::worker_arguments() const {
  std::vector<std::string> a = {"--model", model, "--dataset", dataset, "--seed", std::to_string(seed),
                                "--batch", std::to_string(batch), "--wafers", std::to_string(wafers),
                                "--micro-batch", std::to_string(micro_batch), "--first-step",
                                std::to_string(first_step), "--steps", std::to_string(steps),
                                "--sparsity", fmt::format("{:.17g}", sparsity),
                                "--synthetic-samples", std::to_string(synthetic_samples),
                                "--synthetic-noise", fmt::format("{:.9g}", synthetic_noise),
                                "--columns", std::to_string(columns), "--rows", std::to_string(rows),
                                "--fanout", std::to_string(fanout), "--tree-wafers", std::to_string(tree_wafers)};
  for (const std::string& entry : net) a.insert(a.end(), {"--net", entry});
  if (!data_dir.empty()) a.insert(a.end(), {"--data-dir", data_dir});
  if (standardize) a.push_back("--standardize");
  if (sparse_stream) a.push_back("--sparse-stream");
  return a;
}

train::Dataset load_run_dataset(const RunConfig& config, train::DatasetSplit split) {
  if (config.dataset == "synthetic") {
    const train::ModelSpec spec = config.spec();
    train::SyntheticSpec s;
    s.input_dim = spec.input_dim();
    s.num_classes = spec.num_classes();
    s.num_samples = split == train::DatasetSplit::train ? config.synthetic_samples
                                                        : std::max<size_t>(1, config.synthetic_samples / 4);
    s.noise_scale = config.synthetic_noise;
    s.seed = config.seed;
    return train::make_synthetic_dataset(s, split);
  }
  train::Dataset d = config.data_dir.empty() ? train::load_fashion_mnist(split)
                                             : train::load_fashion_mnist(split, config.data_dir);
  if (config.standardize)
    train::standardize_inputs(d, train::fashion_mnist_pixel_mean, train::fashion_mnist_pixel_stddev);
  return d;
}

}  // namespace wsemu::wstrain
