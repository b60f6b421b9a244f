#include "isa/asm/expression.hpp"

#include <fmt/format.h>

#include "isa/control_payload.hpp"

namespace wsemu::isa::assembler {
namespace {

struct BinaryOp {
  std::string_view text;
  int precedence;
};

constexpr BinaryOp kBinaryOps[] = {
    {"||", 1}, {"&&", 2}, {"|", 3},  {"^", 4},  {"&", 5},  {"==", 6}, {"!=", 6},
    {"<", 7},  {"<=", 7}, {">", 7},  {">=", 7}, {"<<", 8}, {">>", 8}, {"+", 9},
    {"-", 9},  {"*", 10}, {"/", 10}, {"%", 10},
};

const BinaryOp* binary_op(const Token* tok) {
  if (!tok || tok->kind != TokenKind::PUNCT) return nullptr;
  for (const BinaryOp& op : kBinaryOps)
    if (tok->text == op.text) return &op;
  return nullptr;
}

bool is_terminator(const Token* tok) {
  return !tok || tok->is(",") || tok->is(")") || tok->is("]");
}

int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

double as_double(const Value& v) { return v.kind == Value::Kind::FLOAT ? v.f : static_cast<double>(v.i); }

class ExprParser {
 public:
  ExprParser(TokenCursor& cur, ExprContext& ctx) : cur_(cur), ctx_(ctx) {}

  Status expression(Value& out, bool live) {
    if (++depth_ > kMaxExpressionDepth) {
      ctx_.error(cur_.col(), fmt::format("expression nested too deeply (more than {} levels)",
                                         kMaxExpressionDepth));
      return Status::FAILED;
    }
    Status s = ternary(out, live);
    --depth_;
    return s;
  }

 private:
  Status ternary(Value& out, bool live) {
    Value cond;
    Status s = binary(cond, 1, live);
    if (s != Status::OK) return s;
    if (!cur_.peek_is("?")) {
      out = cond;
      return Status::OK;
    }
    const int col = cur_.col();
    cur_.next();
    bool truth = false;
    if (live) {
      if (cond.kind == Value::Kind::FLOAT) {
        truth = cond.f != 0;
      } else {
        truth = cond.i != 0;
      }
    }
    Value a, b;
    if ((s = expression(a, live && truth)) != Status::OK) return s;
    if (!cur_.accept(":")) {
      ctx_.error(cur_.col(), fmt::format("expected ':' of the '?' at column {}, found {}", col,
                                         cur_.describe_next()));
      return Status::FAILED;
    }
    if ((s = expression(b, live && !truth)) != Status::OK) return s;
    out = truth ? a : b;
    return Status::OK;
  }

  Status binary(Value& out, int min_prec, bool live) {
    Status s = unary(out, live);
    if (s != Status::OK) return s;
    while (const BinaryOp* op = binary_op(cur_.peek())) {
      if (op->precedence < min_prec) break;
      const int col = cur_.col();
      cur_.next();
      // && and || evaluate their right side only when it matters.
      bool right_live = live;
      if (live && op->text == "&&") right_live = truthy(out);
      if (live && op->text == "||") right_live = !truthy(out);
      Value rhs;
      if (++depth_ > kMaxExpressionDepth) {
        ctx_.error(col, fmt::format("expression nested too deeply (more than {} levels)",
                                    kMaxExpressionDepth));
        return Status::FAILED;
      }
      s = binary(rhs, op->precedence + 1, right_live);
      --depth_;
      if (s != Status::OK) return s;
      if (!live) continue;
      if (op->text == "&&") {
        out = Value::integer(truthy(out) && truthy(rhs));
        continue;
      }
      if (op->text == "||") {
        out = Value::integer(truthy(out) || truthy(rhs));
        continue;
      }
      if ((s = apply(op->text, col, out, rhs)) != Status::OK) return s;
    }
    return Status::OK;
  }

  static bool truthy(const Value& v) { return v.kind == Value::Kind::FLOAT ? v.f != 0 : v.i != 0; }

