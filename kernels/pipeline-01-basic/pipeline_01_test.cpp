// pipeline-01: at the SDK's size (12) the stream comes back as x + 1 (u16, wrapping); one
// element more than the path can hold makes memcpy_h2d fail with a hang report that names the
// PE, the output queue and the color the add16 is stuck on.
#include <random>

#include "kernels/pipeline-01-basic/pipeline_run.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::HostError;

constexpr int kLoopColor = 0;
// What holds elements while nothing drains, on wse2 (depths from emulator/README.md): the
// sink's input queue 3 (4) and its router's west buffer (3), the adder's output queue 2 (6) and
// the stream's input queue 1 (6). The memcpy_h2d call completes once the firmware has handed
// the last element to the kernel's input queue (its own output queue 5 empty again).
constexpr int kCapacity = 4 + 3 + 6 + 6;

std::vector<uint32_t> stream_values(int size, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<uint32_t> v(static_cast<size_t>(size));
  for (uint32_t& x : v) x = gen() & 0xFFFF;
  v[0] = 0xFFFF;  // wraps to 0
  return v;
}

// Runs start, the H2D stream, drain, the D2H stream; returns what came back.
std::vector<uint32_t> run_pipeline(int size, const std::vector<uint32_t>& in, uint64_t* cycles = nullptr) {
  return stream_through(build_kernel("pipeline-01-basic", {{"SIZE", size}}), in, cycles);
}

TEST(Pipeline01, AddsOneAtTheSdkSize) {
  const std::vector<uint32_t> in = stream_values(12, 101);
  uint64_t cycles = 0;
  const std::vector<uint32_t> out = run_pipeline(12, in, &cycles);
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(out[i], (in[i] + 1) & 0xFFFF) << "element " << i;
  std::printf("pipeline-01 size 12: %llu cycles\n", (unsigned long long)cycles);
}

TEST(Pipeline01, LargestSizeThatFitsStillCompletes) {
  const std::vector<uint32_t> in = stream_values(kCapacity, 102);
  const std::vector<uint32_t> out = run_pipeline(kCapacity, in);
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(out[i], (in[i] + 1) & 0xFFFF) << "element " << i;
}

TEST(Pipeline01, OneMoreHangsWithAReportNamingPeQueueAndColor) {
  const int size = kCapacity + 1;
  const std::vector<uint32_t> in = stream_values(size, 103);
  try {
    run_pipeline(size, in);
    FAIL() << "size " << size << " should not fit without a FIFO";
  } catch (const HostError& e) {
    ASSERT_EQ(e.kind(), HostError::Kind::HANG) << e.what();
    const emu::HangReport& h = *e.hang();
    const emu::BlockedPe* pe = nullptr;
    for (const emu::BlockedPe& p : h.pes)
      if (p.x == 1 && p.y == 1) pe = &p;
    ASSERT_NE(pe, nullptr) << e.what();
    bool add16_on_full_queue = false;
    for (const emu::Wait& w : pe->waits)
      if (w.kind == emu::Wait::Kind::MICROTHREAD && w.reason == emu::StallReason::OUTPUT_QUEUE_FULL &&
          w.queue == 2 && w.color == kLoopColor)
        add16_on_full_queue = true;
    EXPECT_TRUE(add16_on_full_queue) << e.what();
    const std::string text = e.what();
    EXPECT_NE(text.find("PE(1,1)"), std::string::npos) << text;
    EXPECT_NE(text.find("output queue 2 (color 0) is full"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace wsemu::testing
