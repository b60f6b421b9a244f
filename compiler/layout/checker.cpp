#include "compiler/layout/checker.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "compiler/layout/checker_internal.hpp"

namespace wsemu::compiler::layout {

bool CheckResult::ok() const {
  return std::none_of(diagnostics.begin(), diagnostics.end(),
                      [](const Diagnostic& d) { return d.severity == Severity::ERROR; });
}

bool known_arch(std::string_view arch) { return arch == "wse2" || arch == "wse3"; }

FabricLimit max_fabric(std::string_view arch) {
  // The fabric dimensions the SDK documents for the real systems (CS-2 and CS-3).
  return arch == "wse3" ? FabricLimit{762, 1176} : FabricLimit{757, 996};
}

namespace detail {
namespace {

constexpr std::string_view kBuiltinNames[] = {"x",    "y",     "fx",  "fy",  "width",
                                              "height", "true", "false", "min", "max", "abs"};

bool is_builtin(std::string_view name) {
  return std::find(std::begin(kBuiltinNames), std::end(kBuiltinNames), name) !=
         std::end(kBuiltinNames);
}

std::string decl_word(DeclKind k) {
  return k == DeclKind::PARAM ? "param" : k == DeclKind::LET ? "let" : "color";
}

}  // namespace

std::string pe_name(uint32_t fx, uint32_t fy) {
  return "PE (" + std::to_string(fx) + ", " + std::to_string(fy) + ")";
}
std::string color_text(uint8_t color) { return "color " + std::to_string(color); }

Checker::Checker(LayoutAst& ast, const SourceText& source, const CheckOptions& options)
    : ast_(ast), source_(source), options_(options), plan_(result_.plan) {}

void Checker::error(Loc loc, std::string message) {
  if (errors_ == kMaxErrors) {
    result_.diagnostics.push_back(
        source_.make(Severity::ERROR, {}, "too many errors; stopping here"));
  }
  if (errors_++ >= kMaxErrors) return;
  result_.diagnostics.push_back(source_.make(Severity::ERROR, loc, std::move(message)));
}

void Checker::note(Loc loc, std::string message) {
  if (errors_ > kMaxErrors) return;
  result_.diagnostics.push_back(source_.make(Severity::NOTE, loc, std::move(message)));
}

void Checker::command_line_error(std::string message) {
  Diagnostic d;
  d.file = "command line";
  d.message = std::move(message);
  ++errors_;
  result_.diagnostics.push_back(std::move(d));
}

bool Checker::bind(Expr& expr, const Scope& scope) {
  if (auto err = scope.bind(expr)) {
    // An empty message marks a name whose own definition already failed: no second error.
    if (!err->message.empty()) error(err->loc, err->message);
    return false;
  }
  return true;
}

bool Checker::constant(Expr& expr, const Scope& scope, int64_t& out) {
  if (!bind(expr, scope)) return false;
  ConstResult r = evaluate_constant(expr);
  if (r.error) {
    error(r.error->loc, r.error->message);
    return false;
  }
  out = r.value;
  return true;
}

void Checker::check_arch() {
  std::string arch;
  for (size_t i = 0; i < ast_.archs.size(); ++i) {
    const ArchDecl& a = ast_.archs[i];
    if (i > 0) {
      error(a.loc, "the architecture is given twice");
      note(ast_.archs[0].loc, "first given here");
      continue;
    }
    if (!known_arch(a.name)) {
      error(a.name_loc, "unknown architecture '" + a.name + "' (expected wse2 or wse3)");
      continue;
    }
    arch = a.name;
  }
  if (!options_.arch.empty()) {
    if (!known_arch(options_.arch))
      command_line_error("--arch " + options_.arch + ": unknown architecture (expected wse2 or wse3)");
    else
      arch = options_.arch;
  }
  plan_.arch = arch.empty() ? "wse2" : arch;
}

void Checker::check_declarations() {
  for (std::string_view b : {"x", "y", "fx", "fy", "width", "height"})
    top_.define_unavailable(std::string(b),
                            fmt::format("'{}' is only defined inside a rect, per PE", b));
  std::set<std::string> used_overrides;
  for (Decl& d : ast_.decls) {
    std::string word = decl_word(d.kind);
    if (is_builtin(d.name)) {
      error(d.name_loc, "'" + d.name + "' is a built-in name and cannot be redefined");
      continue;
    }
    if (auto it = top_names_.find(d.name); it != top_names_.end()) {
      error(d.name_loc, "'" + d.name + "' is already defined");
      note(it->second, "'" + d.name + "' was first defined here");
      continue;
    }
    top_names_[d.name] = d.name_loc;
    int64_t value = 0;
    bool ok;
    auto override_it = options_.params.find(d.name);
    if (d.kind == DeclKind::PARAM && override_it != options_.params.end()) {
      used_overrides.insert(d.name);
      bind(*d.value, top_);  // the default is still checked for mistakes
      value = override_it->second;
      ok = true;
    } else {
      ok = constant(*d.value, top_, value);
    }
    if (ok && d.kind == DeclKind::COLOR) {
      if (value < 0 || value >= kNumRoutableColors) {
        error(d.value->loc, "color " + d.name + " = " + std::to_string(value) +
                                " is outside the routable colors 0.." +
                                std::to_string(kNumRoutableColors - 1));
        ok = false;
      } else if (value >= kFirstFirmwareColor) {
        error(d.value->loc, "color " + d.name + " = " + std::to_string(value) +
                                " is reserved for the memcpy firmware (colors " +
                                std::to_string(kFirstFirmwareColor) + ".." +
                                std::to_string(kNumRoutableColors - 1) +
                                "); kernels may use colors 0.." +
                                std::to_string(kFirstFirmwareColor - 1));
        ok = false;
      } else {
        plan_.colors.push_back({d.name, static_cast<uint8_t>(value)});
      }
    }
    if (!ok) {
      top_.define_unavailable(d.name, "");
      continue;
    }
    top_.define_constant(d.name, value);
    if (d.kind == DeclKind::PARAM) plan_.build_params.emplace_back(d.name, value);
  }
  for (const auto& param : options_.params) {
    // Not a structured binding: clang 14 (the fuzz preset) cannot capture one in the lambda below.
    const std::string& name = param.first;
    const int64_t value = param.second;
    if (used_overrides.count(name)) continue;
    std::string params;
    for (const Decl& d : ast_.decls)
      if (d.kind == DeclKind::PARAM) params += (params.empty() ? "" : ", ") + d.name;
    auto it = std::find_if(ast_.decls.begin(), ast_.decls.end(),
                           [&](const Decl& d) { return d.name == name; });
    if (it != ast_.decls.end())
      command_line_error("--param " + name + "=" + std::to_string(value) + ": '" + name +
                         "' is a '" + decl_word(it->kind) +
                         "', not a 'param'; only params can be set from the command line");
    else
      command_line_error("--param " + name + "=" + std::to_string(value) +
                         ": the layout has no parameter '" + name + "' (its parameters: " +
                         (params.empty() ? "none" : params) + ")");
  }
  std::sort(plan_.build_params.begin(), plan_.build_params.end());
}

void Checker::check_fabric() {
  if (ast_.fabrics.empty()) {
    error({}, "the layout has no 'fabric W x H' statement");
    return;
  }
  for (size_t i = 1; i < ast_.fabrics.size(); ++i) {
    error(ast_.fabrics[i].loc, "the fabric size is given twice");
    note(ast_.fabrics[0].loc, "first given here");
  }
  FabricDecl& f = ast_.fabrics[0];
  int64_t w = 0, h = 0;
  bool ok = constant(*f.width, top_, w);
  ok = constant(*f.height, top_, h) && ok;
  if (!ok) return;
  if (w < 1 || h < 1) {
    error(f.loc, "the fabric must be at least 1 x 1, not " + std::to_string(w) + " x " +
                     std::to_string(h));
    return;
  }
  FabricLimit limit = max_fabric(plan_.arch);
  if (w > limit.width || h > limit.height) {
    error(f.loc, "fabric " + std::to_string(w) + " x " + std::to_string(h) +
                     " is larger than the " + plan_.arch + " wafer (" +
                     std::to_string(limit.width) + " x " + std::to_string(limit.height) + ")");
    return;
  }
  plan_.fabric_width = static_cast<uint32_t>(w);
  plan_.fabric_height = static_cast<uint32_t>(h);
}

void Checker::check_rects() {
  std::map<std::string, Loc> rect_names;
  rects_.resize(ast_.rects.size());
  plan_.rects.resize(ast_.rects.size());
  for (size_t i = 0; i < ast_.rects.size(); ++i) {
    RectAst& r = ast_.rects[i];
    RectContext& ctx = rects_[i];
    PlannedRect& pr = plan_.rects[i];
    ctx.ast = &r;
    ctx.plan_index = static_cast<uint32_t>(i);
    pr.name = r.name;
    pr.loc = r.loc;
    if (auto [it, fresh] = rect_names.emplace(r.name, r.name_loc); !fresh) {
      error(r.name_loc, "rect '" + r.name + "' is already defined");
      note(it->second, "the first rect '" + r.name + "' is here");
    }
    // Geometry: constants of the layout; x and y mean nothing here.
    Scope geometry = top_;
    for (std::string_view b : {"x", "y", "fx", "fy", "width", "height"})
      geometry.define_unavailable(
          std::string(b), fmt::format("'{}' cannot be used in a rect's position or size", b));
    int64_t x = 0, y = 0, w = 0, h = 0;
    bool ok = constant(*r.x, geometry, x);
    ok = constant(*r.y, geometry, y) && ok;
    ok = constant(*r.width, geometry, w) && ok;
    ok = constant(*r.height, geometry, h) && ok;
    ctx.ok = ok && plan_.fabric_width > 0;
    if (!ok) continue;
    std::string shape = "rect '" + r.name + "' at (" + std::to_string(x) + ", " +
                        std::to_string(y) + ") size " + std::to_string(w) + " x " +
                        std::to_string(h);
    if (w < 1 || h < 1) {
      error(r.loc, shape + " is empty; a rect is at least 1 x 1");
      ctx.ok = false;
      continue;
    }
    if (plan_.fabric_width == 0) continue;
    // Compared without x + w, which a size near 2^63 would overflow.
    const int64_t fabric_w = plan_.fabric_width, fabric_h = plan_.fabric_height;
    if (x < 0 || y < 0 || x > fabric_w || y > fabric_h || w > fabric_w - x || h > fabric_h - y) {
      error(r.loc, shape + " is off the fabric (" + std::to_string(plan_.fabric_width) + " x " +
                       std::to_string(plan_.fabric_height) + ": columns 0.." +
                       std::to_string(plan_.fabric_width - 1) + ", rows 0.." +
                       std::to_string(plan_.fabric_height - 1) + ")");
      ctx.ok = false;
      continue;
    }
    pr.x = static_cast<uint32_t>(x);
    pr.y = static_cast<uint32_t>(y);
    pr.width = static_cast<uint32_t>(w);
    pr.height = static_cast<uint32_t>(h);
    for (size_t j = 0; j < i; ++j) {
      const PlannedRect& o = plan_.rects[j];
      if (!rects_[j].ok) continue;
      uint32_t x0 = std::max(pr.x, o.x), y0 = std::max(pr.y, o.y);
      uint32_t x1 = std::min(pr.x + pr.width, o.x + o.width);
      uint32_t y1 = std::min(pr.y + pr.height, o.y + o.height);
      if (x0 < x1 && y0 < y1) {
        error(r.loc, "rect '" + r.name + "' overlaps rect '" + o.name + "' (first shared PE: " +
                         pe_name(x0, y0) + ")");
        note(o.loc, "rect '" + o.name + "' is here");
        ctx.ok = false;
      }
    }
    if (!ctx.ok) continue;
    bind_rect(ctx);
    if (ctx.ok && !too_many_errors()) evaluate_rect(ctx);
  }
  // Exports: one namespace for symbols and functions, over the whole layout.
  for (size_t i = 0; i < ast_.rects.size(); ++i) {
    RectAst& r = ast_.rects[i];
    PlannedRect& pr = plan_.rects[i];
    auto claim = [&](const std::string& name, Loc loc) {
      auto [it, fresh] = host_names_.emplace(name, loc);
      if (!fresh) {
        error(loc, "'" + name + "' is exported twice");
        note(it->second, "'" + name + "' was first exported here");
      }
      return fresh;
    };
    auto has_program = [&](Loc loc, const char* kind, const std::string& host_name) {
      if (!r.program)
        error(loc, "rect '" + r.name + "' has no program, so it cannot export " + kind + " '" + host_name + "'");
      return r.program.has_value();
    };
    for (ExportSymbolAst& s : r.symbols) {
      bool fresh = claim(s.host_name, s.name_loc);
      if (!has_program(s.loc, "symbol", s.host_name)) continue;
      int64_t count = 0;
      if (!rects_[i].ok || !constant(*s.count, rects_[i].constant, count)) continue;
      if (count < 1 || count > kPeSramBytes) {
        error(s.count_loc, "symbol '" + s.host_name + "' has " + std::to_string(count) +
                                " elements per PE; expected 1.." + std::to_string(kPeSramBytes));
        continue;
      }
      if (fresh) pr.symbols.push_back({&s, static_cast<uint32_t>(count)});
    }
    for (ExportFunctionAst& f : r.functions) {
      bool fresh = claim(f.host_name, f.name_loc);
      if (!has_program(f.loc, "function", f.host_name)) continue;
      if (fresh) pr.functions.push_back(&f);
    }
  }
}

CheckResult Checker::run() {
  check_arch();
  check_declarations();
  check_fabric();
  check_rects();
  if (result_.ok()) check_neighbours();
  return std::move(result_);
}

}  // namespace detail

CheckResult check_layout(LayoutAst& ast, const SourceText& source, const CheckOptions& options) {
  return detail::Checker(ast, source, options).run();
}

}  // namespace wsemu::compiler::layout
