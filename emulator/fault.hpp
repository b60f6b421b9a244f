// Faults of the virtual wafer: what went wrong, in which category, and where.
//
// Contract: every error the emulator reports is a Fault with a category (kernel error,
// configuration error, unsupported, internal error) and, where they apply, the PE (x,y), the
// cycle, the PC, the disassembled instruction and the color. Host-side calls (configuration)
// throw FaultError; a fault raised while a kernel runs is caught by the wafer and returned in
// RunResult, never allowed to crash the process. Nothing here prints.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace wsemu::emu {

enum class FaultKind : uint8_t {
  KERNEL_ERROR,         // the kernel did something the hardware forbids or leaves undefined
  CONFIGURATION_ERROR,  // bad layout, route, program placement or parameters
  UNSUPPORTED,          // a real hardware feature wsemu does not emulate (yet)
  INTERNAL_ERROR,       // a bug in wsemu
};

std::string_view fault_kind_name(FaultKind kind);

struct Fault {
  FaultKind kind = FaultKind::INTERNAL_ERROR;
  std::string message;
  std::optional<int> x, y;       // fabric coordinates of the PE
  std::optional<uint64_t> cycle;
  std::optional<uint32_t> pc;    // instruction index
  std::string instruction;       // disassembled, empty when none applies
  std::optional<int> color;
  std::optional<int> source_line;
  std::string source_location;  // "pe.csl:12:5" from the program's line table, or ""

  // "kernel error at PE(3,1), cycle 120, pc 7 (line 9) `recv r0, 9`, color 4: message";
  // with a line table "pc 7 (pe.csl:12:5)" in place of the assembly line"
  std::string to_string() const;
};

class FaultError : public std::runtime_error {
 public:
  explicit FaultError(Fault fault);
  const Fault& fault() const { return fault_; }

 private:
  Fault fault_;
};

// Shorthands for throwing a fault with only a category and a message; the caller that knows
// the PE and cycle (the core, the wafer) fills those in while the exception passes.
[[noreturn]] void throw_fault(FaultKind kind, std::string message,
                              std::optional<int> color = std::nullopt);
[[noreturn]] inline void kernel_error(std::string message, std::optional<int> color = std::nullopt) {
  throw_fault(FaultKind::KERNEL_ERROR, std::move(message), color);
}
[[noreturn]] inline void config_error(std::string message) {
  throw_fault(FaultKind::CONFIGURATION_ERROR, std::move(message));
}
[[noreturn]] inline void unsupported(std::string message) {
  throw_fault(FaultKind::UNSUPPORTED, std::move(message));
}

}  // namespace wsemu::emu
