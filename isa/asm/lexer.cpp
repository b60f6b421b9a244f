#include "isa/asm/lexer.hpp"

#include <fmt/format.h>

#include <charconv>

namespace wsemu::isa::assembler {
namespace {

bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' || c == '$';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Longest punctuators first so that `<<` is not read as two `<`.
constexpr std::string_view kPuncts[] = {"<<", ">>", "<=", ">=", "==", "!=", "&&", "||", ",", ":",
                                        "[",  "]",  "(",  ")",  "+",  "-",  "*",  "/",  "%", "&",
                                        "|",  "^",  "~",  "!",  "<",  ">",  "?",  "=",  "@"};

std::optional<LexError> lex_number(std::string_view line, size_t& i, Token& tok) {
  const size_t start = i;
  const bool radix_prefix = line[i] == '0' && i + 1 < line.size() &&
                            (line[i + 1] == 'x' || line[i + 1] == 'X' || line[i + 1] == 'b' ||
                             line[i + 1] == 'B' || line[i + 1] == 'o' || line[i + 1] == 'O');
  while (i < line.size()) {
    const char c = line[i];
    if (is_ident_char(c)) {
      ++i;
    } else if ((c == '+' || c == '-') && !radix_prefix && (line[i - 1] == 'e' || line[i - 1] == 'E')) {
      ++i;  // exponent sign
    } else {
      break;
    }
  }
  tok.text = line.substr(start, i - start);
  const std::string_view t = tok.text;
  const int col = static_cast<int>(start) + 1;
  if (radix_prefix) {
    const int base = (t[1] == 'x' || t[1] == 'X') ? 16 : (t[1] == 'b' || t[1] == 'B') ? 2 : 8;
    const std::string_view digits = t.substr(2);
    if (digits.empty()) return LexError{col, fmt::format("bad number '{}'", t)};
    uint64_t v = 0;
    for (char c : digits) {
      const int d = hex_digit(c);
      if (d < 0 || d >= base) return LexError{col, fmt::format("bad number '{}'", t)};
      if (v > (UINT64_MAX - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base))
        return LexError{col, fmt::format("integer literal '{}' does not fit in 64 bits", t)};
      v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    }
    tok.kind = TokenKind::INT;
    tok.int_value = v;
    return std::nullopt;
  }
  const bool is_float = t.find_first_of(".eE") != std::string_view::npos;
  if (is_float) {
    double v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (end != t.data() + t.size() || ec == std::errc::invalid_argument)
      return LexError{col, fmt::format("bad number '{}'", t)};
    if (ec == std::errc::result_out_of_range)
      return LexError{col, fmt::format("floating-point literal '{}' is out of range", t)};
    tok.kind = TokenKind::FLOAT;
    tok.float_value = v;
    return std::nullopt;
  }
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc::result_out_of_range)
    return LexError{col, fmt::format("integer literal '{}' does not fit in 64 bits", t)};
  if (end != t.data() + t.size() || ec != std::errc{})
    return LexError{col, fmt::format("bad number '{}'", t)};
  tok.kind = TokenKind::INT;
  tok.int_value = v;
  return std::nullopt;
}

std::optional<LexError> lex_string(std::string_view line, size_t& i, Token& tok) {
  const size_t start = i;
  ++i;  // opening quote
  std::string value;
  while (true) {
    if (i >= line.size())
      return LexError{static_cast<int>(start) + 1, "unterminated string (missing closing \")"};
    const char c = line[i];
    if (c == '"') {
      ++i;
      break;
    }
    if (c != '\\') {
      value.push_back(c);
      ++i;
      continue;
    }
    if (i + 1 >= line.size())
      return LexError{static_cast<int>(start) + 1, "unterminated string (missing closing \")"};
    const char e = line[i + 1];
    switch (e) {
      case 'n': value.push_back('\n'); break;
      case 't': value.push_back('\t'); break;
      case 'r': value.push_back('\r'); break;
      case '0': value.push_back('\0'); break;
      case '"': value.push_back('"'); break;
      case '\\': value.push_back('\\'); break;
      case 'x': {
        const int hi = i + 2 < line.size() ? hex_digit(line[i + 2]) : -1;
        const int lo = i + 3 < line.size() ? hex_digit(line[i + 3]) : -1;
        if (hi < 0 || lo < 0)
          return LexError{static_cast<int>(i) + 1, "\\x in a string needs two hex digits"};
        value.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        break;
      }
      default:
        return LexError{static_cast<int>(i) + 1,
                        fmt::format("unknown escape '\\{}' in string (use \\n \\t \\r \\0 \\\" \\\\ \\xNN)",
                                    printable_char(e))};
    }
    i += 2;
  }
  tok.kind = TokenKind::STRING;
  tok.text = line.substr(start, i - start);
  tok.str = std::move(value);
  return std::nullopt;
}

}  // namespace

std::string printable_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7F) return std::string(1, c);
  return fmt::format("\\x{:02x}", u);
}

std::string quote_string(std::string_view bytes) {
  std::string out = "\"";
  for (char c : bytes) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default: {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7F)
          out.push_back(c);
        else
          out += fmt::format("\\x{:02x}", u);
      }
    }
  }
  out += '"';
  return out;
}

LexedLine lex_line(std::string_view line) {
  LexedLine out;
  size_t i = 0;
  while (i < line.size()) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
      continue;
    }
    if (c == ';') break;
    Token tok;
    tok.col = static_cast<int>(i) + 1;
    if (is_digit(c) || (c == '.' && i + 1 < line.size() && is_digit(line[i + 1]))) {
      if (auto err = lex_number(line, i, tok)) {
        out.error = std::move(err);
        return out;
      }
    } else if (is_ident_start(c)) {
      const size_t start = i;
      while (i < line.size() && is_ident_char(line[i])) ++i;
      tok.kind = TokenKind::IDENT;
      tok.text = line.substr(start, i - start);
    } else if (c == '"') {
      if (auto err = lex_string(line, i, tok)) {
        out.error = std::move(err);
        return out;
      }
    } else {
      bool matched = false;
      for (std::string_view p : kPuncts) {
        if (line.substr(i).starts_with(p)) {
          tok.kind = TokenKind::PUNCT;
          tok.text = line.substr(i, p.size());
          i += p.size();
          matched = true;
          break;
        }
      }
      if (!matched) {
        out.error = LexError{tok.col, fmt::format("unexpected character '{}'", printable_char(c))};
        return out;
      }
    }
    out.tokens.push_back(std::move(tok));
  }
  return out;
}

}  // namespace wsemu::isa::assembler
