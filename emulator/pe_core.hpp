// The compute engine (CE) of one PE: registers, descriptor registers, SRAM, queues, the task
// table, the main thread and eight microthreads for asynchronous vector operations.
//
// Contract: step() advances the core by exactly one cycle and touches only this core's state
// (and the per-tile log and event buffers it is given). It executes the ISA of isa/isa.def with
// the semantics documented in emulator/README.md; every instruction's timing comes from the
// profile. Anything a kernel does wrong throws FaultError(KERNEL_ERROR or UNSUPPORTED); the
// caller (the wafer) adds PE, cycle, PC and instruction. The core is plain data (indices, no
// pointers to other objects) apart from the shared, immutable program it is given per call.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "emulator/arch_profile.hpp"
#include "emulator/loaded_program.hpp"
#include "emulator/queues.hpp"
#include "emulator/router.hpp"
#include "emulator/sram.hpp"
#include "emulator/tasks.hpp"
#include "emulator/trace.hpp"
#include "isa/descriptor.hpp"
#include "isa/instruction.hpp"

namespace wsemu::emu {

struct LogLine {
  uint64_t cycle = 0;
  int x = 0, y = 0;
  std::string text;
  std::string to_string() const;  // "@cycle P<x>.<y>: text"
};

struct VectorOperand {
  enum class Kind : uint8_t { NONE, REG, MEM, FABIN, FABOUT, FIFO };
  Kind kind = Kind::NONE;
  uint8_t index = 0;  // register or descriptor register number
  uint8_t bits = 32;  // element width this operand is read or written at
  isa::Descriptor d;  // a copy for MEM/FABIN/FABOUT; a FIFO works on the live register
};

// Hot first: what a streaming op reads every cycle (state, counters, ready, stall) shares the
// first cache line with the destination operand; the sources follow.
struct VectorOp {
  bool active = false;
  bool streaming = false;  // fabric or FIFO operand: at most one element per cycle
  uint8_t num_operands = 0;
  int8_t task = -1;        // the task that issued it
  isa::Opcode op = isa::Opcode::NOP;
  uint16_t width = 1;      // elements per cycle
  uint32_t length = 0, done = 0;
  uint64_t ready = 0;      // first cycle that processes elements (after the startup overhead)
  StallInfo stall;
  uint32_t carry = 0;      // addc16
  uint32_t pc = 0;         // the issuing instruction, for faults and reports
  isa::AsyncSpec async;
  std::array<VectorOperand, 4> operands{};  // [0] is the destination
};

struct MainThread {
  bool running = false;
  uint32_t pc = 0;
  int8_t task = -1;  // task id (for control tasks: the control task id)
  isa::TaskKind task_kind = isa::TaskKind::LOCAL;
  uint64_t busy_until = 0;  // no new instruction before this cycle
  uint8_t depth = 0;        // of PeCore::call_stack
  bool in_sync_op = false;  // waiting for ops[kMainThreadOp]
  StallInfo stall;
};

// What a progressing cycle counts first (one cache line in PeCore), the stalls next.
struct CoreStats {
  uint64_t busy_cycles = 0;  // the main thread issued or was occupied (incl. task picks)
  uint64_t vector_elements = 0;
  uint64_t wavelets_sent = 0;      // pushed into output queues
  uint64_t wavelets_received = 0;  // landed in input queues / color slots
  uint64_t instructions = 0;
  std::array<uint64_t, size_t(StallReason::COUNT)> microthread_stall_cycles{};  // per ut cycle
  std::array<uint64_t, size_t(StallReason::COUNT)> stall_cycles{};              // main thread
  uint64_t tasks_started = 0;
  uint64_t async_ops = 0;
  uint64_t control_dropped = 0;    // control wavelets without a control task, dropped
  uint64_t loaded_at = 0;          // cycle the program was loaded (idle = elapsed - busy - stalls)
};

constexpr int kMainThreadOp = 8;  // ops[8]: the main thread's synchronous streaming op

class PeCore final : public RampPort {
 public:
  struct Context {
    const ArchProfile* profile = nullptr;
    const LoadedProgram* program = nullptr;
    uint64_t now = 0;
    int x = 0, y = 0;
    EventRecorder* events = nullptr;  // null: tracing off
    std::vector<LogLine>* log = nullptr;
    // This tile's router (same thread, same compute phase): the teardown instructions read and
    // change its torn-down set and switch positions. Null only in a core stepped on its own.
    RouterState* router = nullptr;
    // The main thread may run ahead (run_ahead.cpp): the wafer steps tiles only when there is
    // work, untraced.
    bool run_ahead = false;
  };
  struct CycleResult {
    bool progressed = false;  // something changed (or time-bound work is counting down)
    bool logged = false;      // a line went to Context::log
  };

