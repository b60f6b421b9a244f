// The layout block's builtins (@set_rectangle, @set_tile_code, @set_color_config, @export_name,
// @get_rectangle) and the generated `.wsl` layout that places the program classes.
#include <algorithm>
#include <filesystem>
#include <set>

#include "compiler/csl/compiler_impl.hpp"

namespace wsemu::compiler::csl {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> directions(const Value& v, Span at, const std::string& what) {
  std::vector<std::string> out;
  auto one = [&](const Value& d) {
    if (d.k != Value::K::DIRECTION) fail(at, what + " must list directions (NORTH, SOUTH, EAST, WEST, RAMP)");
    static const char* names[] = {"N", "S", "E", "W", "RAMP"};
    const std::string n = names[d.i];
    for (const std::string& o : out)
      if (o == n) fail(at, what + " lists " + d.s + " twice");
    out.push_back(n);
  };
  if (v.k == Value::K::STRUCT) {
    for (const Value& d : v.st->values) one(d);
  } else {
    one(v);
  }
  return out;
}

}  // namespace

// A color configuration struct (.routes, .switches, .filter, .teardown), as @set_color_config and
// @set_local_color_config take it.
void Compiler::parse_color_config(const Value& cfg, Span at, RouteConfig& rc) {
  if (cfg.k != Value::K::STRUCT) fail(at, "the configuration must be a struct .{ .routes = ... }");
  for (size_t i = 0; i < cfg.st->names.size(); ++i) {
    const std::string& k = cfg.st->names[i];
    const Value& v = cfg.st->values[i];
    if (k == "routes") {
      if (v.k != Value::K::STRUCT) fail(at, ".routes must be .{ .rx = ..., .tx = ... }");
      for (size_t j = 0; j < v.st->names.size(); ++j) {
        if (v.st->names[j] == "rx") rc.rx = directions(v.st->values[j], at, ".rx");
        else if (v.st->names[j] == "tx") rc.tx = directions(v.st->values[j], at, ".tx");
        else if (v.st->names[j] == "color_swap_x") rc.swap_x = to_bool(v.st->values[j], at, ".color_swap_x");
        else if (v.st->names[j] == "color_swap_y") rc.swap_y = to_bool(v.st->values[j], at, ".color_swap_y");
        else fail(at, "unknown field ." + v.st->names[j] + " of .routes (rx, tx, color_swap_x, color_swap_y)");
      }
    } else if (k == "switches") {
      if (v.k != Value::K::STRUCT) fail(at, ".switches must be a struct");
      rc.pos_rx.assign(3, {});
      rc.pos_tx.assign(3, {});
      size_t first_invalid = 3;  // the lowest position marked .{ .invalid = true }
      for (size_t j = 0; j < v.st->names.size(); ++j) {
        const std::string& sk = v.st->names[j];
        const Value& sv = v.st->values[j];
        if (sk == "pos1" || sk == "pos2" || sk == "pos3") {
          const size_t p = size_t(sk[3] - '1');
          if (sv.k != Value::K::STRUCT) fail(at, "." + sk + " must be .{ .rx = ... }, .{ .tx = ... } or .{ .invalid = true }");
          for (size_t q = 0; q < sv.st->names.size(); ++q) {
            if (sv.st->names[q] == "rx") rc.pos_rx[p] = directions(sv.st->values[q], at, "." + sk + ".rx");
            else if (sv.st->names[q] == "tx") rc.pos_tx[p] = directions(sv.st->values[q], at, "." + sk + ".tx");
            else if (sv.st->names[q] == "invalid") {
              // An invalid position is one the switch never takes (the hardware's code 5, "INVALID"):
              // the same as leaving it out, while every position after it is left out too.
              if (!to_bool(sv.st->values[q], at, "." + sk + ".invalid")) fail(at, "." + sk + ".invalid must be true");
              if (sv.st->names.size() != 1) fail(at, "." + sk + " is .{ .invalid = true } alone, without .rx or .tx");
              first_invalid = std::min(first_invalid, p);
            } else {
              fail(at, "unknown field ." + sv.st->names[q] + " of ." + sk + " (rx, tx, invalid)");
            }
          }
        } else if (sk == "ring_mode") {
          rc.ring_mode = to_bool(sv, at, ".ring_mode");
        } else if (sk == "pop_mode") {
          // .pop_mode = .{ .no_pop = true } / .always_pop / .pop_on_advance
          if (sv.k != Value::K::STRUCT || sv.st->names.size() != 1)
            fail(at, ".pop_mode must be .{ .no_pop = true }, .{ .always_pop = true } or .{ .pop_on_advance = true }");
          const std::string& m = sv.st->names[0];
          if (!to_bool(sv.st->values[0], at, ".pop_mode." + m)) fail(at, ".pop_mode." + m + " must be true");
          if (m == "no_pop") rc.pop_mode = "never";
          else if (m == "always_pop") rc.pop_mode = "always";
          else if (m == "pop_on_advance") rc.pop_mode = "advance";
          else fail(at, "unknown pop mode ." + m + " (no_pop, always_pop, pop_on_advance)");
        } else if (sk == "current_switch_pos") {
          rc.current_switch_pos = int(to_int(sv, at, ".current_switch_pos"));
        } else {
          fail(at, "unsupported: switch setting ." + sk);
        }
      }
      for (size_t p = first_invalid + 1; p < 3; ++p)
        if (!rc.pos_rx[p].empty() || !rc.pos_tx[p].empty())
          fail(at, "unsupported: switch position " + std::to_string(p + 1) + " after the invalid position " +
                       std::to_string(first_invalid + 1) + " (an invalid position is supported only after the last valid one)");
    } else if (k == "filter") {
      if (v.k != Value::K::STRUCT) fail(at, ".filter must be .{ .kind = .{ .range = true }, .min_idx = A, .max_idx = B }");
      const Value* kind = v.st->find("kind");
      auto kind_is = [&](const char* name) {
        const Value* f = kind && kind->k == Value::K::STRUCT ? kind->st->find(name) : nullptr;
        return f && to_bool(*f, at, std::string(".kind.") + name);
      };
      if (kind_is("counter")) {
        // The counter kind as fft-1d-2d's transposes use it (emulator/router.hpp, wsemu's reading):
        // .limit1 is the counter's last value before it wraps, .max_counter the last value at
        // which a counted wavelet still goes to the RAMP.
        for (size_t j = 0; j < v.st->names.size(); ++j) {
          const std::string& f = v.st->names[j];
          const Value& fv = v.st->values[j];
          if (f == "kind" || f == "fast_mode") continue;  // fast_mode: timing only, not modelled
          if (f == "limit1") rc.counter_limit = to_int(fv, at, ".limit1");
          else if (f == "max_counter") rc.counter_max = to_int(fv, at, ".max_counter");
          else if (f == "init_counter") rc.counter_init = to_int(fv, at, ".init_counter");
          else if (f == "count_data") rc.count_data = to_bool(fv, at, ".count_data");
          else if (f == "count_control") rc.count_control = to_bool(fv, at, ".count_control");
          else fail(at, "unsupported: counter filter field ." + f);
        }
        if (!v.st->find("limit1") || !v.st->find("max_counter"))
          fail(at, "a counter filter needs .limit1 and .max_counter");
        if (rc.counter_limit < 0 || rc.counter_limit > 0xFFFF || rc.counter_max < 0 || rc.counter_max > 0xFFFF ||
            rc.counter_init < 0 || rc.counter_init > rc.counter_limit)
          fail(at, "counter filter: .limit1 " + std::to_string(rc.counter_limit) + ", .max_counter " +
                       std::to_string(rc.counter_max) + ", .init_counter " + std::to_string(rc.counter_init) +
                       ": 16-bit values with .init_counter <= .limit1");
        rc.has_counter_filter = true;
        continue;
      }
      if (!kind_is("range"))
        fail(at, "unsupported: filter kinds other than .{ .range = true } and .{ .counter = true }");
      const Value* lo = v.st->find("min_idx");
      const Value* hi = v.st->find("max_idx");
      if (!lo || !hi) fail(at, "a range filter needs .min_idx and .max_idx");
      rc.has_filter = true;
      rc.filter_min = to_int(*lo, at, ".min_idx");
      rc.filter_max = to_int(*hi, at, ".max_idx");
    } else if (k == "teardown") {
      rc.teardown = to_bool(v, at, ".teardown");
    } else if (k == "wsemu_host_edge") {
      // wsemu's own field: the route may lead off the fabric edge, to or from the host (the
      // streams of the SdkLayout API, runtime/python/wsemu/sdk_layout.py).
      rc.host_edge = to_bool(v, at, ".wsemu_host_edge");
    } else {
      fail(at, "unsupported: color configuration field ." + k);
    }
  }
  if (rc.rx.empty() || rc.tx.empty()) fail(at, "the route needs both .rx and .tx");
}

