#include "compiler/layout/expression.hpp"

#include <limits>

namespace wsemu::compiler::layout {

void Scope::define_constant(const std::string& name, int64_t value) {
  entries_[name] = Entry{Entry::CONSTANT, value, {}};
}
void Scope::define_slot(const std::string& name, int slot) {
  entries_[name] = Entry{Entry::SLOT, slot, {}};
}
void Scope::define_unavailable(const std::string& name, std::string reason) {
  entries_[name] = Entry{Entry::UNAVAILABLE, 0, std::move(reason)};
}

std::optional<EvalError> Scope::bind(Expr& expr) const {
  if (expr.op == ExprOp::NAME) {
    auto it = entries_.find(expr.name);
    if (it == entries_.end()) {
      std::string message = "undefined name '" + expr.name + "'";
      if (!undefined_hint_.empty()) message += " (" + undefined_hint_ + ")";
      return EvalError{expr.loc, message};
    }
    const Entry& e = it->second;
    switch (e.kind) {
      case Entry::CONSTANT:
        expr.op = ExprOp::NUMBER;
        expr.value = e.value;
        break;
      case Entry::SLOT:
        expr.op = ExprOp::SLOT;
        expr.slot = static_cast<int>(e.value);
        break;
      case Entry::UNAVAILABLE:
        return EvalError{expr.loc, e.reason};
    }
    return std::nullopt;
  }
  for (ExprPtr& arg : expr.args)
    if (auto err = bind(*arg)) return err;
  return std::nullopt;
}

namespace {

[[noreturn]] void overflow(const Expr& e) {
  throw EvalError{e.loc, "integer overflow in expression"};
}

}  // namespace

int64_t evaluate(const Expr& e, std::span<const int64_t> frame) {
  auto arg = [&](size_t i) { return evaluate(*e.args[i], frame); };
  int64_t r = 0;
  // Takes the flag of a __builtin_*_overflow that wrote r.
  auto result_unless = [&](bool overflowed) {
    if (overflowed) overflow(e);
    return r;
  };
  switch (e.op) {
    case ExprOp::NUMBER: return e.value;
    case ExprOp::NAME: throw EvalError{e.loc, "internal error: unbound name '" + e.name + "'"};
    case ExprOp::SLOT:
      if (e.slot < 0 || static_cast<size_t>(e.slot) >= frame.size())
        throw EvalError{e.loc, "internal error: '" + e.name + "' has no value here"};
      return frame[e.slot];
    case ExprOp::NEG: {
      int64_t a = arg(0);
      if (a == std::numeric_limits<int64_t>::min()) overflow(e);
      return -a;
    }
    case ExprOp::NOT: return arg(0) == 0 ? 1 : 0;
    case ExprOp::BITNOT: return ~arg(0);
    case ExprOp::MUL: return result_unless(__builtin_mul_overflow(arg(0), arg(1), &r));
    case ExprOp::DIV:
    case ExprOp::MOD: {
      int64_t a = arg(0), b = arg(1);
      if (b == 0)
        throw EvalError{e.loc, e.op == ExprOp::DIV ? "division by zero" : "remainder by zero"};
      if (a == std::numeric_limits<int64_t>::min() && b == -1) overflow(e);
      return e.op == ExprOp::DIV ? a / b : a % b;
    }
    case ExprOp::ADD: return result_unless(__builtin_add_overflow(arg(0), arg(1), &r));
    case ExprOp::SUB: return result_unless(__builtin_sub_overflow(arg(0), arg(1), &r));
    case ExprOp::SHL:
    case ExprOp::SHR: {
      int64_t a = arg(0), s = arg(1);
      if (s < 0 || s > 63)
        throw EvalError{e.loc, "shift amount " + std::to_string(s) + " is outside 0..63"};
      if (e.op == ExprOp::SHR) return a >> s;
      if (__builtin_mul_overflow(a, int64_t{1} << s, &r) || (s == 63 && a != 0)) overflow(e);
      return r;
    }
    case ExprOp::LT: return arg(0) < arg(1);
    case ExprOp::LE: return arg(0) <= arg(1);
    case ExprOp::GT: return arg(0) > arg(1);
    case ExprOp::GE: return arg(0) >= arg(1);
    case ExprOp::EQ: return arg(0) == arg(1);
    case ExprOp::NE: return arg(0) != arg(1);
    case ExprOp::BITAND: return arg(0) & arg(1);
    case ExprOp::BITXOR: return arg(0) ^ arg(1);
    case ExprOp::BITOR: return arg(0) | arg(1);
    case ExprOp::AND: return arg(0) != 0 && arg(1) != 0;
    case ExprOp::OR: return arg(0) != 0 || arg(1) != 0;
    case ExprOp::COND: return arg(0) != 0 ? arg(1) : arg(2);
    case ExprOp::MIN:
    case ExprOp::MAX: {
      int64_t best = arg(0);
      for (size_t i = 1; i < e.args.size(); ++i) {
        int64_t v = arg(i);
        if (e.op == ExprOp::MIN ? v < best : v > best) best = v;
      }
      return best;
    }
    case ExprOp::ABS: {
      int64_t a = arg(0);
      if (a == std::numeric_limits<int64_t>::min()) overflow(e);
      return a < 0 ? -a : a;
    }
  }
  throw EvalError{e.loc, "internal error: unknown expression node"};
}

bool is_constant(const Expr& expr) {
  if (expr.op == ExprOp::SLOT || expr.op == ExprOp::NAME) return false;
  for (const ExprPtr& a : expr.args)
    if (!is_constant(*a)) return false;
  return true;
}

ConstResult evaluate_constant(const Expr& expr) {
  ConstResult result;
  try {
    result.value = evaluate(expr, {});
  } catch (const EvalError& e) {
    result.error = e;
  }
  return result;
}

}  // namespace wsemu::compiler::layout
