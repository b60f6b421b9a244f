// The router of one tile: per-color routes with switch positions, per-color input buffers
// (virtual channels), credits toward the neighbours, and the per-cycle forwarding step.
//
// Contract:
// - A color's route has up to 4 switch positions; position 0 is the base route. Each position
//   is a receive set and a transmit set over {N, E, S, W, RAMP}. A wavelet is taken only from
//   an input in the current receive set and is copied to every output of the transmit set at
//   once (multicast is all-or-nothing: it waits until every output has room).
// - Each (color, link input) has its own bounded buffer of profile.router_buffer_depth
//   wavelets; the sender holds one credit per free slot, so a congested color never blocks
//   another and a buffer never overflows. Credits freed in cycle t reach the sender at the end
//   of cycle t (commit), usable in t+1.
// - Per cycle: at most one wavelet per output link (N, E, S, W, RAMP) and at most one wavelet
//   per color; colors take turns for contended links (round robin); inputs of one color take
//   turns too. Order per color per link is FIFO.
// - Control wavelets (layout in wavelet.hpp): after a router forwards one it executes the
//   command of slot 0 (SWITCH_ADV, SWITCH_RST, TEARDOWN). Its copies leave with slot 0 popped as
//   the color's pop mode says: never (the default, the hardware's reset value), always, or only
//   when the command is SWITCH_ADV. The switch moves only after the wavelet itself has been
//   forwarded. A control wavelet whose slot 0 has the no-CE bit never goes to RAMP (dropped,
//   counted as filtered, where RAMP was its only output).
// - Teardown: TEARDOWN puts the wavelet's color into teardown at this router. From the next
//   cycle the router moves no wavelet of that color (they wait in its buffers, backpressure as
//   usual) and the core, if there is one, gets its teardown task activated. Only the core's
//   `tdswitch` / `tdexit` and the route writes (`rtcfg`, `rtpos`, `rtinval`, `rtmode`) change a
//   torn-down color's route or end the teardown. The buffers and the credits toward the
//   neighbours follow the union of all switch positions' rx sets as the layout configured them;
//   a color whose route may be rewritten at run time (`reconfigurable`, or starting torn down)
//   has a buffer on all four links instead, so no rewrite ever changes a buffer or a credit.
// - Range filter (per color, optional): a data wavelet goes to RAMP only if its upper 16 bits
//   are in [min, max]; copies to the links are unaffected.
// - Counter filter (per color, optional; wsemu's reading of the SDK's counter kind): a counter
//   starts at `init`; every wavelet of a counted kind (data, control, as configured) that the
//   router forwards on the color goes to RAMP only while the counter is <= `max`, then the
//   counter steps, wrapping to 0 after `limit`. Copies to the links are unaffected. So a PE on a
//   chain of streams of limit + 1 wavelets each keeps max + 1 of every stream, the same ones.
// - Color swap (WSE-2): colors c and c ^ 1 form a pair. A wavelet of the pair that arrives from
//   an east or west link (swap_x) or a north or south link (swap_y) becomes the other color of
//   the pair when either color's route enables that axis and both colors receive from that
//   side; from then on it is routed, delivered and counted as the other color. Credits stay
//   with the sender's color (the buffer a swapped wavelet waits in returns its credit to the
//   color it arrived as). Only links between two routers swap: host edge ports do not, and
//   swapping wavelets from the ramp (both axes enabled) is not emulated.
// The router touches only its own tile's state and its outbox; neighbours read the outbox in
// the commit phase. It never allocates during a cycle.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "emulator/arch_profile.hpp"
#include "emulator/ring.hpp"
#include "emulator/wavelet.hpp"
#include "isa/instruction.hpp"