void Compiler::layout_builtin(const Expr& e, const std::string& n, std::vector<Value>& args, Ctx& ctx, Value* result) {
  (void)ctx;
  auto argc = [&](size_t lo, size_t hi) {
    if (args.size() < lo || args.size() > hi)
      fail(e.span, "@" + n + " takes " + (lo == hi ? std::to_string(lo) : std::to_string(lo) + " or " + std::to_string(hi)) +
                       " arguments, " + std::to_string(args.size()) + " given");
  };
  auto coord = [&](size_t i, const std::string& what) {
    int64_t v = to_int(args[i], e.args[i]->span, what);
    const int64_t lim = i == 0 ? rect_w : rect_h;
    if (!rect_set) fail(e.span, "@" + n + " before @set_rectangle");
    if (v < 0 || v >= lim)
      fail(e.args[i]->span, what + " " + std::to_string(v) + " is outside the rectangle (0.." + std::to_string(lim - 1) + ")");
    return int(v);
  };
  if (n == "set_rectangle") {
    argc(2, 2);
    if (rect_set) fail(e.span, "@set_rectangle is called twice");
    int64_t w = to_int(args[0], e.args[0]->span, "the width"), h = to_int(args[1], e.args[1]->span, "the height");
    if (w < 1 || h < 1 || w > 1024 || h > 1024) fail(e.span, "the rectangle " + std::to_string(w) + " x " + std::to_string(h) + " is out of range (1..1024)");
    rect_w = int(w);
    rect_h = int(h);
    rect_set = true;
    return;
  }
  if (n == "get_rectangle") {
    argc(0, 0);
    if (!rect_set) fail(e.span, "@get_rectangle before @set_rectangle");
    Value v;
    v.k = Value::K::STRUCT;
    v.type = make_type(TK::COMPTIME_STRUCT);
    v.st = std::make_shared<StructValue>();
    v.st->names = {"width", "height"};
    v.st->values = {make_int(rect_w, int_type(16, false)), make_int(rect_h, int_type(16, false))};
    *result = v;
    return;
  }
  if (n == "set_tile_code") {
    argc(3, 4);
    const int x = coord(0, "x"), y = coord(1, "y");
    if (args[2].k != Value::K::STRING) fail(e.args[2]->span, "@set_tile_code needs the program's file name");
    Value params;
    params.k = Value::K::STRUCT;
    params.st = std::make_shared<StructValue>();
    if (args.size() == 4) {
      if (args[3].k != Value::K::STRUCT) fail(e.args[3]->span, "the parameters of @set_tile_code must be a struct .{ ... }");
      params = args[3];
    }
    if (tiles.count({x, y})) fail(e.span, "PE (" + std::to_string(x) + ", " + std::to_string(y) + ") gets tile code twice");
    bool is_lib = false;
    Placement pl;
    pl.file = resolve_import(args[2].s, e.span.file, e.args[2]->span, &is_lib);
    pl.params = params;
    pl.span = e.span;
    pl.key = pl.file + "|" + params.str();
    tiles[{x, y}] = pl;
    return;
  }
  if (n == "set_color_config") {
    argc(4, 4);
    RouteConfig rc;
    rc.x = coord(0, "x");
    rc.y = coord(1, "y");
    rc.span = e.span;
    if (args[2].k != Value::K::COLOR) fail(e.args[2]->span, "@set_color_config needs a color");
    rc.color = int(args[2].i);
    if (rc.color >= 21) fail(e.args[2]->span, "colors 21..23 are reserved by wsemu's memcpy firmware");
    for (const RouteConfig& o : routes)
      if (o.x == rc.x && o.y == rc.y && o.color == rc.color)
        fail(e.span, "color " + std::to_string(rc.color) + " is configured twice at PE (" + std::to_string(rc.x) + ", " + std::to_string(rc.y) + ")");
    parse_color_config(args[3], e.args[3]->span, rc);
    routes.push_back(rc);
    return;
  }
  if (n == "export_name") {
    argc(2, 3);
    if (args[0].k != Value::K::STRING) fail(e.args[0]->span, "@export_name needs the host name");
    if (args[1].k != Value::K::TYPE) fail(e.args[1]->span, "@export_name needs the symbol's type ([*]f32 or fn()void)");
    HostExport h;
    h.name = args[0].s;
    h.type = args[1].type;
    h.span = e.span;
    h.is_function = h.type->kind == TK::FN;
    if (!h.is_function && h.type->kind != TK::MANY_PTR) fail(e.args[1]->span, "@export_name takes a [*]T or a fn type");
    if (args.size() == 3) h.is_mutable = to_bool(args[2], e.args[2]->span, "the mutability of @export_name");
    else if (!h.is_function) fail(e.span, "@export_name of data needs its mutability: @export_name(\"y\", [*]f32, true)");
    for (const HostExport& o : host_exports)
      if (o.name == h.name) fail(e.span, "'" + h.name + "' is exported twice");
    host_exports.push_back(h);
    return;
  }
  fail(e.span, "unsupported builtin '@" + n + "'");
}

