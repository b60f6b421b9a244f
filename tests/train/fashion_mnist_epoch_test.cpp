// A measurement, not a CI test (DISABLED_): one epoch of mlp:784,256,10 on Fashion-MNIST with
// the reference trainer, printing the time and the test accuracy (issue 8 expects >= 84%), and
// writing the loss curve. Run it with
//   build/bin/train_test --gtest_also_run_disabled_tests --gtest_filter='*FashionMnist*'
// Environment overrides: WSEMU_FMNIST_OPTIMIZER, _LR, _BATCH, _WAFERS, _MICRO_BATCH, _EPOCHS,
// _SEED, _SPARSITY, _STANDARDIZE (1: standardize_inputs with the Fashion-MNIST statistics), _OUT (directory for loss.csv and loss.png; default: the temp directory).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "runtime/train/loss_curve.hpp"
#include "runtime/train/reference_trainer.hpp"

namespace wsemu::train {
namespace {

std::string env(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

TEST(FashionMnistReference, DISABLED_OneEpochOf784x256x10) {
  if (!std::filesystem::exists(default_fashion_mnist_dir))
    GTEST_SKIP() << "Fashion-MNIST is not installed (Debian package dataset-fashion-mnist)";
  const auto load_start = std::chrono::steady_clock::now();
  Dataset train = load_fashion_mnist(DatasetSplit::train);
  Dataset test = load_fashion_mnist(DatasetSplit::test);
  const bool standardize = env("WSEMU_FMNIST_STANDARDIZE", "0") == "1";
  if (standardize)
    for (Dataset* d : {&train, &test}) standardize_inputs(*d, fashion_mnist_pixel_mean, fashion_mnist_pixel_stddev);
  const double load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();

  TrainConfig config;
  config.optimizer.kind = parse_optimizer_kind(env("WSEMU_FMNIST_OPTIMIZER", "adam"));
  config.optimizer.learning_rate = std::stof(env("WSEMU_FMNIST_LR", "0.001"));
  config.global_batch = std::stoul(env("WSEMU_FMNIST_BATCH", "64"));
  config.wafers = std::stoul(env("WSEMU_FMNIST_WAFERS", "2"));
  config.micro_batch = std::stoul(env("WSEMU_FMNIST_MICRO_BATCH", "0"));
  config.seed = std::stoull(env("WSEMU_FMNIST_SEED", "1"));
  config.sparsity = std::stod(env("WSEMU_FMNIST_SPARSITY", "0"));
  const size_t epochs = std::stoul(env("WSEMU_FMNIST_EPOCHS", "1"));
  const std::filesystem::path out = env("WSEMU_FMNIST_OUT", std::filesystem::temp_directory_path().string());

  ReferenceTrainer trainer(ModelSpec::parse("mlp:784,256,10"), config);
  DataOrder order(train.num_samples(), config.global_batch, config.seed);
  std::vector<LossRecord> curve;
  const auto start = std::chrono::steady_clock::now();
  const uint64_t steps = epochs * order.steps_per_epoch();
  for (uint64_t s = 0; s < steps; ++s) {
    const StepResult r = trainer.step(gather_batch(train, order.batch_indices(s)));
    curve.push_back({s, static_cast<double>(s + 1) / order.steps_per_epoch(), r.loss, r.train_accuracy});
  }
  const double train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto eval_start = std::chrono::steady_clock::now();
  const Evaluation result = trainer.evaluate(test);
  const double eval_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - eval_start).count();

  write_loss_curve_csv(out / "loss.csv", curve);
  plot_loss_curve(out / "loss.png", curve,
                  fmt::format("reference mlp:784,256,10, {} lr {} batch {}",
                              optimizer_name(config.optimizer.kind), config.optimizer.learning_rate,
                              config.global_batch));
  fmt::print("Fashion-MNIST reference: {} epoch(s), {} steps of {} on {} wafer(s), {} lr {}, sparsity {}{}\n"
             "  load {:.2f} s, train {:.2f} s ({:.0f} samples/s), evaluate {:.2f} s\n"
             "  test accuracy {:.2f}%, test loss {:.4f}, last step loss {:.4f}\n  curve: {}\n",
             epochs, steps, config.global_batch, config.wafers, optimizer_name(config.optimizer.kind),
             config.optimizer.learning_rate, config.sparsity, standardize ? ", standardized inputs" : "", load_seconds, train_seconds,
             steps * config.global_batch / train_seconds, eval_seconds, 100 * result.accuracy, result.loss,
             curve.back().loss, (out / "loss.png").string());
  if (config.sparsity == 0.0) {
    EXPECT_GE(result.accuracy, 0.84);
  }
}

}  // namespace
}  // namespace wsemu::train
