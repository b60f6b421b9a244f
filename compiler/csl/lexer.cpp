#include "compiler/csl/lexer.hpp"

#include <array>
#include <cmath>
#include <cstdlib>

#include "compiler/layout/source_scanner.hpp"

namespace wsemu::compiler::csl {

namespace {

constexpr std::array kKeywords = {
    "align", "and", "break", "comptime", "const", "continue", "else", "enum", "export", "extern",
    "false", "fn", "for", "if", "linksection", "null", "or", "param", "pub", "return", "struct",
    "switch", "task", "true", "undefined", "union", "var", "while", "packed", "inline",
    "volatile"};

// Longest first, so that the first match is the longest operator.
constexpr std::array kPuncts = {"<<=", ">>=", "...", "**", "==", "!=", "<=", ">=", "<<", ">>", "+=",
                                "-=",  "*=",  "/=",  "%=", "&=", "|=", "^=", "->", "=>", "..", ".*",
                                ".{",  "+",   "-",   "*",  "/",  "%",  "&",  "|",  "^",  "~",  "!",
                                "<",   ">",   "=",   "(",  ")",  "[",  "]",  "{",  "}",  ",",  ";",
                                ":",   ".",   "?"};

bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

class Lexer : SourceScanner {
 public:
  Lexer(std::string_view t, int file) : SourceScanner(t, /*hash_comments=*/false), file_(file) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    while (true) {
      skip_space_and_comments();
      if (pos_ >= text_.size()) break;
      out.push_back(next());
      if (out.size() > 4'000'000) break;  // absurd input: stop instead of exhausting memory
    }
    Token end;
    end.kind = Tok::END;
    end.span = here();
    out.push_back(end);
    return out;
  }

 private:
  int file_;

  Span here() const { return {file_, line_, col_}; }

  Token error(Span at, std::string message) {
    Token t;
    t.kind = Tok::ERROR;
    t.span = at;
    t.text = std::move(message);
    return t;
  }

  Token next() {
    Token t;
    t.span = here();
    char c = peek();
    if (ident_start(c)) {
      size_t start = pos_;
      while (pos_ < text_.size() && ident_char(text_[pos_])) advance();
      t.text = std::string(text_.substr(start, pos_ - start));
      t.kind = is_keyword(t.text) ? Tok::KEYWORD : Tok::IDENT;
      return t;
    }
    if (c == '@') {
      advance();
      if (peek() == '"') return error(t.span, "quoted identifiers (@\"...\") are not supported");
      if (!ident_start(peek())) return error(t.span, "expected a builtin name after '@'");
      size_t start = pos_;
      while (pos_ < text_.size() && ident_char(text_[pos_])) advance();
      t.kind = Tok::BUILTIN;
      t.text = std::string(text_.substr(start, pos_ - start));
      return t;
    }
    if (c >= '0' && c <= '9') return number(t);
    if (c == '"') return string(t);
    if (c == '\'') return character(t);
    for (const char* p : kPuncts) {
      std::string_view ps(p);
      if (text_.substr(pos_, ps.size()) == ps) {
        for (size_t i = 0; i < ps.size(); ++i) advance();
        t.kind = Tok::PUNCT;
        t.text = std::string(ps);
        return t;
      }
    }
    unsigned char u = static_cast<unsigned char>(c);
    advance();
    char buf[64];
    if (u >= 0x20 && u < 0x7f)
      std::snprintf(buf, sizeof buf, "unexpected character '%c'", c);
    else
      std::snprintf(buf, sizeof buf, "unexpected byte 0x%02X", unsigned(u));
    return error(t.span, buf);
  }

