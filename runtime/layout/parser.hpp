// The parser of the layout language: tokens to a LayoutAst. The grammar is in
// runtime/README.md ("Layout language").
//
// Contract: parse_layout() never throws on bad input and never loops forever: each syntax
// error is reported once with file:line:col, the parser skips to the next statement and goes
// on, so that one run reports the independent mistakes of a file. The tree it returns is only
// meaningful when there are no errors. Names, ranges and the fabric are the checker's business.
#pragma once

#include <string_view>
#include <vector>

#include "runtime/layout/ast.hpp"
#include "runtime/layout/diagnostic.hpp"

namespace wsemu::runtime::layout {

struct ParseResult {
  LayoutAst ast;
  std::vector<Diagnostic> errors;
};

ParseResult parse_layout(const SourceText& source, std::string_view text);

// Parses one expression (the whole text), for --param values and tests.
struct ExprParseResult {
  ExprPtr expr;
  std::vector<Diagnostic> errors;
};
ExprParseResult parse_expression(const SourceText& source, std::string_view text);

// Direction names accepted in rx/tx sets: N S E W RAMP, north south east west ramp (any case).
// Returns the runtime::Direction value 0..4, or -1.
int direction_from_name(std::string_view name);

}  // namespace wsemu::runtime::layout