namespace wsemu::emu {

struct RoutePosition {
  DirectionMask rx = 0;
  DirectionMask tx = 0;
  friend bool operator==(const RoutePosition&, const RoutePosition&) = default;
};

// What a router does with the commands of a control wavelet it forwards (the SDK's pop modes).
enum class PopMode : uint8_t {
  ALWAYS_POP = 0,      // every router pops command 0
  NO_POP = 1,          // (the default) nobody pops: every router executes the same command 0
  POP_ON_ADVANCE = 2,  // pop only when command 0 is SWITCH_ADV
};

struct CounterFilter {
  bool on = false;
  bool count_data = true, count_control = false;
  uint16_t init = 0, max = 0, limit = 0;  // limit: the counter's last value before it wraps to 0
  friend bool operator==(const CounterFilter&, const CounterFilter&) = default;
};

struct ColorRoute {
  std::array<RoutePosition, 4> positions{};  // [0] is the base route
  uint8_t num_positions = 1;                 // 1 + the highest switch position in use
  uint8_t current = 0;                       // the position the router starts in
  bool ring_mode = false;  // SWITCH_ADV past the last position wraps to 0 (else it stays)
  // Bit k-1: invalid position k was last written as changing the input side (the select bit the
  // switch configuration register keeps for it, fabric_registers.hpp); routing never reads it.
  uint8_t invalid_position_selects = 0;
  bool filter = false;     // range filter on the upper 16 bits of wavelets to RAMP
  uint16_t filter_min = 0, filter_max = 0xFFFF;
  CounterFilter counter{};  // counter filter on wavelets to RAMP (see the contract)
  bool swap_x = false;  // color swap c <-> c ^ 1 for wavelets from E and W (WSE-2)
  bool swap_y = false;  // ... from N and S
  PopMode pop_mode = PopMode::NO_POP;
  // The route may be rewritten at run time (buffers on all four link inputs, see the contract).
  bool reconfigurable = false;
  // The color starts in teardown at this router (the SDK's `.teardown = true`); implies
  // reconfigurable. No teardown task is activated for it.
  bool teardown = false;

  static ColorRoute simple(DirectionMask rx, DirectionMask tx) {
    ColorRoute r;
    r.positions[0] = {rx, tx};
    return r;
  }
  DirectionMask rx_union() const;
  friend bool operator==(const ColorRoute&, const ColorRoute&) = default;
};

// A router buffer: the FIFO of Ring (same capacity rule, same guarded push and pop) with each
// wavelet packed into 5 bytes (payload, then color and flags in one byte) instead of 8, and the
// counters and flag bytes ahead of the payloads: 44 bytes instead of 68, so a color's four
// buffers take 176 bytes and a channel four cache lines instead of six. front() and at()
// return a copy: no caller keeps a reference into a buffer.
struct WaveletBuffer {
  static constexpr int N = kMaxRouterBufferDepth;
  static_assert(isa::kNumColors <= 64, "the color and two flags share one byte");
  uint8_t head = 0;
  uint8_t count = 0;
  uint8_t capacity = N;
  std::array<uint8_t, N> meta{};     // color | control << 6 | advance_switch_after << 7
  std::array<uint32_t, N> payload{};

  bool empty() const { return count == 0; }
  bool full() const { return count >= capacity; }
  int size() const { return count; }
  int space() const { return capacity - count; }
  Wavelet front() const { return item(head); }
  Wavelet at(int i) const { return item((head + i) % N); }
  void push(const Wavelet& w) {
    if (count >= capacity) return;
    const int i = (head + count) % N;
    payload[i] = w.payload;
    meta[i] = uint8_t(w.color | (w.control ? 0x40 : 0) | (w.advance_switch_after ? 0x80 : 0));
    ++count;
  }
  Wavelet pop() {
    const Wavelet w = item(head);
    if (count == 0) return w;
    head = uint8_t((head + 1) % N);
    --count;
    return w;
  }
  void clear() { head = count = 0; }

