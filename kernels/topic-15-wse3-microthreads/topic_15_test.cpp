// topic-15: z = x + 2 w from two concurrent transfers on explicitly named microthreads,
// against the xtensor reference; the variant that puts both receives on one microthread is a
// kernel error that names it.
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/expect_host_error.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::HostError;

TEST(Topic15, ExplicitMicrothreadsCarryTwoTransfersAtOnce) {
  const int n = 8;
  const compiler::Executable exe = build_kernel("topic-15-wse3-microthreads", {{"N", n}});
  const xt::xarray<float> x = random_array({size_t(n)}, 1501), w = random_array({size_t(n)}, 1502);
  runtime::host::SdkRuntime rt(exe);
  rt.load();
  rt.memcpy_h2d("x", words(x), 0, 0, 1, 1, n);
  rt.memcpy_h2d("w", words(w), 0, 0, 1, 1, n);
  rt.launch("compute");
  rt.run_until_quiescent();
  std::vector<uint32_t> z(static_cast<size_t>(n));
  rt.memcpy_d2h(z, "z", 1, 0, 1, 1, n);
  const xt::xarray<double> want = xt::cast<double>(x) + 2.0 * xt::cast<double>(w);
  expect_close(floats(z, {size_t(n)}), want, 1e-6, 1e-6, "z");
  std::printf("topic-15 N=%d: %llu cycles (launch %llu)\n", n, (unsigned long long)rt.cycles(),
              (unsigned long long)rt.stats().launch_cycles);
}

TEST(Topic15, TwoOperationsOnOneMicrothreadAreAKernelError) {
  const compiler::Executable exe = build_kernel("topic-15-wse3-microthreads", {{"N", 8}, {"SAME_UT", 1}});
  runtime::host::SdkRuntime rt(exe);
  rt.load();
  const HostError e = run_expecting(rt, {"compute"}, HostError::Kind::FAULT);
  EXPECT_EQ(e.fault()->kind, emu::FaultKind::KERNEL_ERROR) << e.what();
  EXPECT_NE(std::string(e.what()).find("microthread 7"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace wsemu::testing
