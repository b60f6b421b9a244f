// The CSL tokenizer: identifiers and keywords, builtins (`@name`), integer literals (decimal,
// 0x, 0o, 0b, `_` separators), float literals (1.0, 2.5e-3, 0x1.8p1), string and character
// literals with Zig escapes, and the operators of the Zig-derived syntax. `//` comments run to
// the end of the line.
//
// Contract: tokenize() never throws on any input: a character that starts no token, an
// unterminated string or a malformed number becomes an ERROR token (text = the message) that the
// parser reports at its position; the list always ends with one END token.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/csl/source.hpp"

namespace wsemu::compiler::csl {

enum class Tok { IDENT, KEYWORD, BUILTIN, INT, FLOAT, STRING, CHAR, PUNCT, END, ERROR };

struct Token {
  Tok kind = Tok::END;
  Span span;
  std::string text;  // IDENT/KEYWORD/PUNCT: as written; BUILTIN: without '@'; STRING: unescaped
  uint64_t int_value = 0;  // INT, CHAR
  double float_value = 0;  // FLOAT
};

bool is_keyword(std::string_view word);
std::vector<Token> tokenize(std::string_view text, int file);

}  // namespace wsemu::compiler::csl
