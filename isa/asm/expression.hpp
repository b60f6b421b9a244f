// Integer (and float-literal) expressions of the assembly language, evaluated straight from
// the tokens of a line.
//
// Contract: parse_expression() reads one expression from a TokenCursor and stops before a
// top-level `,`, `]`, `)`, `=`, `@` or the end of the line. It never throws, never recurses
// deeper than kMaxExpressionDepth and does not evaluate the branch of `?:` (or the right side of
// `&&` / `||`) that is not taken, so names there need not resolve. Integer arithmetic is 64-bit
// two's complement and wraps; division by zero and shifts outside 0..63 are errors. Names,
// `sizeof` and task names are resolved through ExprContext, which the assembler implements and
// which reports errors at the right source position. A result of Status::NOT_YET means a name's
// value is not known at this stage (an address during data layout); nothing was reported then.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "isa/asm/lexer.hpp"

namespace wsemu::isa::assembler {

constexpr int kMaxExpressionDepth = 200;

enum class Status { OK, FAILED, NOT_YET };

struct Value {
  enum class Kind : uint8_t { INT, FLOAT, BITS };  // BITS: bits(N), a raw pattern for float data
  Kind kind = Kind::INT;
  int64_t i = 0;
  double f = 0;
  static Value integer(int64_t v) { return {Kind::INT, v, 0}; }
};

class ExprContext {
 public:
  virtual ~ExprContext() = default;
  virtual Status name_value(const Token& name, Value& out) = 0;  // reports its own errors
  virtual Status size_of(const Token& name, int64_t& out) = 0;   // bytes of a data symbol
  virtual std::optional<int64_t> task_id(std::string_view name) = 0;  // nullopt: not a task
  virtual void error(int col, std::string message) = 0;
};

class TokenCursor {
 public:
  TokenCursor(const std::vector<Token>& tokens, size_t pos, int end_col)
      : tokens_(tokens), pos_(pos), end_col_(end_col) {}
  bool at_end() const { return pos_ >= tokens_.size(); }
  const Token* peek(size_t ahead = 0) const {
    return pos_ + ahead < tokens_.size() ? &tokens_[pos_ + ahead] : nullptr;
  }
  bool peek_is(std::string_view punct) const { return !at_end() && tokens_[pos_].is(punct); }
  const Token& next() { return tokens_[pos_++]; }
  bool accept(std::string_view punct) {
    if (!peek_is(punct)) return false;
    ++pos_;
    return true;
  }
  // Column of the next token, or just past the last one at the end of the line.
  int col() const { return at_end() ? end_col_ : tokens_[pos_].col; }
  // What the next token is, for "expected X, found Y" messages.
  std::string describe_next() const;
  size_t pos() const { return pos_; }
  void set_pos(size_t pos) { pos_ = pos; }

 private:
  const std::vector<Token>& tokens_;
  size_t pos_;
  int end_col_;
};

Status parse_expression(TokenCursor& cur, ExprContext& ctx, Value& out);

// An integer expression; a float is an error reported at the expression's column.
Status parse_integer(TokenCursor& cur, ExprContext& ctx, int64_t& out);

// A task reference: a task name standing alone (followed by `,`, `)`, `]` or the end), or an
// integer expression giving the id.
Status parse_task_ref(TokenCursor& cur, ExprContext& ctx, int64_t& out);

}  // namespace wsemu::isa::assembler
