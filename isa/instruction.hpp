// Instructions of the wsemu ISA: the table derived from isa.def, the decoded form, and the
// 64-bit encoding.
//
// Contract: every instruction is one 64-bit word. Bits [15:0] hold the opcode from isa.def;
// operands follow from bit 16 upward, in assembly order, each at the width its OperandKind
// gives; vector operations (timing classes V_*) end with a 12-bit completion field (async
// flag, microthread, on-completion action and task). encode() and decode() are exact inverses
// for every instruction that passes validate(); decode() never throws on garbage, it returns
// std::nullopt. Nothing here knows about the wafer or the assembler's syntax.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace wsemu::isa {

// Operand kinds. The encoded width of each is in operand_width().
enum class OperandKind : uint8_t {
  REG,         // r0..r15
  DSR,         // descriptor register d0..d47
  VDST,        // vector destination: descriptor register, or a scalar register (reduction)
  VSRC,        // vector source: descriptor register or scalar register (broadcast)
  IMM16,       // signed 16-bit immediate
  UIMM16,      // unsigned 16-bit immediate
  IMM32,       // 32-bit immediate (signed or unsigned, also float bit patterns)
  SHAMT,       // shift amount 0..31
  LABEL,       // instruction index 0..65535 (a code label in assembly)
  MEM,         // [rb + imm16] or [imm16]: 1 bit "has base", 4-bit reg, 16-bit signed offset
  REG_OR_IMM,  // a scalar register or a signed 16-bit immediate
  DIM,         // 0..3 (a mem4d dimension, a coordinate axis, or a switch position)
  TASKID,      // task id 0..63
  QUEUEID,     // queue id 0..7
  COLORID,     // color 0..31 (0..23 routable; the rest are kernel errors at run time)
  STR,         // index into the object's string table
};

constexpr int kNumRegs = 16;
constexpr int kNumDsrs = 48;
constexpr int kNumTaskIds = 64;
constexpr int kNumQueues = 8;
constexpr int kNumColors = 32;  // 5-bit color field; the profile says which are routable

int operand_width(OperandKind kind);
std::string_view operand_kind_name(OperandKind kind);

// Timing classes: scalar classes cost cycles, vector classes stream at a SIMD width. The
// numbers live in the architecture profile, never here. Each vector operation has its own
// class, V_<Id>, derived from its VINSN row of isa.def.
#define WSEMU_SCALAR_TIMING_CLASSES(X)                                                       \
  X(SCALAR) X(MULDIV) X(SCALAR_FP) X(SCALAR_FPDIV) X(BRANCH) X(LOAD) X(STORE) X(DSD) X(TASK) \
  X(QUEUE) X(FABRIC) X(DEBUG)

enum class Timing : uint8_t {
#define WSEMU_X(name) name,
  WSEMU_SCALAR_TIMING_CLASSES(WSEMU_X)
#undef WSEMU_X
#define INSN(id, mnem, opc, timing, desc, ...)
#define VINSN(id, mnem, opc, dst_bits, src_bits, desc, ...) V_##id,
#include "isa/isa.def"
#undef VINSN
#undef INSN
};
constexpr int kNumTimingClasses = 0
#define WSEMU_X(name) +1
    WSEMU_SCALAR_TIMING_CLASSES(WSEMU_X)
#undef WSEMU_X
#define INSN(id, mnem, opc, timing, desc, ...)
#define VINSN(id, mnem, opc, dst_bits, src_bits, desc, ...) +1
#include "isa/isa.def"
#undef VINSN
#undef INSN
    ;
std::string_view timing_name(Timing t);
bool is_vector(Timing t);

enum class Opcode : uint16_t {
#define INSN(id, mnem, opc, timing, desc, ...) id,
#include "isa/isa.def"
#undef INSN
};

constexpr int kMaxOperands = 4;

struct InsnInfo {
  Opcode id;
  std::string_view mnemonic;
  uint16_t encoding;  // value of bits [15:0]
  Timing timing;
  std::string_view description;
  uint8_t num_operands;
  std::array<OperandKind, kMaxOperands> operands;
  uint8_t dst_bits = 0;  // vector operations: element width of the destination (16 or 32)
  uint8_t src_bits = 0;  // and of the sources; 0 for scalar operations
};

// The element width (16 or 32 bits) a vector operation reads or writes through operand i
// (0: the destination). The first source of a multiply-add is the accumulator and has the
// destination's width (isa.def).
int element_bits(const InsnInfo& info, int operand);

// The whole table, in isa.def order, indexed by static_cast<int>(Opcode).
std::span<const InsnInfo> instruction_table();
const InsnInfo& info(Opcode op);
const InsnInfo* find_mnemonic(std::string_view mnemonic);  // nullptr when unknown
const InsnInfo* find_encoding(uint16_t encoding);          // nullptr when unknown

// What an asynchronous vector operation does to a task when it completes.
enum class OnDone : uint8_t { NONE = 0, ACTIVATE = 1, UNBLOCK = 2 };

// Microthread priority of an asynchronous vector operation (the SDK's `.priority`): where a
// cycle serves its microthread against the others and the main thread (emulator/README.md).
enum class Priority : uint8_t { LOW = 0, MEDIUM = 1, HIGH = 2 };

// Completion field of vector operations.
struct AsyncSpec {
  bool async = false;     // false: the main thread runs the op to the end before going on
  uint8_t microthread = 0;  // 0..7 (WSE-3 explicit ut; WSE-2 ignores it, the queue implies it)
  OnDone on_done = OnDone::NONE;
  uint8_t task = 0;  // task id the completion activates or unblocks
  Priority priority = Priority::LOW;  // the hardware's default
  friend bool operator==(const AsyncSpec&, const AsyncSpec&) = default;
};

// One decoded operand. Which fields matter depends on the kind:
//   REG, DSR, TASKID, QUEUEID, COLORID, DIM, SHAMT, LABEL, STR, UIMM16: `value`
//   IMM16: `value`; IMM32: `value` (decode gives the unsigned 32-bit pattern)
//   VDST, VSRC: `is_reg` picks scalar register `value` or descriptor register `value`
//   REG_OR_IMM: `is_reg` picks register `value`, else `value` is the signed immediate
//   MEM: `is_reg` says a base register `reg` is present; `value` is the signed offset
struct Operand {
  int64_t value = 0;
  bool is_reg = false;
  uint8_t reg = 0;
  friend bool operator==(const Operand&, const Operand&) = default;
};

struct Instruction {
  Opcode op = Opcode::NOP;
  std::array<Operand, kMaxOperands> operands{};
  AsyncSpec async{};  // only for vector operations
  friend bool operator==(const Instruction&, const Instruction&) = default;
};

// Returns an empty string when every operand is in range for its kind, else a message naming
// the first bad operand (used by the assembler for "value out of range" errors).
std::string validate(const Instruction& insn);

uint64_t encode(const Instruction& insn);  // precondition: validate(insn).empty()
std::optional<Instruction> decode(uint64_t word);

}  // namespace wsemu::isa
