// The text log view: one cycle-stamped line per event.
#include <fmt/format.h>

#include <ostream>

#include "emulator/queues.hpp"
#include "inspect/trace/trace_views.hpp"
#include "emulator/wavelet.hpp"

namespace wsemu::trace {

namespace {

std::string_view short_direction(uint8_t d) {
  static constexpr std::string_view names[] = {"N", "E", "S", "W", "RAMP"};
  return d < 5 ? names[d] : "?";
}

std::string task_text(int task, const TraceProgram* program) {
  const std::string name = program ? program->task_name(task) : "";
  return name.empty() ? std::to_string(task) : fmt::format("{} '{}'", task, name);
}

}  // namespace

std::string event_text(const emu::TraceEvent& e, const ProgramTable& programs) {
  const TraceProgram* program = programs.at(e.x, e.y);
  std::string s = fmt::format("@{} P{}.{} ", e.cycle, e.x, e.y);
  switch (e.kind) {
    case emu::TraceKind::WAVELET_HOP:
      s += fmt::format("hop {} c{} {:#010x}{}", short_direction(e.direction), e.color, e.payload, e.control ? " ctl" : "");
      break;
    case emu::TraceKind::WAVELET_LANDED:
      s += fmt::format("land c{} {} {:#010x}{}", e.color, e.aux == 255 ? std::string("slot") : fmt::format("q{}", e.aux),
                       e.payload, e.control ? " ctl" : "");
      break;
    case emu::TraceKind::INSTRUCTION: {
      const std::string text = program ? program->instruction(e.pc) : "";
      s += fmt::format("insn t{} pc {}: {}", e.task == 255 ? std::string("-") : std::to_string(e.task), e.pc,
                       text.empty() ? "?" : text);
      break;
    }
    case emu::TraceKind::TASK_PICKED: s += "task picked " + task_text(e.task, program); break;
    case emu::TraceKind::TASK_ACTIVATED: s += "task activated " + task_text(e.task, program); break;
    case emu::TraceKind::TASK_BLOCKED: s += "task blocked " + task_text(e.task, program); break;
    case emu::TraceKind::TASK_UNBLOCKED: s += "task unblocked " + task_text(e.task, program); break;
    case emu::TraceKind::STALL:
      s += fmt::format("stall {} {}", e.aux == 255 ? std::string("main") : fmt::format("ut{}", e.aux),
                       emu::stall_reason_name(emu::StallReason(e.reason)));
      if (e.color < 32) s += fmt::format(" c{}", e.color);
      s += fmt::format(" pc {}", e.pc);
      break;
    case emu::TraceKind::SWITCH_CHANGED: s += fmt::format("switch c{} position {}", e.color, e.aux); break;
    case emu::TraceKind::LINK_STALL:
      s += fmt::format("blocked {} c{}{} {}", short_direction(e.direction), e.color, e.control ? " ctl" : "",
                       emu::link_stall_reason_name(emu::LinkStallReason(e.reason)));
      break;
  }
  return s;
}

uint64_t write_text(const TraceReader& trace, const TraceFilter& filter, std::ostream& out, uint64_t max_lines) {
  uint64_t lines = 0;
  const ProgramTable& programs = trace.programs();
  trace.for_each_event(filter, [&](const emu::TraceEvent& e) {
    if (lines >= max_lines) return false;
    out << event_text(e, programs) << '\n';
    ++lines;
    return bool(out);
  });
  if (!out) throw TraceError("cannot write the text log (output stream failed)");
  return lines;
}

}  // namespace wsemu::trace
