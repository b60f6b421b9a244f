// The DSD engine of PeCore: vector operations over descriptors, synchronous and asynchronous.
//
// Length: as the hardware takes it, the first source's (src0), else the second's (src1), else
// the destination's, counting mem1d / mem4d / fabric operands only. Every other such operand
// must have at least that many elements (a longer one is used for its first `length`; a
// shorter one is a kernel error). A circular buffer or FIFO adapts (a circular buffer gives its
// ring size only when no other operand gives a length). Element i of an operation reads each
// source's element i (a register source is read anew for every element, so a register
// destination that is also a source accumulates: a reduction), computes, and writes the
// destination's element i. Memory-only synchronous operations run
// in bulk at issue, the main thread then stays busy for startup + ceil(length / width)
// cycles; operations with a fabric or FIFO operand, and every asynchronous one, advance
// cycle by cycle (width elements per cycle, at most one when a fabric or FIFO operand is
// involved) and stall on an empty input or a full output.
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>

#include "emulator/fault.hpp"
#include "isa/fp16.hpp"
#include "emulator/pe_core.hpp"

namespace wsemu::emu {

using isa::DsdKind;
using isa::Opcode;
using Kind = VectorOperand::Kind;

namespace {

float f32(uint32_t v) { return std::bit_cast<float>(v); }
uint32_t u32(float f) { return std::bit_cast<uint32_t>(f); }
float h(uint32_t v) { return isa::fp16_to_fp32(uint16_t(v)); }
uint32_t hb(float f) { return isa::fp32_to_fp16(f); }

// fp32 results are computed in fp32; fp16 results are computed in fp32 and rounded to fp16
// (exact for add, sub, mul; fmach rounds twice). fmacs/fmach/fmachs are fused.
[[gnu::always_inline]] inline uint32_t compute(Opcode op, uint32_t a, uint32_t b, uint32_t c, uint32_t& carry) {
  switch (op) {
    case Opcode::FMACS: return u32(std::fma(f32(b), f32(c), f32(a)));
    case Opcode::FADDS: return u32(f32(a) + f32(b));
    case Opcode::FSUBS: return u32(f32(a) - f32(b));
    case Opcode::FMULS: return u32(f32(a) * f32(b));
    case Opcode::FMOVS: return a;
    case Opcode::FNEGS: return a ^ 0x80000000u;
    case Opcode::FMAXS: return u32(std::fmax(f32(a), f32(b)));
    case Opcode::FABSS: return a & 0x7FFFFFFFu;
    case Opcode::FH2S: return u32(h(a));
    case Opcode::FS2H: return hb(f32(a));
    case Opcode::FMACH: return hb(std::fma(h(b), h(c), h(a)));
    case Opcode::FMACHS: return u32(std::fma(h(b), h(c), f32(a)));
    case Opcode::FADDH: return hb(h(a) + h(b));
    case Opcode::FSUBH: return hb(h(a) - h(b));
    case Opcode::FMULH: return hb(h(a) * h(b));
    case Opcode::FMOVH: return a & 0xFFFF;
    case Opcode::FNEGH: return (a ^ 0x8000u) & 0xFFFF;
    case Opcode::FMAXH: return hb(std::fmax(h(a), h(b)));
    case Opcode::FABSH: return a & 0x7FFFu;
    case Opcode::MOV16: return a & 0xFFFF;
    case Opcode::MOV32: return a;
    case Opcode::ADD16: return (a + b) & 0xFFFF;
    case Opcode::SUB16: return (a - b) & 0xFFFF;
    case Opcode::AND16: return a & b & 0xFFFF;
    case Opcode::OR16: return (a | b) & 0xFFFF;
    case Opcode::XOR16: return (a ^ b) & 0xFFFF;
    case Opcode::SLL16: return (a << (b & 15)) & 0xFFFF;
    case Opcode::SLR16: return (a & 0xFFFF) >> (b & 15);
    case Opcode::SAR16: return uint32_t(int32_t(int16_t(a)) >> (b & 15)) & 0xFFFF;
    case Opcode::ADDC16: {
      const uint32_t s = (a & 0xFFFF) + (b & 0xFFFF) + carry;
      carry = s >> 16;
      return s & 0xFFFF;
    }
    default: return 0;
  }
}

uint32_t mask(uint32_t v, uint8_t bits) { return bits == 16 ? v & 0xFFFF : v; }

int positive_mod(int64_t a, int64_t m) { return int(((a % m) + m) % m); }

}  // namespace

VectorOperand PeCore::resolve_operand(const isa::Operand& o, bool is_dst, uint8_t bits) const {
  VectorOperand v;
  v.bits = bits;
  v.index = uint8_t(o.value);
  if (o.is_reg) {
    v.kind = Kind::REG;
    return v;
  }
  const isa::Descriptor& d = dsrs[size_t(o.value) % isa::kNumDsrs];
  v.d = d;
  switch (d.kind) {
    case DsdKind::NONE: kernel_error(fmt::format("d{} holds no descriptor", o.value));
    case DsdKind::MEM1D:
    case DsdKind::MEM4D:
    case DsdKind::CIRCBUF: v.kind = Kind::MEM; break;
    case DsdKind::FABIN:
      if (is_dst) kernel_error(fmt::format("d{} is a fabin descriptor and cannot be a destination", o.value));
      v.kind = Kind::FABIN;
      break;
    case DsdKind::FABOUT:
      if (!is_dst) kernel_error(fmt::format("d{} is a fabout descriptor and cannot be a source", o.value));
      v.kind = Kind::FABOUT;
      break;
    case DsdKind::FIFO: v.kind = Kind::FIFO; break;
  }
  // A 32-bit FIFO holds one element a slot whatever the operation's width, as a queue holds one
  // wavelet: a 16-bit element is stored zero-extended and read back from the low half (the
  // memcpy firmware's device-to-host stream FIFO takes 16- and 32-bit pushes in one order).
  const bool fifo_slot = d.kind == DsdKind::FIFO && d.elem_bits == 32 && bits == 16;
  // A 32-bit operation over a 16-bit memory descriptor moves 32-bit elements from its base, its
  // length and strides counted in them (the SDK's DSDs take their element width from the
  // operation: fft-1d-2d moves f16 complex pairs with @fmovs).
  if ((d.kind == DsdKind::MEM1D || d.kind == DsdKind::MEM4D) && d.elem_bits == 16 && bits == 32) {
    if (d.base % 4)
      kernel_error(fmt::format("d{}: a 32-bit operation over a 16-bit descriptor at the odd halfword {:#x}", o.value, d.base));
    v.d.elem_bits = 32;
    return v;
  }
  // A fabric descriptor has no element type of its own: each wavelet is one element of the
  // operation's width (the SDK's fabin_dsd / fabout_dsd name none; spmv-hypersparse reads one
  // fabin DSR with @mov16 and @mov32).
  if (d.kind == DsdKind::FABIN || d.kind == DsdKind::FABOUT) {
    v.d.elem_bits = bits;
    return v;
  }
  if (d.elem_bits != bits && !fifo_slot)
    kernel_error(fmt::format("d{} holds {}-bit elements, but this operand is {}-bit", o.value, d.elem_bits, bits));
  if (d.kind == DsdKind::CIRCBUF && d.length == 0)
    kernel_error(fmt::format("d{}: circular buffer of 0 elements", o.value));
  if (d.kind == DsdKind::FIFO && d.length == 0) kernel_error(fmt::format("d{}: FIFO of capacity 0", o.value));
  return v;
}

uint32_t PeCore::operand_length(const VectorOperand& v) const {
  if (v.d.kind == DsdKind::MEM4D) {
    uint32_t n = v.d.extents[0];
    for (int i = 1; i < 4; ++i) n *= v.d.extents[i] ? v.d.extents[i] : 1;
    return n;
  }
  return v.d.length;
}

uint32_t PeCore::element_address(const VectorOperand& v, uint32_t i) const {
  const isa::Descriptor& d = v.d;
  const int64_t eb = d.elem_bits / 8;
  int64_t offset = 0;
  switch (d.kind) {
    case DsdKind::MEM1D: offset = int64_t(i) * d.stride; break;
    case DsdKind::MEM4D: {
      int64_t rest = i;
      for (int k = 0; k < 4; ++k) {
        const int64_t e = d.extents[k] ? d.extents[k] : 1;
        offset += (rest % e) * d.strides[k];
        rest /= e;
      }
      break;
    }
    case DsdKind::CIRCBUF: offset = positive_mod(int64_t(d.head) + int64_t(i) * d.stride, d.length); break;
    default: break;
  }
  const int64_t a = int64_t(d.base) + offset * eb;
  if (a < 0 || a >= int64_t(sram.size()))
    kernel_error(fmt::format("d{}: element {} is at address {}, outside SRAM", v.index, i, a));
  return uint32_t(a);
}

// A synchronous operation over memory and registers runs all its elements at issue. When its
// memory operands are mem1d and every element they touch is inside SRAM, aligned and (for the
// destination) above the code, no element can fault: the loop then walks precomputed
// addresses instead of resolving each operand per element. The order of reads and writes is
// element() exactly (element i reads every source, then writes; register sources are read
// anew), so overlapping operands and register reductions give the same results. Anything
// else (mem4d, circular buffers, an element that would fault) returns false and goes element by
// element, so that a fault names the same element with the same effects before it.
namespace {
struct Lane {
  uint32_t addr = 0;
  int32_t step = 0;  // bytes per element
  uint8_t reg = 0;
  uint8_t bits = 32;
  bool is_reg = false;
};

// One loop per opcode, so that compute() folds to the operation itself.
template <Opcode OP>
void memory_loop(PeCore& core, VectorOp& op, std::array<Lane, 4>& lanes) {
  Sram& sram = core.sram;
  auto& regs = core.regs;
  const int n = op.num_operands;
  const Lane dst = lanes[0];
  uint32_t dst_addr = dst.addr;
  uint32_t carry = op.carry;
  for (uint32_t e = op.done; e < op.length; ++e) {
    std::array<uint32_t, 3> src{};
    for (int i = 1; i < n; ++i) {
      Lane& l = lanes[i];
      uint32_t x;
      if (l.is_reg) {
        x = regs[l.reg];
      } else {
        x = l.bits == 16 ? sram.load16(l.addr) : sram.load32(l.addr);
        l.addr += uint32_t(l.step);
      }
      src[i - 1] = mask(x, l.bits);
    }
    const uint32_t res = mask(compute(OP, src[0], src[1], src[2], carry), dst.bits);
    if (dst.is_reg) {
      regs[dst.reg] = res;
    } else {
      if (dst.bits == 16)
        sram.store16(dst_addr, uint16_t(res));
      else
        sram.store32(dst_addr, res);
      dst_addr += uint32_t(dst.step);
    }
  }
  op.carry = carry;
}

// The common case of the above: every operand 32-bit and every source element inside SRAM's
// storage once the destination's stores have grown it (below). Then a lane is a pointer into
// the storage, a register source is read once (the destination is memory, so no element
// changes it), and an absent source reads a zero, as above; element i still reads every source
// before it writes, so overlapping operands give the same results.
struct StoredLanes {
  std::array<uint8_t*, 4> p{};  // [0] the destination
  std::array<int32_t, 4> step{};
};

template <Opcode OP>
[[gnu::always_inline]] inline void stored_loop_body(uint32_t count, StoredLanes l) {
  uint32_t carry = 0;  // only addc16 uses it, never 32-bit
  for (uint32_t e = 0; e < count; ++e) {
    uint32_t a, b, c;
    std::memcpy(&a, l.p[1], 4);
    std::memcpy(&b, l.p[2], 4);
    std::memcpy(&c, l.p[3], 4);
    const uint32_t res = compute(OP, a, b, c, carry);
    std::memcpy(l.p[0], &res, 4);
    for (int i = 0; i < 4; ++i) l.p[i] += l.step[i];
  }
}

template <Opcode OP>
void stored_loop(uint32_t count, const StoredLanes& l) {
  stored_loop_body<OP>(count, l);
}

#if defined(__x86_64__) && defined(__GNUC__)
// Without -mfma, std::fma is a call into libm per element (a third of a dense fmacs); with the
// instruction, the same fused, once-rounded result inline. Chosen at run time by the CPU.
[[gnu::target("fma")]] void stored_loop_fmacs_fma(uint32_t count, const StoredLanes& l) {
  stored_loop_body<Opcode::FMACS>(count, l);
}
const bool kCpuHasFma = __builtin_cpu_supports("fma");
#endif

bool run_stored_op(PeCore& core, VectorOp& op, const std::array<Lane, 4>& lanes) {
  Sram& sram = core.sram;
  const int n = op.num_operands;
  if (lanes[0].is_reg) return false;
  // A destination past the storage grows it as its stores would have, element by element
  // (the capacity the host sees follows the same steps); the bytes it adds are zeros, which is
  // what a source read there gives before the store. A source past the storage after that
  // reads zeros all along: the element loop above does that.
  auto highest = [&](const Lane& lane) {
    return std::max<int64_t>(lane.addr, int64_t(lane.addr) + int64_t(op.length - 1) * lane.step) + 4;
  };
  const uint32_t dst_end = uint32_t(highest(lanes[0]));
  const int64_t stored_after = sram.stored_bytes_after_store(dst_end);
  for (int i = 0; i < n; ++i) {
    if (lanes[i].bits != 32) return false;
    if (i > 0 && !lanes[i].is_reg && highest(lanes[i]) > stored_after) return false;
  }
  if (dst_end > sram.stored_bytes())
    for (uint32_t e = op.done; e < op.length; ++e) {
      const uint32_t end = uint32_t(int64_t(lanes[0].addr) + int64_t(e) * lanes[0].step) + 4;
      if (end > sram.stored_bytes()) sram.grow_for_store(end);
    }
  StoredLanes l;
  std::array<uint32_t, 4> held{};  // register sources, and the zero of an absent one
  for (int i = 0; i < 4; ++i) l.p[i] = reinterpret_cast<uint8_t*>(&held[i]);
  for (int i = 0; i < n; ++i) {
    const Lane& lane = lanes[i];
    if (lane.is_reg) {
      held[i] = core.regs[lane.reg];
      continue;
    }
    l.p[i] = sram.stored() + lane.addr;
    l.step[i] = lane.step;
  }
  const uint32_t count = op.length - op.done;
  switch (op.op) {
    case Opcode::FMACS:
#if defined(__x86_64__) && defined(__GNUC__)
      if (kCpuHasFma) {
        stored_loop_fmacs_fma(count, l);
        break;
      }
#endif
      stored_loop<Opcode::FMACS>(count, l);
      break;
#define WSEMU_STORED_LOOP(name) \
  case Opcode::name: stored_loop<Opcode::name>(count, l); break;
    WSEMU_STORED_LOOP(FADDS) WSEMU_STORED_LOOP(FSUBS) WSEMU_STORED_LOOP(FMULS) WSEMU_STORED_LOOP(FMOVS)
    WSEMU_STORED_LOOP(FNEGS) WSEMU_STORED_LOOP(FMAXS) WSEMU_STORED_LOOP(FABSS) WSEMU_STORED_LOOP(MOV32)
#undef WSEMU_STORED_LOOP
    default: return false;
  }
  return true;
}

bool run_memory_op(PeCore& core, VectorOp& op) {
  const Sram& sram = core.sram;
  const int n = op.num_operands;
  std::array<Lane, 4> lanes{};
  bool fast = op.length > 0;
  for (int i = 0; i < n && fast; ++i) {
    const VectorOperand& v = op.operands[i];
    Lane& l = lanes[i];
    l.bits = v.bits;
    l.reg = uint8_t(v.index & 15);
    if (v.kind == Kind::REG) {
      l.is_reg = true;
      continue;
    }
    if (v.kind != Kind::MEM || v.d.kind != DsdKind::MEM1D || v.d.elem_bits != v.bits) return false;
    const int64_t eb = v.bits / 8;
    const int64_t first = int64_t(v.d.base), last = first + int64_t(op.length - 1) * v.d.stride * eb;
    const int64_t lo = std::min(first, last), hi = std::max(first, last);
    fast = lo >= 0 && hi + eb <= int64_t(sram.size()) && first % eb == 0 && (i > 0 || lo >= sram.code_bytes());
    l.addr = uint32_t(first);
    l.step = int32_t(v.d.stride * eb);
  }
  if (!fast) return false;
  if (run_stored_op(core, op, lanes)) {
    core.stats.vector_elements += op.length - op.done;
    op.done = op.length;
    return true;
  }
  switch (op.op) {
#define WSEMU_MEMORY_LOOP(name) \
  case Opcode::name: memory_loop<Opcode::name>(core, op, lanes); break;
    WSEMU_MEMORY_LOOP(FMACS) WSEMU_MEMORY_LOOP(FADDS) WSEMU_MEMORY_LOOP(FSUBS) WSEMU_MEMORY_LOOP(FMULS)
    WSEMU_MEMORY_LOOP(FMOVS) WSEMU_MEMORY_LOOP(FNEGS) WSEMU_MEMORY_LOOP(FMAXS) WSEMU_MEMORY_LOOP(FABSS)
    WSEMU_MEMORY_LOOP(FH2S) WSEMU_MEMORY_LOOP(FS2H) WSEMU_MEMORY_LOOP(FMACH) WSEMU_MEMORY_LOOP(FMACHS)
    WSEMU_MEMORY_LOOP(FADDH) WSEMU_MEMORY_LOOP(FSUBH) WSEMU_MEMORY_LOOP(FMULH) WSEMU_MEMORY_LOOP(FMOVH)
    WSEMU_MEMORY_LOOP(FNEGH) WSEMU_MEMORY_LOOP(FMAXH) WSEMU_MEMORY_LOOP(FABSH) WSEMU_MEMORY_LOOP(MOV16)
    WSEMU_MEMORY_LOOP(MOV32) WSEMU_MEMORY_LOOP(ADD16) WSEMU_MEMORY_LOOP(SUB16) WSEMU_MEMORY_LOOP(AND16)
    WSEMU_MEMORY_LOOP(OR16) WSEMU_MEMORY_LOOP(XOR16) WSEMU_MEMORY_LOOP(SLL16) WSEMU_MEMORY_LOOP(SLR16)
    WSEMU_MEMORY_LOOP(SAR16) WSEMU_MEMORY_LOOP(ADDC16)
#undef WSEMU_MEMORY_LOOP
    default: return false;  // element() knows every other case
  }
  core.stats.vector_elements += op.length - op.done;
  op.done = op.length;
  return true;
}
}  // namespace

void PeCore::issue_vector(const isa::Instruction& insn, const Context& ctx, CycleResult& r) {
  const ArchProfile& profile = *ctx.profile;
  const isa::InsnInfo& info = isa::info(insn.op);
  VectorOp op{.num_operands = info.num_operands, .task = main.task, .op = insn.op,
               .width = uint16_t(std::max(1, profile.simd_width(info.timing))), .stall = {}, .pc = main.pc,
               .async = insn.async};
  bool have_length = false;
  int first_ring = -1;  // a circular buffer gives the length only when nothing else does
  auto gives_length = [](const VectorOperand& v) {
    return v.kind != Kind::REG && v.kind != Kind::FIFO && v.d.kind != DsdKind::CIRCBUF;
  };
  for (int i = 0; i < info.num_operands; ++i) {
    VectorOperand& v = op.operands[i];
    v = resolve_operand(insn.operands[i], i == 0, uint8_t(isa::element_bits(info, i)));
    if (v.kind == Kind::FABIN || v.kind == Kind::FABOUT || v.kind == Kind::FIFO) op.streaming = true;
    if (v.kind == Kind::MEM && v.d.kind == DsdKind::CIRCBUF && first_ring < 0) first_ring = i;
  }
  // The hardware's order (the SDK's allreduce library, pe.csl "Length of the vector
  // instruction"): src0's length, else src1's, else the destination's. The SDK's cholesky relies
  // on it: @fmacs(row, row, col, s) runs for the row it cut with @set_dsd_length, not for the
  // column's full extent, whose tail lies past the tile.
  for (int k = 1; k <= info.num_operands && !have_length; ++k) {
    const VectorOperand& v = op.operands[k % info.num_operands];
    if (!gives_length(v)) continue;
    op.length = operand_length(v);
    have_length = true;
  }
  // A longer operand is used for its first `length` elements. A shorter memory one the hardware
  // would run past the end of; wsemu stops there. A fabric one has no end to run past: it moves
  // `length` wavelets (spmv-hypersparse sends a buffer of run-time length through its fabout DSD
  // of extent 1).
  for (int i = 0; i < info.num_operands && have_length; ++i) {
    const VectorOperand& v = op.operands[i];
    if (!gives_length(v) || v.kind == Kind::FABIN || v.kind == Kind::FABOUT) continue;
    const uint32_t len = operand_length(v);
    if (len < op.length)
      kernel_error(fmt::format("{}: operand d{} has {} elements, the operation {}", info.mnemonic, v.index, len,
                               op.length));
  }
  if (!have_length && first_ring >= 0) {
    op.length = op.operands[first_ring].d.length;
    have_length = true;
  }
  // Only registers into a FIFO: one element (a scalar pushed).
  bool scalars_to_fifo = op.operands[0].kind == Kind::FIFO;
  for (int i = 1; i < info.num_operands; ++i) scalars_to_fifo = scalars_to_fifo && op.operands[i].kind == Kind::REG;
  if (!have_length && scalars_to_fifo) {
    op.length = 1;
    have_length = true;
  }
  // FIFO to FIFO in the background: a forwarder without end, as the SDK's forwarders into the host
  // stream mean it (pipeline-03's edge PEs: a 0x7FFF-element fabout, which wsemu's firmware FIFO
  // stands in for). Synchronous, it would hold the main thread for ever: still an error.
  bool fifos_only = true;
  for (int i = 0; i < info.num_operands; ++i) fifos_only = fifos_only && op.operands[i].kind == Kind::FIFO;
  if (!have_length && fifos_only && insn.async.async) {
    op.length = UINT32_MAX;
    have_length = true;
  }
  if (!have_length)
    kernel_error(fmt::format("{}: a vector operation needs a memory or fabric descriptor to give its length{}",
                             info.mnemonic, fifos_only ? " (FIFO to FIFO runs without end only with .async)" : ""));

  // Queues: bind on first use, check the color, and keep concurrent operations apart.
  int fabin_queue = -1, fabout_queue = -1;
  for (int i = 0; i < info.num_operands; ++i) {
    const VectorOperand& v = op.operands[i];
    if (v.kind == Kind::FABIN) {
      const int q = v.d.queue & 7;
      if (iq[q].color < 0) bind_input_queue(q, v.d.color, profile);
      if (iq[q].color != v.d.color)
        kernel_error(fmt::format("d{} reads color {} from input queue {}, which is bound to color {}", v.index,
                                 v.d.color, q, iq[q].color),
                     v.d.color);
      if (fabin_queue == q) kernel_error(fmt::format("{}: two fabin operands on input queue {}", info.mnemonic, q));
      if (fabin_queue < 0) fabin_queue = q;
    } else if (v.kind == Kind::FABOUT) {
      const int q = v.d.queue & 7;
      if (oq[q].color < 0) bind_output_queue(q, v.d.color, profile);
      // On wse2 an output queue carries the color of each fabout that pushes into it (the SDK's
      // stencil libraries send four colors through one queue); wse3 binds one color per queue.
      if (oq[q].color != v.d.color && profile.data_task_by_queue)
        kernel_error(fmt::format("d{} sends color {} through output queue {}, which is bound to color {}",
                                 v.index, v.d.color, q, oq[q].color),
                     v.d.color);
      fabout_queue = q;
    }
  }
  // Only when this op uses a queue, and only the running ops (their bits, not their lines: at
  // a large fabric each op's line is a miss, and a memory-only op would read all nine).
  for (uint32_t m = fabin_queue >= 0 || fabout_queue >= 0 ? ops_active : 0u; m; m &= m - 1) {
    const int s = __builtin_ctz(m);
    for (const VectorOperand& v : ops[s].operands) {
      const int q = v.d.queue & 7;
      if ((v.kind == Kind::FABIN && q == fabin_queue) || (v.kind == Kind::FABOUT && q == fabout_queue))
        kernel_error(fmt::format("{}: {} queue {} is already used by `{}` (pc {}) still running on {}",
                                 info.mnemonic, v.kind == Kind::FABIN ? "input" : "output", q,
                                 isa::info(ops[s].op).mnemonic, ops[s].pc,
                                 s == kMainThreadOp ? std::string("the main thread") : fmt::format("microthread {}", s)));
    }
  }
  // A circular buffer's next operation starts where this one ends; so does a mem1d descriptor's
  // with the save-address flag (its base moves past the elements this operation covers).
  for (int i = 0; i < info.num_operands; ++i) {
    const VectorOperand& v = op.operands[i];
    if (v.kind == Kind::MEM && v.d.kind == DsdKind::CIRCBUF) {
      isa::Descriptor& live = dsrs[v.index % isa::kNumDsrs];
      live.head = uint32_t(positive_mod(int64_t(live.head) + int64_t(op.length) * live.stride, live.length));
    } else if (v.kind == Kind::MEM && v.d.kind == DsdKind::MEM1D && v.d.save_address) {
      isa::Descriptor& live = dsrs[v.index % isa::kNumDsrs];
      live.base = uint16_t(int64_t(live.base) + int64_t(op.length) * live.stride * (v.d.elem_bits / 8));
    }
  }

  const uint64_t startup = uint64_t(profile.vector_startup_cycles);
  uint64_t occupied = 1;
  if (insn.async.async) {
    int ut = insn.async.microthread;
    if (!profile.explicit_microthreads) ut = fabout_queue >= 0 ? fabout_queue : fabin_queue >= 0 ? fabin_queue : ut;
    if (ut >= profile.microthreads)
      kernel_error(fmt::format("{}: microthread {} does not exist ({} microthreads)", info.mnemonic, ut,
                               profile.microthreads));
    if (ops[ut].active)
      kernel_error(fmt::format("{}: microthread {} is still running `{}` issued at pc {}", info.mnemonic, ut,
                               isa::info(ops[ut].op).mnemonic, ops[ut].pc));
    op.active = true;
    op.ready = ctx.now + startup;
    ops[ut] = op;
    ops_active |= uint16_t(1u << ut);
    ++stats.async_ops;
  } else if (!op.streaming) {
    if (!run_memory_op(*this, op))
      while (op.done < op.length) element(op, ctx);  // memory and registers only: cannot stall
    finish_op(op, false, ctx);
    occupied = startup + (uint64_t(op.length) + op.width - 1) / op.width;
  } else {
    op.active = true;
    op.ready = ctx.now + startup;
    ops[kMainThreadOp] = op;
    ops_active |= uint16_t(1u << kMainThreadOp);
    main.in_sync_op = true;
  }
  ++stats.instructions;
  ++stats.busy_cycles;
  r.progressed = true;
  if (ctx.events) {
    TraceEvent& e = ctx.events->add(ctx, TraceKind::INSTRUCTION);
    e.pc = main.pc;
    e.task = uint8_t(main.task);
  }
  main.busy_until = ctx.now + std::max<uint64_t>(occupied, 1);
  ++main.pc;
}

void PeCore::step_op(int slot, const Context& ctx, CycleResult& r) {
  VectorOp& op = ops[slot];
  if (op.ready > ctx.now) {
    r.progressed = true;  // startup overhead counting down
    return;
  }
  const int budget = op.streaming ? 1 : op.width;
  int processed = 0;
  bool stalled = false;
  for (; processed < budget && op.done < op.length; ++processed) {
    const ElementResult e = element(op, ctx);
    if (e == ElementResult::ENDED_BY_CONTROL) {
      r.progressed = true;
      finish_op(op, true, ctx);
      if (slot == kMainThreadOp) main.in_sync_op = false;
      return;
    }
    if (e == ElementResult::STALLED) {
      stalled = true;
      break;
    }
  }
  if (processed > 0 || op.done >= op.length) {
    r.progressed = true;
    op.stall = {};
  } else if (stalled && slot != kMainThreadOp) {
    ++stats.microthread_stall_cycles[size_t(op.stall.reason)];
    if (ctx.events) {
      TraceEvent& e = ctx.events->add(ctx, TraceKind::STALL);
      e.reason = uint8_t(op.stall.reason);
      e.aux = uint8_t(slot);
      e.color = uint8_t(op.stall.color);
      e.pc = op.pc;
    }
  }
  if (op.done >= op.length) {
    finish_op(op, false, ctx);
    if (slot == kMainThreadOp) main.in_sync_op = false;
  }
}

void PeCore::finish_op(VectorOp& op, bool by_control, const Context& ctx) {
  op.active = false;
  if (&op >= ops.data() && &op < ops.data() + ops.size()) ops_active &= uint16_t(~(1u << (&op - ops.data())));
  auto act = [&](isa::OnDone what, int task) {
    if (what == isa::OnDone::ACTIVATE) activate(task, &ctx);
    if (what == isa::OnDone::UNBLOCK) unblock(task, &ctx);
  };
  if (by_control) {
    for (const VectorOperand& v : op.operands) {
      if (v.kind != Kind::FABIN) continue;
      if (v.d.on_control == isa::OnControl::ACTIVATE) act(isa::OnDone::ACTIVATE, v.d.on_control_task);
      if (v.d.on_control == isa::OnControl::UNBLOCK) act(isa::OnDone::UNBLOCK, v.d.on_control_task);
      break;
    }
  }
  act(op.async.on_done, op.async.task);
}

PeCore::ElementResult PeCore::element(VectorOp& op, const Context& ctx) {
  const int n = op.num_operands;
  // 1. Every fabric and FIFO operand must be ready before anything is consumed.
  for (int i = 0; i < n; ++i) {
    const VectorOperand& v = op.operands[i];
    switch (v.kind) {
      case Kind::FABIN: {
        InputQueue& q = iq[v.d.queue & 7];
        if (q.ring.empty()) {
          op.stall = {StallReason::INPUT_QUEUE_EMPTY, int8_t(v.d.queue), q.color, int8_t(v.index)};
          return ElementResult::STALLED;
        }
        if (q.ring.front().control && v.d.on_control != isa::OnControl::NONE) {
          iq_pop(v.d.queue & 7);
          return ElementResult::ENDED_BY_CONTROL;
        }
        break;
      }
      case Kind::FABOUT: {
        OutputQueue& q = oq[v.d.queue & 7];
        if (q.ring.full()) {
          op.stall = {StallReason::OUTPUT_QUEUE_FULL, int8_t(v.d.queue), q.color, int8_t(v.index)};
          return ElementResult::STALLED;
        }
        break;
      }
      case Kind::FIFO: {
        const isa::Descriptor& f = dsrs[v.index % isa::kNumDsrs];
        if (i > 0 && f.count == 0) {
          op.stall = {StallReason::FIFO_EMPTY, -1, -1, int8_t(v.index)};
          return ElementResult::STALLED;
        }
        if (i == 0 && f.count >= f.length) {
          op.stall = {StallReason::FIFO_FULL, -1, -1, int8_t(v.index)};
          return ElementResult::STALLED;
        }
        break;
      }
      default: break;
    }
  }
  // 2. Read the sources.
  std::array<uint32_t, 3> src{};
  for (int i = 1; i < n; ++i) {
    const VectorOperand& v = op.operands[i];
    uint32_t x = 0;
    switch (v.kind) {
      case Kind::REG: x = regs[v.index & 15]; break;
      case Kind::MEM: {
        const uint32_t a = element_address(v, op.done);
        x = v.bits == 16 ? sram.load16(a) : sram.load32(a);
        break;
      }
      case Kind::FABIN: x = iq_pop(v.d.queue & 7).payload; break;
      case Kind::FIFO: {
        isa::Descriptor& f = dsrs[v.index % isa::kNumDsrs];
        const uint32_t a = f.base + f.head * (f.elem_bits / 8);
        x = f.elem_bits == 16 ? sram.load16(a) : sram.load32(a);
        f.head = (f.head + 1) % f.length;
        --f.count;
        if (f.activate_on_pop >= 0) activate(f.activate_on_pop, &ctx);
        break;
      }
      default: break;
    }
    src[i - 1] = mask(x, v.bits);
  }
  // 3. Compute and 4. write the destination.
  const uint32_t res = mask(compute(op.op, src[0], src[1], src[2], op.carry), op.operands[0].bits);
  const VectorOperand& dst = op.operands[0];
  switch (dst.kind) {
    case Kind::REG: regs[dst.index & 15] = res; break;
    case Kind::MEM: {
      const uint32_t a = element_address(dst, op.done);
      if (dst.bits == 16)
        sram.store16(a, uint16_t(res));
      else
        sram.store32(a, res);
      break;
    }
    case Kind::FABOUT: {
      Wavelet w;
      w.color = uint8_t(dst.d.color);  // the queue's own color on wse3 (checked at the op's start)
      w.control = dst.d.control;
      w.payload = res;
      if (dst.bits == 16 && dst.d.index >= 0) w.payload = res | (uint32_t(dst.d.index) << 16);
      w.advance_switch_after = dst.d.advance_switch && op.done + 1 == op.length;
      oq_push(dst.d.queue & 7, w, ctx.now + 1 + uint64_t(ctx.profile->ramp_up_latency));
      ++stats.wavelets_sent;
      break;
    }
    case Kind::FIFO: {
      isa::Descriptor& f = dsrs[dst.index % isa::kNumDsrs];
      const uint32_t a = f.base + ((f.head + f.count) % f.length) * (f.elem_bits / 8);
      if (f.elem_bits == 16)
        sram.store16(a, uint16_t(res));
      else
        sram.store32(a, res);
      ++f.count;
      if (f.activate_on_push >= 0) activate(f.activate_on_push, &ctx);
      break;
    }
    default: break;
  }
  ++op.done;
  ++stats.vector_elements;
  return ElementResult::DONE_ONE;
}

}  // namespace wsemu::emu