std::string Compiler::write_layout() {
  // The layout's routes, and those each PE's program configures itself (@set_local_color_config).
  std::vector<RouteConfig> all_routes = routes;
  for (const auto& [xy, pl] : tiles) {
    const auto prog = programs_by_key.find(pl.key);
    if (prog == programs_by_key.end()) continue;
    for (RouteConfig rc : prog->second->local_routes) {
      rc.x = xy.first;
      rc.y = xy.second;
      for (const RouteConfig& o : all_routes)
        if (o.x == rc.x && o.y == rc.y && o.color == rc.color)
          fail(rc.span, "color " + std::to_string(rc.color) + " is configured twice at PE (" + std::to_string(rc.x) +
                            ", " + std::to_string(rc.y) + ") (by the layout and by @set_local_color_config)");
      all_routes.push_back(rc);
    }
  }
  std::vector<std::string> out;
  out.push_back("# Generated by wsemu cslc from " + sources.name(0) + "; do not edit.");
  out.push_back("arch " + opt.arch);
  out.push_back("fabric " + std::to_string(opt.placement.fabric_w) + " x " + std::to_string(opt.placement.fabric_h));
  // Cover the rectangle with sub-rectangles of one program class each (row runs, grown down).
  std::vector<std::vector<std::string>> cls(static_cast<size_t>(rect_h), std::vector<std::string>(static_cast<size_t>(rect_w)));
  for (const auto& [xy, pl] : tiles) cls[size_t(xy.second)][size_t(xy.first)] = pl.key;
  std::vector<std::vector<bool>> done(static_cast<size_t>(rect_h), std::vector<bool>(static_cast<size_t>(rect_w)));
  int rect_id = 0;
  std::map<std::string, std::string> wsa_name;
  for (const auto& p : programs) wsa_name[p->key] = "";
  int next_prog = 0;
  for (const auto& p : programs) wsa_name[p->key] = "pe_" + std::to_string(next_prog++) + ".wsa";
  for (int y = 0; y < rect_h; ++y)
    for (int x = 0; x < rect_w; ++x) {
      if (done[size_t(y)][size_t(x)]) continue;
      const std::string& k = cls[size_t(y)][size_t(x)];
      int w = 1;
      while (x + w < rect_w && !done[size_t(y)][size_t(x + w)] && cls[size_t(y)][size_t(x + w)] == k) ++w;
      int h = 1;
      while (y + h < rect_h) {
        bool ok = true;
        for (int i = 0; i < w && ok; ++i) ok = !done[size_t(y + h)][size_t(x + i)] && cls[size_t(y + h)][size_t(x + i)] == k;
        if (!ok) break;
        ++h;
      }
      for (int j = 0; j < h; ++j)
        for (int i = 0; i < w; ++i) done[size_t(y + j)][size_t(x + i)] = true;
      out.push_back("");
      out.push_back("rect r" + std::to_string(rect_id++) + " at (" + std::to_string(opt.placement.offset_x + x) + ", " +
                    std::to_string(opt.placement.offset_y + y) + ") size " + std::to_string(w) + " x " + std::to_string(h) + " {");
      const Program* prog = k.empty() ? nullptr : programs_by_key.at(k);
      if (prog) out.push_back("  program \"" + wsa_name[k] + "\"");
      for (const RouteConfig& rc : all_routes) {
        if (rc.x < x || rc.x >= x + w || rc.y < y || rc.y >= y + h) continue;
        auto set = [](const std::vector<std::string>& d) {
          std::string s = "[";
          for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + d[i];
          return s + "]";
        };
        // A direction that leaves the kernel rectangle leads to no PE of the program: the SDK
        // compiles such routes (gemv-08's last column, game-of-life's edges configure them and
        // never send there), so they are dropped here (a route left with nowhere to go, whole;
        // a wavelet sent on it then waits in its output queue, and the hang report names it).
        auto inside = [&](const std::vector<std::string>& d) {
          std::vector<std::string> kept;
          for (const std::string& dir : d) {
            const int nx = rc.x + (dir == "E" ? 1 : dir == "W" ? -1 : 0), ny = rc.y + (dir == "S" ? 1 : dir == "N" ? -1 : 0);
            if (nx >= 0 && nx < rect_w && ny >= 0 && ny < rect_h) kept.push_back(dir);
          }
          return kept;
        };
        if (inside(rc.tx).empty() && rc.pos_rx.empty() && !rc.host_edge) continue;  // it led only off the rectangle
        std::string line = "  route " + std::to_string(rc.color) + (rc.host_edge ? " host" : "") + " rx " + set(rc.rx) +
                           " tx " + set(rc.host_edge ? rc.tx : inside(rc.tx));
        if (!rc.pos_rx.empty()) {
          line += " switch {";
          // A CSL position changes one side and keeps the other as the previous position left
          // it (the hardware moves an input and an output position; the SDK's cholesky and
          // fft-1d-2d go pos1 tx E, pos2 rx RAMP to send east only, and hypersparse-spmv says
          // "first change tx ..., then change rx"). The .wsl line takes position 0's for a side
          // it leaves out, so both sides are written out.
          std::string rx = set(rc.rx), tx = set(inside(rc.tx));
          for (size_t p = 0; p < 3; ++p) {
            if (rc.pos_rx[p].empty() && rc.pos_tx[p].empty()) continue;
            if (!rc.pos_rx[p].empty()) rx = set(rc.pos_rx[p]);
            // (an empty set here would mean "as position 0", so a position left with no
            // direction inside keeps its own and the layout checker names it)
            if (!rc.pos_tx[p].empty()) tx = set(inside(rc.pos_tx[p]).empty() ? rc.pos_tx[p] : inside(rc.pos_tx[p]));
            line += " pos" + std::to_string(p + 1) + " rx " + rx + " tx " + tx;
          }
          if (rc.current_switch_pos) line += " current " + std::to_string(rc.current_switch_pos);
          if (rc.ring_mode) line += " ring";
          line += " }";
        }
        if (rc.has_filter) line += " filter [" + std::to_string(rc.filter_min) + ", " + std::to_string(rc.filter_max) + "]";
        if (rc.has_counter_filter)
          line += " counter_filter [" + std::to_string(rc.counter_init) + ", " + std::to_string(rc.counter_max) + ", " +
                  std::to_string(rc.counter_limit) + "] counts " +
                  (rc.count_data && rc.count_control ? "both" : rc.count_control ? "control" : "data");
        if (rc.swap_x) line += " swap_x";
        if (rc.swap_y) line += " swap_y";
        if (!rc.pop_mode.empty()) line += " pop " + rc.pop_mode;
        if (rc.teardown) line += " teardown";
        line += " where x == " + std::to_string(rc.x - x) + " && y == " + std::to_string(rc.y - y);
        out.push_back(line);
      }
      out.push_back("}");
    }
  std::string text;
  for (const std::string& l : out) text += l + "\n";
  return text;
}


