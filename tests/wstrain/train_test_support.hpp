// What the `wsemu train` tests share: where the built programs are, running the CLI (and a fresh
// folder for what it writes), and the
// small synthetic run (mlp:16,12,4, 512 samples, batch 16, Adam at 0.01, --verify) each test
// starts from and changes what it is about.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "runtime/wstrain/orchestrator.hpp"
#include "tests/text_checks.hpp"

namespace wsemu::wstrain {

using testing::holds_all;

inline std::string bin_dir() {
  const char* dir = std::getenv("WSEMU_BIN_DIR");
  return dir != nullptr ? dir : "build/bin";
}

// Runs `wsemu ARGS` and returns its exit status (-1: it did not exit), with stdout and stderr.
inline int run_cli(const std::string& args, std::string& output) {
  FILE* pipe = ::popen((bin_dir() + "/wsemu " + args + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  output.clear();
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Runs `wsemu ARGS` where the test needs it to succeed: an exit status other than 0 fails the
// test with the output, which is returned.
inline std::string run_cli_ok(const std::string& args) {
  std::string output;
  EXPECT_EQ(run_cli(args, output), 0) << output;
  return output;
}

// An empty folder of that name under the system's temporary folder, for a run's files.
inline std::filesystem::path fresh_temp_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove_all(dir);
  return dir;
}

inline TrainOptions synthetic_run(size_t wafers, uint64_t steps) {
  TrainOptions o;
  o.run.model = "mlp:16,12,4";
  o.run.dataset = "synthetic";
  o.run.synthetic_samples = 512;
  o.run.batch = 16;
  o.run.wafers = wafers;
  o.run.steps = steps;
  o.optimizer.kind = train::OptimizerKind::adam;
  o.optimizer.learning_rate = 0.01f;
  o.verify = true;
  o.wsemu_binary = bin_dir() + "/wsemu";
  return o;
}

}  // namespace wsemu::wstrain
