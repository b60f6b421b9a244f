// libFuzzer target for the layout language (tools/fuzz.sh runs it): parse and check any text.
//
// Any input must parse and check or fail with diagnostics, never crash, hang or trip a
// sanitizer (the checker's arithmetic on sizes near 2^63 used to overflow and then size a plan
// for billions of PEs). Programs are not assembled: that is the assembler's own fuzz target.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "compiler/layout/checker.hpp"
#include "compiler/layout/parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wsemu::compiler::layout;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Relative program and include paths resolve beside the seed layouts (tools/fuzz.sh runs from
  // the repository root).
  SourceText source("tests/compiler/bad_layouts/fuzz-input.wsl", text);
  ParseResult parsed = parse_layout(source, text);
  for (const Diagnostic& d : parsed.errors) {
    if (d.message.empty()) {
      std::fprintf(stderr, "layout_fuzz: a parse diagnostic without a message\n");
      std::abort();
    }
  }
  if (!parsed.errors.empty()) return 0;
  CheckOptions options;
  options.base_dir = "tests/compiler/bad_layouts";
  const CheckResult checked = check_layout(parsed.ast, source, options);
  for (const Diagnostic& d : checked.diagnostics) {
    if (d.message.empty()) {
      std::fprintf(stderr, "layout_fuzz: a check diagnostic without a message\n");
      std::abort();
    }
  }
  return 0;
}
