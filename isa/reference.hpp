// The instruction reference, generated from the table in isa/isa.def: the list in isa/README.md
// (between its GENERATED markers) and the output of `wsemu isa`.
//
// Contract: pure functions of the table; the per-architecture cost text comes from the caller
// (isa/ knows no timing numbers: they live in the emulator's architecture profiles), so the same
// table prints the same reference whatever calls it. Never throws.
#pragma once

#include <functional>
#include <string>

#include "isa/instruction.hpp"

namespace wsemu::isa {

// Markdown: an operand-kind legend, then one table per instruction family (the high byte of the
// opcode). `cost` gives the text of the cost column for a timing class, e.g. "wse2 2, wse3 4".
std::string instruction_reference_markdown(const std::function<std::string(Timing)>& cost);

// Plain text for a terminal: one line per instruction (syntax, opcode, timing class, meaning).
std::string instruction_reference_text();

// "fmacs[.async] vdst, vsrc, vsrc, vsrc[, ut=N][, activate=T|unblock=T]"
std::string instruction_syntax(const InsnInfo& insn);

}  // namespace wsemu::isa
