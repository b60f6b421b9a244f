// The line table end to end: a CSL program (tests/compiler/programs/faults) compiled by cslc,
// saved and loaded as a .wsx, run on the host runtime; its deliberate fault and its hang must be
// reported at the CSL file:line:col of the statement (the lines of pe.csl, counted by hand), not
// at a line of the generated assembly.
#include <filesystem>

#include "compiler/csl/cslc.hpp"
#include "compiler/executable/executable_io.hpp"
#include "runtime/host/host_error.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/compiler/csl_test_support.hpp"
#include "tests/e2e/expect_host_error.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::HostError;
using runtime::host::SdkRuntime;

compiler::Executable compiled(const std::string& arch) {
  const std::string folder = "wsemu-csl-line-table-" + arch;
  const compiler::Executable exe =
      executable_of(compile_csl_kernel(source_dir() + "/tests/compiler/programs/faults/layout.csl", {}, arch, {3, 3, 1, 1}, folder));
  // Through a file (as `wsemu cslc` writes it), so that the table is known to survive the .wsx format.
  const std::string file = (std::filesystem::temp_directory_path() / folder / "out.wsx").string();
  compiler::save_executable(exe, file);
  return compiler::load_executable(file);
}

TEST(CslLineTable, FaultNamesTheCslLine) {
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    LoadedRuntime rt(compiled(arch));
    // A DSD 30000 elements long writes past the PE's memory: a fault.
    const HostError e = run_expecting(rt, {"overrun"}, HostError::Kind::FAULT);
    EXPECT_EQ(e.fault()->source_location, "pe.csl:17:3") << e.what();
    EXPECT_EQ(*e.fault()->x, 1);
    EXPECT_EQ(*e.fault()->y, 1);
    EXPECT_NE(std::string(e.what()).find("(pe.csl:17:3) `fmovs"), std::string::npos) << e.what();
  }
}

TEST(CslLineTable, HangNamesTheCslLineThePeWaitsAt) {
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    LoadedRuntime rt(compiled(arch));
    // A read of a color nobody sends on: a hang.
    const HostError e = run_expecting(rt, {"starve"}, HostError::Kind::HANG);
    const emu::BlockedPe* pe = e.hang()->find(1, 1);
    ASSERT_NE(pe, nullptr) << e.what();
    bool named = false;
    for (const emu::Wait& w : pe->waits) named |= w.source == "pe.csl:22:3";
    EXPECT_TRUE(named) << e.what();
    EXPECT_NE(std::string(e.what()).find(", pe.csl:22:3) waits"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wsemu::testing
