// The per-rect part of the checker: binding a rect's names (lets, program parameters, route
// statements) and evaluating them on every PE of the rect.
#include <algorithm>
#include <array>
#include <filesystem>
#include <unordered_map>

#include "compiler/layout/checker_internal.hpp"

namespace wsemu::compiler::layout::detail {
namespace {

struct ValuesHash {
  size_t operator()(const std::vector<int64_t>& v) const {
    uint64_t h = 1469598103934665603ull;
    for (int64_t x : v) h = (h ^ static_cast<uint64_t>(x)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};
struct IndicesHash {
  size_t operator()(const std::vector<uint32_t>& v) const {
    uint64_t h = 1469598103934665603ull;
    for (uint32_t x : v) h = (h ^ x) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

bool is_builtin_name(std::string_view n) {
  for (std::string_view b : {"x", "y", "fx", "fy", "width", "height", "true", "false", "min",
                             "max", "abs"})
    if (n == b) return true;
  return false;
}

}  // namespace

void Checker::bind_rect(RectContext& ctx) {
  RectAst& r = *ctx.ast;
  PlannedRect& pr = plan_.rects[ctx.plan_index];
  ctx.per_pe = top_;
  ctx.constant = top_;
  for (Scope* s : {&ctx.per_pe, &ctx.constant}) {
    s->define_constant("width", pr.width);
    s->define_constant("height", pr.height);
  }
  const std::pair<const char*, int> kSlots[] = {
      {"x", SLOT_X}, {"y", SLOT_Y}, {"fx", SLOT_FX}, {"fy", SLOT_FY}};
  for (auto [name, slot] : kSlots) {
    ctx.per_pe.define_slot(name, slot);
    ctx.constant.define_unavailable(
        name, std::string("'") + name +
                  "' differs from PE to PE, so it cannot be used here (the value must be the "
                  "same on every PE of the rect; split the rect or the route with 'where')");
  }

  std::map<std::string, Loc> let_names;
  for (Decl& d : r.lets) {
    if (is_builtin_name(d.name)) {
      error(d.name_loc, "'" + d.name + "' is a built-in name and cannot be redefined");
      ctx.ok = false;
      continue;
    }
    if (auto it = top_names_.find(d.name); it != top_names_.end()) {
      error(d.name_loc, "'" + d.name + "' is already defined at the top of the layout");
      note(it->second, "'" + d.name + "' is defined here");
      ctx.ok = false;
      continue;
    }
    if (auto [it, fresh] = let_names.emplace(d.name, d.name_loc); !fresh) {
      error(d.name_loc, "'" + d.name + "' is already defined in rect '" + r.name + "'");
      note(it->second, "'" + d.name + "' is defined here");
      ctx.ok = false;
      continue;
    }
    if (!bind(*d.value, ctx.per_pe)) {
      ctx.per_pe.define_unavailable(d.name, "");
      ctx.constant.define_unavailable(d.name, "");
      ctx.ok = false;
      continue;
    }
    if (is_constant(*d.value)) {
      ConstResult v = evaluate_constant(*d.value);
      if (v.error) {
        error(v.error->loc, v.error->message);
        ctx.per_pe.define_unavailable(d.name, "");
        ctx.constant.define_unavailable(d.name, "");
        ctx.ok = false;
        continue;
      }
      ctx.per_pe.define_constant(d.name, v.value);
      ctx.constant.define_constant(d.name, v.value);
    } else {
      int slot = kFixedSlots + static_cast<int>(ctx.let_exprs.size());
      ctx.let_exprs.push_back(d.value.get());
      ctx.per_pe.define_slot(d.name, slot);
      ctx.constant.define_unavailable(
          d.name, "'" + d.name +
                      "' differs from PE to PE (it depends on x or y), so it cannot be used "
                      "here (the value must be the same on every PE of the rect)");
    }
  }

  if (r.program) {
    ProgramAst& p = *r.program;
    pr.program = &p;
    std::filesystem::path path(p.path);
    // Relative to the file the statement is written in: the layout itself (base_dir) or the
    // included file that holds it.
    const std::string base_dir =
        p.loc.file == 0
            ? options_.base_dir
            : std::filesystem::path(source_.file_name(p.loc.file)).parent_path().string();
    if (path.is_relative() && !base_dir.empty()) path = std::filesystem::path(base_dir) / path;
    pr.program_path = path.lexically_normal().string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      error(p.path_loc, "program file '" + p.path + "' not found (looked for " +
                            pr.program_path + ")");
      ctx.ok = false;
    }
    std::map<std::string, ProgramParamAst*> by_name;
    for (ProgramParamAst& param : p.params) {
      if (auto [it, fresh] = by_name.emplace(param.name, &param); !fresh) {
        error(param.loc, "program parameter '" + param.name + "' is given twice");
        note(it->second->loc, "first given here");
        ctx.ok = false;
        continue;
      }
      if (!bind(*param.value, ctx.per_pe)) ctx.ok = false;
    }
    for (auto& [name, param] : by_name) {
      pr.param_names.push_back(name);
      ctx.param_exprs.push_back(param->value.get());
    }
  }

  std::set<const Expr*> failed_conditions;
  for (RouteAst& ra : r.routes) {
    PlannedRoute route;
    route.loc = ra.loc;
    route.rect = ctx.plan_index;
    route.route.host_port = ra.host;
    bool ok = true;
    int64_t color = 0;
    if (ra.color->op == ExprOp::NAME && !ctx.constant.contains(ra.color->name)) {
      error(ra.color->loc, "unknown color '" + ra.color->name + "' (declare it with 'color " +
                               ra.color->name + " = N')");
      ok = false;
    } else if (!constant(*ra.color, ctx.constant, color)) {
      ok = false;
    } else if (color < 0 || color >= kNumRoutableColors) {
      error(ra.color->loc, "color " + std::to_string(color) +
                               " is outside the routable colors 0.." +
                               std::to_string(kNumRoutableColors - 1));
      ok = false;
    } else if (color >= kFirstFirmwareColor) {
      error(ra.color->loc, "color " + std::to_string(color) +
                               " is reserved for the memcpy firmware (colors " +
                               std::to_string(kFirstFirmwareColor) + ".." +
                               std::to_string(kNumRoutableColors - 1) + ")");
      ok = false;
    }
    route.route.color = static_cast<uint8_t>(color);
    SwitchPosition base{DirectionSet{ra.rx.bits}, DirectionSet{ra.tx.bits}};
    route.route.positions.push_back(base);
    std::vector<SwitchPosAst> positions = ra.positions;
    std::sort(positions.begin(), positions.end(),
              [](const SwitchPosAst& a, const SwitchPosAst& b) { return a.index < b.index; });
    for (size_t i = 0; i < positions.size(); ++i) {
      const SwitchPosAst& pos = positions[i];
      if (pos.index != static_cast<int>(i) + 1) {
        error(pos.loc, "switch position pos" + std::to_string(pos.index) + " needs pos" +
                           std::to_string(i + 1) + " before it");
        ok = false;
        break;
      }
      // Fields a position leaves out keep their position-0 value.
      SwitchPosition sp = base;
      if (pos.rx) sp.rx.bits = pos.rx->bits;
      if (pos.tx) sp.tx.bits = pos.tx->bits;
      route.route.positions.push_back(sp);
    }
    if (ra.current) {
      int64_t current = 0;
      if (!constant(*ra.current, ctx.constant, current)) {
        ok = false;
      } else if (current < 0 || current >= static_cast<int64_t>(route.route.positions.size())) {
        error(ra.current->loc, "current switch position " + std::to_string(current) +
                                   " does not exist (this route has positions 0.." +
                                   std::to_string(route.route.positions.size() - 1) + ")");
        ok = false;
      } else {
        route.route.current_position = static_cast<uint8_t>(current);
      }
    }
    route.route.ring_mode = ra.ring;
    if (ra.filter_min) {
      int64_t lo = 0, hi = 0;
      if (!constant(*ra.filter_min, ctx.constant, lo) || !constant(*ra.filter_max, ctx.constant, hi)) {
        ok = false;
      } else if (lo < 0 || hi > 0xFFFF || lo > hi) {
        error(ra.filter_loc, "filter [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                 "] is not a range of 16-bit indices (0 <= MIN <= MAX <= 65535)");
        ok = false;
      } else {
        route.route.filter = true;
        route.route.filter_min = static_cast<uint16_t>(lo);
        route.route.filter_max = static_cast<uint16_t>(hi);
      }
    }
    const Expr* counter_start_per_pe = nullptr;
    if (ra.counter_init) {
      int64_t init = 0, max = 0, limit = 0;
      // The start may differ per PE (the SDK sets each PE's filter, fft-1d-2d: its brick of
      // every stream): then it is checked where evaluate_rect computes it.
      bool start_ok = bind(*ra.counter_init, ctx.per_pe);
      if (start_ok && !is_constant(*ra.counter_init)) counter_start_per_pe = ra.counter_init.get();
      else if (start_ok) {
        const ConstResult r = evaluate_constant(*ra.counter_init);
        if (r.error) error(r.error->loc, r.error->message);
        start_ok = !r.error;
        init = r.value;
      }
      if (!start_ok || !constant(*ra.counter_max, ctx.constant, max) ||
          !constant(*ra.counter_limit, ctx.constant, limit)) {
        ok = false;
      } else if (init < 0 || max < 0 || limit < 0 || limit > 0xFFFF || max > 0xFFFF || init > limit) {
        error(ra.counter_loc, "counter_filter [" + std::to_string(init) + ", " + std::to_string(max) + ", " +
                                  std::to_string(limit) + "]: the values are 16-bit and the start is at most the limit");
        ok = false;
      } else if (ra.filter_min) {
        error(ra.counter_loc, "a route has 'filter' or 'counter_filter', not both");
        ok = false;
      } else {
        route.route.counter_filter = true;
        route.route.count_data = ra.count_data;
        route.route.count_control = ra.count_control;
        route.route.counter_init = static_cast<uint16_t>(init);
        route.route.counter_max = static_cast<uint16_t>(max);
        route.route.counter_limit = static_cast<uint16_t>(limit);
      }
    }
    route.route.swap_x = ra.swap_x;
    route.route.swap_y = ra.swap_y;
    if (ra.pop_mode >= 0) route.route.pop_mode = static_cast<uint8_t>(ra.pop_mode);
    route.route.reconfigurable = ra.reconfigurable || ra.teardown;
    route.route.teardown = ra.teardown;
    if (ra.ring && route.route.positions.size() < 2) {
      error(ra.switch_loc, "ring mode needs at least one switch position (pos1)");
      ok = false;
    }
    DirectionSet any_rx, any_tx;
    for (const SwitchPosition& sp : route.route.positions) {
      any_rx.bits |= sp.rx.bits;
      any_tx.bits |= sp.tx.bits;
    }
    // A reconfigurable route's program writes its real directions at run time.
    if (ok && any_tx.empty() && !route.route.reconfigurable) {
      error(ra.loc, "the route for color " + std::to_string(color) +
                        " never transmits (tx is empty in every switch position)");
      ok = false;
    }
    if (ok && any_rx.empty() && !route.route.reconfigurable) {
      error(ra.loc, "the route for color " + std::to_string(color) +
                        " never receives (rx is empty in every switch position)");
      ok = false;
    }
    std::vector<const Expr*> conditions;
    for (const SharedExpr& c : ra.conditions) {
      if (failed_conditions.count(c.get())) {
        ok = false;
        continue;
      }
      if (!bind(*c, ctx.per_pe)) {
        failed_conditions.insert(c.get());
        ok = false;
      }
      conditions.push_back(c.get());
    }
    if (!ok) ctx.ok = false;
    ctx.route_indices.push_back(static_cast<uint32_t>(plan_.routes.size()));
    ctx.route_conditions.push_back(std::move(conditions));
    ctx.route_counter_starts.push_back(counter_start_per_pe);
    plan_.routes.push_back(std::move(route));
  }
}

// The copy of route `ri` whose counter filter starts at `start` evaluated on this PE (made
// once per value); throws EvalError for a start outside 0..LIMIT.
static uint32_t counter_start_route(RectContext& ctx, LayoutPlan& plan, uint32_t ri, const Expr& start,
                                    const std::vector<int64_t>& frame) {
  const int64_t value = evaluate(start, frame);
  const uint16_t limit = plan.routes[ri].route.counter_limit;
  if (value < 0 || value > limit)
    throw EvalError{start.loc, "counter_filter start " + std::to_string(value) +
                                   " is outside 0.." + std::to_string(limit) + " (its limit)"};
  auto [it, fresh] = ctx.counter_start_routes.emplace(std::pair{ri, value}, uint32_t(plan.routes.size()));
  if (fresh) {
    PlannedRoute copy = plan.routes[ri];
    copy.route.counter_init = static_cast<uint16_t>(value);
    plan.routes.push_back(std::move(copy));
  }
  return it->second;
}

void Checker::evaluate_rect(RectContext& ctx) {
  PlannedRect& pr = plan_.rects[ctx.plan_index];
  const size_t n_pes = static_cast<size_t>(pr.width) * pr.height;
  std::vector<int64_t> frame(kFixedSlots + ctx.let_exprs.size(), 0);
  std::unordered_map<std::vector<int64_t>, uint32_t, ValuesHash> param_index;
  std::unordered_map<std::vector<uint32_t>, uint32_t, IndicesHash> key_index;
  std::set<std::pair<uint32_t, uint32_t>> reported_conflicts;
  std::vector<int64_t> values(ctx.param_exprs.size());
  std::vector<uint32_t> key;
  std::array<int32_t, kNumRoutableColors> owner;
  if (pr.program) pr.pe_param_set.resize(n_pes);
  pr.pe_route_key.resize(n_pes);

  for (uint32_t ry = 0; ry < pr.height; ++ry) {
    for (uint32_t rx = 0; rx < pr.width; ++rx) {
      const uint32_t fx = pr.x + rx, fy = pr.y + ry;
      const size_t index = static_cast<size_t>(ry) * pr.width + rx;
      frame[SLOT_X] = rx;
      frame[SLOT_Y] = ry;
      frame[SLOT_FX] = fx;
      frame[SLOT_FY] = fy;
      try {
        for (size_t i = 0; i < ctx.let_exprs.size(); ++i)
          frame[kFixedSlots + i] = evaluate(*ctx.let_exprs[i], frame);
        if (pr.program) {
          for (size_t i = 0; i < ctx.param_exprs.size(); ++i)
            values[i] = evaluate(*ctx.param_exprs[i], frame);
          auto [it, fresh] =
              param_index.emplace(values, static_cast<uint32_t>(pr.param_sets.size()));
          if (fresh) {
            pr.param_sets.push_back(values);
            pr.param_set_first_pe.push_back(static_cast<uint32_t>(index));
          }
          pr.pe_param_set[index] = it->second;
        }
        owner.fill(-1);
        key.clear();
        for (size_t i = 0; i < ctx.route_indices.size(); ++i) {
          bool applies = true;
          for (const Expr* c : ctx.route_conditions[i])
            if (evaluate(*c, frame) == 0) {
              applies = false;
              break;
            }
          if (!applies) continue;
          uint32_t ri = ctx.route_indices[i];
          if (const Expr* start = ctx.route_counter_starts[i]) ri = counter_start_route(ctx, plan_, ri, *start, frame);
          const PlannedRoute& route = plan_.routes[ri];
          int32_t& slot = owner[route.route.color];
          if (slot >= 0) {
            if (reported_conflicts.insert({static_cast<uint32_t>(slot), ri}).second) {
              const PlannedRoute& first = plan_.routes[slot];
              error(route.loc, "two routes for " + color_text(route.route.color) + " on " +
                                   pe_name(fx, fy) + " in rect '" + pr.name +
                                   "' (x = " + std::to_string(rx) + ", y = " +
                                   std::to_string(ry) + "): this one and the one at " +
                                   source_.position(first.loc));
              note(first.loc, "the other route for " + color_text(route.route.color) + " on " +
                                  pe_name(fx, fy));
            }
            ctx.ok = false;
            continue;
          }
          slot = static_cast<int32_t>(ri);
          key.push_back(ri);
        }
        auto [it, fresh] = key_index.emplace(key, static_cast<uint32_t>(pr.route_keys.size()));
        if (fresh) pr.route_keys.push_back(key);
        pr.pe_route_key[index] = it->second;
      } catch (const EvalError& e) {
        error(e.loc, e.message + " at " + pe_name(fx, fy) + " (x = " + std::to_string(rx) +
                         ", y = " + std::to_string(ry) + " in rect '" + pr.name + "')");
        ctx.ok = false;
        return;
      }
      if (too_many_errors()) return;
    }
  }
}

}  // namespace wsemu::compiler::layout::detail
