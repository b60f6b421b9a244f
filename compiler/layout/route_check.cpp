// The fabric-wide part of the checker: every route must lead somewhere. A route that
// transmits toward a neighbour needs a route for the same color there that receives from
// this side (in some switch position); a route may cross the fabric edge only when it is
// marked `host`; a route on a PE without a program must not use the RAMP.
#include <array>
#include <set>
#include <tuple>

#include "compiler/layout/checker_internal.hpp"

namespace wsemu::compiler::layout::detail {
namespace {

struct Step {
  Direction dir;
  int dx, dy;
  const char* word;       // "north"
  const char* from_word;  // "the south": where the neighbour sees it come from
};
// North is row y - 1: row 0 is the north edge, as in the SDK's fabric coordinates.
constexpr Step kSteps[] = {
    {Direction::NORTH, 0, -1, "north", "the south"},
    {Direction::SOUTH, 0, 1, "south", "the north"},
    {Direction::EAST, 1, 0, "east", "the west"},
    {Direction::WEST, -1, 0, "west", "the east"},
};

SwitchPosition union_of(const ColorRoute& r) {
  SwitchPosition u;
  for (const SwitchPosition& p : r.positions) {
    u.rx.bits |= p.rx.bits;
    u.tx.bits |= p.tx.bits;
  }
  return u;
}

}  // namespace

void Checker::check_neighbours() {
  const uint32_t W = plan_.fabric_width, H = plan_.fabric_height;
  if (W == 0 || H == 0) return;
  // Which rect holds each fabric PE, and each rect's routes by key and color.
  std::vector<int32_t> owner(static_cast<size_t>(W) * H, -1);
  std::vector<std::vector<std::array<int32_t, kNumRoutableColors>>> by_color(plan_.rects.size());
  for (size_t i = 0; i < plan_.rects.size(); ++i) {
    if (!rects_[i].ok) continue;
    const PlannedRect& r = plan_.rects[i];
    for (uint32_t y = r.y; y < r.y + r.height; ++y)
      for (uint32_t x = r.x; x < r.x + r.width; ++x)
        owner[static_cast<size_t>(y) * W + x] = static_cast<int32_t>(i);
    for (const auto& key : r.route_keys) {
      std::array<int32_t, kNumRoutableColors> table;
      table.fill(-1);
      for (uint32_t ri : key) table[plan_.routes[ri].route.color] = static_cast<int32_t>(ri);
      by_color[i].push_back(table);
    }
  }
  auto route_at = [&](uint32_t x, uint32_t y, uint8_t color) -> int32_t {
    int32_t ri = owner[static_cast<size_t>(y) * W + x];
    if (ri < 0) return -1;
    const PlannedRect& r = plan_.rects[ri];
    uint32_t key = r.pe_route_key[static_cast<size_t>(y - r.y) * r.width + (x - r.x)];
    return by_color[ri][key][color];
  };

  // One report per route statement and kind of problem, however many PEs share it.
  std::set<std::tuple<uint32_t, int, int>> reported;
  auto once = [&](uint32_t ri, int kind, int dir) {
    return reported.insert({ri, kind, dir}).second;
  };
  std::vector<SwitchPosition> unions(plan_.routes.size());
  for (size_t i = 0; i < plan_.routes.size(); ++i) unions[i] = union_of(plan_.routes[i].route);

  for (size_t i = 0; i < plan_.rects.size(); ++i) {
    if (!rects_[i].ok) continue;
    const PlannedRect& r = plan_.rects[i];
    for (uint32_t ry = 0; ry < r.height; ++ry) {
      for (uint32_t rx = 0; rx < r.width; ++rx) {
        const uint32_t fx = r.x + rx, fy = r.y + ry;
        const auto& key = r.route_keys[r.pe_route_key[static_cast<size_t>(ry) * r.width + rx]];
        for (uint32_t ri : key) {
          const PlannedRoute& route = plan_.routes[ri];
          const ColorRoute& cr = route.route;
          const SwitchPosition& u = unions[ri];
          std::string what = "the route for " + color_text(cr.color) + " on " + pe_name(fx, fy);
          if (!r.program && (u.rx.contains(Direction::RAMP) || u.tx.contains(Direction::RAMP)) &&
              once(ri, 0, 0))
            error(route.loc, what + " uses RAMP, but rect '" + r.name +
                                 "' has no program to send or receive on it");
          for (const Step& s : kSteps) {
            const bool tx = u.tx.contains(s.dir), rxd = u.rx.contains(s.dir);
            if (!tx && !rxd) continue;
            const int64_t nx = static_cast<int64_t>(fx) + s.dx;
            const int64_t ny = static_cast<int64_t>(fy) + s.dy;
            const bool off = nx < 0 || ny < 0 || nx >= W || ny >= H;
            if (off) {
              if (!cr.host_port && once(ri, 1, static_cast<int>(s.dir)))
                error(route.loc, what +
                                     (tx ? std::string(" sends ") + s.word + " off the fabric edge"
                                         : std::string(" receives from the ") + s.word +
                                               ", beyond the fabric edge") +
                                     "; only a route marked 'host' may cross the edge (host I/O "
                                     "enters and leaves there)");
              continue;
            }
            if (!tx) continue;
            const int32_t other = route_at(static_cast<uint32_t>(nx), static_cast<uint32_t>(ny),
                                           cr.color);
            const std::string neighbour =
                pe_name(static_cast<uint32_t>(nx), static_cast<uint32_t>(ny));
            if (other < 0) {
              if (once(ri, 2, static_cast<int>(s.dir)))
                error(route.loc, what + " sends " + s.word + " to " + neighbour +
                                     ", which has no route for " + color_text(cr.color));
            } else if (!plan_.routes[other].route.reconfigurable && !unions[other].rx.contains(opposite(s.dir))) {
              // (A reconfigurable route receives on every link: its PE may rewrite it to.)
              if (once(ri, 3, static_cast<int>(s.dir))) {
                error(route.loc, what + " sends " + s.word + " to " + neighbour + ", whose route for " +
                                     color_text(cr.color) + " does not receive from " +
                                     s.from_word + " (its rx: " + unions[other].rx.to_string() +
                                     ")");
                note(plan_.routes[other].loc, "the route for " + color_text(cr.color) + " on " +
                                                  neighbour);
              }
            }
          }
          if (too_many_errors()) return;
        }
      }
    }
  }
}

}  // namespace wsemu::compiler::layout::detail
