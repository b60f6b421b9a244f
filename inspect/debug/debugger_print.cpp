// The debugger's inspection commands: print, info, where. They read the wafer through
// core_view / peek_sram / route only, so they never change it.
#include <fmt/format.h>

#include <bit>
#include <charconv>
#include <cstring>
#include <ostream>
#include <stdexcept>

#include "isa/fp16.hpp"
#include "emulator/queues.hpp"
#include "inspect/trace/trace_filter.hpp"
#include "inspect/trace/wait_for_graph.hpp"
#include "isa/disassembler.hpp"
#include "inspect/debug/debugger.hpp"
#include "inspect/debug/debugger_internal.hpp"

namespace wsemu::debug {

namespace {

using detail::CommandError;
using detail::number;

bool parse_type(std::string_view name, isa::ElemType& t) {
  for (isa::ElemType c : {isa::ElemType::I16, isa::ElemType::U16, isa::ElemType::I32, isa::ElemType::U32, isa::ElemType::F16,
                          isa::ElemType::F32})
    if (isa::elem_type_name(c) == name) {
      t = c;
      return true;
    }
  return false;
}

std::string value_text(isa::ElemType t, uint32_t raw) {
  switch (t) {
    case isa::ElemType::I16: return std::to_string(int16_t(raw));
    case isa::ElemType::U16: return std::to_string(uint16_t(raw));
    case isa::ElemType::I32: return std::to_string(int32_t(raw));
    case isa::ElemType::U32: return std::to_string(raw);
    case isa::ElemType::F16: return fmt::format("{}", isa::fp16_to_fp32(uint16_t(raw)));
    case isa::ElemType::F32: return fmt::format("{}", std::bit_cast<float>(raw));
  }
  return "?";
}

std::string queue_contents(const std::vector<emu::Wavelet>& q) {
  std::string s;
  for (size_t i = 0; i < q.size() && i < 8; ++i) s += fmt::format("{}{:#x}{}", i ? " " : "", q[i].payload, q[i].control ? "c" : "");
  if (q.size() > 8) s += " ...";
  return s;
}

std::string direction_set(emu::DirectionMask m) {
  static constexpr std::string_view names[] = {"N", "E", "S", "W", "RAMP"};
  return trace::join_set_bits(m, emu::kNumDirections, ',', "-", [](int d) { return names[d]; });
}

std::string task_list(uint64_t bits) {
  return trace::join_set_bits(bits, 64, ' ', "none", [](int i) { return std::to_string(i); });
}

std::string descriptor_text(const isa::Descriptor& d) {
  const std::string kind(isa::dsd_kind_name(d.kind));
  switch (d.kind) {
    case isa::DsdKind::NONE: return "unset";
    case isa::DsdKind::MEM1D:
      return fmt::format("{}.{} base={:#x} length={} stride={}", kind, d.elem_bits, d.base, d.length, d.stride);
    case isa::DsdKind::MEM4D:
      return fmt::format("{}.{} base={:#x} extents=[{},{},{},{}] strides=[{},{},{},{}]", kind, d.elem_bits, d.base, d.extents[0],
                         d.extents[1], d.extents[2], d.extents[3], d.strides[0], d.strides[1], d.strides[2], d.strides[3]);
    case isa::DsdKind::CIRCBUF:
      return fmt::format("{}.{} base={:#x} size={} length={} head={}", kind, d.elem_bits, d.base, d.extents[0], d.length, d.head);
    case isa::DsdKind::FABIN:
      return fmt::format("{}.{} color={} queue={} length={}", kind, d.elem_bits, d.color, d.queue, d.length);
    case isa::DsdKind::FABOUT:
      return fmt::format("{}.{} color={} queue={} length={}{}", kind, d.elem_bits, d.color, d.queue, d.length, d.control ? " control" : "");
    case isa::DsdKind::FIFO:
      return fmt::format("{}.{} base={:#x} capacity={} head={} count={}", kind, d.elem_bits, d.base, d.length, d.head, d.count);
  }
  return kind;
}

}  // namespace

std::string Debugger::instruction_at(int x, int y, uint32_t pc) const {
  const isa::ObjectImage* p = wafer_.program_at(x, y);
  if (!p || pc >= p->code.size()) return "?";
  const std::optional<isa::Instruction> insn = isa::decode(p->code[pc]);
  std::string s = insn ? isa::format_instruction(*insn, p) : std::string("(invalid instruction word)");
  if (pc < p->source_lines.size() && p->source_lines[pc] > 0) s += fmt::format("    ; {}:{}", p->source_name, p->source_lines[pc]);
  if (const std::string loc = p->source_location(pc); !loc.empty()) s += fmt::format(" ({})", loc);
  return s;
}

void Debugger::print_location(int x, int y) {
  if (!wafer_.has_core(x, y)) {
    *out_ << fmt::format("PE({},{}): no program\n", x, y);
    return;
  }
  const emu::CoreView v = wafer_.core_view(x, y);
  if (v.running)
    *out_ << fmt::format("PE({},{}) task {} pc {}: {}\n", x, y, task_label(x, y, v.task), v.pc, instruction_at(x, y, v.pc));
  else
    *out_ << fmt::format("PE({},{}): no task running\n", x, y);
}

void Debugger::cmd_print(const std::vector<std::string>& in) {
  std::vector<std::string> args = in;
  // Not a structured binding: clang 14 (the fuzz preset) cannot capture one in the lambda below.
  const auto pe = take_pe(args);
  const auto x = pe.first, y = pe.second;
  if (args.empty()) throw CommandError("print what? a symbol, an address, rN or dN (see help)");
  const std::string what = args[0];
  const emu::CoreView v = [&] {
    if (!wafer_.has_core(x, y)) throw CommandError(fmt::format("PE({},{}) has no program", x, y));
    return wafer_.core_view(x, y);
  }();
  // Registers and descriptor registers.
  if (what == "regs" || what == "registers") return print_registers(x, y);
  if (what.size() >= 2 && (what[0] == 'r' || what[0] == 'd') && number(what.substr(1))) {
    const uint64_t i = *number(what.substr(1));
    if (what[0] == 'r') {
      if (i >= v.regs.size()) throw CommandError(fmt::format("there is no register {} (r0..r{})", what, v.regs.size() - 1));
      *out_ << fmt::format("{} = {} ({:#x}, as f32 {})\n", what, v.regs[i], v.regs[i], std::bit_cast<float>(v.regs[i]));
    } else {
      if (i >= v.dsrs.size()) throw CommandError(fmt::format("there is no descriptor register {} (d0..d{})", what, v.dsrs.size() - 1));
      *out_ << fmt::format("{} = {}\n", what, descriptor_text(v.dsrs[i]));
    }
    return;
  }
  const isa::ObjectImage& prog = program(x, y);
  for (const isa::DescriptorInit& d : prog.descriptors)
    if (d.name == what) {
      *out_ << fmt::format("{} (d{}) = {}\n", what, d.dsr, descriptor_text(v.dsrs[d.dsr]));
      return;
    }
  // SRAM: SYMBOL, SYMBOL[i], SYMBOL[i:j], or ADDRESS [COUNT] [TYPE].
  std::string name = what;
  uint64_t first = 0, count = 0;
  bool indexed = false;
  if (const size_t br = name.find('['); br != std::string::npos) {
    if (name.back() != ']') throw CommandError(fmt::format("'{}': expected SYMBOL[i] or SYMBOL[i:j]", what));
    const std::string inside = name.substr(br + 1, name.size() - br - 2);
    name = name.substr(0, br);
    const size_t colon = inside.find(':');
    const auto a = number(inside.substr(0, colon));
    const auto b = colon == std::string::npos ? std::optional<uint64_t>(a ? *a + 1 : 0) : number(inside.substr(colon + 1));
    if (!a || !b || *b <= *a) throw CommandError(fmt::format("'{}': bad index or range", what));
    first = *a;
    count = *b - *a;
    indexed = true;
  }
  uint32_t address = 0;
  isa::ElemType type = isa::ElemType::U32;
  std::string label;
  if (const auto a = number(name)) {
    if (indexed) throw CommandError("an address takes a count, not [i]: print ADDRESS [COUNT] [TYPE]");
    address = uint32_t(*a);
    count = args.size() > 1 && number(args[1]) ? *number(args[1]) : 1;
    for (size_t i = 1; i < args.size(); ++i)
      if (!number(args[i]) && !parse_type(args[i], type)) throw CommandError(fmt::format("unknown type '{}' (u32 i32 f32 u16 i16 f16)", args[i]));
    label = fmt::format("{:#x}", address);
  } else {
    const isa::Symbol* s = prog.find_symbol(name);
    if (!s) throw CommandError(fmt::format("PE({},{})'s program has no symbol, register or descriptor '{}'", x, y, name));
    type = s->type;
    if (!indexed) count = s->count;
    if (first + count > s->count) throw CommandError(fmt::format("{} has {} elements", name, s->count));
    address = s->address + uint32_t(first) * uint32_t(isa::elem_bytes(s->type));
    label = indexed ? what : name;
  }
  const uint64_t shown = std::min<uint64_t>(count, 256);
  const int bytes = isa::elem_bytes(type);
  std::string values;
  for (uint64_t i = 0; i < shown; ++i) {
    uint32_t raw = 0;
    wafer_.peek_sram(x, y, uint32_t(address + i * uint64_t(bytes)), std::span<uint8_t>(reinterpret_cast<uint8_t*>(&raw), size_t(bytes)));
    if (i) values += ", ";
    values += value_text(type, raw);
  }
  if (count == 1)
    *out_ << fmt::format("{} = {}\n", label, values);
  else
    *out_ << fmt::format("{} = [{}{}]  ({} x {})\n", label, values, count > shown ? ", ..." : "", count, isa::elem_type_name(type));
}

void Debugger::print_registers(int x, int y) {
  const emu::CoreView v = wafer_.core_view(x, y);
  for (size_t i = 0; i < v.regs.size(); ++i)
    *out_ << fmt::format("r{:<2} = {:>10} {:#010x}{}", i, v.regs[i], v.regs[i], i % 2 ? "\n" : "    ");
  if (v.regs.size() % 2) *out_ << "\n";
}

void Debugger::print_dsds(int x, int y) {
  const emu::CoreView v = wafer_.core_view(x, y);
  const isa::ObjectImage& prog = program(x, y);
  bool any = false;
  for (size_t i = 0; i < v.dsrs.size(); ++i) {
    if (v.dsrs[i].kind == isa::DsdKind::NONE) continue;
    std::string name;
    for (const isa::DescriptorInit& d : prog.descriptors)
      if (d.dsr == i) name = " " + d.name;
    *out_ << fmt::format("d{}{}: {}\n", i, name, descriptor_text(v.dsrs[i]));
    any = true;
  }
  if (!any) *out_ << "no descriptor register is set\n";
}

void Debugger::print_queues(int x, int y) {
  const emu::CoreView v = wafer_.core_view(x, y);
  for (int q = 0; q < isa::kNumQueues; ++q) {
    if (v.input_queue_color[q] >= 0 || !v.input_queues[q].empty())
      *out_ << fmt::format("input queue {}: color {}, {} wavelet(s) {}\n", q, v.input_queue_color[q], v.input_queues[q].size(),
                          queue_contents(v.input_queues[q]));
  }
  for (int q = 0; q < isa::kNumQueues; ++q) {
    if (v.output_queue_color[q] >= 0 || !v.output_queues[q].empty())
      *out_ << fmt::format("output queue {}: color {}, {} wavelet(s) {}\n", q, v.output_queue_color[q], v.output_queues[q].size(),
                          queue_contents(v.output_queues[q]));
  }
  std::string busy;
  for (int ut = 0; ut < isa::kNumQueues; ++ut)
    if (v.microthread_busy[ut]) {
      if (!busy.empty()) busy += ' ';
      busy += std::to_string(ut);
    }
  *out_ << "microthreads busy: " << (busy.empty() ? "none" : busy) << "\n";
}

void Debugger::print_routes(int x, int y) {
  bool any = false;
  for (int c = 0; c < isa::kNumColors; ++c) {
    const std::optional<emu::ColorRoute> r = wafer_.route(x, y, c);
    if (!r) continue;
    any = true;
    std::string positions;
    for (int p = 0; p < r->num_positions; ++p)
      positions += fmt::format("{}{}rx {} -> tx {}", p ? "; " : "", r->num_positions > 1 ? fmt::format("[{}] ", p) : "",
                               direction_set(r->positions[p].rx), direction_set(r->positions[p].tx));
    const emu::CounterFilter& k = r->counter;
    *out_ << fmt::format("color {:>2}: {}{}{}{}\n", c, positions,
                        r->num_positions > 1 ? fmt::format(" (switch at {}{})", r->current, r->ring_mode ? ", ring" : "") : "",
                        r->filter ? fmt::format(" filter {}..{}", r->filter_min, r->filter_max) : "",
                        k.on ? fmt::format(" counter filter from {}, to RAMP while <= {}, wraps after {}", k.init, k.max, k.limit) : "");
  }
  if (!any) *out_ << fmt::format("PE({},{}) routes no color\n", x, y);
}

void Debugger::print_tasks(int x, int y) {
  const emu::CoreView v = wafer_.core_view(x, y);
  for (const isa::TaskBinding& t : program(x, y).tasks) {
    const uint64_t b = uint64_t{1} << t.id;
    std::string state;
    if (t.kind == isa::TaskKind::CONTROL)
      state = "control task";
    else
      state = fmt::format("{}{}{}", (v.activated & b) ? "activated, " : "", (v.blocked & b) ? "blocked" : "unblocked",
                          v.running && v.task == t.id ? ", RUNNING" : "");
    const char* kind = t.kind == isa::TaskKind::DATA ? "data" : t.kind == isa::TaskKind::LOCAL ? "local" : "control";
    *out_ << fmt::format("task {:>2} {:<12} {:<7} entry {:>4}: {}\n", t.id, t.name, kind, t.entry, state);
  }
  *out_ << fmt::format("activated: {}; blocked: {}\n", task_list(v.activated), task_list(v.blocked & (v.bound_data | v.bound_local)));
}

void Debugger::print_breakpoints() {
  if (breakpoints_.empty() && watchpoints_.empty()) *out_ << "no breakpoints or watchpoints\n";
  for (const Breakpoint& b : breakpoints_) *out_ << fmt::format("{:>3} break {} (hit {} time{})\n", b.id, b.spec, b.hits, b.hits == 1 ? "" : "s");
  for (const Watchpoint& w : watchpoints_) *out_ << fmt::format("{:>3} watch {} = {}\n", w.id, w.what, w.value);
}

void Debugger::print_hang() {
  if (!wafer_.pending_work()) {
    *out_ << "nothing is pending: no PE waits on anything\n";
    return;
  }
  *out_ << trace::WaitForGraph::build(wafer_.hang_report(), wafer_).to_text();
}

void Debugger::cmd_info(const std::vector<std::string>& in) {
  std::vector<std::string> args = in;
  const auto [x, y] = take_pe(args);
  if (args.empty()) throw CommandError("info registers|dsds|queues|routes|tasks|breakpoints|hang|pe");
  const std::string& what = args[0];
  if (what == "breakpoints" || what == "break" || what == "watchpoints") return print_breakpoints();
  if (what == "hang") return print_hang();
  if (what == "routes") return print_routes(x, y);
  if (!wafer_.has_core(x, y)) throw CommandError(fmt::format("PE({},{}) has no program", x, y));
  if (what == "registers" || what == "regs" || what == "r") return print_registers(x, y);
  if (what == "dsds" || what == "dsd" || what == "descriptors") return print_dsds(x, y);
  if (what == "queues") return print_queues(x, y);
  if (what == "tasks") return print_tasks(x, y);
  if (what == "pe" || what == "where") return print_location(x, y);
  throw CommandError(fmt::format("info {}? (registers, dsds, queues, routes, tasks, breakpoints, hang, pe)", what));
}

void Debugger::cmd_where(const std::vector<std::string>& args) {
  int x0 = 0, y0 = 0, w = wafer_.width(), h = wafer_.height();
  if (!args.empty()) {
    int v[4];
    std::string_view s = args[0];
    for (int i = 0; i < 4; ++i) {
      const size_t comma = s.find(',');
      const auto n = number(s.substr(0, comma));
      if (!n || (i < 3 && comma == std::string_view::npos)) throw CommandError(fmt::format("where X0,Y0,W,H: '{}'", args[0]));
      v[i] = int(*n);
      s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
    }
    x0 = v[0], y0 = v[1], w = v[2], h = v[3];
  }
  const uint64_t now = wafer_.cycle();
  int shown = 0;
  for (int y = y0; y < std::min(y0 + h, wafer_.height()); ++y)
    for (int x = x0; x < std::min(x0 + w, wafer_.width()); ++x) {
      if (!wafer_.has_core(x, y)) continue;
      const emu::CoreView v = wafer_.core_view(x, y);
      std::string line = fmt::format("{}PE({},{}): ", std::pair(x, y) == current_ ? "* " : "  ", x, y);
      if (v.running) {
        line += fmt::format("task {} pc {} `{}`", task_label(x, y, v.task), v.pc, instruction_at(x, y, v.pc));
        const auto it = last_stall_.find({x, y});
        if (it != last_stall_.end() && it->second.cycle + 1 == now)
          line += fmt::format(", stalled: {}{}", emu::stall_reason_name(emu::StallReason(it->second.reason)),
                              it->second.color < 32 ? fmt::format(" (color {})", it->second.color) : "");
      } else {
        line += "idle";
      }
      const uint64_t waiting = v.activated & v.bound_local;
      if (waiting) {
        line += "; activated:";
        for (int t = 0; t < 64; ++t)
          if ((waiting >> t) & 1) line += fmt::format(" {}{}", task_label(x, y, t), (v.blocked >> t) & 1 ? " (blocked)" : "");
      }
      std::string busy;
      for (int ut = 0; ut < isa::kNumQueues; ++ut)
        if (v.microthread_busy[ut]) busy += fmt::format(" {}", ut);
      if (!busy.empty()) line += "; microthreads busy:" + busy;
      *out_ << line << "\n";
      ++shown;
    }
  if (!shown) *out_ << "no PE with a program in that rectangle\n";
}

}  // namespace wsemu::debug