  Status apply(std::string_view op, int col, Value& a, const Value& b) {
    const bool fl = a.kind == Value::Kind::FLOAT || b.kind == Value::Kind::FLOAT;
    if (fl) {
      const double x = as_double(a), y = as_double(b);
      if (op == "+") a = {Value::Kind::FLOAT, 0, x + y};
      else if (op == "-") a = {Value::Kind::FLOAT, 0, x - y};
      else if (op == "*") a = {Value::Kind::FLOAT, 0, x * y};
      else if (op == "/") {
        if (y == 0) {
          ctx_.error(col, "division by zero");
          return Status::FAILED;
        }
        a = {Value::Kind::FLOAT, 0, x / y};
      } else if (op == "==") a = Value::integer(x == y);
      else if (op == "!=") a = Value::integer(x != y);
      else if (op == "<") a = Value::integer(x < y);
      else if (op == "<=") a = Value::integer(x <= y);
      else if (op == ">") a = Value::integer(x > y);
      else if (op == ">=") a = Value::integer(x >= y);
      else {
        ctx_.error(col, fmt::format("operator '{}' needs integer operands, not floating-point ones", op));
        return Status::FAILED;
      }
      return Status::OK;
    }
    const int64_t x = a.i, y = b.i;
    int64_t r = 0;
    if (op == "+") r = wrap_add(x, y);
    else if (op == "-") r = wrap_sub(x, y);
    else if (op == "*") r = wrap_mul(x, y);
    else if (op == "/" || op == "%") {
      if (y == 0) {
        ctx_.error(col, op == "/" ? "division by zero" : "remainder by zero");
        return Status::FAILED;
      }
      if (x == INT64_MIN && y == -1) r = op == "/" ? INT64_MIN : 0;
      else r = op == "/" ? x / y : x % y;
    } else if (op == "<<" || op == ">>") {
      if (y < 0 || y > 63) {
        ctx_.error(col, fmt::format("shift amount {} is outside 0..63", y));
        return Status::FAILED;
      }
      r = op == "<<" ? static_cast<int64_t>(static_cast<uint64_t>(x) << y) : (x >> y);
    } else if (op == "&") r = x & y;
    else if (op == "|") r = x | y;
    else if (op == "^") r = x ^ y;
    else if (op == "==") r = x == y;
    else if (op == "!=") r = x != y;
    else if (op == "<") r = x < y;
    else if (op == "<=") r = x <= y;
    else if (op == ">") r = x > y;
    else if (op == ">=") r = x >= y;
    a = Value::integer(r);
    return Status::OK;
  }

  Status unary(Value& out, bool live) {
    const Token* t = cur_.peek();
    if (t && t->kind == TokenKind::PUNCT &&
        (t->text == "-" || t->text == "+" || t->text == "~" || t->text == "!")) {
      const std::string_view op = t->text;
      const int col = t->col;
      cur_.next();
      if (++depth_ > kMaxExpressionDepth) {
        ctx_.error(col, fmt::format("expression nested too deeply (more than {} levels)",
                                    kMaxExpressionDepth));
        return Status::FAILED;
      }
      Status s = unary(out, live);
      --depth_;
      if (s != Status::OK || !live) return s;
      if (out.kind == Value::Kind::BITS) out.kind = Value::Kind::INT;
      if (out.kind == Value::Kind::FLOAT) {
        if (op == "-") out.f = -out.f;
        else if (op == "!") out = Value::integer(out.f == 0);
        else if (op == "~") {
          ctx_.error(col, "operator '~' needs an integer operand, not a floating-point one");
          return Status::FAILED;
        }
        return Status::OK;
      }
      if (op == "-") out.i = wrap_sub(0, out.i);
      else if (op == "~") out.i = ~out.i;
      else if (op == "!") out.i = out.i == 0;
      return Status::OK;
    }
    return primary(out, live);
  }

  Status primary(Value& out, bool live) {
    if (cur_.at_end()) {
      ctx_.error(cur_.col(), "expected an expression at the end of the line");
      return Status::FAILED;
    }
    const Token& t = *cur_.peek();
    switch (t.kind) {
      case TokenKind::INT:
        cur_.next();
        out = Value::integer(static_cast<int64_t>(t.int_value));
        return Status::OK;
      case TokenKind::FLOAT:
        cur_.next();
        out = {Value::Kind::FLOAT, 0, t.float_value};
        return Status::OK;
      case TokenKind::STRING:
        ctx_.error(t.col, "a string cannot be used as a number");
        return Status::FAILED;
      case TokenKind::IDENT: {
        cur_.next();
        if (cur_.peek_is("(")) return call(t, out, live);
        if (!live) {
          out = Value::integer(0);
          return Status::OK;
        }
        return ctx_.name_value(t, out);
      }
      case TokenKind::PUNCT:
        if (t.is("(")) {
          cur_.next();
          Status s = expression(out, live);
          if (s != Status::OK) return s;
          if (!cur_.accept(")")) {
            ctx_.error(cur_.col(), fmt::format("expected ')', found {}", cur_.describe_next()));
            return Status::FAILED;
          }
          return Status::OK;
        }
        break;
    }
    ctx_.error(t.col, fmt::format("expected an expression, found {}", cur_.describe_next()));
    return Status::FAILED;
  }

  Status int_arg(int64_t& out, bool live, std::string_view fn) {
    const int col = cur_.col();
    Value v;
    Status s = expression(v, live);
    if (s != Status::OK) return s;
    if (live && v.kind == Value::Kind::FLOAT) {
      ctx_.error(col, fmt::format("{}() needs integer arguments", fn));
      return Status::FAILED;
    }
    out = v.i;
    return Status::OK;
  }

  bool expect(std::string_view punct, std::string_view fn) {
    if (cur_.accept(punct)) return true;
    ctx_.error(cur_.col(), fmt::format("expected '{}' in {}(), found {}", punct, fn, cur_.describe_next()));
    return false;
  }

