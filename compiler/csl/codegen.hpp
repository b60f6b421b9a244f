// Internal to the CSL front end: the state of one function being generated, and the small
// pieces every part of code generation uses (registers, temporaries, labels, element places).
// Code generation is split by concept: codegen.cpp (values, expressions, element places),
// statements.cpp (statements), calls.cpp (function instances and calls), vector_ops.cpp (DSD
// operands and vector builtins).
//
// Register convention of generated code (each function's code follows it; see compiler/README.md):
// r1..r7 hold expression temporaries (r1 also the return value), r8..r12 hold run-time locals and
// loop variables (parameter k arrives in r(8+k)), r13..r15 the scalar operands of asynchronous
// vector ops (read for every element while the task goes on); r0 is the data task's wavelet. A
// call saves the caller's live registers in its spill area and restores them after.
#pragma once

#include <array>
#include <map>
#include <set>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/csl/compiler_impl.hpp"

namespace wsemu::compiler::csl {

struct FnGen {
  Program* p = nullptr;
  FnInst* fi = nullptr;
  int temp_top = 1;                 // next free temporary r1..r7
  std::array<bool, 16> pool{};      // r8..r12 in use
  struct Loop {
    std::string brk, cont;
  };
  std::vector<Loop> loops;
  std::string ret_label;
  TypeRef ret_type;
  std::string spill;                // name of the spill area
  int spill_words = 0;
  int dsr_temp = 0;                 // expression-temporary descriptor registers used by this statement
  std::set<std::string> addressed;  // names whose address the body takes (`&x`): such locals live in memory
  // @load_to_dsr(dsr, dsd, .{ .async = true, .activate / .unblock = t }): the completion action
  // (", activate=ID") of the asynchronous vector ops of this function that use the DSR, until
  // it is loaded again.
  std::map<std::string, std::string> dsr_on_done;
  std::map<std::string, int64_t> dsr_ut;  // and its microthread (@load_to_dsr .ut_id)
};

// The names `&name` is applied to anywhere in these statements.
void collect_addressed(const std::vector<StmtPtr>& body, std::set<std::string>& out);

inline std::string reg(int r) { return "r" + std::to_string(r); }
inline bool is_temp(int r) { return r >= 1 && r <= 7; }

inline int alloc_temp(Ctx& ctx, Span at) {
  FnGen& g = *ctx.gen;
  if (g.temp_top > 7) fail(at, "unsupported: expression needs more than 7 live temporaries; split it into statements");
  return g.temp_top++;
}

inline void free_temp(Ctx& ctx, int r) {
  if (is_temp(r) && r == ctx.gen->temp_top - 1) --ctx.gen->temp_top;
}

// A register of r8..r12 for a run-time local or loop variable.
inline int alloc_pool(Ctx& ctx, Span at, const std::string& what) {
  for (int r = 8; r <= kLastLocalReg; ++r)
    if (!ctx.gen->pool[size_t(r)]) {
      ctx.gen->pool[size_t(r)] = true;
      return r;
    }
  fail(at, "unsupported: more than 5 run-time locals live at once in a function (" + what + ")");
}

inline std::string new_label(Ctx& ctx, const std::string& hint) {
  return "L$" + std::to_string(ctx.gen->p->label_counter++) + "_" + hint;
}

inline Value runtime(int r, TypeRef t) {
  Value v;
  v.k = Value::K::RUNTIME;
  v.i = r;
  v.type = std::move(t);
  return v;
}

inline uint32_t f32_bits(double v) {
  float f = float(v);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%X", v);
  return buf;
}

// CSL's 16-bit integers wrap (u16 0xFFFF + 1 == 0); the scalar ISA computes in 32 bits, so a
// sum, difference, product, left shift, signed quotient (-32768 / -1), negation or complement of
// 16-bit operands is marked `unwrapped` and wrapped (andi for unsigned, shli/sari for signed)
// only where its upper bits would show: comparisons, >>, / and %, widening @as, and when it
// becomes a local, an argument or a return value. An i8 or u8 result is wrapped at once: it is
// kept in a 16-bit word, which st16 would not cut to 8 bits.
// wrap_into writes the wrapped value into dst (for u16 in place of the mov it replaces).
bool needs_wrap(const Value& v);
void wrap_into(Compiler& c, int dst, const Value& v, Span at, Ctx& ctx);
// v wrapped in its own register (an unwrapped value is always in a temporary).
Value wrapped(Compiler& c, const Value& v, Span at, Ctx& ctx);

// Loads a value into a register (a temporary unless it is one already).
int value_reg(Compiler& c, const Value& v0, const TypeRef& t, Span at, Ctx& ctx);
// dst = v: `li` for a comptime value, `mov` for a run-time one.
void load_into(Compiler& c, int dst, const Value& v, const TypeRef& t, Span at, Ctx& ctx);

// The place of an array element at run time: a global array plus a constant or register byte
// offset, or an address in a register.
struct ElementRef {
  GlobalVar* g = nullptr;  // a global array, or null: an array at the address in base_reg
  int base_reg = -1;
  int addr_reg = -1;       // byte offset register (relative to the array), or -1
  int64_t const_bytes = 0;
  TypeRef elem;
};

ElementRef element_ref(Compiler& c, const Value& base, const std::vector<Value>& idx, const std::vector<Span>& spans, Span at, Ctx& ctx);
std::string mem_operand(const ElementRef& r);   // "[r3 + buf]", "[buf + 8]", ...
std::string load_mnemonic(const TypeRef& t, Span at);
// `.priority = .{ .high = true }` (or .medium, .low): the assembler's priority= level.
std::string microthread_priority(const Value& v, Span at);

}  // namespace wsemu::compiler::csl
