// The syntax tree of a layout file (.wsl), as the parser builds it and before anything is
// evaluated. compiler/layout/README.md is the reference for what each node means.
//
// Contract: plain data owned by LayoutAst; every node carries the position (file, line, column)
// of its first token so that later stages can report errors at the right place; statements
// of included files sit in the tree as if written in place of the include. Expressions are not checked here:
// names are resolved by the binder (expression.hpp), which rewrites NAME nodes in place into
// constants or per-PE slots. Nothing here assembles programs or knows about the fabric.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "isa/object.hpp"
#include "compiler/layout/diagnostic.hpp"

namespace wsemu::compiler::layout {

enum class ExprOp : uint8_t {
  NUMBER,  // `value`
  NAME,    // `name`, unresolved
  SLOT,    // a per-PE value (x, y, fx, fy, a rect-level let): frame[`slot`]
  NEG, NOT, BITNOT,
  MUL, DIV, MOD, ADD, SUB, SHL, SHR,
  LT, LE, GT, GE, EQ, NE,
  BITAND, BITXOR, BITOR, AND, OR,
  COND,     // args[0] ? args[1] : args[2]
  MIN, MAX, ABS,  // built-in functions
};

struct Expr {
  ExprOp op = ExprOp::NUMBER;
  Loc loc;
  int64_t value = 0;
  int slot = -1;
  std::string name;  // NAME: the identifier; kept after binding for messages
  std::vector<std::unique_ptr<Expr>> args;
};
using ExprPtr = std::unique_ptr<Expr>;
// Conditions of `where` blocks are shared by every route inside the block.
using SharedExpr = std::shared_ptr<Expr>;

enum class DeclKind { PARAM, LET, COLOR };

// `param NAME = expr`, `let NAME = expr`, `color NAME = expr`.
struct Decl {
  DeclKind kind = DeclKind::LET;
  Loc loc;       // the keyword
  Loc name_loc;  // the name
  std::string name;
  ExprPtr value;
};

struct ArchDecl {
  Loc loc;
  Loc name_loc;
  std::string name;
};

struct FabricDecl {
  Loc loc;
  ExprPtr width, height;
};

// A set over {N, S, E, W, RAMP}: bit i is compiler::Direction i.
struct DirSetAst {
  Loc loc;
  uint8_t bits = 0;
};

// `posK [rx SET] [tx SET]` inside a switch block.
struct SwitchPosAst {
  Loc loc;
  int index = 0;  // 1..3
  std::optional<DirSetAst> rx, tx;
};

// `route COLOR [host] rx SET tx SET [switch {...}] [where COND]`.
struct RouteAst {
  Loc loc;
  ExprPtr color;
  bool host = false;
  DirSetAst rx, tx;
  bool has_switch = false;
  Loc switch_loc;
  std::vector<SwitchPosAst> positions;
  ExprPtr current;  // null: position 0
  bool ring = false;
  // `filter [MIN, MAX]`: range filter on the upper 16 bits of wavelets to the RAMP (null: none).
  Loc filter_loc;
  ExprPtr filter_min, filter_max;
  // `counter_filter [INIT, MAX, LIMIT] [counts data|control|both]` (null: none; counts data).
  Loc counter_loc;
  ExprPtr counter_init, counter_max, counter_limit;
  bool count_data = true, count_control = false;
  bool swap_x = false, swap_y = false;  // color swap with color ^ 1 (WSE-2)
  // `pop always|never|advance`: what routers do with control-wavelet commands (-1: not given).
  int pop_mode = -1;
  Loc pop_loc;
  bool reconfigurable = false;  // `reconfigurable`: the PE may rewrite the route at run time
  bool teardown = false;        // `teardown`: the color starts torn down (implies reconfigurable)
  // Every condition must hold at a PE for the route to apply there (its own `where` and those
  // of the enclosing `where` blocks).
  std::vector<SharedExpr> conditions;
};

struct ProgramParamAst {
  Loc loc;
  std::string name;
  ExprPtr value;
};

struct ProgramAst {
  Loc loc;
  Loc path_loc;
  std::string path;  // as written, relative to the folder of the file it is written in
  std::vector<ProgramParamAst> params;
};

// `export symbol HOST [= PROGRAM_SYMBOL] : TYPE[COUNT] [read] [write]`.
struct ExportSymbolAst {
  Loc loc;
  Loc name_loc;
  std::string host_name;
  Loc program_name_loc;
  std::string program_symbol;
  Loc type_loc;
  isa::ElemType type = isa::ElemType::F32;
  Loc count_loc;  // the count expression's first token
  ExprPtr count;
  bool readable = true;
  bool writable = true;
  bool indirect = false;  // `indirect`: SYM is a u32 pointer variable; copies follow it
};

// `export function HOST [= PROGRAM_FUNCTION]`.
struct ExportFunctionAst {
  Loc loc;
  Loc name_loc;
  std::string host_name;
  Loc program_name_loc;
  std::string program_function;
};

struct RectAst {
  Loc loc;
  Loc name_loc;
  std::string name;
  ExprPtr x, y, width, height;
  std::vector<Decl> lets;  // in source order; each may use only the lets before it
  std::optional<ProgramAst> program;
  std::vector<RouteAst> routes;
  std::vector<ExportSymbolAst> symbols;
  std::vector<ExportFunctionAst> functions;
};

struct LayoutAst {
  std::vector<ArchDecl> archs;     // more than one is an error reported by the checker
  std::vector<FabricDecl> fabrics;  // likewise
  std::vector<Decl> decls;          // params, lets and colors in source order
  std::vector<RectAst> rects;
};

}  // namespace wsemu::compiler::layout
