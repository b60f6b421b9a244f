// The CSL parser: tokens (lexer.hpp) to a Module (ast.hpp), for layout files and PE programs
// alike. The grammar is Zig's expression and statement syntax as CSL uses it (see
// compiler/README.md for the accepted forms), plus CSL's `layout { }` blocks, `task`
// declarations, `param` declarations and tensor-access expressions `|i|{M} -> A[i]`.
//
// Contract: parse() throws CompileError at the first syntax error (position of the offending
// token, message naming what was expected); it never crashes, loops or overflows the stack on
// any input (nesting deeper than 256 is an error).
#pragma once

#include <string_view>

#include "compiler/csl/ast.hpp"

namespace wsemu::compiler::csl {

Module parse(std::string_view text, int file);

}  // namespace wsemu::compiler::csl
