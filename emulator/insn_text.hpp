// Instruction text for fault messages, hang reports and traces.
//
// Contract: prints one decoded instruction as "mnemonic operand, operand" from the isa table
// alone (no program symbols), so the emulator does not depend on the assembler being present.
// Never throws.
#pragma once

#include <string>

#include "isa/instruction.hpp"

namespace wsemu::emu {

std::string instruction_text(const isa::Instruction& insn);

}  // namespace wsemu::emu
