// Integer expressions of the layout language: name binding and evaluation.
//
// Contract: values are signed 64-bit integers; comparisons and logical operators give 0 or 1;
// `/` and `%` truncate toward zero as in C; && and || and ?: evaluate only the operand they
// need. Division or remainder by zero, overflow and shifts outside 0..63 are errors
// (EvalError, with the operator's position), never undefined behaviour. bind() rewrites the
// tree in place: names of constants become numbers, per-PE names become frame slots, so that
// evaluate() on a million PEs does no string lookups. evaluate() never allocates.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "compiler/layout/ast.hpp"

namespace wsemu::compiler::layout {

struct EvalError {
  Loc loc;
  std::string message;
};

// The names an expression may use, each a constant, a per-PE slot, or known but unusable at
// this place (with the reason, e.g. "'x' differs from PE to PE; it cannot be used here").
class Scope {
 public:
  void define_constant(const std::string& name, int64_t value);
  void define_slot(const std::string& name, int slot);
  void define_unavailable(const std::string& name, std::string reason);
  bool contains(const std::string& name) const { return entries_.count(name) != 0; }
  // Message for names that are not defined at all ("undefined name 'foo'" by default).
  void set_undefined_hint(std::string hint) { undefined_hint_ = std::move(hint); }

  // Rewrites NAME nodes of `expr`; returns the first name that cannot be resolved.
  std::optional<EvalError> bind(Expr& expr) const;

 private:
  struct Entry {
    enum Kind { CONSTANT, SLOT, UNAVAILABLE } kind = CONSTANT;
    int64_t value = 0;
    std::string reason;
  };
  std::map<std::string, Entry, std::less<>> entries_;
  std::string undefined_hint_;
};

// Throws EvalError. `frame` holds the per-PE slots; it may be empty for constant expressions.
int64_t evaluate(const Expr& expr, std::span<const int64_t> frame = {});

// True when the bound expression uses no per-PE slot.
bool is_constant(const Expr& expr);

// Evaluates `expr` with no frame; the result, or the error.
struct ConstResult {
  int64_t value = 0;
  std::optional<EvalError> error;
};
ConstResult evaluate_constant(const Expr& expr);

}  // namespace wsemu::compiler::layout
