// The assembler's lexer: one source line to tokens.
//
// Contract: lex_line() scans one line (without its newline) and never fails hard: it returns
// the tokens up to the first problem plus that problem's column and message. Comments (`;` to
// end of line) are dropped. Identifiers may contain letters, digits, `_`, `.` and `$` (so that
// `.f32`, `fmacs.async` and `mem1d.16` are single tokens). Integer literals are decimal, 0x hex,
// 0b binary or 0o octal and must fit in 64 bits; float literals contain `.` or an exponent.
// Token text is a view into the line, which must outlive the tokens.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wsemu::isa::assembler {

enum class TokenKind : uint8_t { IDENT, INT, FLOAT, STRING, PUNCT };

struct Token {
  TokenKind kind = TokenKind::PUNCT;
  int col = 1;             // 1-based byte column of the first character
  std::string_view text;   // the token as written
  uint64_t int_value = 0;  // INT
  double float_value = 0;  // FLOAT
  std::string str;         // STRING, with escapes decoded

  bool is(std::string_view punct) const { return kind == TokenKind::PUNCT && text == punct; }
  bool is_ident(std::string_view name) const { return kind == TokenKind::IDENT && text == name; }
};

struct LexError {
  int col = 1;
  std::string message;
};

struct LexedLine {
  std::vector<Token> tokens;
  std::optional<LexError> error;
};

LexedLine lex_line(std::string_view line);

// How a byte is shown in a message: the character itself when printable, else \xNN.
std::string printable_char(char c);

// A string literal as written in assembly, quoted, with every byte that needs it escaped, so
// that lexing it gives the same bytes back.
std::string quote_string(std::string_view bytes);

}  // namespace wsemu::isa::assembler