  PeCore() = default;
  PeCore(const ArchProfile& profile, uint32_t program_index, const LoadedProgram& program,
         int rect_x, int rect_y, uint64_t now);

  CycleResult step(const Context& ctx);
  // Adds `cycles` cycles like the last one, which made no progress: then every active
  // microthread was stalled and the main thread idle or stalled, and a repeat changes nothing
  // but one stall cycle per stalled thread, for the reason it holds. For the wafer's tiles that
  // wait without being stepped until a wavelet or a credit arrives.
  void replay_stalled_cycles(uint64_t cycles);
  // Undoes what the main thread ran ahead to issue at or after ctx.now (run_ahead.cpp), so that
  // the core is as stepped up to ctx.now - 1; for whoever looks at it between runs. True if it
  // changed the core (then main.busy_until, its next issue, is at ctx.now or later).
  bool settle_run_ahead(const Context& ctx);

  // RampPort (the router calls these in the same tile's compute phase).
  bool ramp_peek(int color, uint64_t now, Wavelet& out) const override;
  uint32_t ramp_colors() const override;
  void ramp_pop(int color, uint64_t now) override;
  Accept ramp_can_accept(const Wavelet& w) const override;
  int ramp_accept(const Wavelet& w, uint64_t now) override;
  void ramp_teardown(int color, const RouterContext& ctx) override;

  // Task operations (instructions, async completions and the host).
  void activate(int id, const Context* ctx);
  void block(int id, const Context* ctx);
  void unblock(int id, const Context* ctx);
  void bind_input_queue(int q, int color, const ArchProfile& profile);
  void bind_output_queue(int q, int color, const ArchProfile& profile);

  // The core must be stepped next cycle: a thread runs, an op streams, a queue drains, or the
  // picker has a task to start.
  bool has_work() const;
  // Anything pending that nothing on this core can advance (for quiescence and hang reports).
  bool holds_pending_work() const;

  // State (public: the wafer's CoreView and the hang report read it). Ordered hot first: what
  // every cycle of a busy core looks at (the main thread, the occupancy bits, the task masks,
  // the ramp's bookkeeping, SRAM's bounds, the progress counters) fills the first four cache
  // lines after the vtable pointer, then the ramp down, the ops and the queues a streaming
  // cycle touches; what only instructions, task starts and loading use (registers,
  // descriptors, entries) comes last.
  MainThread main;
  int64_t executing_pc = -1;  // the instruction being executed or whose op is stepping (faults)
  // Occupancy bits (bit q / bit slot), kept in step with the rings so that a cycle's checks
  // touch one cache line instead of every queue.
  uint8_t iq_nonempty = 0;
  uint8_t oq_nonempty = 0;
  uint16_t ops_active = 0;  // bit s: ops[s].active
  uint8_t oq_flushing = 0;  // bit q: oq[q].flushing
  uint8_t oq_flushed = 0;   // bit q: oq[q]'s qflush completed since the last `qfpend`
  bool color_slots = true;  // wse2: a color without an input queue lands in a 1-wavelet slot
  uint8_t ramp_down_latency = 1;  // the profile's, for the router's deliveries
  uint32_t slot_full = 0;
  uint32_t program_index = 0;
  TaskTable tasks;
  int16_t rect_x = 0, rect_y = 0;
  alignas(64) Sram sram;  // its bounds, read by every access, start the third line
  std::array<int8_t, isa::kNumColors> iq_of_color{};  // input queue bound to each color, -1
  // The ramp down (router -> core), in delivery order, and how many of each color it holds:
  // they count against the queue or slot they go to.
  std::array<uint8_t, isa::kNumColors> arriving_of_color{};
  CoreStats stats;
  Ring<RampArrival, kMaxRampLatency> arriving;
  std::array<VectorOp, 9> ops{};  // [0..7] microthreads, [8] the main thread's sync op
  std::array<InputQueue, isa::kNumQueues> iq{};
  std::array<OutputQueue, isa::kNumQueues> oq{};
  std::array<uint32_t, isa::kNumRegs> regs{};
  std::array<Wavelet, isa::kNumColors> slot{};  // wse2 color slots
  TaskEntries entries;
  std::array<uint16_t, 64> call_stack{};  // return addresses, main.depth of them
  std::array<isa::Descriptor, isa::kNumDsrs> dsrs{};
  // The last run-ahead (run_ahead.cpp): the main thread and registers before its first
  // instruction, what its instructions added to the counters, and the old values of what they
  // wrote, in order.
  struct RunAheadLog {
    bool active = false;
    uint64_t last_issue = 0;  // the cycle its last instruction issues at
    MainThread main;
    std::array<uint32_t, isa::kNumRegs> regs{};
    uint64_t instructions = 0, vector_elements = 0;  // added
    std::vector<std::pair<uint8_t, isa::Descriptor>> dsrs;  // (register, old value)
    std::vector<std::pair<uint8_t, uint16_t>> calls;         // (call stack slot, old value)
    std::vector<std::pair<uint32_t, uint32_t>> sram;         // (address, bytes) kept in sram_bytes
    std::vector<uint8_t> sram_bytes;
  } ahead;

