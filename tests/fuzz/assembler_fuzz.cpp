// libFuzzer target for the assembler (tools/fuzz.sh runs it).
//
// Any input must assemble or fail with diagnostics, never crash, hang or trip a sanitizer.
// When it assembles, the object must survive the two round trips the toolchain promises:
// disassemble -> assemble gives the same object, and serialise -> parse gives the same object.
// A broken promise aborts, which libFuzzer reports like a crash.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "isa/assembler.hpp"
#include "isa/disassembler.hpp"
#include "isa/object_io.hpp"

namespace {

void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "assembler_fuzz: %s\n%s\n", what, detail.c_str());
  std::abort();
}

wsemu::isa::ObjectImage without_origin(wsemu::isa::ObjectImage o) {
  o.source_name.clear();
  o.source_lines.clear();
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wsemu::isa;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  AssembleOptions options;
  // Parameters the shipped examples use, so that seeds taken from them assemble.
  options.params = {{"N", 8}, {"M", 4}, {"ROWS", 4}, {"COLS", 8}, {"SIZE", 16}, {"WIDTH", 2}, {"HEIGHT", 2}};
  const AssembleResult first = assemble(text, "fuzz-input.wsa", options);
  for (const Diagnostic& d : first.errors) {
    if (d.message.empty()) fail("a diagnostic without a message", d.to_string());
    (void)d.to_string();
  }
  if (!first.object) return 0;

  const std::string listing = disassemble(*first.object);
  const AssembleResult again = assemble(listing, "fuzz-disassembly.wsa");
  if (!again.object) {
    std::string why;
    for (const Diagnostic& d : again.errors) why += d.to_string() + "\n";
    fail("the disassembly does not assemble", why + "--- disassembly ---\n" + listing);
  }
  if (!(without_origin(*again.object) == without_origin(*first.object)))
    fail("assemble(disassemble(object)) differs from the object", listing);

  const std::string bytes = serialize_object(*first.object);
  if (!(parse_object(bytes, "fuzz") == *first.object)) fail("parse(serialize(object)) differs", listing);
  for (uint64_t word : first.object->code) {
    if (auto insn = decode(word)) (void)format_instruction(*insn, &*first.object);
  }
  return 0;
}
