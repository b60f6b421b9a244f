// The names of the trace event kinds and link-stall reasons (emulator/trace.hpp), as every
// trace view and the file format spell them.
#include "emulator/trace.hpp"

namespace wsemu::emu {

std::string_view trace_kind_name(TraceKind k) {
  switch (k) {
    case TraceKind::WAVELET_HOP: return "wavelet_hop";
    case TraceKind::WAVELET_LANDED: return "wavelet_landed";
    case TraceKind::INSTRUCTION: return "instruction";
    case TraceKind::TASK_PICKED: return "task_picked";
    case TraceKind::TASK_ACTIVATED: return "task_activated";
    case TraceKind::TASK_BLOCKED: return "task_blocked";
    case TraceKind::TASK_UNBLOCKED: return "task_unblocked";
    case TraceKind::STALL: return "stall";
    case TraceKind::SWITCH_CHANGED: return "switch_changed";
    case TraceKind::LINK_STALL: return "link_stall";
  }
  return "?";
}

std::string_view link_stall_reason_name(LinkStallReason r) {
  switch (r) {
    case LinkStallReason::BACKPRESSURE: return "backpressure";
    case LinkStallReason::CONTENTION: return "contention";
  }
  return "?";
}

}  // namespace wsemu::emu
