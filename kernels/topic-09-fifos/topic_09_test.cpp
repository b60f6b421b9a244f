// topic-09: seeded fp32 values streamed through the FIFO and the loopback color come back
// cubed (x * x * x in fp32, in order), at the SDK's 512 elements and at a small size.
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::MemcpyOptions;

void check(int n, int fifo_cap) {
  const xt::xarray<float> x = random_array({size_t(n)}, uint32_t(900 + n));
  LoadedRuntime rt(build_kernel("topic-09-fifos", {{"NUM_ELEMS", n}, {"FIFO_CAP", fifo_cap}}));
  MemcpyOptions stream;
  stream.streaming = true;
  rt.launch("start");
  rt.memcpy_h2d("fifos", words(x), 0, 0, 1, 1, n, stream);
  std::vector<uint32_t> out = read_back(rt, "fifos", 0, 0, 1, 1, n, stream);
  std::vector<uint32_t> ncubed = read_back(rt, "ncubed", 0, 0, 1, 1, 1);
  EXPECT_EQ(ncubed[0], uint32_t(n));
  for (int i = 0; i < n; ++i) {
    const float v = x(i);
    ASSERT_EQ(std::bit_cast<float>(out[size_t(i)]), v * v * v) << "element " << i;
  }
  std::printf("topic-09 %d elements, FIFO %d: %llu cycles\n", n, fifo_cap, (unsigned long long)rt.cycles());
}

TEST(Topic09, SdkSize) { check(512, 64); }
TEST(Topic09, SmallFifo) { check(40, 4); }

}  // namespace
}  // namespace wsemu::testing
