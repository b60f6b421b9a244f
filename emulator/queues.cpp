// Queue binding and the RAMP side of PeCore: where wavelets land and where the router takes them.
#include "emulator/queues.hpp"

#include <fmt/format.h>

#include "emulator/fault.hpp"
#include "emulator/pe_core.hpp"

namespace wsemu::emu {

std::string_view stall_reason_name(StallReason r) {
  switch (r) {
    case StallReason::NONE: return "none";
    case StallReason::INPUT_QUEUE_EMPTY: return "input_queue_empty";
    case StallReason::OUTPUT_QUEUE_FULL: return "output_queue_full";
    case StallReason::FIFO_EMPTY: return "fifo_empty";
    case StallReason::FIFO_FULL: return "fifo_full";
    case StallReason::COUNT: break;
  }
  return "?";
}

namespace {
void check_queue(int q, int count, int depth, const char* what) {
  if (q < 0 || q >= count || depth <= 0)
    kernel_error(fmt::format("{} queue {} does not exist on this architecture", what, q));
}
void check_color(int color, const ArchProfile& profile) {
  if (color < 0 || color >= profile.routable_colors)
    kernel_error(fmt::format("color {} is not routable (0..{})", color, profile.routable_colors - 1), color);
}
}  // namespace

void PeCore::bind_input_queue(int q, int color, const ArchProfile& profile) {
  check_queue(q, profile.num_input_queues, profile.input_queue_depth[q & 7], "input");
  check_color(color, profile);
  InputQueue& in = iq[q];
  if (in.color == color) return;
  if (iq_of_color[color] >= 0)
    kernel_error(fmt::format("color {} is already bound to input queue {}", color, iq_of_color[color]), color);
  if (in.color >= 0) {
    if (!in.ring.empty())
      kernel_error(fmt::format("input queue {} still holds {} wavelets of color {}; it cannot be rebound "
                               "to color {}",
                               q, in.ring.size(), in.color, color),
                   color);
    iq_of_color[in.color] = -1;
  }
  in.color = int8_t(color);
  iq_of_color[color] = int8_t(q);
  // A wse2 wavelet that landed in the color's slot before the queue existed keeps its order.
  if (slot_full & (1u << color)) {
    iq_push(q, slot[color]);
    slot_full &= ~(1u << color);
  }
}

void PeCore::bind_output_queue(int q, int color, const ArchProfile& profile) {
  check_queue(q, profile.num_output_queues, profile.output_queue_depth[q & 7], "output");
  check_color(color, profile);
  OutputQueue& out = oq[q];
  if (out.color == color) return;
  if (out.color >= 0) {
    // WSE-3: an output queue binds a single color until it is flushed (qflush).
    if (profile.data_task_by_queue)
      kernel_error(fmt::format("output queue {} is bound to color {}; flush it (qflush) before binding "
                               "color {}",
                               q, out.color, color),
                   color);
    if (!out.ring.empty())
      kernel_error(fmt::format("output queue {} still holds wavelets of color {}; it cannot be rebound", q,
                               out.color),
                   color);
  }
  out.color = int8_t(color);
}

bool PeCore::ramp_peek(int color, uint64_t now, Wavelet& out) const {
  for (uint32_t m = oq_nonempty; m; m &= m - 1) {
    const OutputQueue& q = oq[__builtin_ctz(m)];
    if (q.ring.front().wavelet.color != color || q.ring.front().ready > now) continue;
    out = q.ring.front().wavelet;
    return true;
  }
  return false;
}

uint32_t PeCore::ramp_colors() const {
  uint32_t colors = 0;
  // A wse2 output queue may hold several colors (each wavelet carries its fabout's): the head's
  // is the one that can move.
  for (uint32_t m = oq_nonempty; m; m &= m - 1) colors |= 1u << oq[__builtin_ctz(m)].ring.front().wavelet.color;
  return colors;
}

void PeCore::ramp_pop(int color, uint64_t now) {
  // Same choice as ramp_peek: the lowest-numbered queue of that color whose head is ready.
  for (uint32_t m = oq_nonempty; m; m &= m - 1) {
    const int qi = __builtin_ctz(m);
    const OutputQueue& q = oq[qi];
    if (q.ring.front().wavelet.color != color || q.ring.front().ready > now) continue;
    oq_pop(qi);
    return;
  }
}

RampPort::Accept PeCore::ramp_can_accept(const Wavelet& w) const {
  // Wavelets still on the ramp hold their place: the ramp adds latency, not capacity (so the
  // SDK's pipeline-01 limit stays the sum of the queue and buffer depths).
  const int on_ramp = arriving_of_color[w.color];
  const int q = iq_of_color[w.color];
  if (q >= 0) return iq[q].ring.size() + on_ramp >= iq[q].ring.capacity ? Accept::FULL : Accept::YES;
  if (color_slots) return (slot_full & (1u << w.color)) || on_ramp ? Accept::FULL : Accept::YES;
  return Accept::NO_LANDING;
}

void PeCore::land(const Wavelet& w) {
  const int q = iq_of_color[w.color];
  if (q >= 0) {
    if (iq[q].ring.full())
      kernel_error(fmt::format("input queue {} was rebound while wavelets of color {} were on the ramp", q, w.color),
                   w.color);
    iq_push(q, w);
    return;
  }
  if (!color_slots)
    kernel_error(fmt::format("a wavelet of color {} reached the core after its input queue was unbound", w.color),
                 w.color);
  slot[w.color] = w;
  slot_full |= 1u << w.color;
}

int PeCore::ramp_accept(const Wavelet& w, uint64_t now) {
  ++stats.wavelets_received;
  const int q = iq_of_color[w.color];
  // The core steps before its router, so a delivery in cycle t is seen from t + 1 anyway.
  if (ramp_down_latency <= 1)
    land(w);
  else {
    arriving.push({w, now + uint64_t(ramp_down_latency)});
    ++arriving_of_color[w.color];
  }
  return q;
}

void PeCore::land_arrivals(const Context& ctx) {
  while (!arriving.empty() && arriving.front().usable <= ctx.now) {
    const Wavelet w = arriving.pop().wavelet;
    --arriving_of_color[w.color];
    land(w);
  }
}

}  // namespace wsemu::emu