  Status call(const Token& fn, Value& out, bool live) {
    cur_.next();  // (
    const std::string_view name = fn.text;
    if (name == "sizeof") {
      const Token* arg = cur_.peek();
      if (!arg || arg->kind != TokenKind::IDENT) {
        ctx_.error(cur_.col(), "sizeof() takes the name of a data symbol");
        return Status::FAILED;
      }
      cur_.next();
      if (!expect(")", name)) return Status::FAILED;
      int64_t bytes = 0;
      if (live) {
        Status s = ctx_.size_of(*arg, bytes);
        if (s != Status::OK) return s;
      }
      out = Value::integer(bytes);
      return Status::OK;
    }
    if (name == "bits") {
      int64_t v = 0;
      Status s = int_arg(v, live, name);
      if (s != Status::OK) return s;
      if (!expect(")", name)) return Status::FAILED;
      out = {Value::Kind::BITS, v, 0};
      return Status::OK;
    }
    if (name == "ctl_entry") {
      int64_t task = 0, data = 0;
      const int task_col = cur_.col();
      Status s = live ? parse_task_ref(cur_, ctx_, task) : int_arg(task, false, name);
      if (s != Status::OK) return s;
      if (!expect(",", name)) return Status::FAILED;
      const int data_col = cur_.col();
      if ((s = int_arg(data, live, name)) != Status::OK) return s;
      int64_t command = 0;
      if (cur_.accept(",") && (s = command_arg(command, live, name)) != Status::OK) return s;
      if (!expect(")", name)) return Status::FAILED;
      if (live && (task < 0 || task > 63 || task == isa::kNoControlTask)) {
        ctx_.error(task_col,
                   fmt::format("ctl_entry(): task id {} is outside 0..63 or is 31 (no task)", task));
        return Status::FAILED;
      }
      if (live && (data < -32768 || data > 65535)) {
        ctx_.error(data_col, fmt::format("ctl_entry(): data {} does not fit in 16 bits", data));
        return Status::FAILED;
      }
      out = Value::integer(
          isa::make_control_payload({isa::RouterCommand(command)}, int(task), uint16_t(data)));
      return Status::OK;
    }
    if (name == "ctl_cmds") {
      std::array<isa::RouterCommand, isa::kControlSlots> commands{};
      for (int i = 0; i < isa::kControlSlots; ++i) {
        int64_t c = 0;
        Status s = command_arg(c, live, name);
        if (s != Status::OK) return s;
        commands[size_t(i)] = isa::RouterCommand(c);
        if (cur_.accept(")")) {
          out = Value::integer(isa::make_control_payload(commands));
          return Status::OK;
        }
        if (i + 1 < isa::kControlSlots && !expect(",", name)) return Status::FAILED;
      }
      ctx_.error(cur_.col(), fmt::format("ctl_cmds() takes at most {} commands", isa::kControlSlots));
      return Status::FAILED;
    }
    ctx_.error(fn.col, fmt::format("unknown function '{}' (known: sizeof, bits, ctl_entry, ctl_cmds)", name));
    return Status::FAILED;
  }

  // A router command (NOP, SWITCH_ADV, SWITCH_RST, TEARDOWN: 0..3) of ctl_cmds / ctl_entry.
  Status command_arg(int64_t& c, bool live, std::string_view name) {
    const int col = cur_.col();
    Status s = int_arg(c, live, name);
    if (s != Status::OK) return s;
    if (live && (c < 0 || c > 3)) {
      ctx_.error(col, fmt::format("{}(): command {} is not NOP, SWITCH_ADV, SWITCH_RST or TEARDOWN (0..3)",
                                  name, c));
      return Status::FAILED;
    }
    if (!live) c = 0;
    return Status::OK;
  }

  TokenCursor& cur_;
  ExprContext& ctx_;
  int depth_ = 0;
};

}  // namespace

std::string TokenCursor::describe_next() const {
  if (at_end()) return "the end of the line";
  const Token& t = tokens_[pos_];
  std::string_view text = t.text;
  if (text.size() > 40) return fmt::format("'{}...'", text.substr(0, 40));
  return fmt::format("'{}'", text);
}

Status parse_expression(TokenCursor& cur, ExprContext& ctx, Value& out) {
  ExprParser p(cur, ctx);
  return p.expression(out, true);
}

Status parse_integer(TokenCursor& cur, ExprContext& ctx, int64_t& out) {
  const int col = cur.col();
  Value v;
  Status s = parse_expression(cur, ctx, v);
  if (s != Status::OK) return s;
  if (v.kind == Value::Kind::FLOAT) {
    ctx.error(col, fmt::format("expected an integer, not the floating-point value {}", v.f));
    return Status::FAILED;
  }
  out = v.i;
  return Status::OK;
}

Status parse_task_ref(TokenCursor& cur, ExprContext& ctx, int64_t& out) {
  const Token* t = cur.peek();
  if (t && t->kind == TokenKind::IDENT && is_terminator(cur.peek(1))) {
    if (auto id = ctx.task_id(t->text)) {
      cur.next();
      out = *id;
      return Status::OK;
    }
  }
  return parse_integer(cur, ctx, out);
}

}  // namespace wsemu::isa::assembler
