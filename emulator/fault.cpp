#include "emulator/fault.hpp"

#include <fmt/format.h>

namespace wsemu::emu {

std::string_view fault_kind_name(FaultKind kind) {
  switch (kind) {
    case FaultKind::KERNEL_ERROR: return "kernel error";
    case FaultKind::CONFIGURATION_ERROR: return "configuration error";
    case FaultKind::UNSUPPORTED: return "unsupported";
    case FaultKind::INTERNAL_ERROR: return "internal error";
  }
  return "error";
}

std::string Fault::to_string() const {
  std::string where;
  auto add = [&](const std::string& part) { where += where.empty() ? " at " + part : ", " + part; };
  if (x && y) add(fmt::format("PE({},{})", *x, *y));
  if (cycle) add(fmt::format("cycle {}", *cycle));
  if (pc) {
    std::string p = fmt::format("pc {}", *pc);
    if (!source_location.empty()) p += fmt::format(" ({})", source_location);
    else if (source_line && *source_line > 0) p += fmt::format(" (line {})", *source_line);
    if (!instruction.empty()) p += fmt::format(" `{}`", instruction);
    add(p);
  }
  if (color) add(fmt::format("color {}", *color));
  return fmt::format("{}{}: {}", fault_kind_name(kind), where, message);
}

FaultError::FaultError(Fault fault) : std::runtime_error(fault.to_string()), fault_(std::move(fault)) {}

void throw_fault(FaultKind kind, std::string message, std::optional<int> color) {
  Fault f;
  f.kind = kind;
  f.message = std::move(message);
  f.color = color;
  throw FaultError(std::move(f));
}

}  // namespace wsemu::emu
