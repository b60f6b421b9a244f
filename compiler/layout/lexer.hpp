// The tokenizer of the layout language: identifiers, integers (decimal, 0x hex, 0b binary),
// double-quoted strings, operators and punctuation. `#` and `//` start comments that run to
// the end of the line; newlines are whitespace (every statement starts with a keyword).
//
// Contract: tokenize() never throws and always ends the list with one END token; a character
// that starts no token becomes an ERROR token carrying the message, which the parser reports.
// "4x4" lexes as 4, x, 4 so that `fabric 4x4` reads like `fabric 4 x 4`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/layout/diagnostic.hpp"

namespace wsemu::compiler::layout {

enum class TokenKind { IDENT, NUMBER, STRING, PUNCT, END, ERROR };

struct Token {
  TokenKind kind = TokenKind::END;
  Loc loc;
  std::string text;   // IDENT / PUNCT: as written; STRING: unescaped contents; ERROR: message
  int64_t value = 0;  // NUMBER
};

std::vector<Token> tokenize(std::string_view source);

}  // namespace wsemu::compiler::layout
