// The checker of the layout language: evaluates a parsed layout (build parameters, colors,
// rectangles, per-PE program parameters and routes) and finds every configuration error that
// can be found without assembling the programs: undefined names, division by zero, colors out
// of range or reserved, rectangles off the fabric or overlapping, two routes for one color on
// one PE, routes that leave the fabric or send to a PE that does not listen, names exported
// twice. The result is a LayoutPlan that the linker (linker.hpp) turns into an Executable.
//
// Contract: never throws on bad input; errors are file:line:col diagnostics naming the PE
// (fabric coordinates) and color where they apply, reported once per statement rather than
// once per PE, and at most kMaxErrors in all. Per-PE work is a few integer evaluations, so a
// full 762x1176 wafer checks in well under a second. The plan is only meaningful when there
// are no errors.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/executable/executable.hpp"
#include "compiler/layout/ast.hpp"
#include "compiler/layout/diagnostic.hpp"

namespace wsemu::compiler::layout {

constexpr size_t kMaxErrors = 25;

// A route statement, evaluated: the same configuration on every PE where it applies.
struct PlannedRoute {
  ColorRoute route;
  Loc loc;
  uint32_t rect = 0;
};

struct PlannedSymbol {
  const ExportSymbolAst* ast = nullptr;
  uint32_t elems_per_pe = 0;
};

struct PlannedRect {
  std::string name;
  Loc loc;
  uint32_t x = 0, y = 0, width = 0, height = 0;
  const ProgramAst* program = nullptr;  // null: a routing-only rectangle
  std::string program_path;             // resolved against the layout's folder
  std::vector<std::string> param_names;  // sorted
  std::vector<std::vector<int64_t>> param_sets;  // distinct values, in param_names order
  std::vector<uint32_t> pe_param_set;   // per PE, row-major; empty without a program
  std::vector<std::vector<uint32_t>> route_keys;  // distinct sorted lists of route indices
  std::vector<uint32_t> pe_route_key;   // per PE, row-major
  std::vector<PlannedSymbol> symbols;
  std::vector<const ExportFunctionAst*> functions;
  // The first PE (row-major) using each param set, for messages.
  std::vector<uint32_t> param_set_first_pe;
};

struct LayoutPlan {
  std::string arch;
  uint32_t fabric_width = 0, fabric_height = 0;
  std::vector<std::pair<std::string, int64_t>> build_params;  // sorted by name
  std::vector<NamedColor> colors;
  std::vector<PlannedRect> rects;
  std::vector<PlannedRoute> routes;  // every route statement of every rect
};

struct CheckOptions {
  std::map<std::string, int64_t> params;  // --param overrides
  std::string arch;                       // --arch override; empty: the layout's, or wse2
  std::string base_dir;  // folder that the layout file's program paths are relative to (an
                         // included file's are relative to its own folder)
};

struct CheckResult {
  LayoutPlan plan;
  std::vector<Diagnostic> diagnostics;  // errors and their notes
  bool ok() const;
};

// `ast` must outlive the plan (the plan points into it); its expressions are bound in place.
CheckResult check_layout(LayoutAst& ast, const SourceText& source,
                         const CheckOptions& options);

// The largest fabric of each architecture (the real wafers the SDK targets).
struct FabricLimit {
  uint32_t width, height;
};
bool known_arch(std::string_view arch);
FabricLimit max_fabric(std::string_view arch);

}  // namespace wsemu::compiler::layout
