// PeCore: loading, the per-cycle step and the main thread's scalar instructions.
#include "emulator/pe_core.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <limits>

#include "emulator/fabric_registers.hpp"
#include "emulator/fault.hpp"
#include "isa/fp16.hpp"

namespace wsemu::emu {

using isa::Opcode;

std::string LogLine::to_string() const { return fmt::format("@{} P{}.{}: {}", cycle, x, y, text); }

PeCore::PeCore(const ArchProfile& profile, uint32_t program_index_, const LoadedProgram& program,
               int rect_x_, int rect_y_, uint64_t now)
    : program_index(program_index_), rect_x(int16_t(rect_x_)), rect_y(int16_t(rect_y_)) {
  const isa::ObjectImage& img = *program.image;
  if (!img.arch.empty() && img.arch != profile.name)
    config_error(fmt::format("program '{}' was assembled for {} but the wafer is {}", img.source_name,
                             img.arch, profile.name));
  if (uint64_t(img.data_base) + img.data_size > profile.sram_bytes || program.code_bytes() > profile.sram_bytes)
    config_error(fmt::format("program '{}' needs {} bytes of SRAM; the PE has {}", img.source_name,
                             uint64_t(img.data_base) + img.data_size, profile.sram_bytes));
  if (img.data_init.size() > img.data_size)
    config_error(fmt::format("program '{}': {} bytes of initial data exceed its data size {}", img.source_name,
                             img.data_init.size(), img.data_size));
  if (program.code_bytes() > img.data_base && img.data_size > 0)
    config_error(fmt::format("program '{}': data at {:#x} overlaps the code ({} bytes)", img.source_name,
                             img.data_base, program.code_bytes()));
  color_slots = !profile.data_task_by_queue;
  ramp_down_latency = uint8_t(profile.ramp_down_latency);
  sram = Sram(profile.sram_bytes, program.code_bytes());
  for (size_t i = 0; i < img.code.size(); ++i) {
    uint8_t bytes[8];
    for (int b = 0; b < 8; ++b) bytes[b] = uint8_t(img.code[i] >> (8 * b));
    sram.write(uint32_t(i * 8), bytes);
  }
  sram.write(img.data_base, img.data_init);
  iq_of_color.fill(-1);
  for (int q = 0; q < isa::kNumQueues; ++q) {
    iq[q].ring.capacity = uint8_t(profile.input_queue_depth[q]);
    oq[q].ring.capacity = uint8_t(profile.output_queue_depth[q]);
  }
  try {
    for (const isa::DescriptorInit& d : img.descriptors) {
      if (d.dsr >= isa::kNumDsrs) config_error(fmt::format("descriptor '{}' names d{} (d0..d47)", d.name, d.dsr));
      dsrs[d.dsr] = d.value;
    }
    for (const isa::QueueBinding& b : img.queues) {
      if (b.output)
        bind_output_queue(b.queue, b.color, profile);
      else
        bind_input_queue(b.queue, b.color, profile);
    }
    // Fabric descriptors bind their queue at load, as the SDK's compiler does.
    for (const isa::Descriptor& d : dsrs) {
      if (d.kind == isa::DsdKind::FABIN && iq[d.queue & 7].color < 0 && iq_of_color[d.color & 31] < 0)
        bind_input_queue(d.queue, d.color, profile);
      if (d.kind == isa::DsdKind::FABOUT && oq[d.queue & 7].color < 0) bind_output_queue(d.queue, d.color, profile);
    }
  } catch (const FaultError& e) {
    if (e.fault().kind == FaultKind::CONFIGURATION_ERROR) throw;
    config_error(fmt::format("program '{}': {}", img.source_name, e.fault().message));
  }
  for (const isa::TaskBinding& t : img.tasks) {
    const uint64_t b = TaskTable::bit(t.id & 63);
    if (t.entry >= img.code.size())
      config_error(fmt::format("task '{}' starts at instruction {}, past the end of the code", t.name, t.entry));
    switch (t.kind) {
      case isa::TaskKind::DATA:
        if (!profile.is_data_task_id(t.id))
          config_error(fmt::format("data task '{}' has id {}; {} data task ids are {}..{}", t.name, t.id,
                                   profile.name, profile.data_task_first, profile.data_task_last));
        if (t.trigger_is_queue != profile.data_task_by_queue || t.trigger != t.id)
          config_error(fmt::format("data task '{}' (id {}): on {} a data task is triggered by the {} with its id",
                                   t.name, t.id, profile.name, profile.data_task_by_queue ? "input queue" : "color"));
        if ((tasks.local | tasks.data) & b) config_error(fmt::format("task id {} is bound twice", t.id));
        tasks.data |= b;
        entries.entry[t.id] = t.entry;
        break;
      case isa::TaskKind::LOCAL:
        if (!profile.is_local_task_id(t.id))
          config_error(fmt::format("local task '{}' has id {}; {} local task ids are {}..{}", t.name, t.id,
                                   profile.name, profile.local_task_first, profile.local_task_last));
        if ((tasks.local | tasks.data) & b) config_error(fmt::format("task id {} is bound twice", t.id));
        tasks.local |= b;
        entries.entry[t.id] = t.entry;
        break;
      case isa::TaskKind::CONTROL:
        if (t.id < profile.control_task_first || t.id > profile.control_task_last)
          config_error(fmt::format("control task '{}' has id {} ({}..{})", t.name, t.id,
                                   profile.control_task_first, profile.control_task_last));
        if (tasks.control & b) config_error(fmt::format("control task id {} is bound twice", t.id));
        tasks.control |= b;
        entries.control_entry[t.id] = t.entry;
        continue;  // control tasks do not use the blocked bits
    }
    if (t.starts_blocked)
      tasks.blocked |= b;
    else
      tasks.blocked &= ~b;
    if (t.starts_activated) {
      // CSL's comptime @activate: the task is activated when the program loads.
      if (t.kind != isa::TaskKind::LOCAL)
        config_error(fmt::format("task '{}' (id {}) starts activated but is not a local task", t.name, t.id));
      tasks.activated |= b;
    }
  }
  for (const uint8_t id : img.unblocked_ids) {
    const uint64_t b = TaskTable::bit(id & 63);
    if ((tasks.local | tasks.data) & b)
      config_error(fmt::format("task id {} is listed as unblocked with no task, but a task is bound to it", id));
    tasks.blocked &= ~b;
  }
  stats.loaded_at = now;
}

ColorChannel& PeCore::torn_down_channel(const Context& ctx, int color, std::string_view mnemonic) const {
  if (!ctx.router) throw_fault(FaultKind::INTERNAL_ERROR, fmt::format("{}: the core has no router", mnemonic));
  ColorChannel* ch = ctx.router->channel(color);
  if (!ch) kernel_error(fmt::format("{} {}: this PE's router has no route for color {}", mnemonic, color, color), color);
  // Changing a route under moving wavelets would reorder or split a stream; the SDK allows it
  // only while the color is torn down, so anything else is the kernel's mistake.
  if (!(ctx.router->torn_down & (1u << color)))
    kernel_error(fmt::format("{} {}: color {} is not in teardown at this router; a route changes only while its "
                             "color is torn down (a TEARDOWN command must reach this router first)",
                             mnemonic, color, color),
                 color);
  return *ch;
}

PeCore::CycleResult PeCore::step(const Context& ctx) {
  CycleResult r;
  if (!arriving.empty()) {
    land_arrivals(ctx);
    r.progressed = true;  // a wavelet on the ramp down is time-bound work
  }
  // The SDK's microthread priority: high microthreads are served first, then medium, then the
  // main thread's instruction or op, then low ones (the default); equal priorities by id. An
  // idle main thread's task pick comes last, so it sees every completion of this cycle.
  uint32_t above_main = 0, below_main = 0;
  for (uint32_t m = ops_active & 0xFFu; m; m &= m - 1) {
    const int ut = __builtin_ctz(m);
    if (ops[ut].async.priority == isa::Priority::LOW)
      below_main |= 1u << ut;
    else
      above_main |= 1u << ut;
  }
  const auto step_microthreads = [&](uint32_t mask) {
    for (uint32_t m = mask; m; m &= m - 1) {
      const int ut = __builtin_ctz(m);
      executing_pc = ops[ut].pc;
      step_op(ut, ctx, r);
    }
    executing_pc = -1;
  };
  for (const isa::Priority level : {isa::Priority::HIGH, isa::Priority::MEDIUM}) {
    uint32_t at_level = 0;
    for (uint32_t m = above_main; m; m &= m - 1)
      if (ops[size_t(__builtin_ctz(m))].async.priority == level) at_level |= m & -m;
    step_microthreads(at_level);
  }
  const bool main_occupied = main.running || main.in_sync_op || main.busy_until > ctx.now;
  if (main_occupied) step_main(ctx, r);
  executing_pc = -1;
  step_microthreads(below_main);
  if (!main_occupied) step_main(ctx, r);
  executing_pc = -1;
  for (uint32_t m = oq_nonempty | oq_flushing_mask(); m; m &= m - 1) {
    OutputQueue& out = oq[__builtin_ctz(m)];
    if (out.flushing && out.ring.empty()) {
      out.flushing = false;
      oq_flushing &= uint8_t(~(1u << (&out - oq.data())));
      out.color = -1;
      oq_flushed |= uint8_t(1u << (&out - oq.data()));
      r.progressed = true;
      const int teardown = ctx.profile->teardown_task;
      if (tasks.local & TaskTable::bit(teardown)) activate(teardown, &ctx);
    }
    if (!out.ring.empty() && out.ring.front().ready > ctx.now) r.progressed = true;  // ramp latency
  }
  return r;
}

bool PeCore::has_work() const {
  if (main.running || main.in_sync_op || ops_active || oq_nonempty || oq_flushing || !arriving.empty()) return true;
  return tasks.pick(inputs_ready()) >= 0;
}

void PeCore::replay_stalled_cycles(uint64_t cycles) {
  for (uint32_t m = ops_active & 0xFFu; m; m &= m - 1)
    stats.microthread_stall_cycles[size_t(ops[__builtin_ctz(m)].stall.reason)] += cycles;
  // main.stall is reset each cycle the main thread is free to issue, so it names this cycle's stall.
  if (main.stall.reason != StallReason::NONE) stats.stall_cycles[size_t(main.stall.reason)] += cycles;
}

void PeCore::stall_main(StallInfo info, const Context& ctx) {
  main.stall = info;
  ++stats.stall_cycles[size_t(info.reason)];
  if (ctx.events) {
    TraceEvent& e = ctx.events->add(ctx, TraceKind::STALL);
    e.reason = uint8_t(info.reason);
    e.aux = 255;
    e.color = uint8_t(info.color);
    e.pc = main.pc;
    e.task = uint8_t(main.task);
  }
}

void PeCore::end_task() {
  main.running = false;
  main.task = -1;
  main.depth = 0;
}

void PeCore::log_line(const Context& ctx, std::string text) {
  if (ctx.log) ctx.log->push_back(LogLine{ctx.now, ctx.x, ctx.y, std::move(text)});
}

void PeCore::step_main(const Context& ctx, CycleResult& r) {
  if (main.busy_until > ctx.now) {
    ++stats.busy_cycles;
    r.progressed = true;
    return;
  }
  if (main.in_sync_op) {
    const uint64_t elements_before = ops[kMainThreadOp].done;
    const bool waiting = ops[kMainThreadOp].ready > ctx.now;
    executing_pc = ops[kMainThreadOp].pc;
    step_op(kMainThreadOp, ctx, r);
    if (waiting || ops[kMainThreadOp].done != elements_before || !main.in_sync_op)
      ++stats.busy_cycles;
    else
      stall_main(ops[kMainThreadOp].stall, ctx);
    return;
  }
  main.stall = {};
  if (!main.running) {
    if (try_pick(ctx, r)) {
      ++stats.busy_cycles;
      if (ctx.run_ahead && main.busy_until > ctx.now) run_ahead(ctx, r, ~uint64_t{0});
    }
    return;
  }
  const LoadedProgram& prog = *ctx.program;
  executing_pc = main.pc;
  if (main.pc >= prog.insns.size())
    kernel_error(fmt::format("the program counter ran past the end of the code ({} instructions)",
                             prog.insns.size()));
  const std::optional<isa::Instruction>& insn = prog.insns[main.pc];
  if (!insn)
    kernel_error(fmt::format("invalid instruction word {:#018x}", prog.image->code[main.pc]));
  execute(*insn, ctx, r);
  if (ctx.run_ahead && main.busy_until > ctx.now) run_ahead(ctx, r, ~uint64_t{0});
}

namespace {

float f32(uint32_t v) { return std::bit_cast<float>(v); }
uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

int32_t float_to_int_saturated(float f) {
  if (std::isnan(f)) return 0;
  if (f >= 2147483648.0f) return std::numeric_limits<int32_t>::max();
  if (f < -2147483648.0f) return std::numeric_limits<int32_t>::min();
  return int32_t(std::trunc(f));
}

// dprintr: every %d %u %x %f %h in `fmt_text` replaced by the register value; %% is a '%'.
std::string format_dprint(std::string_view fmt_text, uint32_t v) {
  std::string out;
  for (size_t i = 0; i < fmt_text.size(); ++i) {
    if (fmt_text[i] != '%' || i + 1 == fmt_text.size()) {
      out += fmt_text[i];
      continue;
    }
    const char c = fmt_text[++i];
    switch (c) {
      case 'd': out += fmt::format("{}", int32_t(v)); break;
      case 'u': out += fmt::format("{}", v); break;
      case 'x': out += fmt::format("{:x}", v); break;
      case 'f': out += fmt::format("{}", f32(v)); break;
      case 'h': out += fmt::format("{}", isa::fp16_to_fp32(uint16_t(v))); break;
      case '%': out += '%'; break;
      default: out += '%'; out += c; break;
    }
  }
  return out;
}

}  // namespace

void PeCore::execute(const isa::Instruction& insn, const Context& ctx, CycleResult& r) {
  const ArchProfile& profile = *ctx.profile;
  const isa::InsnInfo& info = isa::info(insn.op);
  const auto& o = insn.operands;
  auto reg = [&](int i) -> uint32_t& { return regs[size_t(o[i].value) & 15]; };
  auto val = [&](int i) -> uint32_t { return regs[size_t(o[i].value) & 15]; };
  auto reg_or_imm = [&](int i) -> int64_t {
    return o[i].is_reg ? int64_t(int32_t(regs[size_t(o[i].value) & 15])) : o[i].value;
  };
  auto mem_addr = [&](int i) -> uint32_t {
    const int64_t a = (o[i].is_reg ? int64_t(regs[o[i].reg & 15]) : 0) + o[i].value;
    if (a < 0 || a > 0xFFFFFFFFll) kernel_error(fmt::format("address {} is outside SRAM", a));
    return uint32_t(a);
  };
  auto dsr = [&](int i) -> isa::Descriptor& { return dsrs[size_t(o[i].value) % isa::kNumDsrs]; };
  auto need_kind = [&](const isa::Descriptor& d, std::initializer_list<isa::DsdKind> kinds, int i) {
    for (isa::DsdKind k : kinds)
      if (d.kind == k) return;
    kernel_error(fmt::format("{}: d{} holds a descriptor of the wrong kind for this instruction", info.mnemonic,
                             o[i].value));
  };
  auto u16_value = [&](int64_t v, const char* what) -> uint16_t {
    if (v < 0 || v > 0xFFFF) kernel_error(fmt::format("{}: {} {} is out of range 0..65535", info.mnemonic, what, v));
    return uint16_t(v);
  };
  auto i16_value = [&](int64_t v, const char* what) -> int16_t {
    if (v < -32768 || v > 32767)
      kernel_error(fmt::format("{}: {} {} is out of range -32768..32767", info.mnemonic, what, v));
    return int16_t(v);
  };
  const uint32_t pc = main.pc;
  const int8_t task_at_issue = main.task;
  uint32_t next_pc = pc + 1;
  int cost = profile.cycles(info.timing);

  switch (insn.op) {
    case Opcode::NOP: break;
    case Opcode::MOV: reg(0) = val(1); break;
    case Opcode::LI: reg(0) = uint32_t(o[1].value); break;
    case Opcode::ADD: reg(0) = val(1) + val(2); break;
    case Opcode::SUB: reg(0) = val(1) - val(2); break;
    case Opcode::MUL: reg(0) = val(1) * val(2); break;
    case Opcode::AND: reg(0) = val(1) & val(2); break;
    case Opcode::OR: reg(0) = val(1) | val(2); break;
    case Opcode::XOR: reg(0) = val(1) ^ val(2); break;
    case Opcode::SHL: reg(0) = val(1) << (val(2) & 31); break;
    case Opcode::SHR: reg(0) = val(1) >> (val(2) & 31); break;
    case Opcode::SAR: reg(0) = uint32_t(int32_t(val(1)) >> (val(2) & 31)); break;
    case Opcode::SLT: reg(0) = int32_t(val(1)) < int32_t(val(2)); break;
    case Opcode::SLTU: reg(0) = val(1) < val(2); break;
    case Opcode::ADDI: reg(0) = val(1) + uint32_t(int32_t(o[2].value)); break;
    case Opcode::ANDI: reg(0) = val(1) & uint32_t(o[2].value); break;
    case Opcode::ORI: reg(0) = val(1) | uint32_t(o[2].value); break;
    case Opcode::XORI: reg(0) = val(1) ^ uint32_t(o[2].value); break;
    case Opcode::SHLI: reg(0) = val(1) << (o[2].value & 31); break;
    case Opcode::SHRI: reg(0) = val(1) >> (o[2].value & 31); break;
    case Opcode::SARI: reg(0) = uint32_t(int32_t(val(1)) >> (o[2].value & 31)); break;
    case Opcode::DIVU:
    case Opcode::REMU: {
      const uint32_t d = val(2);
      if (d == 0) kernel_error(fmt::format("{}: division by zero (r{} is 0)", info.mnemonic, o[2].value));
      reg(0) = insn.op == Opcode::DIVU ? val(1) / d : val(1) % d;
      break;
    }
    case Opcode::SFADD: reg(0) = bits(f32(val(1)) + f32(val(2))); break;
    case Opcode::SFSUB: reg(0) = bits(f32(val(1)) - f32(val(2))); break;
    case Opcode::SFMUL: reg(0) = bits(f32(val(1)) * f32(val(2))); break;
    case Opcode::SFDIV: reg(0) = bits(f32(val(1)) / f32(val(2))); break;
    case Opcode::SFSQRT: reg(0) = bits(std::sqrt(f32(val(1)))); break;
    case Opcode::SFLT: reg(0) = f32(val(1)) < f32(val(2)); break;
    case Opcode::SFCVT: reg(0) = bits(float(int32_t(val(1)))); break;
    case Opcode::SFINT: reg(0) = uint32_t(float_to_int_saturated(f32(val(1)))); break;
    case Opcode::SFH2S: reg(0) = bits(isa::fp16_to_fp32(uint16_t(val(1)))); break;
    case Opcode::SFS2H: reg(0) = isa::fp32_to_fp16(f32(val(1))); break;

    case Opcode::JMP: next_pc = uint32_t(o[0].value); break;
    case Opcode::BEQ: if (val(0) == val(1)) next_pc = uint32_t(o[2].value); break;
    case Opcode::BNE: if (val(0) != val(1)) next_pc = uint32_t(o[2].value); break;
    case Opcode::BLT: if (int32_t(val(0)) < int32_t(val(1))) next_pc = uint32_t(o[2].value); break;
    case Opcode::BGE: if (int32_t(val(0)) >= int32_t(val(1))) next_pc = uint32_t(o[2].value); break;
    case Opcode::BLTU: if (val(0) < val(1)) next_pc = uint32_t(o[2].value); break;
    case Opcode::BGEU: if (val(0) >= val(1)) next_pc = uint32_t(o[2].value); break;
    case Opcode::CALL:
      if (main.depth >= profile.call_stack_depth || main.depth >= call_stack.size())
        kernel_error(fmt::format("call stack overflow: more than {} nested calls", profile.call_stack_depth));
      call_stack[main.depth++] = uint16_t(pc + 1);
      next_pc = uint32_t(o[0].value);
      break;
    case Opcode::RET:
      if (main.depth == 0) {
        end_task();
        break;
      }
      next_pc = call_stack[--main.depth];
      break;

    case Opcode::LD32: reg(0) = sram.load32(mem_addr(1)); break;
    case Opcode::LD16:
    case Opcode::LD16S: {
      const uint32_t a = mem_addr(1);
      const std::optional<FabricRegister> fr = a >= sram.size() && ctx.router && profile.name == "wse2"
                                                   ? fabric_register_at(a) : std::nullopt;
      const uint16_t v = fr ? read_fabric_register(*ctx.router, *fr) : sram.load16(a);
      reg(0) = insn.op == Opcode::LD16S ? uint32_t(int32_t(int16_t(v))) : v;
      break;
    }
    case Opcode::ST32: sram.store32(mem_addr(0), val(1)); break;
    case Opcode::ST16: {
      const uint32_t a = mem_addr(0);
      const std::optional<FabricRegister> fr = a >= sram.size() && ctx.router && profile.name == "wse2"
                                                   ? fabric_register_at(a) : std::nullopt;
      if (!fr) {
        sram.store16(a, uint16_t(val(1)));
        break;
      }
      ColorChannel& ch = torn_down_channel(ctx, fr->color, fr->switch_config ? "st16 to a switch configuration register"
                                                                           : "st16 to a color configuration register");
      if (write_fabric_register(*ctx.router, ch, *fr, uint16_t(val(1)))) {
        ++ch.switch_changes;
        if (ctx.events) {
          TraceEvent& e = ctx.events->add(ctx, TraceKind::SWITCH_CHANGED);
          e.color = uint8_t(fr->color);
          e.aux = ch.route.current;
        }
      }
      break;
    }

    case Opcode::DSDCOPY: dsr(0) = dsr(1); break;
    case Opcode::DSDBASE:
    case Opcode::DSDINC: {  // a new base, or the base moved by a number of elements
      isa::Descriptor& d = dsr(0);
      need_kind(d, {isa::DsdKind::MEM1D, isa::DsdKind::MEM4D, isa::DsdKind::CIRCBUF, isa::DsdKind::FIFO}, 0);
      d.base = insn.op == Opcode::DSDBASE
                   ? u16_value(reg_or_imm(1), "base address")
                   : u16_value(int64_t(d.base) + reg_or_imm(1) * (d.elem_bits / 8), "new base address");
      break;
    }
    case Opcode::DSDLEN: {
      isa::Descriptor& d = dsr(0);
      if (d.kind == isa::DsdKind::NONE) kernel_error(fmt::format("dsdlen: d{} is not set", o[0].value));
      if (d.kind == isa::DsdKind::MEM4D)
        d.extents[0] = u16_value(reg_or_imm(1), "length");
      else
        d.length = u16_value(reg_or_imm(1), "length");
      break;
    }
    case Opcode::DSDSTRIDE: {
      isa::Descriptor& d = dsr(0);
      need_kind(d, {isa::DsdKind::MEM1D, isa::DsdKind::MEM4D, isa::DsdKind::CIRCBUF}, 0);
      (d.kind == isa::DsdKind::MEM4D ? d.strides[0] : d.stride) = i16_value(reg_or_imm(1), "stride");
      break;
    }
    case Opcode::DSDADDR: reg(0) = dsr(1).base; break;
    case Opcode::DSDCOLOR:
    case Opcode::DSDQUEUE: {  // the color or the queue of a fabric descriptor
      isa::Descriptor& d = dsr(0);
      need_kind(d, {isa::DsdKind::FABIN, isa::DsdKind::FABOUT}, 0);
      const bool color = insn.op == Opcode::DSDCOLOR;
      const int64_t n = reg_or_imm(1), count = color ? isa::kNumColors : isa::kNumQueues;
      if (n < 0 || n >= count)
        kernel_error(fmt::format("{}: {} {} (0..{})", color ? "dsdcolor" : "dsdqueue", color ? "color" : "queue", n, count - 1));
      (color ? d.color : d.queue) = uint8_t(n);
      break;
    }
    case Opcode::DSDCTL:
    case Opcode::DSDSAVE: {  // a fabout's control flag, or a mem1d's save-address flag
      isa::Descriptor& d = dsr(0);
      const bool control = insn.op == Opcode::DSDCTL;
      need_kind(d, {control ? isa::DsdKind::FABOUT : isa::DsdKind::MEM1D}, 0);
      (control ? d.control : d.save_address) = reg_or_imm(1) != 0;
      break;
    }
    case Opcode::DSDINDEX: {
      isa::Descriptor& d = dsr(0);
      need_kind(d, {isa::DsdKind::FABOUT}, 0);
      const int64_t v = reg_or_imm(1);
      d.index = v < 0 ? -1 : u16_value(v, "index");
      break;
    }
    case Opcode::DSDLEN4:
    case Opcode::DSDSTRIDE4: {
      isa::Descriptor& d = dsr(0);
      need_kind(d, {isa::DsdKind::MEM4D}, 0);
      const int dim = int(o[1].value & 3);
      const int64_t v = int32_t(regs[size_t(o[2].value) & 15]);
      if (insn.op == Opcode::DSDLEN4)
        d.extents[dim] = u16_value(v, "extent");
      else
        d.strides[dim] = i16_value(v, "stride");
      break;
    }
    case Opcode::DSDGETLEN: {
      const isa::Descriptor& d = dsr(1);
      if (d.kind == isa::DsdKind::NONE) kernel_error(fmt::format("dsdgetlen: d{} is not set", o[1].value));
      reg(0) = d.kind == isa::DsdKind::MEM4D ? d.extents[0] : d.length;
      break;
    }
    case Opcode::DSDGETSTRIDE: {
      const isa::Descriptor& d = dsr(1);
      need_kind(d, {isa::DsdKind::MEM1D, isa::DsdKind::MEM4D, isa::DsdKind::CIRCBUF}, 1);
      reg(0) = uint32_t(int32_t(d.kind == isa::DsdKind::MEM4D ? d.strides[0] : d.stride));
      break;
    }
    case Opcode::DSDLD: {
      const uint32_t a = uint32_t(o[1].value);
      if (a % 2) kernel_error(fmt::format("dsdld: image address {} is not 2-byte aligned", a));
      isa::DescriptorImage image;
      for (int i = 0; i < isa::kDescriptorImageWords; ++i) image[size_t(i)] = sram.load16(a + 2 * uint32_t(i));
      std::string why;
      if (!isa::descriptor_from_image(image, dsr(0), why))
        kernel_error(fmt::format("dsdld: the image at address {} is not a descriptor: {}", a, why));
      break;
    }
    case Opcode::DSDST: {
      const uint32_t a = uint32_t(o[0].value);
      const isa::Descriptor& d = dsr(1);
      if (a % 2) kernel_error(fmt::format("dsdst: image address {} is not 2-byte aligned", a));
      if (d.kind == isa::DsdKind::CIRCBUF || d.kind == isa::DsdKind::FIFO)
        kernel_error(fmt::format("dsdst: d{} is a {}, which has no image (its ring state lives in its register)",
                                 o[1].value, isa::dsd_kind_name(d.kind)));
      const isa::DescriptorImage image = isa::descriptor_image(d);
      for (int i = 0; i < isa::kDescriptorImageWords; ++i) sram.store16(a + 2 * uint32_t(i), image[size_t(i)]);
      break;
    }
    case Opcode::FIFOCOUNT: {
      const isa::Descriptor& d = dsr(1);
      need_kind(d, {isa::DsdKind::FIFO}, 1);
      reg(0) = d.count;
      break;
    }

    case Opcode::BIND: {
      const int id = int(o[0].value);
      const uint32_t target = uint32_t(o[1].value);
      if (target >= ctx.program->insns.size())
        kernel_error(fmt::format("bind {}: target {} is past the end of the code", id, target));
      const uint64_t b = TaskTable::bit(id);
      if (tasks.data & b) kernel_error(fmt::format("bind {}: task id {} is bound to a data task", id, id));
      if (profile.is_local_task_id(id)) {
        if (!(tasks.local & b)) tasks.blocked &= ~b;  // a newly bound task starts unblocked
        tasks.local |= b;
        entries.entry[id] = target;
      } else {
        tasks.control |= b;
        entries.control_entry[id] = target;
      }
      break;
    }
    case Opcode::ACTIVATE: activate(int(o[0].value), &ctx); break;
    case Opcode::BLOCK: block(int(o[0].value), &ctx); break;
    case Opcode::UNBLOCK: unblock(int(o[0].value), &ctx); break;
    case Opcode::EXIT: end_task(); break;

    case Opcode::IQINIT: bind_input_queue(int(o[0].value), int(o[1].value), profile); break;
    case Opcode::OQINIT: bind_output_queue(int(o[0].value), int(o[1].value), profile); break;
    case Opcode::QFLUSH: {
      OutputQueue& q = oq[size_t(o[0].value) & 7];
      if (q.color < 0) kernel_error(fmt::format("qflush: output queue {} is not bound", o[0].value));
      q.flushing = true;
      oq_flushing |= uint8_t(1u << (o[0].value & 7));
      break;
    }
    case Opcode::SEND:
    case Opcode::SENDC: {
      const int qi = int(o[0].value & 7);
      OutputQueue& q = oq[qi];
      if (q.color < 0 || q.flushing)
        kernel_error(fmt::format("{}: output queue {} is {}", info.mnemonic, qi, q.color < 0 ? "not bound to a color" : "being flushed"));
      if (q.ring.full()) {
        stall_main({StallReason::OUTPUT_QUEUE_FULL, int8_t(qi), q.color, -1}, ctx);
        return;
      }
      Wavelet w;
      w.payload = val(1);
      w.color = uint8_t(q.color);
      w.control = insn.op == Opcode::SENDC;
      oq_push(qi, w, ctx.now + 1 + uint64_t(profile.ramp_up_latency));
      ++stats.wavelets_sent;
      break;
    }
    case Opcode::RECV: {
      const int qi = int(o[1].value & 7);
      InputQueue& q = iq[qi];
      if (q.color < 0) kernel_error(fmt::format("recv: input queue {} is not bound to a color", qi));
      if (q.ring.empty()) {
        stall_main({StallReason::INPUT_QUEUE_EMPTY, int8_t(qi), q.color, -1}, ctx);
        return;
      }
      reg(0) = iq_pop(qi).payload;
      break;
    }

    case Opcode::TDMASK: reg(0) = ctx.router ? ctx.router->torn_down : 0u; break;
    case Opcode::TDSWITCH: {
      const int color = int(o[0].value);
      const int position = int(o[1].value);
      ColorChannel& ch = torn_down_channel(ctx, color, info.mnemonic);
      if (position >= ch.route.num_positions)
        kernel_error(fmt::format("tdswitch {}, {}: color {} has only {} switch position{} at this router", color,
                                 position, color, ch.route.num_positions, ch.route.num_positions == 1 ? "" : "s"),
                     color);
      if (ch.route.current != position) {
        // Counted and traced like a switch moved by a control wavelet (router.cpp).
        ch.route.current = uint8_t(position);
        ++ch.switch_changes;
        if (ctx.events) {
          TraceEvent& e = ctx.events->add(ctx, TraceKind::SWITCH_CHANGED);
          e.color = uint8_t(color);
          e.aux = uint8_t(position);
        }
      }
      break;
    }
    case Opcode::TDEXIT: {
      const int color = int(o[0].value);
      torn_down_channel(ctx, color, info.mnemonic);
      // The core steps before its router, so the router forwards the color again this cycle.
      ctx.router->torn_down &= ~(1u << color);
      break;
    }
    case Opcode::QFPEND:
      reg(0) = oq_flushed;
      oq_flushed = 0;
      break;
    case Opcode::TDPEND:
      reg(0) = ctx.router ? ctx.router->td_pending : 0u;
      if (ctx.router) ctx.router->td_pending = 0;
      break;
    case Opcode::RTCFG:
    case Opcode::RTPOS:
    case Opcode::RTINVAL:
    case Opcode::RTMODE: {
      // Route writes (router.cpp, write_route): only while the color is torn down here.
      const int color = int(o[0].value);
      ColorChannel& ch = torn_down_channel(ctx, color, info.mnemonic);
      const bool moved = write_route(ch, insn.op, insn.op == Opcode::RTINVAL ? 0 : int(o[1].value),
                                     insn.op == Opcode::RTINVAL ? 0u : uint32_t(o[2].value));
      if (moved) {
        ++ch.switch_changes;
        if (ctx.events) {
          TraceEvent& e = ctx.events->add(ctx, TraceKind::SWITCH_CHANGED);
          e.color = uint8_t(color);
          e.aux = 0;
        }
      }
      break;
    }

    case Opcode::TSC: reg(0) = uint32_t(ctx.now); break;
    case Opcode::TSCH: reg(0) = uint32_t((ctx.now >> 32) & 0xFFFF); break;
    case Opcode::DPRINT:
    case Opcode::DPRINTR: {
      const auto& strings = ctx.program->image->strings;
      const size_t si = size_t(o[0].value);
      if (si >= strings.size()) kernel_error(fmt::format("{}: string #{} does not exist", info.mnemonic, si));
      log_line(ctx, insn.op == Opcode::DPRINT ? strings[si] : format_dprint(strings[si], val(1)));
      r.logged = true;
      break;
    }
    case Opcode::COORD: {
      const int axis = int(o[1].value);
      if (axis > 1) kernel_error(fmt::format("coord: axis {} (0: x, 1: y)", axis));
      reg(0) = uint32_t(int32_t(axis == 0 ? rect_x : rect_y));
      break;
    }

    default:
      if (isa::is_vector(info.timing)) {
        issue_vector(insn, ctx, r);
        return;
      }
      throw_fault(FaultKind::INTERNAL_ERROR, fmt::format("no semantics for {}", info.mnemonic));
  }
  // Retired.
  ++stats.instructions;
  ++stats.busy_cycles;
  r.progressed = true;
  if (ctx.events) {
    TraceEvent& e = ctx.events->add(ctx, TraceKind::INSTRUCTION);
    e.pc = pc;
    e.task = uint8_t(task_at_issue);
  }
  main.busy_until = ctx.now + uint64_t(std::max(cost, 1));
  if (main.running)
    main.pc = next_pc;
  else
    main.busy_until += uint64_t(profile.task_switch_cycles);  // exit, or ret from the task
}

}  // namespace wsemu::emu
