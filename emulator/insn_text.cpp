#include "emulator/insn_text.hpp"

#include <fmt/format.h>

namespace wsemu::emu {

std::string instruction_text(const isa::Instruction& insn) {
  using K = isa::OperandKind;
  const isa::InsnInfo& info = isa::info(insn.op);
  std::string s(info.mnemonic);
  if (insn.async.async) s += ".async";
  for (int i = 0; i < info.num_operands; ++i) {
    const isa::Operand& o = insn.operands[i];
    std::string t;
    switch (info.operands[i]) {
      case K::REG: t = fmt::format("r{}", o.value); break;
      case K::DSR: t = fmt::format("d{}", o.value); break;
      case K::VDST:
      case K::VSRC: t = fmt::format("{}{}", o.is_reg ? "r" : "d", o.value); break;
      case K::REG_OR_IMM: t = o.is_reg ? fmt::format("r{}", o.value) : fmt::format("{}", o.value); break;
      case K::MEM:
        t = o.is_reg ? fmt::format("[r{} + {}]", o.reg, o.value) : fmt::format("[{}]", o.value);
        break;
      case K::IMM32: t = fmt::format("{:#x}", uint32_t(o.value)); break;
      case K::LABEL: t = fmt::format("@{}", o.value); break;
      case K::STR: t = fmt::format("str#{}", o.value); break;
      default: t = fmt::format("{}", o.value); break;
    }
    s += (i == 0 ? " " : ", ") + t;
  }
  if (insn.async.async || insn.async.on_done != isa::OnDone::NONE) {
    s += fmt::format(" {{ut {}", insn.async.microthread);
    if (insn.async.on_done == isa::OnDone::ACTIVATE) s += fmt::format(", activate {}", insn.async.task);
    if (insn.async.on_done == isa::OnDone::UNBLOCK) s += fmt::format(", unblock {}", insn.async.task);
    s += "}";
  }
  return s;
}

}  // namespace wsemu::emu
