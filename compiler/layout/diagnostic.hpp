// Diagnostics of the layout language: errors and notes with file:line:col, printed with the
// offending source line and a caret under the column, the same shape as the assembler's
// isa::Diagnostic (whose errors are carried through unchanged when a program fails to assemble).
//
// Contract: a Diagnostic is plain data; to_string() never throws. A line or column of 0 means
// "no position" (for example an error about a command-line --param), and the caret part is
// then left out. SourceText keeps the lines of the layout file and of every file it includes
// (`include "f.wsl"`), so that diagnostics can quote them; a position in an included file
// carries the chain of include statements that led to it, printed as notes after the caret.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wsemu::compiler::layout {

enum class Severity { ERROR, NOTE };

// One `include` statement on the way from the layout file to a diagnostic's position.
struct IncludeSite {
  std::string file;
  int line = 0;
  int col = 0;
  std::string source_line;
};

struct Diagnostic {
  Severity severity = Severity::ERROR;
  std::string file;
  int line = 0;  // 1-based; 0: no position
  int col = 0;   // 1-based; 0: no column
  std::string message;
  std::string source_line;
  // Where the file of this position was included from, innermost first; empty for a position
  // in the layout file itself.
  std::vector<IncludeSite> included_from;
  // "file:line:col: error: message\n<source line>\n<caret>" (a note says "note:"), then one
  // "file:line:col: note: included from here" with its line and caret per include site.
  std::string to_string() const;
};

// Position in a layout file or in one of the files it includes.
struct Loc {
  int line = 0;
  int col = 0;
  int file = 0;  // SourceText file index: 0 is the layout file, then included files in order
};

class SourceText {
 public:
  // File 0: the layout file itself.
  SourceText(std::string file_name, std::string_view text);
  // Registers a file read by an `include` statement at `included_at` (a position in an already
  // registered file); returns its index, the `file` of positions inside it.
  int add_file(std::string file_name, std::string_view text, Loc included_at);
  int file_count() const { return static_cast<int>(files_.size()); }
  const std::string& file_name(int file = 0) const { return files_[file].name; }
  Loc included_at(int file) const { return files_[file].included_at; }
  std::string_view line(int line_number, int file = 0) const;  // 1-based; empty when out of range
  Diagnostic make(Severity severity, Loc loc, std::string message) const;
  // How a message refers to another position: "line 12" in the layout file itself,
  // "spmv7_routes.wsl:12" in an included file.
  std::string position(Loc loc) const;

 private:
  struct File {
    std::string name;
    std::vector<std::string> lines;
    Loc included_at;
  };
  std::vector<File> files_;
};

// Joins diagnostics with newlines, in order.
std::string format_diagnostics(const std::vector<Diagnostic>& diagnostics);

}  // namespace wsemu::compiler::layout
