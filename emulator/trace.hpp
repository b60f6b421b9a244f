// Tracing hooks: the event types and a narrow event-sink interface; the trace file, its
// reader and views are the inspection library's (inspect/trace/).
//
// Contract: the wafer calls an EventSink only when one is installed (Wafer::set_event_sink);
// with none installed no event is built, so tracing off costs one predictable branch per
// event site. Events are recorded per tile during the parallel compute phase and handed to
// the sink once per cycle, in tile order (y, then x), so the stream is identical for any
// thread count. The sink is called from the thread that called run()/step(), never
// concurrently. This header defines no file format.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace wsemu::emu {

enum class TraceKind : uint8_t {
  WAVELET_HOP,        // a router forwarded a wavelet out of `direction` (a link or RAMP)
  WAVELET_LANDED,     // a wavelet entered an input queue (or a wse2 color slot) of the core
  INSTRUCTION,        // an instruction retired at `pc`
  TASK_PICKED,        // the picker started `task`
  TASK_ACTIVATED,     // `task` was activated (instruction, host, or async completion)
  TASK_BLOCKED,
  TASK_UNBLOCKED,
  STALL,              // the main thread (microthread 255) or microthread `aux` stalled; `reason`
  SWITCH_CHANGED,     // the switch of `color` moved to position `aux`
  LINK_STALL,         // a wavelet of `color` could not leave by `direction` this cycle; `reason`
};
constexpr TraceKind kLastTraceKind = TraceKind::LINK_STALL;

// Why a router could not move a wavelet out of a link (LINK_STALL's `reason`). Matches the
// wafer's per-link counters: backpressure wins over contention for the same link and cycle.
enum class LinkStallReason : uint8_t {
  BACKPRESSURE = 1,  // no room downstream: the neighbour's buffer, the core's input queue or
                     // color slot (RAMP), or the host edge port is full
  CONTENTION = 2,    // another color took the link (or the RAMP) this cycle
};
std::string_view link_stall_reason_name(LinkStallReason r);

std::string_view trace_kind_name(TraceKind k);

struct TraceEvent {
  uint64_t cycle = 0;
  uint16_t x = 0, y = 0;
  TraceKind kind = TraceKind::INSTRUCTION;
  uint8_t color = 0;
  uint8_t direction = 0;  // Direction, for wavelet events
  uint8_t task = 0;
  uint8_t reason = 0;     // StallReason (STALL) or LinkStallReason (LINK_STALL)
  uint8_t aux = 0;        // microthread (STALL), switch position (SWITCH_CHANGED), or input
                          // queue (WAVELET_LANDED; 255: a wse2 color slot)
  bool control = false;
  uint32_t payload = 0;   // wavelet payload
  uint32_t pc = 0;
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Every event of one cycle, in tile order.
  virtual void on_events(std::span<const TraceEvent> events) = 0;
};

// Per-tile buffer the compute phase appends to; the wafer drains it after each cycle.
class EventRecorder {
 public:
  void record(const TraceEvent& e) { events_.push_back(e); }
  // Records an event of `kind` at PE (x, y) in `cycle` and returns it for the caller to fill in
  // the kind's own fields (valid until the next event is recorded).
  TraceEvent& add(uint64_t cycle, int x, int y, TraceKind kind) {
    TraceEvent& e = events_.emplace_back();
    e.cycle = cycle;
    e.x = uint16_t(x);
    e.y = uint16_t(y);
    e.kind = kind;
    return e;
  }
  // The same at a stepping context's PE and cycle (its `now`, `x`, `y`).
  template <typename Context>
  TraceEvent& add(const Context& ctx, TraceKind kind) {
    return add(ctx.now, ctx.x, ctx.y, kind);
  }
  std::vector<TraceEvent>& events() { return events_; }

 private:
  std::vector<TraceEvent> events_;
};

}  // namespace wsemu::emu