 private:
  Wavelet item(int i) const {
    Wavelet w;
    w.payload = payload[i];
    w.color = uint8_t(meta[i] & 0x3F);
    w.control = (meta[i] & 0x40) != 0;
    w.advance_switch_after = (meta[i] & 0x80) != 0;
    return w;
  }
};

struct LinkStats {
  uint64_t wavelets = 0;
  uint64_t backpressure_cycles = 0;  // a wavelet waited for room downstream
  uint64_t contention_cycles = 0;    // a wavelet waited because another color had the link
};

// Router state of one color at one tile. What a forwarding step reads (route, credits, which
// inputs hold wavelets, the counters) comes first and fits one cache line; the buffers follow.
struct ColorChannel {
  uint8_t color = 0;
  DirectionMask buffered = 0;  // link inputs (N, E, S, W) that have a buffer
  DirectionMask holding = 0;   // link inputs whose buffer holds a wavelet (kept by push/pop_input)
  uint8_t next_input = 0;      // round robin over the 5 inputs
  // Free slots in the buffer the wavelet lands in when sent out of direction d (neighbour's
  // input buffer, or this tile's edge port); -1: nothing receives this color there.
  std::array<int8_t, kNumLinkDirections> credits{-1, -1, -1, -1};
  ColorRoute route;
  uint16_t filter_counter = 0;  // the counter filter's count (route.counter.init at set_route)
  uint64_t forwarded = 0, delivered = 0, filtered = 0, switch_changes = 0;
  std::array<WaveletBuffer, kNumLinkDirections> input{};
};

struct RouterContext;

// How the router reaches its own core through the RAMP. Implemented by PeCore.
class RampPort {
 public:
  enum class Accept : uint8_t { YES, FULL, NO_LANDING };
  // The oldest wavelet on `color` that the core's output queues hold and that is ready.
  virtual bool ramp_peek(int color, uint64_t now, Wavelet& out) const = 0;
  // Colors that some output queue holds a wavelet of (ready or not): the router looks at no
  // other color's RAMP input, which keeps an idle color free of cost.
  virtual uint32_t ramp_colors() const = 0;
  virtual void ramp_pop(int color, uint64_t now) = 0;  // pops what ramp_peek returned
  virtual Accept ramp_can_accept(const Wavelet& w) const = 0;
  // Delivers `w` in cycle `now` (it becomes usable ramp_down_latency cycles later, its place
  // taken from now on); returns the input queue it goes into, or -1 for a wse2 color slot.
  virtual int ramp_accept(const Wavelet& w, uint64_t now) = 0;
  // A TEARDOWN command put `color` into teardown at this router: activate the teardown task.
  virtual void ramp_teardown(int color, const RouterContext& ctx) = 0;

 protected:
  ~RampPort() = default;
};

// Per-cycle notes the router leaves for the wafer (progress, trace).
struct RouterCycle {
  bool progressed = false;
  bool edge_traffic = false;     // a wavelet left an edge port's input buffer or entered edge_out
};

class EventRecorder;  // trace.hpp

// Hot first, in three cache lines (Wafer's TileState puts 8 bytes of its own before the router
// and aligns tiles to lines): the outbox its neighbours read in commit; what every cycle of a
// busy router reads; the per-link wavelet counts. The teardown notes, stall counts and host edge
// ports, which a streaming cycle does not touch, follow.
struct RouterState {
  DirectionMask out_valid = 0;   // outbox: out_wavelet[d] is a wavelet sent toward d
  DirectionMask off_fabric = 0;  // link directions that face off the fabric: host edge ports
  uint8_t next_channel = 0;      // round robin over colors
  // The outputs the last cycle found blocked (link statistics), for router_replay_idle_cycles.
  DirectionMask last_backpressured = 0, last_contended = 0;
  // Outbox, written in compute, read by the neighbours in commit, cleared after; its wavelets
  // packed as in WaveletBuffer (out_wavelet / set_out_wavelet), so that it fits one line.
  std::array<uint8_t, kNumLinkDirections> out_meta{};
  std::array<uint32_t, kNumLinkDirections> out_credits{};  // colors whose buffer freed a slot
  std::array<uint32_t, kNumLinkDirections> out_payload{};
  // Colors with a wavelet in some link input buffer. Every push and pop of ColorChannel::input
  // goes through push_input / pop_input so that a cycle visits only the colors with work.
  uint32_t link_pending = 0;
  // Colors in teardown at this router (bit c): they do not move until the core's `tdexit c`.
  uint32_t torn_down = 0;
  // Colors whose route swaps wavelets from the east and west (swap_x) or north and south
  // (swap_y) links (bit c): a router without either answers color_swapped without reading the
  // pair's channel.
  uint32_t swap_x_colors = 0, swap_y_colors = 0;
  std::vector<ColorChannel> channels;  // sorted by color
  std::array<int8_t, isa::kNumColors> channel_of_color;
  std::array<uint64_t, kNumDirections> link_wavelets{};  // LinkStats::wavelets, per direction
  // Colors a TEARDOWN command tore down here since the core last read them (`tdpend`).
  uint32_t td_pending = 0;
  struct LinkStalls {
    uint64_t backpressure_cycles = 0, contention_cycles = 0;
  };
  std::array<LinkStalls, kNumDirections> link_stalls{};
  std::array<WaveletBuffer, kNumLinkDirections> edge_out{};  // to the host, per edge port
  Wavelet out_wavelet(int d) const {
    Wavelet w;
    w.payload = out_payload[size_t(d)];
    w.color = uint8_t(out_meta[size_t(d)] & 0x3F);
    w.control = (out_meta[size_t(d)] & 0x40) != 0;
    w.advance_switch_after = (out_meta[size_t(d)] & 0x80) != 0;
    return w;
  }
  void set_out_wavelet(int d, const Wavelet& w) {
    out_payload[size_t(d)] = w.payload;
    out_meta[size_t(d)] = uint8_t(w.color | (w.control ? 0x40 : 0) | (w.advance_switch_after ? 0x80 : 0));
    out_valid |= DirectionMask(1u << d);
  }
  LinkStats link_stats(int d) const {
    return {link_wavelets[size_t(d)], link_stalls[size_t(d)].backpressure_cycles,
            link_stalls[size_t(d)].contention_cycles};
  }
  bool has_outbox() const {
    return out_valid != 0 || (out_credits[0] | out_credits[1] | out_credits[2] | out_credits[3]);
  }
  void clear_outbox() {
    out_valid = 0;
    out_credits = {};
  }

