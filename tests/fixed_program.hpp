// Assembling a program that a test or benchmark holds as fixed text, with the product's
// assembler, and pieces of such text that several programs share. Such a program that does not
// assemble is a bug in the test, so the assembler's diagnostics are thrown (a std::runtime_error
// naming `file`), and nothing runs a half-built program.
//
// Contract: header-only; the caller links the isa library. wafer_helpers.hpp's assemble() wraps
// this for GoogleTest tests, which also record the failure.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "isa/assembler.hpp"

namespace wsemu::testing {

inline std::shared_ptr<const isa::ObjectImage> assemble_or_throw(std::string_view source, const std::string& file,
                                                                 std::map<std::string, int64_t> params = {}) {
  isa::AssembleOptions options;
  options.params = std::move(params);
  isa::AssembleResult r = isa::assemble(source, file, options);
  if (!r.object) {
    std::string errors;
    for (const isa::Diagnostic& d : r.errors) errors += d.to_string() + "\n";
    throw std::runtime_error(file + " does not assemble:\n" + errors);
  }
  return std::make_shared<const isa::ObjectImage>(std::move(*r.object));
}

// Data lines that many vector test programs and benchmarks share: fp32 arrays x and y of
// `length` elements (a number, or an .equ or .param name) and their mem1d descriptors xd and yd.
inline std::string xy_vectors(std::string_view length) {
  const std::string n(length);
  return "x: .f32 [" + n + "]\ny: .f32 [" + n + "]\n.dsd xd = mem1d(x, " + n +
         ")\n.dsd yd = mem1d(y, " + n + ")\n";
}

}  // namespace wsemu::testing
