// Every kernel test of kernels/ under 1, 2 and 4 threads and in both stepping modes (tiles
// woken on input, and the reference that steps every tile with work every cycle): each run
// writes a digest per wafer (WSEMU_RUN_DIGEST: final cycle, a hash of the whole statistics
// JSON, a hash of the trace events) and every run must pass and give the reference's digests
// line for line. The kernel tests themselves compare the results against their references.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<std::string> kernel_tests() {
  std::vector<std::string> names;
  std::stringstream in(WSEMU_KERNEL_TEST_NAMES);
  for (std::string name; std::getline(in, name, ',');)
    if (!name.empty()) names.push_back(name);
  return names;
}

struct Mode {
  int threads;
  bool wake_on_input;
};

// Runs one kernel test binary; returns its exit status and the digest lines it wrote.
int run_kernel_test(const std::string& name, Mode mode, std::vector<std::string>& digest) {
  const std::string file = ::testing::TempDir() + "wsemu_digest_" + name + "_" + std::to_string(mode.threads) +
                           (mode.wake_on_input ? "_wake" : "_step") + ".txt";
  std::remove(file.c_str());
  const std::string command = "WSEMU_THREADS=" + std::to_string(mode.threads) +
                              " WSEMU_WAKE_ON_INPUT=" + (mode.wake_on_input ? "1" : "0") + " WSEMU_RUN_DIGEST='" +
                              file + "' '" + WSEMU_TEST_BIN_DIR + "/" + name + "' > /dev/null 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) digest.push_back(line);
  std::remove(file.c_str());
  return status;
}

class KernelModes : public ::testing::TestWithParam<std::string> {};

TEST_P(KernelModes, SameDigestsAtOneTwoFourThreadsInBothSteppingModes) {
  const std::string name = GetParam();
  std::vector<std::string> reference;
  ASSERT_EQ(run_kernel_test(name, {1, false}, reference), 0) << name << " fails in the reference mode";
  ASSERT_FALSE(reference.empty()) << name << " ran no wafer";
  for (const Mode mode : {Mode{1, true}, Mode{2, true}, Mode{4, true}, Mode{4, false}}) {
    std::vector<std::string> digest;
    EXPECT_EQ(run_kernel_test(name, mode, digest), 0) << name << " threads " << mode.threads;
    EXPECT_EQ(digest, reference) << name << " threads " << mode.threads << " wake on input "
                                 << mode.wake_on_input;
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelModes, ::testing::ValuesIn(kernel_tests()),
                         [](const auto& info) { return info.param; });

}  // namespace
