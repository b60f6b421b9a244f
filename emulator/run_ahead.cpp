// PeCore's run-ahead (emulator/README.md, "Run-ahead"): after the main thread issued in a step,
// it executes the instructions that follow at once, each as at the cycle it would have issued
// at, as long as what they read and write is the main thread's own: registers, descriptor
// registers, the program counter, the call stack and SRAM that no running microthread uses.
// Nothing else touches that in the cycles they skip (the router, the ramp and the queues never
// read it, the microthreads stay off it), so doing them early changes nothing anyone sees
// during a run. Between runs the wafer settles a core that ran ahead (settle_run_ahead) before
// anyone looks at it, undoing what issues at or after the current cycle from a log kept for
// that; an instruction ahead that would fault is undone the same way and left to fault at its
// own cycle.
#include <algorithm>

#include "emulator/fault.hpp"
#include "emulator/pe_core.hpp"

namespace wsemu::emu {

namespace {
constexpr int kMaxRunAhead = 64;         // instructions per step, which bounds the log
constexpr size_t kMaxLoggedSram = 1024;  // bytes of old SRAM contents per step
}  // namespace

using isa::Opcode;

// What the running microthreads use: SRAM byte ranges (each memory operand's whole extent, its
// elements taken 4 bytes wide) and the descriptor registers of their FIFOs, which they update.
struct PeCore::RunAheadClaims {
  std::array<std::pair<int64_t, int64_t>, 4 * 8> ranges;  // the first `count`
  int count = 0;
  uint64_t fifo_dsrs = 0;
  bool everything = false;  // a 4-D operand: nothing in SRAM runs ahead
  bool overlaps(int64_t lo, int64_t hi) const {
    if (everything) return true;
    for (int i = 0; i < count; ++i)
      if (lo < ranges[size_t(i)].second && ranges[size_t(i)].first < hi) return true;
    return false;
  }
};

namespace {
// [lo, hi) of `d`'s first `elements` elements `stride` apart, 4 bytes each (a 32-bit operation
// over a 16-bit descriptor moves 32-bit ones).
std::pair<int64_t, int64_t> extent(const isa::Descriptor& d, uint64_t elements, int64_t stride) {
  if (elements == 0) return {0, 0};
  const int64_t first = d.base, last = first + int64_t(elements - 1) * stride * 4;
  return {std::min(first, last), std::max(first, last) + 4};
}
}  // namespace

// Logs what `insn` may write before it runs ahead; false for an instruction that does not run
// ahead: it reads or writes what others see (queues, tasks, the router, the log), waits, ends
// the task, or is a vector operation other than a synchronous one over registers and mem1d
// descriptors.
bool PeCore::log_run_ahead(const isa::Instruction& insn, const RunAheadClaims& claims) {
  const auto& o = insn.operands;
  // The descriptor register operand i; a microthread's FIFO is the microthread's.
  auto dsr_free = [&](int i) { return !((claims.fifo_dsrs >> (size_t(o[i].value) % isa::kNumDsrs)) & 1); };
  auto dsr_written = [&] {
    if (!dsr_free(0) || (insn.op == Opcode::DSDCOPY && !dsr_free(1))) return false;
    if (insn.op == Opcode::DSDLD && claims.overlaps(o[1].value, o[1].value + 2 * isa::kDescriptorImageWords)) return false;
    const size_t i = size_t(o[0].value) % isa::kNumDsrs;
    ahead.dsrs.emplace_back(uint8_t(i), dsrs[i]);
    return true;
  };
  // [lo, hi) of SRAM; the part outside it is never written (the access faults first).
  auto sram_written = [&](int64_t lo, int64_t hi) {
    if (claims.overlaps(lo, hi)) return false;
    lo = std::max<int64_t>(lo, 0);
    hi = std::min<int64_t>(hi, sram.size());
    if (lo >= hi) return true;
    if (ahead.sram_bytes.size() + size_t(hi - lo) > kMaxLoggedSram) return false;
    const size_t at = ahead.sram_bytes.size();
    ahead.sram_bytes.resize(at + size_t(hi - lo));
    sram.read(uint32_t(lo), std::span<uint8_t>(ahead.sram_bytes.data() + at, size_t(hi - lo)));
    ahead.sram.emplace_back(uint32_t(lo), uint32_t(hi - lo));
    return true;
  };
  switch (insn.op) {
    case Opcode::DSDADDR: case Opcode::DSDGETLEN: case Opcode::DSDGETSTRIDE: case Opcode::COORD:
    case Opcode::TSC: case Opcode::TSCH:
      return true;  // registers and the program counter (regs and main are logged whole)
    case Opcode::LD32: {
      const int64_t a = (o[1].is_reg ? int64_t(regs[o[1].reg & 15]) : 0) + o[1].value;
      return !claims.overlaps(a, a + 4);
    }
    case Opcode::CALL:
      if (main.depth < call_stack.size()) ahead.calls.emplace_back(main.depth, call_stack[main.depth]);
      return true;
    case Opcode::RET: return main.depth > 0;  // a return from the task ends it
    case Opcode::ST32: {
      const int64_t a = (o[0].is_reg ? int64_t(regs[o[0].reg & 15]) : 0) + o[0].value;
      return sram_written(a, a + 4);
    }
    case Opcode::DSDCOPY: case Opcode::DSDBASE: case Opcode::DSDINC: case Opcode::DSDLEN:
    case Opcode::DSDSTRIDE: case Opcode::DSDCOLOR: case Opcode::DSDQUEUE: case Opcode::DSDCTL:
    case Opcode::DSDSAVE: case Opcode::DSDINDEX: case Opcode::DSDLEN4: case Opcode::DSDSTRIDE4:
    case Opcode::DSDLD:
      return dsr_written();
    default: break;
  }
  const isa::InsnInfo& info = isa::info(insn.op);
  // isa.def's families: scalar ALU (0x01), scalar float (0x02) and branches (0x03; calls and
  // returns above) read and write registers and the program counter only.
  if (const unsigned family = info.encoding >> 8; family >= 0x01 && family <= 0x03) return true;
  if (!isa::is_vector(info.timing) || insn.async.async || insn.async.on_done != isa::OnDone::NONE) return false;
  for (int i = 0; i < info.num_operands; ++i) {
    if (o[i].is_reg) continue;
    const isa::Descriptor& d = dsrs[size_t(o[i].value) % isa::kNumDsrs];
    if (d.kind != isa::DsdKind::MEM1D || d.save_address) return false;  // fabric, FIFO, ring, 4-D: stepped
    const auto [lo, hi] = extent(d, d.length, d.stride);
    if (claims.overlaps(lo, hi)) return false;
  }
  if (o[0].is_reg) return true;
  // The destination's elements: at most its length (a longer operation faults).
  const isa::Descriptor& d = dsrs[size_t(o[0].value) % isa::kNumDsrs];
  const auto [lo, hi] = extent(d, d.length, d.stride);
  return sram_written(lo, hi);
}

void PeCore::run_ahead(const Context& ctx, CycleResult& r, uint64_t limit) {
  const LoadedProgram& prog = *ctx.program;
  Context at = ctx;
  ahead.active = false;  // what ran ahead before this step has all issued
  if (!main.running) return;
  RunAheadClaims claims;
  for (uint32_t m = ops_active & 0xFFu; m; m &= m - 1) {
    const VectorOp& op = ops[size_t(__builtin_ctz(m))];
    for (int k = 0; k < op.num_operands && k < int(op.operands.size()); ++k) {
      const VectorOperand& v = op.operands[size_t(k)];
      if (v.kind == VectorOperand::Kind::REG) return;  // it reads or writes a register as it goes
      if (v.kind == VectorOperand::Kind::FIFO) {
        claims.fifo_dsrs |= uint64_t{1} << (v.index % isa::kNumDsrs);
        const isa::Descriptor& fifo = dsrs[v.index % isa::kNumDsrs];  // its slots, one after another
        claims.ranges[size_t(claims.count++)] = extent(fifo, fifo.length, 1);
      } else if (v.kind == VectorOperand::Kind::MEM) {
        if (v.d.kind == isa::DsdKind::MEM4D) claims.everything = true;
        // A ring is its length from the base, whatever its stride; a mem1d at most the longer of
        // its length and the op's.
        const bool ring = v.d.kind == isa::DsdKind::CIRCBUF;
        const uint64_t n = ring ? v.d.length : std::max<uint64_t>(v.d.length, op.length);
        claims.ranges[size_t(claims.count++)] = extent(v.d, std::min<uint64_t>(n, 1u << 20), ring ? 1 : v.d.stride);
      }
    }
  }
  for (int n = 0; n < kMaxRunAhead; ++n) {
    if (!main.running || main.in_sync_op || main.busy_until >= limit) break;
    if (main.pc >= prog.insns.size() || !prog.insns[main.pc]) break;  // it faults at its own cycle
    const isa::Instruction& insn = *prog.insns[main.pc];
    if (!ahead.active) {
      ahead.active = true;
      ahead.last_issue = 0;
      ahead.main = main;
      ahead.regs = regs;
      ahead.instructions = 0;
      ahead.vector_elements = 0;
      ahead.dsrs.clear();
      ahead.calls.clear();
      ahead.sram.clear();
      ahead.sram_bytes.clear();
    }
    if (!log_run_ahead(insn, claims)) break;
    at.now = main.busy_until;
    main.stall = {};
    executing_pc = main.pc;
    // Counters as added (the microthreads add elements of their own while the core dozes).
    const uint64_t instructions = stats.instructions, elements = stats.vector_elements;
    bool faulted = false;
    try {
      execute(insn, at, r);
    } catch (const FaultError&) {
      faulted = true;
    }
    ahead.instructions += stats.instructions - instructions;
    ahead.vector_elements += stats.vector_elements - elements;
    if (faulted) {
      // Undone, with everything run ahead in this step; those before it run again.
      undo_run_ahead();
      run_ahead(ctx, r, at.now);
      break;
    }
    // The wafer counts each cycle up to the next issue as it passes it (stepped or dozing).
    --stats.busy_cycles;
    ahead.last_issue = at.now;
  }
  if (ahead.active && ahead.last_issue == 0) ahead.active = false;  // nothing ran ahead
  executing_pc = -1;
}

void PeCore::undo_run_ahead() {
  size_t end = ahead.sram_bytes.size();
  for (auto it = ahead.sram.rbegin(); it != ahead.sram.rend(); ++it) {
    end -= it->second;
    sram.write(it->first, std::span<const uint8_t>(ahead.sram_bytes.data() + end, it->second));
  }
  for (auto it = ahead.dsrs.rbegin(); it != ahead.dsrs.rend(); ++it) dsrs[it->first] = it->second;
  for (auto it = ahead.calls.rbegin(); it != ahead.calls.rend(); ++it) call_stack[it->first] = it->second;
  main = ahead.main;
  regs = ahead.regs;
  stats.instructions -= ahead.instructions;
  stats.vector_elements -= ahead.vector_elements;
  ahead.active = false;
}

bool PeCore::settle_run_ahead(const Context& ctx) {
  if (!ahead.active) return false;
  if (ahead.last_issue < ctx.now) {  // everything it ran ahead has issued by now
    ahead.active = false;
    return false;
  }
  undo_run_ahead();
  CycleResult r;
  run_ahead(ctx, r, ctx.now);
  return true;
}

}  // namespace wsemu::emu
