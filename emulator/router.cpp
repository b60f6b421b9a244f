#include "emulator/router.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "emulator/fault.hpp"
#include "emulator/trace.hpp"

namespace wsemu::emu {

DirectionMask ColorRoute::rx_union() const {
  DirectionMask m = 0;
  for (int p = 0; p < num_positions; ++p) m |= positions[p].rx;
  return m;
}

ColorChannel& RouterState::add_channel(int color) {
  if (ColorChannel* c = channel(color)) return *c;
  ColorChannel ch;
  ch.color = uint8_t(color);
  auto it = std::lower_bound(channels.begin(), channels.end(), color,
                             [](const ColorChannel& c, int col) { return c.color < col; });
  channels.insert(it, ch);
  channel_of_color.fill(-1);
  for (size_t i = 0; i < channels.size(); ++i) channel_of_color[channels[i].color] = int8_t(i);
  return channels[channel_of_color[color]];
}

void switch_advance(ColorRoute& route) {
  if (route.current + 1 < route.num_positions)
    ++route.current;
  else if (route.ring_mode)
    route.current = 0;
}

bool write_route(ColorChannel& ch, isa::Opcode op, int n, uint32_t value) {
  ColorRoute& r = ch.route;
  const int c = ch.color;
  const DirectionMask rx = DirectionMask(value & 0x1F), tx = DirectionMask((value >> 5) & 0x1F);
  switch (op) {
    case isa::Opcode::RTCFG: {
      if (value & ~0x3FFu)
        kernel_error(fmt::format("rtcfg {}, {}, {:#x}: the mask has bits above bit 9 (rx 4:0, tx 9:5)", c, n, value), c);
      RoutePosition& p = r.positions[0];
      if (n == 0) p = {DirectionMask(p.rx | rx), DirectionMask(p.tx | tx)};
      else if (n == 1) p = {DirectionMask(p.rx & ~rx), DirectionMask(p.tx & ~tx)};
      else if (n == 2) p = {DirectionMask(p.rx ^ rx), DirectionMask(p.tx ^ tx)};
      else p = {rx, tx};
      return false;
    }
    case isa::Opcode::RTPOS: {
      if (n == 0) kernel_error(fmt::format("rtpos {}, 0: position 0 is written with rtcfg", c), c);
      if (value & ~0xFFFu)
        kernel_error(fmt::format("rtpos {}, {}, {:#x}: the mask has bits above bit 11", c, n, value), c);
      if (!(value & 0xC00u))
        kernel_error(fmt::format("rtpos {}, {}, {:#x}: neither rx (bit 10) nor tx (bit 11) is given", c, n, value), c);
      // Positions between the valid ones and n become copies of position 0.
      for (int p = r.num_positions; p < n; ++p) r.positions[p] = r.positions[0];
      const RoutePosition& base = r.positions[0];
      r.positions[n] = {value & 0x400u ? rx : base.rx, value & 0x800u ? tx : base.tx};
      if (r.num_positions < n + 1) r.num_positions = uint8_t(n + 1);
      return false;
    }
    case isa::Opcode::RTINVAL: {
      r.num_positions = 1;
      const bool moved = r.current != 0;
      r.current = 0;
      return moved;
    }
    case isa::Opcode::RTMODE:
      if (n == 0 && value <= 1) {
        r.ring_mode = value != 0;
      } else if (n == 1 && value <= 2) {
        r.pop_mode = PopMode(value);
      } else {
        kernel_error(fmt::format("rtmode {}, {}, {}: settings are 0 (ring mode, 0 or 1) and 1 (pop mode: 0 always, "
                                 "1 never, 2 on SWITCH_ADV)",
                                 c, n, value),
                     c);
      }
      return false;
    default:
      throw_fault(FaultKind::INTERNAL_ERROR, "write_route: not a route write");
  }
}

namespace {

void record_switch(const RouterContext& ctx, const ColorChannel& ch) {
  if (!ctx.events) return;
  TraceEvent& e = ctx.events->add(ctx, TraceKind::SWITCH_CHANGED);
  e.color = ch.color;
  e.aux = ch.route.current;
}

void execute_command(RouterState& r, RampPort* core, ColorChannel& ch, RouterCommand cmd,
                     const RouterContext& ctx) {
  switch (cmd) {
    case RouterCommand::NOP:
      return;
    case RouterCommand::SWITCH_ADV: {
      const uint8_t before = ch.route.current;
      switch_advance(ch.route);
      if (ch.route.current != before) {
        ++ch.switch_changes;
        record_switch(ctx, ch);
      }
      return;
    }
    case RouterCommand::SWITCH_RST:
      if (ch.route.current != 0) {
        ch.route.current = 0;
        ++ch.switch_changes;
        record_switch(ctx, ch);
      }
      return;
    case RouterCommand::TEARDOWN:
      // The color stops here from the next cycle: route_cycle visits each color at most once
      // per cycle, and this one has already moved its wavelet. Without a core nothing can end
      // the teardown; the hang report says so if wavelets pile up behind it.
      r.torn_down |= 1u << ch.color;
      r.td_pending |= 1u << ch.color;
      if (core) core->ramp_teardown(ch.color, ctx);
      return;
  }
}

// One LINK_STALL event per output a wavelet of `ch` could not use this cycle. A link both full
// downstream and taken by another color counts as backpressure, as in LinkStats.
void record_link_stalls(const RouterContext& ctx, const ColorChannel& ch, const Wavelet& w,
                        DirectionMask backpressured, DirectionMask contended) {
  for (int d = 0; d < kNumDirections; ++d) {
    const DirectionMask m = DirectionMask(1u << d);
    if (!((backpressured | contended) & m)) continue;
    TraceEvent& e = ctx.events->add(ctx, TraceKind::LINK_STALL);
    e.color = ch.color;
    e.direction = uint8_t(d);
    e.control = w.control;
    e.reason = uint8_t(backpressured & m ? LinkStallReason::BACKPRESSURE : LinkStallReason::CONTENTION);
  }
}

// The stages of one color's turn in route_cycle, in the order they run.

// What the outputs of this cycle look like so far: links taken by earlier colors, and the
// links a wavelet could not use (for the link statistics and LINK_STALL events).
struct OutputAllocation {
  DirectionMask used = 0, backpressured = 0, contended = 0;
  bool edge_traffic = false;  // a granted wavelet came from or went to a host edge port
};

// Selection: the first input in the current rx set, from the color's round-robin position on,
// that holds a wavelet (a RAMP wavelet only once per cycle and only once it is ready).
int select_input(const ColorChannel& ch, const RoutePosition& pos, RampPort* core, bool ramp_in_used,
                 uint64_t now, Wavelet& w) {
  const DirectionMask candidates = DirectionMask(pos.rx & (ch.holding | bit(Direction::RAMP)));
  if (!candidates) return -1;
  for (int j = 0, d = ch.next_input; j < kNumDirections; ++j, d = d + 1 < kNumDirections ? d + 1 : 0) {
    if (!(candidates & (1u << d))) continue;
    if (d == int(Direction::RAMP)) {
      if (!ramp_in_used && core && core->ramp_peek(ch.color, now, w)) return d;
    } else {
      w = ch.input[d].front();
      return d;
    }
  }
  return -1;
}

// Whether the color's counter filter counts this wavelet.
bool counts(const CounterFilter& f, const Wavelet& w) {
  return f.on && (w.control ? f.count_control : f.count_data);
}

// Filters: a counted wavelet while the counter filter's count is past its max, a data wavelet
// outside the color's range, and a control wavelet whose slot 0 has the no-CE bit, do not go to
// RAMP. Returns whether it was filtered away; `tx` loses RAMP then.
bool apply_range_filter(const ColorChannel& ch, const Wavelet& w, DirectionMask& tx) {
  if (!(tx & bit(Direction::RAMP))) return false;
  if (counts(ch.route.counter, w) && ch.filter_counter > ch.route.counter.max) {
    tx &= DirectionMask(~bit(Direction::RAMP));
    return true;
  }
  if (w.control) {
    if (!control_ce_ignore(w.payload)) return false;
    tx &= DirectionMask(~bit(Direction::RAMP));
    return true;
  }
  if (!ch.route.filter) return false;
  const uint16_t idx = uint16_t(w.payload >> 16);
  if (idx >= ch.route.filter_min && idx <= ch.route.filter_max) return false;
  tx &= DirectionMask(~bit(Direction::RAMP));
  return true;
}

// Allocation: every output of tx must be free this cycle and have room (all-or-nothing).
// Misrouted outputs are kernel errors, checked in direction order.
bool allocate_outputs(const RouterState& r, RampPort* core, const ColorChannel& ch, const Wavelet& w,
                      DirectionMask tx, OutputAllocation& out) {
  bool ok = true;
  for (int d = 0; d < kNumDirections; ++d) {
    const DirectionMask m = DirectionMask(1u << d);
    if (!(tx & m)) continue;
    if (out.used & m) {
      out.contended |= m;
      ok = false;
      continue;
    }
    if (d == int(Direction::RAMP)) {
      if (!core)
        kernel_error(fmt::format("color {} is routed to the RAMP of a PE that has no program", ch.color), ch.color);
      const RampPort::Accept a = core->ramp_can_accept(w);
      if (a == RampPort::Accept::NO_LANDING)
        kernel_error(fmt::format("a wavelet on color {} reached the core, but no input queue is "
                                 "bound to color {} (iqinit / .queue)",
                                 ch.color, ch.color),
                     ch.color);
      if (a == RampPort::Accept::FULL) {
        out.backpressured |= m;
        ok = false;
      }
    } else if (r.off_fabric & m) {
      if (r.edge_out[d].full()) {
        out.backpressured |= m;
        ok = false;
      }
    } else if (ch.credits[d] < 0) {
      kernel_error(fmt::format("color {} is transmitted {}, but the neighbouring router does not "
                               "receive color {} from {}",
                               ch.color, direction_name(Direction(d)), ch.color,
                               direction_name(opposite(Direction(d)))),
                   ch.color);
    } else if (ch.credits[d] == 0) {
      out.backpressured |= m;
      ok = false;
    }
  }
  return ok;
}

// Credits: taking a wavelet from a link buffer frees a slot; the credit goes back to the color
// the sender used (the other one of the pair, if it was swapped here).
void take_input(RouterState& r, RampPort* core, ColorChannel& ch, int src, uint64_t now) {
  if (src == int(Direction::RAMP)) {
    core->ramp_pop(ch.color, now);
    return;
  }
  r.pop_input(ch, src);
  const int sent_as = ch.color ^ int(color_swapped(r, ch.color, Direction(src)));
  if (!(r.off_fabric & (1u << src))) r.out_credits[src] |= 1u << sent_as;
}

// Pop mode: whether the copies of a control wavelet leave with command 0 popped. A SWITCH_ADV
// that cannot move this router's switch (it has no positions, or sits on the last one without
// ring mode) is never popped: the SDK's cholesky sends ADV, NOP from a PE whose router has no
// switch, or is on its last position, for the next router east to advance.
bool pops_command(const ColorRoute& route, uint32_t payload) {
  const bool advance_moves = route.current + 1 < route.num_positions || (route.ring_mode && route.current != 0);
  if (control_command(payload) == RouterCommand::SWITCH_ADV && !advance_moves) return false;
  switch (route.pop_mode) {
    case PopMode::ALWAYS_POP: return true;
    case PopMode::NO_POP: return false;
    case PopMode::POP_ON_ADVANCE: return control_command(payload) == RouterCommand::SWITCH_ADV;
  }
  return true;
}

// Trace: one WAVELET_HOP per copy, and WAVELET_LANDED where the RAMP copy landed.
void record_hop(const RouterContext& ctx, const ColorChannel& ch, const Wavelet& out, int d, int landed_in) {
  TraceEvent& hop = ctx.events->add(ctx, TraceKind::WAVELET_HOP);
  hop.color = ch.color;
  hop.direction = uint8_t(d);
  hop.control = out.control;
  hop.payload = out.payload;
  if (landed_in != -2) {
    TraceEvent& e = ctx.events->add(ctx, TraceKind::WAVELET_LANDED);
    e.color = ch.color;
    e.control = out.control;
    e.payload = out.payload;
    e.aux = landed_in < 0 ? uint8_t(255) : uint8_t(landed_in);
  }
}

// Copy: the wavelet goes to every output of tx at once.
void copy_to_outputs(RouterState& r, RampPort* core, ColorChannel& ch, const Wavelet& out, DirectionMask tx,
                     const RouterContext& ctx) {
  for (uint32_t m = tx; m; m &= m - 1) {
    const int d = __builtin_ctz(m);
    ++r.link_wavelets[size_t(d)];
    int landed_in = -2;  // the input queue (-1: a wse2 color slot) of a RAMP delivery
    if (d == int(Direction::RAMP)) {
      landed_in = core->ramp_accept(out, ctx.now);
      ++ch.delivered;
    } else if (r.off_fabric & (1u << d)) {
      r.edge_out[d].push(out);
      ++ch.forwarded;
    } else {
      r.set_out_wavelet(d, out);
      --ch.credits[d];
      ++ch.forwarded;
    }
    if (ctx.events) record_hop(ctx, ch, out, d, landed_in);
  }
}

// One color's turn: selection, filters, allocation, then (granted) credits, copy and the
// wavelet's router commands. Returns whether a wavelet moved.
bool route_color(RouterState& r, RampPort* core, ColorChannel& ch, OutputAllocation& alloc, bool& ramp_in_used,
                 const RouterContext& ctx) {
  const RoutePosition& pos = ch.route.positions[ch.route.current];
  Wavelet w;
  const int src = select_input(ch, pos, core, ramp_in_used, ctx.now, w);
  if (src < 0) return false;
  DirectionMask tx = pos.tx;
  const bool filtered = apply_range_filter(ch, w, tx);
  if (tx == 0 && !filtered)
    kernel_error(fmt::format("a wavelet on color {} arrived from {} but switch position {} of "
                             "this router transmits it nowhere",
                             ch.color, direction_name(Direction(src)), ch.route.current),
                 ch.color);
  const OutputAllocation before = alloc;
  if (!allocate_outputs(r, core, ch, w, tx, alloc)) {
    // This color's own blocked outputs (the masks also hold earlier colors' outputs).
    if (ctx.events)
      record_link_stalls(ctx, ch, w, tx & DirectionMask(alloc.backpressured & ~before.backpressured),
                         tx & DirectionMask(alloc.contended & ~before.contended));
    return false;
  }
  take_input(r, core, ch, src, ctx.now);
  if (src == int(Direction::RAMP)) ramp_in_used = true;
  alloc.used |= tx;
  if (r.off_fabric & (tx | (1u << src))) alloc.edge_traffic = true;
  Wavelet out = w;
  out.advance_switch_after = false;
  if (w.control && pops_command(ch.route, w.payload)) out.payload = control_pop(w.payload);
  copy_to_outputs(r, core, ch, out, tx, ctx);
  if (filtered) ++ch.filtered;
  if (counts(ch.route.counter, w))
    ch.filter_counter = ch.filter_counter >= ch.route.counter.limit ? 0 : uint16_t(ch.filter_counter + 1);
  ch.next_input = uint8_t((src + 1) % kNumDirections);
  // Commands: the wavelet has left on the old switch position; now its command runs.
  if (w.control) execute_command(r, core, ch, control_command(w.payload), ctx);
  if (w.advance_switch_after) execute_command(r, core, ch, RouterCommand::SWITCH_ADV, ctx);
  return true;
}

}  // namespace

RouterCycle route_cycle(RouterState& r, RampPort* core, const RouterContext& ctx) {
  const int n = int(r.channels.size());
  if (n == 0) return {};
  const int start = r.next_channel < n ? r.next_channel : 0;
  r.next_channel = uint8_t(start + 1 == n ? 0 : start + 1);
  // Colors take turns from channels[start] on. A color with nothing buffered and nothing in an
  // output queue cannot move a wavelet, so only the colors in `waiting` are visited: rotating
  // the mask by the first color's number keeps the turn order.
  const uint32_t waiting = r.link_pending | (core ? core->ramp_colors() : 0u);
  r.last_backpressured = r.last_contended = 0;
  if (waiting == 0) return {};
  OutputAllocation alloc;
  // In a local, not in the result: the result's bytes stored one by one and read back as one
  // word on return stall the store buffer (the hottest spot of this function in the profile).
  bool progressed = false;
  bool ramp_in_used = false;
  const int first_color = r.channels[start].color;
  for (uint32_t turn = std::rotr(waiting, first_color); turn != 0; turn &= turn - 1) {
    const int color = (__builtin_ctz(turn) + first_color) % isa::kNumColors;
    if (r.torn_down & (1u << color)) continue;  // waits in its buffers / output queues
    const int channel_index = r.channel_of_color[color];
    if (channel_index < 0) continue;  // an output queue of a color this router does not route
    progressed |= route_color(r, core, r.channels[channel_index], alloc, ramp_in_used, ctx);
  }
  // Link statistics: a blocked output counts once per cycle, backpressure before contention.
  r.last_backpressured = alloc.backpressured;
  r.last_contended = alloc.contended;
  for (int d = 0; d < kNumDirections; ++d) {
    if (alloc.backpressured & (1u << d)) ++r.link_stalls[size_t(d)].backpressure_cycles;
    else if (alloc.contended & (1u << d)) ++r.link_stalls[size_t(d)].contention_cycles;
  }
  RouterCycle rc;
  rc.progressed = progressed;
  rc.edge_traffic = alloc.edge_traffic;
  return rc;
}

void router_replay_idle_cycles(RouterState& r, uint64_t cycles) {
  const size_t n = r.channels.size();
  if (cycles == 0 || n == 0) return;
  // Mostly a few cycles (a waiting tile is caught up at the end of every run): no division then.
  const uint64_t next = r.next_channel + cycles;
  r.next_channel = uint8_t(next < n ? next : next < 2 * n ? next - n : next % n);
  for (int d = 0; d < kNumDirections; ++d) {
    if (r.last_backpressured & (1u << d)) r.link_stalls[size_t(d)].backpressure_cycles += cycles;
    else if (r.last_contended & (1u << d)) r.link_stalls[size_t(d)].contention_cycles += cycles;
  }
}

bool color_swapped(const RouterState& r, int color, Direction from) {
  if (from == Direction::RAMP) return false;
  const bool x_axis = from == Direction::EAST || from == Direction::WEST;
  if (!((x_axis ? r.swap_x_colors : r.swap_y_colors) & (3u << (color & ~1)))) return false;
  const ColorChannel* a = r.channel(color);
  const ColorChannel* b = r.channel(color ^ 1);
  if (!a || !b) return false;
  const bool enabled = x_axis ? (a->route.swap_x || b->route.swap_x) : (a->route.swap_y || b->route.swap_y);
  const DirectionMask m = DirectionMask(1u << int(from));
  return enabled && (a->buffered & m) && (b->buffered & m);
}

void router_receive(RouterState& r, Direction from, const Wavelet& w) {
  Wavelet in = w;
  if (color_swapped(r, w.color, from)) in.color = uint8_t(w.color ^ 1);
  ColorChannel* ch = r.channel(in.color);
  // The sender only sends with a credit, which exists only for a buffer of this color (or, when
  // swapped, of its pair, which receives from the same side).
  if (ch) r.push_input(*ch, int(from), in);
}

void router_receive_credits(RouterState& r, Direction toward, uint32_t colors) {
  while (colors) {
    const int c = __builtin_ctz(colors);
    colors &= colors - 1;
    if (ColorChannel* ch = r.channel(c)) ++ch->credits[int(toward)];
  }
}

}  // namespace wsemu::emu