// The linked rectangles (one per program class) become one kernel rectangle, as in the SDK, so
// that the host addresses the kernel's PEs as one block; then the host exports are added.
void Compiler::finish_executable(Executable& exe) {
  Rect kernel;
  kernel.name = "kernel";
  kernel.x = uint32_t(opt.placement.offset_x);
  kernel.y = uint32_t(opt.placement.offset_y);
  kernel.width = uint32_t(rect_w);
  kernel.height = uint32_t(rect_h);
  std::vector<uint32_t> configs;
  for (int y = 0; y < rect_h; ++y)
    for (int x = 0; x < rect_w; ++x) {
      const int r = exe.rect_at(uint32_t(opt.placement.offset_x + x), uint32_t(opt.placement.offset_y + y));
      if (r < 0) fail({}, "internal: PE (" + std::to_string(x) + ", " + std::to_string(y) + ") is in no linked rectangle");
      const Rect& rr = exe.rects[size_t(r)];
      configs.push_back(rr.config_at(uint32_t(opt.placement.offset_x + x) - rr.x, uint32_t(opt.placement.offset_y + y) - rr.y));
    }
  for (uint32_t c : configs) {
    if (!kernel.runs.empty() && kernel.runs.back().config == c) ++kernel.runs.back().count;
    else kernel.runs.push_back({1, c});
  }
  exe.rects = {kernel};
  exe.symbols.clear();
  exe.functions.clear();
  for (const HostExport& h : host_exports) {
    uint32_t min_count = UINT32_MAX;
    isa::ElemType type = isa::ElemType::F32;
    // An exported pointer variable (indirect): each program's symbol is the pointer word, the
    // type and count are those of the arrays it points to, the least count of the programs.
    bool indirect = false, direct = false;
    for (const auto& p : programs) {
      if (!p->exported_symbols.count(h.name)) continue;
      (p->indirect_exports.count(h.name) ? indirect : direct) = true;
      if (p->indirect_exports.count(h.name)) {
        const std::string held = p->exported_symbol_types.at(h.name)->str();
        if (held != h.type->elem->str())
          fail(h.span, "'" + h.name + "' is exported as " + h.type->str() + " but a pointer variable to " + held +
                           " elements is exported under that name");
        if (const std::optional<isa::ElemType> named = isa::elem_type_named(held)) type = *named;
        min_count = std::min(min_count, uint32_t(std::max<int64_t>(0, p->exported_symbol_counts.at(h.name))));
      }
    }
    if (indirect && direct)
      fail(h.span, "unsupported: '" + h.name + "' is a pointer variable in one PE program and an array in another");
    for (int y = 0; y < rect_h; ++y)
      for (int x = 0; x < rect_w; ++x) {
        const PeConfig* pc = exe.pe_config_at(uint32_t(opt.placement.offset_x + x), uint32_t(opt.placement.offset_y + y));
        const isa::ObjectImage* img = pc && pc->program >= 0 ? &exe.programs[size_t(pc->program)].object : nullptr;
        const std::string where = "the program of PE (" + std::to_string(x) + ", " + std::to_string(y) + ")";
        if (!img) fail(h.span, "'" + h.name + "' is exported, but PE (" + std::to_string(x) + ", " + std::to_string(y) + ") has no program");
        if (h.is_function) {
          const isa::Function* f = img->find_function(h.name);
          if (!f || !f->exported) fail(h.span, "'" + h.name + "' is exported, but " + where + " does not @export_symbol it");
          continue;
        }
        const isa::Symbol* sym = img->find_symbol(h.name);
        if (!sym || !sym->exported || indirect) continue;  // the host may copy it to the PEs that export it
        const TypeRef& et = h.type->elem;
        const std::string want = et->str();
        if (std::string(isa::elem_type_name(sym->type)) != want)
          fail(h.span, "'" + h.name + "' is exported as " + h.type->str() + " but " + where + " holds " +
                           std::string(isa::elem_type_name(sym->type)) + " elements");
        type = sym->type;
        min_count = std::min(min_count, sym->count);
      }
    if (h.is_function) {
      HostFunction f;
      f.name = h.name;
      f.program_function = h.name;
      f.rect = 0;
      exe.functions.push_back(f);
    } else {
      if (min_count == UINT32_MAX) fail(h.span, "'" + h.name + "' is exported, but no PE's program does @export_symbol it");
      HostSymbol s;
      s.name = h.name;
      s.program_symbol = h.name;
      s.type = type;
      s.elems_per_pe = min_count;
      s.rect = 0;
      s.host_readable = true;
      s.host_writable = h.is_mutable;
      s.indirect = indirect;
      exe.symbols.push_back(s);
    }
  }
  // Library data (<debug> trace buffers) that every PE of the kernel holds, and `export var`s
  // (read_symbol reads one on a PE whose program holds it: SdkLayout's regions each have their
  // own): host-readable under their own names unless the layout exports that name itself.
  std::set<std::string> library_names, export_vars;
  for (const auto& p : programs) {
    library_names.insert(p->library_exports.begin(), p->library_exports.end());
    export_vars.insert(p->export_vars.begin(), p->export_vars.end());
  }
  library_names.insert(export_vars.begin(), export_vars.end());
  for (const std::string& name : library_names) {
    bool listed = false;
    for (const HostExport& h : host_exports) listed = listed || h.name == name;
    if (listed) continue;
    const bool on_some_pes = export_vars.count(name) > 0;
    uint32_t min_count = UINT32_MAX;
    isa::ElemType type = isa::ElemType::U32;
    for (int y = 0; y < rect_h && min_count > 0; ++y)
      for (int x = 0; x < rect_w && min_count > 0; ++x) {
        const PeConfig* pc = exe.pe_config_at(uint32_t(opt.placement.offset_x + x), uint32_t(opt.placement.offset_y + y));
        const isa::ObjectImage* img = pc && pc->program >= 0 ? &exe.programs[size_t(pc->program)].object : nullptr;
        const isa::Symbol* sym = img ? img->find_symbol(name) : nullptr;
        if (!sym || !sym->exported) {
          if (!on_some_pes) min_count = 0;
        } else {
          type = sym->type;
          min_count = std::min(min_count, sym->count);
        }
      }
    if (min_count == 0 || min_count == UINT32_MAX) continue;
    HostSymbol s;
    s.name = name;
    s.program_symbol = name;
    s.type = type;
    s.elems_per_pe = min_count;
    s.rect = 0;
    s.host_readable = true;
    s.host_writable = false;
    exe.symbols.push_back(s);
  }
}

}  // namespace wsemu::compiler::csl
