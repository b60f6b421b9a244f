// Diagnostics of the layout language: errors and notes with file:line:col, printed with the
// offending source line and a caret under the column, the same shape as the assembler's
// isa::Diagnostic (whose errors are carried through unchanged when a program fails to assemble).
//
// Contract: a Diagnostic is plain data; to_string() never throws. A line or column of 0 means
// "no position" (for example an error about a command-line --param), and the caret part is
// then left out. SourceText keeps the lines of one file so that diagnostics can quote them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wsemu::runtime::layout {

enum class Severity { ERROR, NOTE };

struct Diagnostic {
  Severity severity = Severity::ERROR;
  std::string file;
  int line = 0;  // 1-based; 0: no position
  int col = 0;   // 1-based; 0: no column
  std::string message;
  std::string source_line;
  // "file:line:col: error: message\n<source line>\n<caret>" (notes say "note:")
  std::string to_string() const;
};

// Position in a layout file.
struct Loc {
  int line = 0;
  int col = 0;
};

class SourceText {
 public:
  SourceText(std::string file_name, std::string_view text);
  const std::string& file_name() const { return file_name_; }
  std::string_view line(int line_number) const;  // 1-based; empty when out of range
  Diagnostic make(Severity severity, Loc loc, std::string message) const;

 private:
  std::string file_name_;
  std::vector<std::string> lines_;
};

// Joins diagnostics with newlines, in order.
std::string format_diagnostics(const std::vector<Diagnostic>& diagnostics);

}  // namespace wsemu::runtime::layout
