// topic-15: z = x + 2 w from two concurrent transfers on explicitly named microthreads,
// against the xtensor reference; the variant that puts both receives on one microthread is a
// kernel error that names it.
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/expect_host_error.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"
#include "kernels/topic-15-wse3-microthreads/topic_15_run.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::HostError;

TEST(Topic15, ExplicitMicrothreadsCarryTwoTransfersAtOnce) {
  const int n = 8;
  const compiler::Executable exe = build_kernel("topic-15-wse3-microthreads", {{"N", n}});
  expect_two_transfers_sum(exe, n, "assembly");
}

TEST(Topic15, TwoOperationsOnOneMicrothreadAreAKernelError) {
  LoadedRuntime rt(build_kernel("topic-15-wse3-microthreads", {{"N", 8}, {"SAME_UT", 1}}));
  const HostError e = run_expecting(rt, {"compute"}, HostError::Kind::FAULT);
  EXPECT_EQ(e.fault()->kind, emu::FaultKind::KERNEL_ERROR) << e.what();
  EXPECT_NE(std::string(e.what()).find("microthread 7"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace wsemu::testing
