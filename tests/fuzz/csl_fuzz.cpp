// libFuzzer target for the CSL front end (tools/fuzz.sh runs it): any bytes as a layout file
// that is also its own PE program (`@set_tile_code(0, 0, "fuzz-input.csl", ...)` in the input
// reaches the PE side), compiled all the way to an executable or to diagnostics.
//
// Any input must compile or fail with diagnostics that have a message, never crash, hang or trip
// a sanitizer. Comptime evaluation is bounded (here 200 000 statements), so no input loops.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "compiler/csl/cslc.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  static const fs::path dir = fs::temp_directory_path() / ("wsemu-csl-fuzz-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream out(dir / "fuzz-input.csl", std::ios::binary);
    out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  }
  wsemu::compiler::csl::CslOptions o;
  o.layout_file = (dir / "fuzz-input.csl").string();
  o.out_dir = (dir / "out").string();
  o.max_comptime_steps = 200'000;  // well inside libFuzzer's 10 s per input under the sanitizers
  const wsemu::compiler::csl::CslResult r = wsemu::compiler::csl::compile_csl(o);
  for (const auto& d : r.diagnostics)
    if (d.message.empty()) {
      std::fprintf(stderr, "csl_fuzz: a diagnostic without a message\n");
      std::abort();
    }
  if (!r.ok() && r.diagnostics.empty()) {
    std::fprintf(stderr, "csl_fuzz: failed without a diagnostic\n");
    std::abort();
  }
  return 0;
}