  RouterState() { channel_of_color.fill(-1); }
  ColorChannel* channel(int color) {
    const int i = channel_of_color[color];
    return i < 0 ? nullptr : &channels[i];
  }
  const ColorChannel* channel(int color) const {
    const int i = channel_of_color[color];
    return i < 0 ? nullptr : &channels[i];
  }
  ColorChannel& add_channel(int color);                      // keeps `channels` sorted by color
  bool holds_wavelets() const { return link_pending != 0; }  // any link input buffer (not edge_out)
  void push_input(ColorChannel& ch, int from, const Wavelet& w) {
    ch.input[from].push(w);
    ch.holding |= DirectionMask(1u << from);
    link_pending |= 1u << ch.color;
  }
  void pop_input(ColorChannel& ch, int from) {
    ch.input[from].pop();
    if (ch.input[from].empty()) ch.holding &= DirectionMask(~(1u << from));
    if (!ch.holding) link_pending &= ~(1u << ch.color);
  }
};

struct RouterContext {
  const ArchProfile* profile;
  uint64_t now;
  int x, y;
  EventRecorder* events;  // null when no trace sink is installed
};

// One cycle of forwarding. Faults (unrouted color, unsupported command) throw FaultError.
RouterCycle route_cycle(RouterState& router, RampPort* core, const RouterContext& ctx);

// Adds `cycles` cycles in which route_cycle would move nothing and see the same blocked outputs
// as in its last call: the round robin and the link statistics advance as if it had been
// called each cycle. For tiles that wait without being stepped (Wafer's wake-up on input).
void router_replay_idle_cycles(RouterState& router, uint64_t cycles);

// Commit phase: what a neighbour sent through the link that arrives from direction `from`.
void router_receive(RouterState& router, Direction from, const Wavelet& w);
void router_receive_credits(RouterState& router, Direction toward, uint32_t colors);

// Whether a wavelet of `color` arriving from link `from` changes to color ^ 1 (color swap). The
// relation is symmetric within the pair, so the buffer a wavelet lands in is a bijection.
bool color_swapped(const RouterState& router, int color, Direction from);

// Switch position arithmetic shared with the core (fabout advance_switch).
void switch_advance(ColorRoute& route);

// A run-time route write by the core (`rtcfg`, `rtpos`, `rtinval`, `rtmode`, isa/isa.def) to a
// color that is torn down at this router (the caller checks). `n` and `value` are the
// instruction's operands. Bad operands are kernel errors (FaultError). Returns whether the
// current switch position changed (`rtinval`), for the caller's count and trace.
bool write_route(ColorChannel& ch, isa::Opcode op, int n, uint32_t value);

}  // namespace wsemu::emu
