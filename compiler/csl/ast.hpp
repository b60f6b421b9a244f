// The CSL syntax tree: what the parser builds and the evaluator walks. One generic node type for
// expressions and one for statements/declarations, each with the span of its first token, so
// that every later error can point at the source.
//
// Contract: plain data owned by unique_ptr trees; a Module (one parsed file) owns its
// declarations and is never mutated after parsing. Nothing here evaluates or checks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/csl/source.hpp"

namespace wsemu::compiler::csl {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;

enum class ExprKind {
  INT,          // int_value
  FLOAT,        // float_value
  STRING,       // text
  BOOL,         // int_value 0/1
  NULL_LIT,
  UNDEFINED,
  IDENT,        // text
  BUILTIN,      // text = name (no '@'); args
  CALL,         // args[0] = callee, args[1..] = arguments
  FIELD,        // args[0] . text
  INDEX,        // args[0] [ args[1..] ]  (a[i], a[i, j])
  UNARY,        // text = "-", "!", "~", "&", "comptime"; args[0]
  DEREF,        // args[0].*
  BINARY,       // text = operator ("+", "and", ...); args[0], args[1]
  ANON_STRUCT,  // .{ .a = x, .b = y } (names = field names) or .{ x, y } (names empty)
  ENUM_LITERAL, // .name
  ARRAY_TYPE,   // [dims...]T: args = dims..., last = element type
  MANY_PTR_TYPE,// [*]T or [*]const T: args[0]; int_value 1 when const
  PTR_TYPE,     // *T or *const T
  FN_TYPE,      // fn(params) ret: args = param types..., last = return type
  STRUCT_TYPE,  // struct { fields }: names = field names, args = field types
  ENUM_TYPE,    // enum(T) { names }: args[0] = tag type or null; names; values in enum_values
  ARRAY_INIT,   // T { elements }: args[0] = type, args[1..] = elements (positional)
  TENSOR_ACCESS,// |i, j| {e0, e1} -> expr: names = index names, args = extents..., last = expr
  IF_EXPR,      // if (args[0]) args[1] else args[2]
  SWITCH,       // switch (args[0]) { cases }: see switch_cases
  RANGE,        // a..b inside a switch case (args[0], args[1])
};

struct SwitchCase {
  std::vector<ExprPtr> values;  // empty: else
  ExprPtr result;
  StmtPtr block;                // a `{ ... }` prong instead of a result: the switch is a statement
  Span span;
};

struct Expr {
  ExprKind kind = ExprKind::INT;
  Span span;
  std::string text;
  uint64_t int_value = 0;
  double float_value = 0;
  std::vector<ExprPtr> args;
  std::vector<std::string> names;
  std::vector<ExprPtr> enum_values;  // ENUM_TYPE: explicit values (null where absent)
  std::vector<SwitchCase> switch_cases;
};

enum class StmtKind {
  VAR,          // const / var / param declaration (Decl fields)
  FN,           // fn or task
  COMPTIME,     // comptime { body }
  LAYOUT,       // layout { body }
  BLOCK,        // { body }
  EXPR,         // expr;
  ASSIGN,       // target op= value: text = "=", "+=", ...
  IF,           // if (cond) then else
  WHILE,        // while (cond) : (step) body
  FOR,          // for (iterables) |captures| body
  RETURN,
  BREAK,
  CONTINUE,
};

struct FnParam {
  std::string name;
  ExprPtr type;
  bool is_comptime = false;
  Span span;
};

struct Stmt {
  StmtKind kind = StmtKind::EXPR;
  Span span;
  // Declarations
  std::string name;
  std::string decl_kind;  // "const", "var", "param", "fn", "task"
  bool is_pub = false, is_export = false, is_extern = false, is_comptime = false;
  ExprPtr type;           // declared type, or the return type of a fn
  ExprPtr value;          // initialiser; ASSIGN value; EXPR / RETURN expression; IF/WHILE cond
  ExprPtr target;         // ASSIGN target; WHILE step (an expression statement)
  ExprPtr align, linksection;
  std::string assign_op;  // ASSIGN
  std::vector<FnParam> params;
  std::vector<ExprPtr> iterables;       // FOR
  std::vector<std::string> captures;    // FOR
  std::vector<StmtPtr> body;            // FN, blocks, loops, IF then-branch
  std::vector<StmtPtr> else_body;       // IF
  bool has_else = false;
  StmtPtr step;                         // WHILE: the `: (i += 1)` statement
};

// One parsed file.
struct Module {
  int file = 0;
  std::vector<StmtPtr> decls;
};

}  // namespace wsemu::compiler::csl
