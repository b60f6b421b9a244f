#include "isa/instruction.hpp"

#include <fmt/format.h>

#include <unordered_map>

namespace wsemu::isa {
namespace {

constexpr int kOpcodeBits = 16;
constexpr int kAsyncBits = 14;  // 1 async + 3 microthread + 2 on_done + 6 task + 2 priority
static_assert(kAsyncBits == 1 + 3 + 2 + 6 + 2, "the completion field of vector operations");

constexpr InsnInfo make_info(Opcode id, std::string_view mnem, uint16_t enc, Timing t,
                             std::string_view desc, std::initializer_list<OperandKind> ops,
                             int dst_bits = 0, int src_bits = 0) {
  InsnInfo info{id, mnem, enc, t, desc, static_cast<uint8_t>(ops.size()), {},
                static_cast<uint8_t>(dst_bits), static_cast<uint8_t>(src_bits)};
  int i = 0;
  for (OperandKind k : ops) info.operands[i++] = k;
  return info;
}

using enum OperandKind;
using enum Timing;

const InsnInfo kTable[] = {
#define INSN(id, mnem, opc, timing, desc, ...) \
  make_info(Opcode::id, mnem, opc, timing, desc, {__VA_ARGS__}),
#define VINSN(id, mnem, opc, dst_bits, src_bits, desc, ...) \
  make_info(Opcode::id, mnem, opc, V_##id, desc, {__VA_ARGS__}, dst_bits, src_bits),
#include "isa/isa.def"
#undef VINSN
#undef INSN
};

constexpr std::string_view kTimingNames[] = {
#define WSEMU_X(name) #name,
    WSEMU_SCALAR_TIMING_CLASSES(WSEMU_X)
#undef WSEMU_X
#define INSN(id, mnem, opc, timing, desc, ...)
#define VINSN(id, mnem, opc, dst_bits, src_bits, desc, ...) "V_" #id,
#include "isa/isa.def"
#undef VINSN
#undef INSN
};

int64_t sign_extend(uint64_t v, int bits) {
  const uint64_t m = uint64_t{1} << (bits - 1);
  v &= (uint64_t{1} << bits) - 1;
  return static_cast<int64_t>((v ^ m) - m);
}

bool fits_signed(int64_t v, int bits) {
  return v >= -(int64_t{1} << (bits - 1)) && v < (int64_t{1} << (bits - 1));
}
bool fits_unsigned(int64_t v, int bits) { return v >= 0 && v < (int64_t{1} << bits); }

// The range of each kind, shared by validate() and decode() so that they cannot disagree.
std::string check_operand(OperandKind kind, const Operand& o) {
  auto bad = [&](std::string_view what) {
    return fmt::format("{} operand out of range: {}", operand_kind_name(kind), what);
  };
  switch (kind) {
    case REG:
      return fits_unsigned(o.value, 4) ? "" : bad(fmt::format("r{} (r0..r15)", o.value));
    case DSR:
      return o.value >= 0 && o.value < kNumDsrs ? "" : bad(fmt::format("d{} (d0..d47)", o.value));
    case VDST:
    case VSRC:
      if (o.is_reg) return fits_unsigned(o.value, 4) ? "" : bad(fmt::format("r{}", o.value));
      return o.value >= 0 && o.value < kNumDsrs ? "" : bad(fmt::format("d{}", o.value));
    case IMM16:
      return fits_signed(o.value, 16) ? "" : bad(fmt::format("{} (-32768..32767)", o.value));
    case UIMM16:
    case LABEL:
    case STR:
      return fits_unsigned(o.value, 16) ? "" : bad(fmt::format("{} (0..65535)", o.value));
    case IMM32:
      return o.value >= INT32_MIN && o.value <= UINT32_MAX ? "" : bad(fmt::format("{}", o.value));
    case SHAMT:
      return fits_unsigned(o.value, 5) ? "" : bad(fmt::format("{} (0..31)", o.value));
    case MEM:
      if (o.is_reg && o.reg >= kNumRegs) return bad(fmt::format("base r{}", o.reg));
      return fits_signed(o.value, 16) ? "" : bad(fmt::format("offset {}", o.value));
    case REG_OR_IMM:
      if (o.is_reg) return fits_unsigned(o.value, 4) ? "" : bad(fmt::format("r{}", o.value));
      return fits_signed(o.value, 16) ? "" : bad(fmt::format("{} (-32768..32767)", o.value));
    case DIM:
      return fits_unsigned(o.value, 2) ? "" : bad(fmt::format("{} (0..3)", o.value));
    case TASKID:
      return fits_unsigned(o.value, 6) ? "" : bad(fmt::format("{} (0..63)", o.value));
    case QUEUEID:
      return fits_unsigned(o.value, 3) ? "" : bad(fmt::format("{} (0..7)", o.value));
    case COLORID:
      return fits_unsigned(o.value, 5) ? "" : bad(fmt::format("{} (0..31)", o.value));
  }
  return bad("unknown kind");
}

// Canonical form: fields a kind does not use are zero, so that encode/decode round-trip.
Operand canonical(OperandKind kind, Operand o) {
  switch (kind) {
    case VDST:
    case VSRC:
    case REG_OR_IMM:
      return {o.value, o.is_reg, 0};
    case MEM:
      return {o.value, o.is_reg, o.is_reg ? o.reg : uint8_t{0}};
    case IMM32:
      return {o.value & 0xFFFFFFFF, false, 0};
    default:
      return {o.value, false, 0};
  }
}

struct BitWriter {
  uint64_t word = 0;
  int pos = 0;
  void put(uint64_t v, int bits) {
    word |= (v & ((uint64_t{1} << bits) - 1)) << pos;
    pos += bits;
  }
};

struct BitReader {
  uint64_t word;
  int pos = 0;
  uint64_t get(int bits) {
    const uint64_t v = (word >> pos) & ((uint64_t{1} << bits) - 1);
    pos += bits;
    return v;
  }
};

void put_operand(BitWriter& w, OperandKind kind, const Operand& o) {
  switch (kind) {
    case VDST:
    case VSRC:
      w.put(o.is_reg, 1);
      w.put(static_cast<uint64_t>(o.value), 6);
      return;
    case MEM:
      w.put(o.is_reg, 1);
      w.put(o.reg, 4);
      w.put(static_cast<uint64_t>(o.value), 16);
      return;
    case REG_OR_IMM:
      w.put(o.is_reg, 1);
      w.put(static_cast<uint64_t>(o.value), 16);
      return;
    default:
      w.put(static_cast<uint64_t>(o.value), operand_width(kind));
  }
}

Operand get_operand(BitReader& r, OperandKind kind) {
  Operand o;
  switch (kind) {
    case VDST:
    case VSRC:
      o.is_reg = r.get(1);
      o.value = static_cast<int64_t>(r.get(6));
      return o;
    case MEM:
      o.is_reg = r.get(1);
      o.reg = static_cast<uint8_t>(r.get(4));
      o.value = sign_extend(r.get(16), 16);
      return o;
    case REG_OR_IMM:
      o.is_reg = r.get(1);
      o.value = o.is_reg ? static_cast<int64_t>(r.get(16)) : sign_extend(r.get(16), 16);
      return o;
    case IMM16:
      o.value = sign_extend(r.get(16), 16);
      return o;
    default:
      o.value = static_cast<int64_t>(r.get(operand_width(kind)));
      return o;
  }
}

}  // namespace

int operand_width(OperandKind kind) {
  switch (kind) {
    case REG: return 4;
    case DSR: return 6;
    case VDST:
    case VSRC: return 7;
    case IMM16:
    case UIMM16:
    case LABEL:
    case STR: return 16;
    case IMM32: return 32;
    case SHAMT: return 5;
    case MEM: return 21;
    case REG_OR_IMM: return 17;
    case DIM: return 2;
    case TASKID: return 6;
    case QUEUEID: return 3;
    case COLORID: return 5;
  }
  return 0;
}

std::string_view operand_kind_name(OperandKind kind) {
  switch (kind) {
    case REG: return "reg";
    case DSR: return "dsr";
    case VDST: return "vdst";
    case VSRC: return "vsrc";
    case IMM16: return "imm16";
    case UIMM16: return "uimm16";
    case IMM32: return "imm32";
    case SHAMT: return "shamt";
    case LABEL: return "label";
    case MEM: return "mem";
    case REG_OR_IMM: return "reg|imm16";
    case DIM: return "dim";
    case TASKID: return "task";
    case QUEUEID: return "queue";
    case COLORID: return "color";
    case STR: return "string";
  }
  return "?";
}

std::string_view timing_name(Timing t) { return kTimingNames[static_cast<int>(t)]; }

bool is_vector(Timing t) { return timing_name(t).starts_with("V_"); }

int element_bits(const InsnInfo& info, int operand) {
  const bool accumulator = operand == 1 && info.num_operands == 4;
  return operand == 0 || accumulator ? info.dst_bits : info.src_bits;
}

std::span<const InsnInfo> instruction_table() { return kTable; }

const InsnInfo& info(Opcode op) { return kTable[static_cast<int>(op)]; }

const InsnInfo* find_mnemonic(std::string_view mnemonic) {
  static const auto* index = [] {
    auto* m = new std::unordered_map<std::string_view, const InsnInfo*>;
    for (const InsnInfo& i : kTable) m->emplace(i.mnemonic, &i);
    return m;
  }();
  auto it = index->find(mnemonic);
  return it == index->end() ? nullptr : it->second;
}

const InsnInfo* find_encoding(uint16_t encoding) {
  static const auto* index = [] {
    auto* m = new std::unordered_map<uint16_t, const InsnInfo*>;
    for (const InsnInfo& i : kTable) m->emplace(i.encoding, &i);
    return m;
  }();
  auto it = index->find(encoding);
  return it == index->end() ? nullptr : it->second;
}

std::string validate(const Instruction& insn) {
  const InsnInfo& in = info(insn.op);
  for (int i = 0; i < in.num_operands; ++i) {
    std::string err = check_operand(in.operands[i], insn.operands[i]);
    if (!err.empty()) return fmt::format("{}: operand {}: {}", in.mnemonic, i + 1, err);
  }
  if (is_vector(in.timing)) {
    const AsyncSpec& a = insn.async;
    if (a.microthread > 7) return fmt::format("{}: microthread {} (0..7)", in.mnemonic, a.microthread);
    if (a.task >= kNumTaskIds) return fmt::format("{}: completion task {} (0..63)", in.mnemonic, a.task);
    if (static_cast<int>(a.on_done) > 2) return fmt::format("{}: bad completion action", in.mnemonic);
    if (static_cast<int>(a.priority) > 2) return fmt::format("{}: bad microthread priority", in.mnemonic);
  } else if (insn.async != AsyncSpec{}) {
    return fmt::format("{}: only vector operations take async options", in.mnemonic);
  }
  return "";
}

uint64_t encode(const Instruction& insn) {
  const InsnInfo& in = info(insn.op);
  BitWriter w;
  w.put(in.encoding, kOpcodeBits);
  for (int i = 0; i < in.num_operands; ++i) put_operand(w, in.operands[i], insn.operands[i]);
  if (is_vector(in.timing)) {
    w.put(insn.async.async, 1);
    w.put(insn.async.microthread, 3);
    w.put(static_cast<uint64_t>(insn.async.on_done), 2);
    w.put(insn.async.task, 6);
    w.put(static_cast<uint64_t>(insn.async.priority), 2);
  }
  return w.word;
}

std::optional<Instruction> decode(uint64_t word) {
  BitReader r{word};
  const InsnInfo* in = find_encoding(static_cast<uint16_t>(r.get(kOpcodeBits)));
  if (!in) return std::nullopt;
  Instruction insn;
  insn.op = in->id;
  for (int i = 0; i < in->num_operands; ++i) {
    insn.operands[i] = get_operand(r, in->operands[i]);
    if (!check_operand(in->operands[i], insn.operands[i]).empty()) return std::nullopt;
  }
  if (is_vector(in->timing)) {
    insn.async.async = r.get(1);
    insn.async.microthread = static_cast<uint8_t>(r.get(3));
    const uint64_t action = r.get(2);
    if (action > 2) return std::nullopt;
    insn.async.on_done = static_cast<OnDone>(action);
    insn.async.task = static_cast<uint8_t>(r.get(6));
    const uint64_t priority = r.get(2);
    if (priority > 2) return std::nullopt;
    insn.async.priority = static_cast<Priority>(priority);
  }
  // Bits above the last field must be zero: one word, one meaning.
  if (r.pos < 64 && (word >> r.pos) != 0) return std::nullopt;
  for (int i = 0; i < in->num_operands; ++i)
    insn.operands[i] = canonical(in->operands[i], insn.operands[i]);
  return insn;
}

}  // namespace wsemu::isa
