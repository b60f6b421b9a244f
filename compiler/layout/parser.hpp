// The parser of the layout language: tokens to a LayoutAst. The grammar is in
// compiler/layout/README.md.
//
// Contract: parse_layout() never throws on bad input and never loops forever: each syntax
// error is reported once with file:line:col, the parser skips to the next statement and goes
// on, so that one run reports the independent mistakes of a file. The tree it returns is only
// meaningful when there are no errors. Names, ranges and the fabric are the checker's business.
//
// `include "file.wsl"` is resolved here: the file is found (the including file's folder, then
// ParseOptions::include_dirs), registered with the SourceText (so that positions inside it,
// and the include statement that led there, reach diagnostics) and its statements are parsed
// in place of the include statement, as if they were written there. A missing file and an
// include cycle are syntax errors at the include statement.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler/layout/ast.hpp"
#include "compiler/layout/diagnostic.hpp"

namespace wsemu::compiler::layout {

struct ParseResult {
  LayoutAst ast;
  std::vector<Diagnostic> errors;
};

struct ParseOptions {
  // Searched, in order, for an `include` that is not found beside the including file.
  std::vector<std::string> include_dirs;
};

// `source` holds `text` as file 0; included files are added to it.
ParseResult parse_layout(SourceText& source, std::string_view text,
                         const ParseOptions& options = {});

// Parses one expression (the whole text), for --param values and tests.
struct ExprParseResult {
  ExprPtr expr;
  std::vector<Diagnostic> errors;
};
ExprParseResult parse_expression(SourceText& source, std::string_view text);

// Direction names accepted in rx/tx sets: N S E W RAMP, north south east west ramp (any case).
// Returns the compiler::Direction value 0..4, or -1.
int direction_from_name(std::string_view name);

}  // namespace wsemu::compiler::layout
