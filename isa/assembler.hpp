// The assembler: .wsa text to an ObjectImage (the way back is isa/disassembler.hpp).
//
// Contract: assemble() never throws on bad input and never hangs; every problem becomes a
// Diagnostic with file:line:col, collected in one pass where later errors still make sense.
// An object is returned only when there are no errors.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "isa/instruction.hpp"
#include "isa/object.hpp"

namespace wsemu::isa {

struct Diagnostic {
  std::string file;
  int line = 0;  // 1-based
  int col = 0;   // 1-based
  std::string message;
  std::string source_line;  // the offending line, for the caret display
  // "file:line:col: error: message\n<source line>\n<caret>"
  std::string to_string() const;
};

struct AssembleOptions {
  std::map<std::string, int64_t> params;   // values for .param names
  std::vector<std::string> include_dirs;   // searched after the including file's folder
  std::string arch;                        // "wse2" / "wse3"; empty: the program's own or wse2
};

struct AssembleResult {
  std::optional<ObjectImage> object;
  std::vector<Diagnostic> errors;
};

AssembleResult assemble(std::string_view source, std::string_view file_name,
                        const AssembleOptions& options = {});
AssembleResult assemble_file(const std::string& path, const AssembleOptions& options = {});

}  // namespace wsemu::isa
