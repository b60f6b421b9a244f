// topic-16: a and b arrive intact at the east PE (exact), the teardown task ran once, and the
// variant without the flush is the WSE-3 kernel error that says to flush first.
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/expect_host_error.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::HostError;

TEST(Topic16, FlushedQueueCarriesTheSecondColor) {
  const int n = 6;
  const xt::xarray<float> a = random_array({size_t(n)}, 1601), b = random_array({size_t(n)}, 1602);
  LoadedRuntime rt(build_kernel("topic-16-queue-flush", {{"N", n}}));
  rt.memcpy_h2d("a_send", words(a), 0, 0, 1, 1, n);
  rt.memcpy_h2d("b_send", words(b), 0, 0, 1, 1, n);
  rt.launch("receive");
  launch_and_settle(rt, "send");
  std::vector<uint32_t> got_a = read_back(rt, "a_recv", 0, 0, 1, 1, n);
  std::vector<uint32_t> got_b = read_back(rt, "b_recv", 0, 0, 1, 1, n);
  std::vector<uint32_t> teardowns = read_back(rt, "teardowns", 0, 0, 1, 1, 1);
  EXPECT_EQ(got_a, words(a));
  EXPECT_EQ(got_b, words(b));
  EXPECT_EQ(teardowns[0], 1u);
  std::printf("topic-16 N=%d: %llu cycles\n", n, (unsigned long long)rt.cycles());
}

TEST(Topic16, RebindingWithoutFlushIsAKernelError) {
  LoadedRuntime rt(build_kernel("topic-16-queue-flush", {{"N", 6}, {"FLUSH", 0}}));
  rt.launch("receive");
  const HostError e = run_expecting(rt, {"send"}, HostError::Kind::FAULT);
  EXPECT_EQ(e.fault()->kind, emu::FaultKind::KERNEL_ERROR);
  EXPECT_NE(std::string(e.what()).find("qflush"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace wsemu::testing
