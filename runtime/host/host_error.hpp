// Errors of the host runtime: what the caller did wrong, or what went wrong on the wafer.
//
// Contract: every failure of a host call is a HostError with a kind. Usage errors (unknown
// symbol, rectangle outside the symbol's PEs, wrong data size or type) are detected before
// anything is sent to the wafer, so the wafer is unchanged. Wafer failures carry the
// emulator's categorized Fault (kernel error, configuration error, unsupported, internal
// error, each with PE, cycle, PC, instruction and color) or its HangReport. Nothing prints.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "emulator/fault.hpp"
#include "emulator/hang_report.hpp"

namespace wsemu::runtime::host {

class HostError : public std::runtime_error {
 public:
  enum class Kind {
    USAGE,        // a bad argument to a host call
    FAULT,        // the wafer faulted (fault() says which category)
    HANG,         // nothing could make progress (hang() says who waits on what)
    CYCLE_LIMIT,  // the run reached --max-cycles
  };
  HostError(Kind kind, std::string message) : std::runtime_error(std::move(message)), kind_(kind) {}
  HostError(emu::Fault fault, std::string context)
      : std::runtime_error(context + ": " + fault.to_string()), kind_(Kind::FAULT), fault_(std::move(fault)) {}
  HostError(emu::HangReport hang, std::string context)
      : std::runtime_error(context + ": " + hang.to_string()),
        kind_(Kind::HANG),
        hang_(std::move(hang)) {}

  Kind kind() const { return kind_; }
  const std::optional<emu::Fault>& fault() const { return fault_; }
  const std::optional<emu::HangReport>& hang() const { return hang_; }

 private:
  Kind kind_;
  std::optional<emu::Fault> fault_;
  std::optional<emu::HangReport> hang_;
};

}  // namespace wsemu::runtime::host
