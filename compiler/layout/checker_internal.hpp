// Internal to the checker (checker.cpp, rect_evaluation.cpp, route_check.cpp): the state the
// checker's phases share. Not part of the public API; include checker.hpp instead.
#pragma once

#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/layout/checker.hpp"
#include "compiler/layout/expression.hpp"

namespace wsemu::compiler::layout::detail {

// Per-PE frame slots shared by every rect; a rect's lets follow.
enum FrameSlot : int { SLOT_X = 0, SLOT_Y = 1, SLOT_FX = 2, SLOT_FY = 3, kFixedSlots = 4 };

// Per-rect state that the per-PE evaluation needs and the plan does not keep.
struct RectContext {
  RectAst* ast = nullptr;
  uint32_t plan_index = 0;
  Scope per_pe;    // x, y, fx, fy, lets as slots; top-level names as constants
  Scope constant;  // top-level names and constant lets; per-PE names unavailable
  std::vector<const Expr*> let_exprs;  // per-PE lets, frame slots kFixedSlots + i
  std::vector<const Expr*> param_exprs;  // in plan.param_names order
  std::vector<uint32_t> route_indices;  // into plan.routes, in source order
  std::vector<std::vector<const Expr*>> route_conditions;  // parallel to route_indices
  // Parallel to route_indices: a counter filter's start that differs per PE (null: constant),
  // and the copies of such a route made for each start value, (route, start) -> plan.routes.
  std::vector<const Expr*> route_counter_starts;
  std::map<std::pair<uint32_t, int64_t>, uint32_t> counter_start_routes;
  bool ok = true;  // false: geometry or binding failed; skip per-PE work
};

class Checker {
 public:
  Checker(LayoutAst& ast, const SourceText& source, const CheckOptions& options);
  CheckResult run();

  // ---- reporting (checker.cpp) ----
  void error(Loc loc, std::string message);
  void note(Loc loc, std::string message);
  void command_line_error(std::string message);
  bool too_many_errors() const { return errors_ >= kMaxErrors; }
  // Binds `expr` and reports an unresolved name; false on failure.
  bool bind(Expr& expr, const Scope& scope);
  // Binds and evaluates a constant expression; false (after reporting) on failure.
  bool constant(Expr& expr, const Scope& scope, int64_t& out);

  // ---- phases ----
  void check_arch();           // checker.cpp
  void check_declarations();   // checker.cpp
  void check_fabric();         // checker.cpp
  void check_rects();          // checker.cpp: geometry, names, exports; calls the two below
  void bind_rect(RectContext& ctx);      // rect_evaluation.cpp
  void evaluate_rect(RectContext& ctx);  // rect_evaluation.cpp
  void check_neighbours();     // route_check.cpp

  LayoutAst& ast_;
  const SourceText& source_;
  const CheckOptions& options_;
  CheckResult result_;
  LayoutPlan& plan_;
  size_t errors_ = 0;
  Scope top_;
  std::map<std::string, Loc> top_names_;
  std::vector<RectContext> rects_;
  std::map<std::string, Loc> host_names_;
  std::set<const Expr*> reported_;  // expressions whose per-PE error was already reported
};

std::string pe_name(uint32_t fx, uint32_t fy);  // "PE (3, 1)"
std::string color_text(uint8_t color);           // "color 4"

}  // namespace wsemu::compiler::layout::detail
