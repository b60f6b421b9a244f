// The disassembler: an ObjectImage, or one instruction, back to wsemu assembly text.
//
// Contract: disassemble() prints text that assemble() (isa/assembler.hpp) turns back into an
// identical ObjectImage (source_lines aside); format_instruction() prints one instruction as
// faults, hang reports, traces and the debugger show it. Neither throws on a valid image.
#pragma once

#include <string>

#include "isa/instruction.hpp"
#include "isa/object.hpp"

namespace wsemu::isa {

// One instruction in assembly syntax. With a program, labels, descriptor and string names are
// printed symbolically where known.
std::string format_instruction(const Instruction& insn, const ObjectImage* program = nullptr);

std::string disassemble(const ObjectImage& program);

}  // namespace wsemu::isa
