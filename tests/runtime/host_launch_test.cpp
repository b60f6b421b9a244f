// launch through the firmware: every PE of the rectangle runs the function, arguments arrive,
// kernel faults and hangs come back as categorized HostErrors; stats and dump_core.
#include <gmock/gmock.h>

#include <nlohmann/json.hpp>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::HostError;
using runtime::host::SdkRuntime;

compiler::Executable build(const std::string& layout, std::map<std::string, int64_t> params = {},
                          const std::string& arch = "") {
  compiler::layout::BuildOptions o;
  o.params = std::move(params);
  o.arch = arch;
  o.include_dirs = {firmware::include_dir()};
  auto r = compiler::layout::build_layout_file(source_dir() + "/tests/runtime/host_kernels/" + layout, o);
  if (!r.ok()) throw std::runtime_error(compiler::layout::format_diagnostics(r.diagnostics));
  return *r.executable;
}

class HostLaunch : public ::testing::TestWithParam<std::string> {};

TEST_P(HostLaunch, RunsOnEveryPeOfTheRectangle) {
  LoadedRuntime rt(build("echo.wsl", {{"W", 3}, {"H", 2}, {"FW", 6}, {"OX", 2}}, GetParam()));
  std::vector<uint32_t> in(3 * 2 * 8);
  for (size_t i = 0; i < in.size(); ++i) in[i] = std::bit_cast<uint32_t>(float(i) - 3.5f);
  rt.memcpy_h2d("words", in, 0, 0, 3, 2, 8);
  rt.launch("scale");
  std::vector<uint32_t> out(in.size());
  rt.memcpy_d2h(out, "words", 0, 0, 3, 2, 8);
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(std::bit_cast<float>(out[i]), 2.0f * (float(i) - 3.5f));
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x) {
      const std::vector<uint32_t> r = rt.read_symbol(x, y, "result");
      EXPECT_EQ(r[0], uint32_t(x));
      EXPECT_EQ(r[1], uint32_t(y));
    }
  EXPECT_GT(rt.stats().launch_cycles, 0u);
}

TEST_P(HostLaunch, ArgumentsReachEveryPe) {
  LoadedRuntime rt(build("echo.wsl", {}, GetParam()));
  rt.launch("record_args", std::vector<uint32_t>{40, 2, 7});
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 2; ++x) {
      const std::vector<uint32_t> r = rt.read_symbol(x, y, "result");
      EXPECT_EQ(r[2], 42u);
      EXPECT_EQ(r[3], 7u);
    }
}

INSTANTIATE_TEST_SUITE_P(Arch, HostLaunch, ::testing::Values("wse2", "wse3"));

TEST(HostRuntime, StatsJsonHasTheHostSection) {
  LoadedRuntime rt(build("echo.wsl"));
  rt.memcpy_h2d("words", std::vector<uint32_t>(32, 0), 0, 0, 2, 2, 8);
  rt.launch("scale");
  const nlohmann::json j = rt.stats_json();
  EXPECT_EQ(j["host"]["cycles"].get<uint64_t>(), rt.cycles());
  EXPECT_EQ(j["host"]["transactions"].get<uint64_t>(), 2u);
  EXPECT_NEAR(j["host"]["channel"]["wavelets_per_cycle"].get<double>(), 7e9 / 32 / 850e6, 1e-9);
  EXPECT_EQ(j["host"]["phases"].size(), 2u);
  EXPECT_EQ(j["host"]["phases"][0]["what"], "memcpy_h2d words");
}

TEST(HostRuntime, DumpCoreShowsTheFirmwareQueues) {
  LoadedRuntime rt(build("echo.wsl"));
  const std::string d = rt.dump_core(1, 1);
  EXPECT_THAT(d, ::testing::HasSubstr("PE(1,1) at cycle"));
  EXPECT_THAT(d, ::testing::HasSubstr("input queue 0 (color 21)"));
  EXPECT_THAT(rt.dump_core(0, 0), ::testing::HasSubstr("no program"));
}

TEST(HostRuntime, CallsBeforeLoadOrAfterStopAreUsageErrors) {
  SdkRuntime rt(build("echo.wsl"));
  EXPECT_THROW(rt.launch("scale"), HostError);
  rt.load();
  rt.stop();
  try {
    rt.launch("scale");
    ADD_FAILURE();
  } catch (const HostError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("stopped"));
  }
}

}  // namespace
}  // namespace wsemu::testing

namespace wsemu::testing {
namespace {

// A host stream that no kernel reads fills the stream queue; the call fails with the hang
// report instead of waiting forever (the SDK's streaming pitfalls).
TEST(HostRuntime, UnreadStreamIsAHangWithAReport) {
  LoadedRuntime rt(build("echo.wsl"));
  runtime::host::MemcpyOptions o;
  o.streaming = true;
  try {
    rt.memcpy_h2d("echo", std::vector<uint32_t>(40, 1), 0, 0, 1, 1, 40, o);
    ADD_FAILURE() << "no error";
  } catch (const HostError& e) {
    EXPECT_EQ(e.kind(), HostError::Kind::HANG) << e.what();
    EXPECT_THAT(e.what(), ::testing::HasSubstr("memcpy_h2d echo: hang at cycle"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("input queue 1 (color 23) holds 6 wavelets nobody takes"));
    ASSERT_TRUE(e.hang().has_value());
    EXPECT_NE(e.hang()->find(1, 1), nullptr);
  }
}

}  // namespace
}  // namespace wsemu::testing
