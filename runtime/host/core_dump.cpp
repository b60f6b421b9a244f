// SdkRuntime::dump_core: a readable snapshot of one PE (the SDK's dump_core, as text).
#include <fmt/format.h>

#include "isa/assembler.hpp"
#include "runtime/host/runtime_state.hpp"

namespace wsemu::runtime::host {

std::string SdkRuntime::dump_core(int fx, int fy) const {
  const State& s = *state_;
  if (!s.wafer) throw HostError(HostError::Kind::USAGE, "dump_core: call load() first");
  if (fx < 0 || fy < 0 || fx >= s.wafer->width() || fy >= s.wafer->height())
    throw HostError(HostError::Kind::USAGE, fmt::format("dump_core: PE({},{}) is off the {} x {} fabric", fx, fy,
                                                        s.wafer->width(), s.wafer->height()));
  if (!s.wafer->has_core(fx, fy)) return fmt::format("PE({},{}) at cycle {}: no program\n", fx, fy, s.wafer->cycle());
  const emu::CoreView v = s.wafer->core_view(fx, fy);
  const PeConfig* pc = s.exe.pe_config_at(uint32_t(fx), uint32_t(fy));
  std::string out = fmt::format("PE({},{}) at cycle {}: program '{}', rectangle position ({}, {})\n", fx, fy,
                                s.wafer->cycle(), pc ? s.exe.programs[size_t(pc->program)].source_path : "?", v.rect_x,
                                v.rect_y);
  out += fmt::format("  main thread: {}, task {}, pc {}\n", v.running ? "running" : "idle", v.task, v.pc);
  out += "  registers:";
  for (size_t i = 0; i < v.regs.size(); ++i) out += fmt::format(" r{}={:#x}", i, v.regs[i]);
  out += fmt::format("\n  tasks: bound local {:#x} data {:#x} control {:#x}, activated {:#x}, blocked {:#x}\n",
                     v.bound_local, v.bound_data, v.bound_control, v.activated, v.blocked);
  for (size_t q = 0; q < v.input_queues.size(); ++q)
    if (v.input_queue_color[q] >= 0 || !v.input_queues[q].empty())
      out += fmt::format("  input queue {} (color {}): {} wavelets\n", q, v.input_queue_color[q],
                         v.input_queues[q].size());
  for (size_t q = 0; q < v.output_queues.size(); ++q)
    if (v.output_queue_color[q] >= 0 || !v.output_queues[q].empty())
      out += fmt::format("  output queue {} (color {}): {} wavelets\n", q, v.output_queue_color[q],
                         v.output_queues[q].size());
  for (size_t u = 0; u < v.microthread_busy.size(); ++u)
    if (v.microthread_busy[u]) out += fmt::format("  microthread {}: busy\n", u);
  for (size_t d = 0; d < v.dsrs.size(); ++d)
    if (v.dsrs[d].kind != isa::DsdKind::NONE)
      out += fmt::format("  d{}: {} base {:#x} length {} color {} queue {}\n", d, isa::dsd_kind_name(v.dsrs[d].kind),
                         v.dsrs[d].base, v.dsrs[d].length, v.dsrs[d].color, v.dsrs[d].queue);
  out += fmt::format("  stats: {} instructions, {} busy cycles, {} tasks started, {} wavelets sent, {} received\n",
                     v.stats.instructions, v.stats.busy_cycles, v.stats.tasks_started, v.stats.wavelets_sent,
                     v.stats.wavelets_received);
  return out;
}

}  // namespace wsemu::runtime::host
