// How the CSL tests compile a kernel: as `wsemu cslc LAYOUT --arch=ARCH --fabric-dims=W,H
// --fabric-offsets=X,Y --params=...` would, with the generated sources in a temporary folder
// named after the test, so a failing test leaves them to read; the executable of a compile
// that must succeed; a program of tests/compiler/programs compiled that way, and its runtime
// loaded; the check of a test program's words after a launch, on both architectures; and
// CslGrid, the parameter of the tests that run one program on grids of PEs.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "compiler/csl/cslc.hpp"
#include "compiler/layout/diagnostic.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/test_support.hpp"

namespace wsemu::testing {

// The architecture and the W x H grid of PEs a parameterized test runs its program on (printed
// "wse2 4x3", so that CTest's names stay readable).
struct CslGrid {
  std::string arch;
  int w, h;
  friend void PrintTo(const CslGrid& g, std::ostream* os) { *os << g.arch << " " << g.w << "x" << g.h; }
};

using compiler::csl::CslPlacement;

inline compiler::csl::CslResult compile_csl_kernel(const std::string& layout_file,
                                                   std::vector<std::pair<std::string, std::string>> params,
                                                   const std::string& arch, CslPlacement at,
                                                   const std::string& out_folder) {
  compiler::csl::CslOptions o;
  o.layout_file = layout_file;
  o.arch = arch;
  o.placement = at;
  o.params = std::move(params);
  o.out_dir = (std::filesystem::temp_directory_path() / out_folder).string();
  // Tests that compile into the same folder take turns: CTest -j runs each test in a process of
  // its own (CslPipeline02's two tests both use wsemu-csl-pipeline-02-fifo-wse2) and other
  // checkouts share the temporary folder, and one compile reading the sources another is
  // writing fails at random. The lock is a file beside the folder, held until the compile returns.
  struct FolderLock {
    int fd;
    ~FolderLock() {
      if (fd >= 0) ::close(fd);
    }
  } lock{::open((o.out_dir + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)};
  if (lock.fd >= 0) ::flock(lock.fd, LOCK_EX);
  return compiler::csl::compile_csl(o);
}

// The executable of a compile that must succeed; otherwise an exception carrying the
// diagnostics, which fails the calling test with them (for the tests that only run what they compile).
inline compiler::Executable executable_of(compiler::csl::CslResult r) {
  if (!r.ok()) throw std::runtime_error("cslc failed:\n" + compiler::layout::format_diagnostics(r.diagnostics));
  return std::move(*r.executable);
}

// tests/compiler/programs/<program>/layout.csl, its sources left in the temporary folder
// wsemu-csl-<program>-<arch> (underscores as hyphens).
inline compiler::csl::CslResult compile_test_program(const std::string& program,
                                                     std::vector<std::pair<std::string, std::string>> params,
                                                     const std::string& arch, CslPlacement at) {
  std::string folder = "wsemu-csl-" + program + "-" + arch;
  std::replace(folder.begin(), folder.end(), '_', '-');
  return compile_csl_kernel(source_dir() + "/tests/compiler/programs/" + program + "/layout.csl", std::move(params), arch,
                            at, folder);
}

// The runtime of a test program that must compile, loaded.
inline LoadedRuntime test_program_runtime(const std::string& program,
                                          std::vector<std::pair<std::string, std::string>> params,
                                          const std::string& arch, CslPlacement at) {
  return LoadedRuntime(executable_of(compile_test_program(program, std::move(params), arch, at)));
}

// What a test reads back: `per_pe` words of `symbol` from each PE of the w x h rectangle at the
// kernel's (0, 0).
struct SymbolWords {
  std::string symbol;
  int w, h, per_pe;
};

// On wse2 and on wse3: the test program placed at `at` and loaded, `function` launched and the
// wafer settled; then `read` must hold `want`.
inline void expect_words_after_launch(const std::string& program, CslPlacement at, const std::string& function,
                                      const SymbolWords& read, const std::vector<uint32_t>& want) {
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    LoadedRuntime rt = test_program_runtime(program, {}, arch, at);
    launch_and_settle(rt, function);
    EXPECT_EQ(read_back(rt, read.symbol, 0, 0, read.w, read.h, read.per_pe), want);
  }
}

}  // namespace wsemu::testing
