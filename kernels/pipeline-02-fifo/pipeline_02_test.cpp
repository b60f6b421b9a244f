// pipeline-02: with the FIFO, sizes beyond pipeline-01's limit of 19 on wse2 (the SDK's 32, and
// more) come back as x + 1 (u16, wrapping); up to FIFO_CAP elements more than that limit fit,
// one more hangs.
#include <random>

#include "kernels/pipeline-01-basic/pipeline_run.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {


void check(int size, int fifo_cap, uint32_t seed) {
  const compiler::Executable exe = build_kernel("pipeline-02-fifo", {{"SIZE", size}, {"FIFO_CAP", fifo_cap}});
  std::mt19937 gen(seed);
  std::vector<uint32_t> in(static_cast<size_t>(size));
  for (uint32_t& x : in) x = gen() & 0xFFFF;
  in.back() = 0xFFFF;
  uint64_t cycles = 0;
  const std::vector<uint32_t> out = stream_through(exe, in, &cycles);
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(out[i], (in[i] + 1) & 0xFFFF) << "element " << i;
  std::printf("pipeline-02 size %d, FIFO %d: %llu cycles\n", size, fifo_cap, (unsigned long long)cycles);
}

TEST(Pipeline02, SdkSizeThroughTheFifo) { check(32, 32, 201); }
TEST(Pipeline02, LargerThanTheFifoAlone) { check(40, 32, 202); }
TEST(Pipeline02, ManyElementsThroughASmallFifo) { check(24, 16, 203); }
TEST(Pipeline02, FifoPlusThePathIsTheLimit) { check(19 + 16, 16, 204); }

TEST(Pipeline02, OneMoreThanFifoPlusPathHangs) {
  try {
    check(19 + 16 + 1, 16, 205);
    FAIL() << "expected a hang";
  } catch (const runtime::host::HostError& e) {
    EXPECT_EQ(e.kind(), runtime::host::HostError::Kind::HANG) << e.what();
  }
}

}  // namespace
}  // namespace wsemu::testing