  uint32_t oq_flushing_mask() const { return oq_flushing; }
  void iq_push(int q, const Wavelet& w) {
    iq[q].ring.push(w);
    iq_nonempty |= uint8_t(1u << q);
  }
  Wavelet iq_pop(int q) {
    const Wavelet w = iq[q].ring.pop();
    if (iq[q].ring.empty()) iq_nonempty &= uint8_t(~(1u << q));
    return w;
  }
  void oq_push(int q, const Wavelet& w, uint64_t ready) {
    oq[q].ring.push({w, ready});
    oq_nonempty |= uint8_t(1u << q);
  }
  void oq_pop(int q) {
    oq[q].ring.pop();
    if (oq[q].ring.empty()) oq_nonempty &= uint8_t(~(1u << q));
  }
  // Called after step(): the core does nothing but count down a multi-cycle instruction of
  // the main thread while every active microthread stalled this cycle (on a queue or FIFO that
  // only the router or the main thread can change); no queued output, nothing on the ramp.
  // Until the returned cycle each cycle repeats this one: a busy cycle and one stall cycle per
  // microthread (replay_stalled_cycles), as long as nothing reaches the core. Else 0.
  uint64_t sleeping_until(uint64_t now) const {
    if (oq_nonempty || !arriving.empty() || main.busy_until <= now + 1) return 0;
    for (uint32_t m = ops_active; m; m &= m - 1) {
      const VectorOp& op = ops[size_t(__builtin_ctz(m))];
      if (&op == &ops[kMainThreadOp] || op.ready > now || op.stall.reason == StallReason::NONE) return 0;
    }
    return main.busy_until;
  }

 private:
  // pe_core.cpp: the main thread.
  void step_main(const Context& ctx, CycleResult& r);
  void execute(const isa::Instruction& insn, const Context& ctx, CycleResult& r);
  void end_task();
  void stall_main(StallInfo info, const Context& ctx);
  void log_line(const Context& ctx, std::string text);
  // run_ahead.cpp: the next instructions of the main thread, each as at its cycle, below `limit`.
  struct RunAheadClaims;
  void run_ahead(const Context& ctx, CycleResult& r, uint64_t limit);
  bool log_run_ahead(const isa::Instruction& insn, const RunAheadClaims& claims);
  void undo_run_ahead();
  // tdswitch / tdexit: the channel of `color` at this router, which must be torn down.
  ColorChannel& torn_down_channel(const Context& ctx, int color, std::string_view mnemonic) const;
  // queues.cpp: wavelets at the end of the ramp down land in their queue or slot.
  void land_arrivals(const Context& ctx);
  void land(const Wavelet& w);
  // tasks.cpp: the picker and inputs.
  uint64_t inputs_ready() const;
  int input_of_trigger(int id) const;  // queue 0..7, 8 + color for a slot, -1
  bool input_empty(int input) const;
  const Wavelet& input_front(int input) const;
  Wavelet input_pop(int input);
  bool try_pick(const Context& ctx, CycleResult& r);
  void record_task_event(const Context& ctx, TraceKind kind, int task) const;
  // dsd_engine.cpp: vector operations.
  void issue_vector(const isa::Instruction& insn, const Context& ctx, CycleResult& r);
  VectorOperand resolve_operand(const isa::Operand& o, bool is_dst, uint8_t bits) const;
  uint32_t operand_length(const VectorOperand& v) const;
  void step_op(int slot, const Context& ctx, CycleResult& r);
  enum class ElementResult : uint8_t { DONE_ONE, STALLED, ENDED_BY_CONTROL };
  ElementResult element(VectorOp& op, const Context& ctx);
  void finish_op(VectorOp& op, bool by_control, const Context& ctx);
  uint32_t element_address(const VectorOperand& v, uint32_t i) const;
  void check_operand_range(const VectorOperand& v, uint32_t length, bool write) const;
};

}  // namespace wsemu::emu
