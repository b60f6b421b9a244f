#include "compiler/executable/executable.hpp"

#include <algorithm>
#include <optional>
#include <set>

namespace wsemu::compiler {

std::string_view direction_name(Direction d) {
  switch (d) {
    case Direction::NORTH: return "N";
    case Direction::SOUTH: return "S";
    case Direction::EAST: return "E";
    case Direction::WEST: return "W";
    case Direction::RAMP: return "RAMP";
  }
  return "?";
}

Direction opposite(Direction d) {
  switch (d) {
    case Direction::NORTH: return Direction::SOUTH;
    case Direction::SOUTH: return Direction::NORTH;
    case Direction::EAST: return Direction::WEST;
    case Direction::WEST: return Direction::EAST;
    case Direction::RAMP: return Direction::RAMP;
  }
  return d;
}

std::string DirectionSet::to_string() const {
  // RAMP first, as the SDK examples write it (.tx = .{RAMP, EAST}).
  static constexpr Direction kOrder[] = {Direction::RAMP, Direction::NORTH, Direction::SOUTH,
                                         Direction::EAST, Direction::WEST};
  std::string out = "[";
  for (Direction d : kOrder) {
    if (!contains(d)) continue;
    if (out.size() > 1) out += ", ";
    out += direction_name(d);
  }
  return out + "]";
}

const ColorRoute* RouteSet::find(uint8_t color) const {
  auto it = std::lower_bound(routes.begin(), routes.end(), color,
                             [](const ColorRoute& r, uint8_t c) { return r.color < c; });
  return it != routes.end() && it->color == color ? &*it : nullptr;
}

uint32_t Rect::config_at(uint32_t rx, uint32_t ry) const {
  uint64_t index = static_cast<uint64_t>(ry) * width + rx;
  for (const ConfigRun& run : runs) {
    if (index < run.count) return run.config;
    index -= run.count;
  }
  return runs.empty() ? 0 : runs.back().config;
}

std::vector<uint32_t> Rect::expand() const {
  std::vector<uint32_t> out;
  out.reserve(static_cast<size_t>(width) * height);
  for (const ConfigRun& run : runs) out.insert(out.end(), run.count, run.config);
  return out;
}

int Executable::rect_at(uint32_t x, uint32_t y) const {
  for (size_t i = 0; i < rects.size(); ++i)
    if (rects[i].contains(x, y)) return static_cast<int>(i);
  return -1;
}

const PeConfig* Executable::pe_config_at(uint32_t x, uint32_t y) const {
  int r = rect_at(x, y);
  if (r < 0) return nullptr;
  const Rect& rect = rects[r];
  uint32_t config = rect.config_at(x - rect.x, y - rect.y);
  return config < pe_configs.size() ? &pe_configs[config] : nullptr;
}

const HostSymbol* Executable::find_symbol(std::string_view name) const { return isa::find_named(symbols, name); }

const HostFunction* Executable::find_function(std::string_view name) const {
  return isa::find_named(functions, name);
}

std::optional<uint8_t> Executable::find_color(std::string_view name) const {
  const NamedColor* c = isa::find_named(colors, name);
  return c ? std::optional<uint8_t>(c->color) : std::nullopt;
}

uint64_t Executable::placed_pes() const {
  uint64_t n = 0;
  for (const Rect& r : rects) n += static_cast<uint64_t>(r.width) * r.height;
  return n;
}

std::vector<std::string> validate(const Executable& exe) {
  std::vector<std::string> problems;
  auto add = [&](std::string s) { problems.push_back(std::move(s)); };
  if (exe.arch != "wse2" && exe.arch != "wse3") add("unknown architecture '" + exe.arch + "'");
  if (exe.fabric_width == 0 || exe.fabric_height == 0) add("empty fabric");
  // No layout builds more than the largest real wafer (compiler/layout's max_fabric); a larger
  // fabric in a file is damage, and would make the loader allocate for it.
  if (exe.fabric_width > 1024 || exe.fabric_height > 1280)
    add("fabric " + std::to_string(exe.fabric_width) + " x " + std::to_string(exe.fabric_height) +
        " is larger than any wafer");
  for (size_t i = 0; i < exe.pe_configs.size(); ++i) {
    const PeConfig& c = exe.pe_configs[i];
    if (c.program < -1 || c.program >= static_cast<int64_t>(exe.programs.size()))
      add("PE configuration " + std::to_string(i) + " names program " +
          std::to_string(c.program) + " of " + std::to_string(exe.programs.size()));
    if (c.param_set < -1 || c.param_set >= static_cast<int64_t>(exe.param_sets.size()))
      add("PE configuration " + std::to_string(i) + " names parameter set " +
          std::to_string(c.param_set) + " of " + std::to_string(exe.param_sets.size()));
    if (c.route_set >= exe.route_sets.size())
      add("PE configuration " + std::to_string(i) + " names route set " +
          std::to_string(c.route_set) + " of " + std::to_string(exe.route_sets.size()));
  }
  for (size_t i = 0; i < exe.route_sets.size(); ++i) {
    const auto& routes = exe.route_sets[i].routes;
    for (size_t j = 0; j < routes.size(); ++j) {
      const ColorRoute& r = routes[j];
      std::string where = "route set " + std::to_string(i) + ", color " +
                          std::to_string(r.color);
      if (j > 0 && routes[j - 1].color >= r.color) add(where + ": colors not sorted or repeated");
      if (r.color >= 24) add(where + ": color outside the routable range 0..23");
      if (r.positions.empty() || r.positions.size() > 4)
        add(where + ": " + std::to_string(r.positions.size()) + " switch positions (1..4)");
      if (r.current_position >= std::max<size_t>(r.positions.size(), 1))
        add(where + ": current position " + std::to_string(r.current_position) + " out of range");
      for (const SwitchPosition& p : r.positions)
        if ((p.rx.bits | p.tx.bits) >= (1u << kNumDirections)) add(where + ": bad direction bits");
    }
  }
  for (size_t i = 0; i < exe.rects.size(); ++i) {
    const Rect& r = exe.rects[i];
    std::string where = "rect '" + r.name + "'";
    if (static_cast<uint64_t>(r.x) + r.width > exe.fabric_width ||
        static_cast<uint64_t>(r.y) + r.height > exe.fabric_height)
      add(where + " extends past the fabric");
    uint64_t total = 0;
    for (const ConfigRun& run : r.runs) {
      total += run.count;
      if (run.config >= exe.pe_configs.size())
        add(where + " names PE configuration " + std::to_string(run.config) + " of " +
            std::to_string(exe.pe_configs.size()));
    }
    if (total != static_cast<uint64_t>(r.width) * r.height)
      add(where + ": its runs cover " + std::to_string(total) + " PEs, not " +
          std::to_string(static_cast<uint64_t>(r.width) * r.height));
    for (size_t j = 0; j < i; ++j) {
      const Rect& o = exe.rects[j];
      bool apart = r.x >= o.x + o.width || o.x >= r.x + r.width || r.y >= o.y + o.height ||
                   o.y >= r.y + r.height;
      if (!apart) add(where + " overlaps rect '" + o.name + "'");
    }
  }
  // The programs the host reaches through a rect's name: the runtime looks the program symbol
  // or function up in each of them and must find it. (A routing-only PE has no program; the
  // runtime refuses a copy that touches one.)
  auto programs_of = [&](const Rect& r) {
    std::set<int32_t> programs;
    for (const ConfigRun& run : r.runs) {
      if (run.config >= exe.pe_configs.size()) continue;  // reported above
      const int32_t program = exe.pe_configs[run.config].program;
      if (program >= 0 && program < static_cast<int64_t>(exe.programs.size()))
        programs.insert(program);
    }
    return programs;
  };
  // Symbols and functions share one namespace of host names, each on a rect of the executable:
  // the programs of that rect, or nullopt when it has none.
  std::set<std::string> names;
  auto programs_of_host_name = [&](const std::string& name, uint32_t rect,
                                   const std::string& what) -> std::optional<std::set<int32_t>> {
    if (!names.insert(name).second) add("host name '" + name + "' appears twice");
    if (rect >= exe.rects.size()) {
      add(what + " names a missing rect");
      return std::nullopt;
    }
    return programs_of(exe.rects[rect]);
  };
  for (const HostSymbol& s : exe.symbols) {
    const std::string what = "symbol '" + s.name + "'";
    const std::optional<std::set<int32_t>> programs = programs_of_host_name(s.name, s.rect, what);
    if (!programs) continue;
    // Not every program of the rect need define it (the SDK exports a symbol on the PEs whose
    // program has it); the host's copy to a PE without it is a usage error at the call.
    bool defined = false;
    for (int32_t p : *programs) {
      const isa::Symbol* sym = exe.programs[static_cast<size_t>(p)].object.find_symbol(s.program_symbol);
      const std::string in = "program " + std::to_string(p) + " ('" +
                             exe.programs[static_cast<size_t>(p)].source_path + "')";
      defined |= sym != nullptr;
      if (sym && s.indirect && sym->type != isa::ElemType::U32)
        add(what + " is indirect, but '" + s.program_symbol + "' of " + in + " is " +
            std::string(isa::elem_type_name(sym->type)) + "[" + std::to_string(sym->count) +
            "], not a u32 pointer word");
      else if (sym && !s.indirect && (sym->type != s.type || sym->count < s.elems_per_pe))
        add(what + " says " + std::to_string(s.elems_per_pe) + " " +
            std::string(isa::elem_type_name(s.type)) + " per PE, but '" + s.program_symbol +
            "' of " + in + " is " + std::string(isa::elem_type_name(sym->type)) + "[" +
            std::to_string(sym->count) + "]");
    }
    if (!defined) add(what + " names '" + s.program_symbol + "', which no program of its rect defines");
  }
  for (const HostFunction& f : exe.functions) {
    const std::string what = "function '" + f.name + "'";
    const std::optional<std::set<int32_t>> programs = programs_of_host_name(f.name, f.rect, what);
    if (!programs) continue;
    for (int32_t p : *programs) {
      if (!exe.programs[static_cast<size_t>(p)].object.find_function(f.program_function))
        add(what + " names '" + f.program_function + "', which program " + std::to_string(p) +
            " ('" + exe.programs[static_cast<size_t>(p)].source_path + "') does not define");
    }
  }
  return problems;
}

}  // namespace wsemu::compiler