  Token number(Token t) {
    int base = 10;
    if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'o' || peek(1) == 'b')) {
      base = peek(1) == 'x' ? 16 : peek(1) == 'o' ? 8 : 2;
      advance();
      advance();
    }
    std::string digits, frac, exp;
    bool is_float = false, overflow = false;
    auto take_digits = [&](std::string& into, int b) {
      while (pos_ < text_.size()) {
        char c = peek();
        if (c == '_') {
          advance();
          continue;
        }
        if (digit_value(c) >= b) break;
        into += c;
        advance();
      }
    };
    take_digits(digits, base);
    if (digits.empty()) return error(t.span, "malformed number: no digits");
    if (peek() == '.' && digit_value(peek(1)) < base) {
      is_float = true;
      advance();
      take_digits(frac, base);
    }
    char e = peek();
    if ((base == 10 && (e == 'e' || e == 'E')) || (base == 16 && (e == 'p' || e == 'P'))) {
      is_float = true;
      advance();
      if (peek() == '+' || peek() == '-') {
        exp += peek();
        advance();
      }
      size_t before = exp.size();
      take_digits(exp, 10);
      if (exp.size() == before) return error(t.span, "malformed number: exponent without digits");
    }
    if (ident_char(peek())) return error(t.span, "malformed number: unexpected '" + std::string(1, peek()) + "'");
    if (!is_float) {
      uint64_t v = 0;
      for (char d : digits) {
        uint64_t nv = v * uint64_t(base) + uint64_t(digit_value(d));
        if ((nv - uint64_t(digit_value(d))) / uint64_t(base) != v) overflow = true;
        v = nv;
      }
      if (overflow) return error(t.span, "integer literal does not fit in 64 bits");
      t.kind = Tok::INT;
      t.int_value = v;
      return t;
    }
    double v = 0;
    for (char d : digits) v = v * base + digit_value(d);
    double scale = 1.0 / base;
    for (char d : frac) {
      v += digit_value(d) * scale;
      scale /= base;
    }
    if (!exp.empty()) {
      long x = std::strtol(exp.c_str(), nullptr, 10);
      if (x > 10000) x = 10000;
      if (x < -10000) x = -10000;
      v = base == 16 ? std::ldexp(v, int(x)) : v * std::pow(10.0, double(x));
    }
    t.kind = Tok::FLOAT;
    t.float_value = v;
    return t;
  }

  // One escape after the backslash; false when malformed.
  bool escape(std::string& out) {
    char c = peek();
    if (c == '\0' && pos_ >= text_.size()) return false;
    advance();
    switch (c) {
      case 'n': out += '\n'; return true;
      case 't': out += '\t'; return true;
      case 'r': out += '\r'; return true;
      case '0': out += '\0'; return true;
      case '\\': out += '\\'; return true;
      case '"': out += '"'; return true;
      case '\'': out += '\''; return true;
      case 'x': {
        int hi = digit_value(peek()), lo = digit_value(peek(1));
        if (hi > 15 || lo > 15) return false;
        advance();
        advance();
        out += char(hi * 16 + lo);
        return true;
      }
      default: return false;
    }
  }

  Token string(Token t) {
    advance();
    std::string value;
    while (true) {
      if (pos_ >= text_.size() || peek() == '\n') return error(t.span, "unterminated string literal");
      char c = peek();
      if (c == '"') {
        advance();
        break;
      }
      if (c == '\\') {
        Span at = here();
        advance();
        if (!escape(value)) return error(at, "invalid escape sequence in string literal");
        continue;
      }
      value += c;
      advance();
    }
    t.kind = Tok::STRING;
    t.text = std::move(value);
    return t;
  }

  Token character(Token t) {
    advance();
    std::string value;
    if (peek() == '\\') {
      advance();
      if (!escape(value)) return error(t.span, "invalid escape sequence in character literal");
    } else if (pos_ < text_.size() && peek() != '\'' && peek() != '\n') {
      value += peek();
      advance();
    }
    if (value.size() != 1 || peek() != '\'') return error(t.span, "malformed character literal");
    advance();
    t.kind = Tok::CHAR;
    t.int_value = static_cast<unsigned char>(value[0]);
    return t;
  }
};

}  // namespace

bool is_keyword(std::string_view word) {
  for (const char* k : kKeywords)
    if (word == k) return true;
  return false;
}

std::vector<Token> tokenize(std::string_view text, int file) { return Lexer(text, file).run(); }

}  // namespace wsemu::compiler::csl
