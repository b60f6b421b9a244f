// The task picker and the task operations of PeCore (see tasks.hpp for the rule).
#include <fmt/format.h>

#include "emulator/fault.hpp"
#include "emulator/pe_core.hpp"

namespace wsemu::emu {

int PeCore::input_of_trigger(int id) const {
  if (!color_slots) return id < isa::kNumQueues ? id : -1;
  if (id >= isa::kNumColors) return -1;
  return iq_of_color[id] >= 0 ? iq_of_color[id] : isa::kNumQueues + id;
}

bool PeCore::input_empty(int input) const {
  if (input < isa::kNumQueues) return iq[input].ring.empty();
  return !(slot_full & (1u << (input - isa::kNumQueues)));
}

const Wavelet& PeCore::input_front(int input) const {
  if (input < isa::kNumQueues) return iq[input].ring.front();
  return slot[input - isa::kNumQueues];
}

Wavelet PeCore::input_pop(int input) {
  if (input < isa::kNumQueues) return iq_pop(input);
  slot_full &= ~(1u << (input - isa::kNumQueues));
  return slot[input - isa::kNumQueues];
}

uint64_t PeCore::inputs_ready() const {
  uint64_t m = 0;
  auto consider = [&](int id, const Wavelet& head) {
    if (head.control || (tasks.data & TaskTable::bit(id))) m |= TaskTable::bit(id);
  };
  for (uint32_t qs = iq_nonempty; qs; qs &= qs - 1) {
    const int q = __builtin_ctz(qs);
    if (!color_slots)
      consider(q, iq[q].ring.front());
    else if (iq[q].color >= 0)
      consider(iq[q].color, iq[q].ring.front());
  }
  if (!color_slots) return m;
  for (uint32_t s = slot_full; s; s &= s - 1) {
    const int c = __builtin_ctz(s);
    consider(c, slot[c]);
  }
  return m;
}

void PeCore::record_task_event(const Context& ctx, TraceKind kind, int task) const {
  if (!ctx.events) return;
  TraceEvent& e = ctx.events->add(ctx, kind);
  e.task = uint8_t(task);
  e.pc = main.pc;
}

bool PeCore::try_pick(const Context& ctx, CycleResult& r) {
  const int id = tasks.pick(inputs_ready());
  if (id < 0) return false;
  tasks.picked(id);
  const uint64_t b = TaskTable::bit(id);
  uint32_t entry = 0;
  isa::TaskKind kind = isa::TaskKind::LOCAL;
  int task = id;
  if (tasks.runnable_local() & b) {
    tasks.activated &= ~b;
    entry = entries.entry[id];
  } else {
    const int input = input_of_trigger(id);
    const Wavelet w = input_pop(input);
    regs[1] = w.payload & 0xFFFF;
    regs[2] = w.payload >> 16;
    if (w.control) {
      if (!control_runs_task(w.payload)) {
        ++stats.control_dropped;
        r.progressed = true;
        return true;
      }
      task = control_task(w.payload);
      if (!(tasks.control & TaskTable::bit(task)))
        kernel_error(fmt::format("a control wavelet on color {} names control task {}, which is not bound",
                                 w.color, task),
                     w.color);
      entry = entries.control_entry[task];
      kind = isa::TaskKind::CONTROL;
      regs[0] = control_data(w.payload);
    } else {
      entry = entries.entry[id];
      kind = isa::TaskKind::DATA;
      regs[0] = w.payload;
    }
  }
  main.running = true;
  main.pc = entry;
  main.task = int8_t(task);
  main.task_kind = kind;
  main.depth = 0;
  main.busy_until = ctx.now + uint64_t(ctx.profile->task_start_cycles) +
                    (kind == isa::TaskKind::LOCAL ? 0 : uint64_t(ctx.profile->queue_to_task_cycles));
  ++stats.tasks_started;
  r.progressed = true;
  record_task_event(ctx, TraceKind::TASK_PICKED, task);
  return true;
}

void PeCore::activate(int id, const Context* ctx) {
  const uint64_t b = TaskTable::bit(id);
  if (tasks.data & b)
    kernel_error(fmt::format("activate {}: task {} is a data task; data tasks are activated by wavelets", id, id));
  if (!(tasks.local & b)) kernel_error(fmt::format("activate {}: task {} is not bound to a local task", id, id));
  tasks.activated |= b;
  if (ctx) record_task_event(*ctx, TraceKind::TASK_ACTIVATED, id);
}

void PeCore::ramp_teardown(int /*color*/, const RouterContext& rctx) {
  // Activation is a flag: several colors torn down before the task runs give one run, which
  // reads them all with `tdmask`. An unbound teardown task leaves the color torn down; the hang
  // report names it.
  const int id = rctx.profile->teardown_task;
  if (!(tasks.local & TaskTable::bit(id))) return;
  Context ctx{.profile = rctx.profile, .now = rctx.now, .x = rctx.x, .y = rctx.y, .events = rctx.events};
  activate(id, &ctx);
}

void PeCore::block(int id, const Context* ctx) {
  tasks.blocked |= TaskTable::bit(id);
  if (ctx) record_task_event(*ctx, TraceKind::TASK_BLOCKED, id);
}

void PeCore::unblock(int id, const Context* ctx) {
  tasks.blocked &= ~TaskTable::bit(id);
  if (ctx) record_task_event(*ctx, TraceKind::TASK_UNBLOCKED, id);
}

bool PeCore::holds_pending_work() const {
  if (main.running || main.in_sync_op || ops_active || iq_nonempty || oq_nonempty || !arriving.empty()) return true;
  for (const OutputQueue& q : oq)
    if (q.flushing) return true;
  return slot_full != 0 || (tasks.activated & tasks.local) != 0;
}

}  // namespace wsemu::emu
