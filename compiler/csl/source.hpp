// The CSL front end's source files and errors. SourceMap holds every file the compiler read (the
// layout file, the PE programs, imported modules) so that a diagnostic can quote its line; a
// module file also remembers where it was imported from, so that an error inside it carries the
// chain of imports as notes ("note: in module imported from layout.csl:3:18").
//
// Contract: diagnostics are compiler/layout's Diagnostic (file:line:col, source line, caret);
// a CompileError carries one error plus its notes and is thrown only inside the front end, whose
// public entry points (compile_csl) catch it: nothing escapes to a caller. Never aborts on bad
// input.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/layout/diagnostic.hpp"

namespace wsemu::compiler::csl {

using layout::Diagnostic;
using layout::Severity;

// A position: file index in the SourceMap, 1-based line and column (0: none).
struct Span {
  int file = 0;
  int line = 0;
  int col = 0;
};

class SourceMap {
 public:
  // Registers a file; `imported_at` is the @import_module (or @set_tile_code) that brought it in,
  // a span in an already registered file, or a default Span for the root.
  int add(std::string name, std::string text, Span imported_at = {}, bool has_importer = false);
  const std::string& name(int file) const { return files_.at(size_t(file)).name; }
  const std::string& text(int file) const { return files_.at(size_t(file)).text; }
  std::string_view line(int file, int line) const;
  // The error itself, then one note per import on the way from the root file.
  std::vector<Diagnostic> diagnose(Span at, const std::string& message) const;
  std::string where(Span at) const;  // "pe.csl:12:3"
  int size() const { return int(files_.size()); }

 private:
  struct File {
    std::string name, text;
    std::vector<size_t> line_starts;
    Span imported_at;
    bool has_importer = false;
  };
  std::vector<File> files_;
};

struct CompileError : std::runtime_error {
  CompileError(Span at, const std::string& message) : std::runtime_error(message), span(at) {}
  Span span;
};

[[noreturn]] inline void fail(Span at, const std::string& message) { throw CompileError(at, message); }

}  // namespace wsemu::compiler::csl
