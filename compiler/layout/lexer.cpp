#include "compiler/layout/lexer.hpp"

#include <array>
#include <cctype>
#include <cstdio>

#include "compiler/layout/source_scanner.hpp"

namespace wsemu::compiler::layout {
namespace {

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

constexpr std::array<std::string_view, 8> kTwoCharPuncts = {"<=", ">=", "==", "!=",
                                                           "&&", "||", "<<", ">>"};
constexpr std::string_view kOneCharPuncts = "(){}[],;=+-*/%<>!?:&|^~";

class Lexer : SourceScanner {
 public:
  explicit Lexer(std::string_view src) : SourceScanner(src, /*hash_comments=*/true) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    while (true) {
      skip_space_and_comments();
      Token t;
      t.loc = {line_, col_};
      if (pos_ >= text_.size()) {
        t.kind = TokenKind::END;
        tokens.push_back(std::move(t));
        return tokens;
      }
      char c = text_[pos_];
      if (split_x_) {
        // The 'x' of "4x4", cut off by lex_number.
        split_x_ = false;
        t.kind = TokenKind::IDENT;
        t.text = std::string(1, c);
        advance();
      } else if (is_ident_start(c)) {
        size_t start = pos_;
        while (pos_ < text_.size() && is_ident_char(text_[pos_])) advance();
        t.kind = TokenKind::IDENT;
        t.text = std::string(text_.substr(start, pos_ - start));
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        lex_number(t);
      } else if (c == '"') {
        lex_string(t);
      } else {
        lex_punct(t);
      }
      tokens.push_back(std::move(t));
    }
  }

 private:

  void lex_number(Token& t) {
    int base = 10;
    if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X') &&
        std::isxdigit(static_cast<unsigned char>(peek(2)))) {
      base = 16;
      advance();
      advance();
    } else if (peek() == '0' && (peek(1) == 'b' || peek(1) == 'B') &&
               (peek(2) == '0' || peek(2) == '1')) {
      base = 2;
      advance();
      advance();
    }
    uint64_t value = 0;
    bool overflow = false;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      int digit;
      if (std::isdigit(static_cast<unsigned char>(c))) digit = c - '0';
      else if (base == 16 && std::isxdigit(static_cast<unsigned char>(c)))
        digit = 10 + (std::tolower(static_cast<unsigned char>(c)) - 'a');
      else break;
      if (digit >= base) break;
      if (value > (static_cast<uint64_t>(INT64_MAX) - digit) / base) overflow = true;
      value = value * base + digit;
      advance();
    }
    if (overflow) {
      t.kind = TokenKind::ERROR;
      t.text = "number does not fit in a signed 64-bit integer";
      return;
    }
    // "4x4": the x is a separate token (the size separator), not part of the number.
    if (base == 10 && peek() == 'x' &&
        std::isdigit(static_cast<unsigned char>(peek(1)))) {
      t.kind = TokenKind::NUMBER;
      t.value = static_cast<int64_t>(value);
      split_x_ = true;
      return;
    }
    if (pos_ < text_.size() && is_ident_char(text_[pos_])) {
      t.kind = TokenKind::ERROR;
      t.text = "malformed number";
      while (pos_ < text_.size() && is_ident_char(text_[pos_])) advance();
      return;
    }
    t.kind = TokenKind::NUMBER;
    t.value = static_cast<int64_t>(value);
  }

  void lex_string(Token& t) {
    advance();  // opening quote
    std::string out;
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') {
        t.kind = TokenKind::ERROR;
        t.text = "unterminated string (a string ends with \" on the same line)";
        return;
      }
      char c = text_[pos_];
      if (c == '"') {
        advance();
        break;
      }
      if (c == '\\') {
        char n = peek(1);
        if (n == '"' || n == '\\') {
          out += n;
          advance();
          advance();
          continue;
        }
        t.kind = TokenKind::ERROR;
        t.loc = {line_, col_};
        t.text = "unknown escape in string (only \\\" and \\\\ are allowed)";
        while (pos_ < text_.size() && text_[pos_] != '\n') advance();
        return;
      }
      out += c;
      advance();
    }
    t.kind = TokenKind::STRING;
    t.text = std::move(out);
  }

  void lex_punct(Token& t) {
    for (std::string_view p : kTwoCharPuncts) {
      if (text_.substr(pos_, 2) == p) {
        t.kind = TokenKind::PUNCT;
        t.text = std::string(p);
        advance();
        advance();
        return;
      }
    }
    char c = text_[pos_];
    if (kOneCharPuncts.find(c) != std::string_view::npos) {
      t.kind = TokenKind::PUNCT;
      t.text = std::string(1, c);
      advance();
      return;
    }
    t.kind = TokenKind::ERROR;
    unsigned char uc = static_cast<unsigned char>(c);
    if (std::isprint(uc)) {
      t.text = std::string("unexpected character '") + c + "'";
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "0x%02x", uc);
      t.text = std::string("unexpected byte ") + buf;
    }
    advance();
  }

  bool split_x_ = false;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

}  // namespace wsemu::compiler::layout
