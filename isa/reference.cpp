#include "isa/reference.hpp"

#include <fmt/format.h>

namespace wsemu::isa {
namespace {

struct Family {
  uint8_t high_byte;
  std::string_view title;
};

// The families named by the high byte of the opcode (see the header comment of isa/isa.def).
constexpr Family kFamilies[] = {
    {0x01, "Scalar integer ALU"},  {0x02, "Scalar fp32"},        {0x03, "Branches and calls"},
    {0x04, "Loads and stores"},    {0x05, "Descriptors (DSDs)"}, {0x06, "fp32 vector operations"},
    {0x07, "fp16 vector operations"}, {0x08, "Integer vector operations"}, {0x09, "Tasks"},
    {0x0A, "Queues, wavelets and control"}, {0x0B, "Miscellaneous"},
};

struct KindDoc {
  OperandKind kind;
  std::string_view syntax;
};

constexpr KindDoc kKindDocs[] = {
    {OperandKind::REG, "`r0`..`r15`"},
    {OperandKind::DSR, "`d0`..`d47` or a `.dsd` name"},
    {OperandKind::VDST, "descriptor (`d0`..`d47`, `.dsd` name) or scalar register `rN`"},
    {OperandKind::VSRC, "descriptor (`d0`..`d47`, `.dsd` name) or scalar register `rN` (broadcast)"},
    {OperandKind::IMM16, "expression, -32768..32767"},
    {OperandKind::UIMM16, "expression, 0..65535"},
    {OperandKind::IMM32, "expression or float literal (fp32 bit pattern), -2^31..2^32-1"},
    {OperandKind::SHAMT, "expression, 0..31"},
    {OperandKind::LABEL, "code label (or an instruction index)"},
    {OperandKind::MEM, "`[rN]`, `[rN + expr]`, `[rN - expr]`, `[expr]`; offset -32768..32767"},
    {OperandKind::REG_OR_IMM, "`rN` or expression -32768..32767"},
    {OperandKind::DIM, "expression, 0..3"},
    {OperandKind::TASKID, "task name or expression, 0..63"},
    {OperandKind::QUEUEID, "expression, 0..7"},
    {OperandKind::COLORID, "expression, 0..31 (0..23 routable)"},
    {OperandKind::STR, "string literal `\"...\"`"},
};

std::string escape_cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else out.push_back(c);
  }
  return out;
}

}  // namespace

std::string instruction_syntax(const InsnInfo& in) {
  std::string out(in.mnemonic);
  const bool vector = is_vector(in.timing);
  if (vector) out += "[.async]";
  for (int i = 0; i < in.num_operands; ++i)
    out += fmt::format("{}{}", i ? ", " : " ", operand_kind_name(in.operands[static_cast<size_t>(i)]));
  if (vector) out += "[, ut=N][, priority=P][, activate=T|unblock=T]";
  return out;
}

std::string instruction_reference_markdown(const std::function<std::string(Timing)>& cost) {
  std::string out;
  out += "Operand kinds:\n\n| kind | bits | written as |\n|---|---|---|\n";
  for (const KindDoc& k : kKindDocs)
    out += fmt::format("| `{}` | {} | {} |\n", escape_cell(operand_kind_name(k.kind)), operand_width(k.kind), k.syntax);
  out += "\nThe cost column comes from the architecture profiles (`wsemu info`): cycles for a scalar\n"
         "timing class; for a vector class (`V_*`), elements per cycle, so that a vector operation\n"
         "over n elements streams in about n / width cycles (the exact rule is in emulator/README.md).\n";
  for (const Family& f : kFamilies) {
    out += fmt::format("\n### {} (opcodes 0x{:02X}xx)\n\n", f.title, f.high_byte);
    out += "| syntax | opcode | timing class | cost | meaning |\n|---|---|---|---|---|\n";
    for (const InsnInfo& in : instruction_table()) {
      if (in.encoding >> 8 != f.high_byte) continue;
      out += fmt::format("| `{}` | `0x{:04X}` | {} | {} | {} |\n", escape_cell(instruction_syntax(in)), in.encoding,
                         timing_name(in.timing), escape_cell(cost(in.timing)), escape_cell(in.description));
    }
  }
  return out;
}

std::string instruction_reference_text() {
  std::string out;
  for (const InsnInfo& in : instruction_table())
    out += fmt::format("{:<58} 0x{:04X}  {:<12} {}\n", instruction_syntax(in), in.encoding, timing_name(in.timing),
                       in.description);
  return out;
}

}  // namespace wsemu::isa
