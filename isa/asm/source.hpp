// Source files of one assembly run: their text, split into lines, kept alive for the whole run
// because tokens and diagnostics point into them.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace wsemu::isa::assembler {

struct SourceFile {
  std::string name;  // as given (shown in diagnostics)
  std::string path;  // canonical path for include-cycle detection; empty for in-memory text
  std::string text;
  std::vector<std::string_view> lines;
};

// Splits text into lines (without "\n" or a trailing "\r"); views point into `text`.
std::vector<std::string_view> split_lines(std::string_view text);

// A stable home for SourceFiles: references stay valid while more are added.
using SourceFiles = std::deque<SourceFile>;

}  // namespace wsemu::isa::assembler
