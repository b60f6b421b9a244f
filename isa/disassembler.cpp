// The disassembler: an ObjectImage back to assembly text that assembles to the same image.
//
// Why it looks the way it does: everything the image holds is printed as a directive (arch,
// data with its symbols, exports, tasks, descriptors, queues) and code words that the assembler
// could not have produced from an instruction line (undecodable words, non-canonical fields)
// are printed as `.word`, so the round trip is exact for any image the assembler makes.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>

#include "isa/asm/lexer.hpp"
#include "isa/assembler.hpp"
#include "isa/disassembler.hpp"
#include "isa/fp16.hpp"

namespace wsemu::isa {
namespace {

using assembler::quote_string;

// The names a program gives to numbers, looked up once per program (a disassembly prints
// thousands of operands).
struct ProgramNames {
  const ObjectImage* program = nullptr;
  std::map<int64_t, std::string_view> dsrs, labels, tasks;
  std::map<int64_t, const Symbol*> symbols;  // by address; the first declared wins

  explicit ProgramNames(const ObjectImage* p) : program(p) {
    if (!p) return;
    for (const DescriptorInit& d : p->descriptors) dsrs.emplace(d.dsr, d.name);
    for (const Function& f : p->functions) labels.emplace(f.entry, f.name);
    for (const TaskBinding& t : p->tasks) tasks.emplace(t.id, t.name);
    for (const Symbol& s : p->symbols) symbols.emplace(s.address, &s);
  }

  static std::string find(const std::map<int64_t, std::string_view>& m, int64_t key, std::string_view prefix) {
    auto it = m.find(key);
    return it != m.end() ? std::string(it->second) : fmt::format("{}{}", prefix, key);
  }
  std::string dsr(int64_t n) const { return find(dsrs, n, "d"); }
  std::string label(int64_t n) const { return find(labels, n, ""); }
  std::string task(int64_t n) const { return find(tasks, n, ""); }

  // An absolute address inside a data symbol reads better by name.
  std::string address(int64_t a) const {
    auto it = symbols.upper_bound(a);
    if (it != symbols.begin()) {
      --it;
      const Symbol& s = *it->second;
      const int64_t size = int64_t{s.count} * elem_bytes(s.type);
      if (a == s.address) return s.name;
      if (a < s.address + size) return fmt::format("{} + {}", s.name, a - s.address);
    }
    return fmt::format("{}", a);
  }
};

// Shortest text that reads back as the same fp32 value; non-finite values as bits(...).
std::string float_text(float f) {
  if (!std::isfinite(f)) return fmt::format("bits(0x{:08x})", std::bit_cast<uint32_t>(f));
  std::string s = fmt::format("{}", f);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string half_text(uint16_t h) {
  if ((h & 0x7C00) == 0x7C00) return fmt::format("bits(0x{:04x})", h);
  return float_text(fp16_to_fp32(h));
}

std::string operand_text(OperandKind kind, const Operand& o, const ProgramNames& names) {
  switch (kind) {
    case OperandKind::REG: return fmt::format("r{}", o.value);
    case OperandKind::DSR: return names.dsr(o.value);
    case OperandKind::VDST:
    case OperandKind::VSRC: return o.is_reg ? fmt::format("r{}", o.value) : names.dsr(o.value);
    case OperandKind::REG_OR_IMM: return o.is_reg ? fmt::format("r{}", o.value) : fmt::format("{}", o.value);
    case OperandKind::MEM:
      if (!o.is_reg) return fmt::format("[{}]", names.address(o.value));
      if (o.value == 0) return fmt::format("[r{}]", o.reg);
      if (o.value < 0) return fmt::format("[r{} - {}]", o.reg, -o.value);
      return fmt::format("[r{} + {}]", o.reg, o.value);
    case OperandKind::IMM32:
      return o.value > 0xFFFF ? fmt::format("0x{:x}", static_cast<uint64_t>(o.value) & 0xFFFFFFFF)
                              : fmt::format("{}", o.value);
    case OperandKind::LABEL: return names.label(o.value);
    case OperandKind::TASKID: return names.task(o.value);
    case OperandKind::STR:
      if (names.program && o.value >= 0 && static_cast<size_t>(o.value) < names.program->strings.size())
        return quote_string(names.program->strings[static_cast<size_t>(o.value)]);
      return fmt::format("<string #{}>", o.value);
    default: return fmt::format("{}", o.value);
  }
}

std::string instruction_text(const Instruction& insn, const ProgramNames& names) {
  const InsnInfo& in = info(insn.op);
  std::string out(in.mnemonic);
  if (insn.async.async) out += ".async";
  for (int i = 0; i < in.num_operands; ++i) {
    out += i == 0 ? " " : ", ";
    out += operand_text(in.operands[static_cast<size_t>(i)], insn.operands[static_cast<size_t>(i)], names);
  }
  if (is_vector(in.timing)) {
    const AsyncSpec& a = insn.async;
    if (a.microthread != 0) out += fmt::format(", ut={}", a.microthread);
    if (a.priority == Priority::MEDIUM) out += ", priority=medium";
    if (a.priority == Priority::HIGH) out += ", priority=high";
    if (a.on_done == OnDone::ACTIVATE) out += fmt::format(", activate={}", names.task(a.task));
    if (a.on_done == OnDone::UNBLOCK) out += fmt::format(", unblock={}", names.task(a.task));
  }
  return out;
}

// Whether format_instruction() of the decoded word assembles back to exactly this word.
bool expressible(uint64_t word, const Instruction& insn) {
  if (encode(insn) != word) return false;
  const AsyncSpec& a = insn.async;
  if (!a.async && a != AsyncSpec{}) return false;      // options need the .async form
  if (a.on_done == OnDone::NONE && a.task != 0) return false;
  return true;
}

struct DataPrinter {
  const ObjectImage& img;
  std::string& out;

  uint64_t read(uint32_t offset, int bytes) const {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) {
      const size_t at = offset + static_cast<size_t>(i);
      if (at < img.data_init.size()) v |= uint64_t{img.data_init[at]} << (8 * i);
    }
    return v;
  }

  bool all_zero(uint32_t offset, uint32_t bytes) const {
    for (uint32_t i = 0; i < bytes; ++i)
      if (offset + i < img.data_init.size() && img.data_init[offset + i] != 0) return false;
    return true;
  }

  std::string value_text(ElemType t, uint64_t raw) const {
    switch (t) {
      case ElemType::I16: return fmt::format("{}", static_cast<int16_t>(raw));
      case ElemType::U16: return fmt::format("{}", static_cast<uint16_t>(raw));
      case ElemType::I32: return fmt::format("{}", static_cast<int32_t>(raw));
      case ElemType::U32: return fmt::format("{}", static_cast<uint32_t>(raw));
      case ElemType::F16: return half_text(static_cast<uint16_t>(raw));
      case ElemType::F32: return float_text(std::bit_cast<float>(static_cast<uint32_t>(raw)));
    }
    return "0";
  }

  // One data directive of `count` elements at `offset`, zero-filled form when all zero.
  void item(std::string_view labels, ElemType t, uint32_t offset, uint32_t count) {
    const int bytes = elem_bytes(t);
    const std::string dir = fmt::format(".{}", elem_type_name(t));
    if (all_zero(offset, count * static_cast<uint32_t>(bytes)) || count == 0) {
      out += fmt::format("{}{} [{}]\n", labels, dir, count);
      return;
    }
    out += fmt::format("{}{} ", labels, dir);
    for (uint32_t i = 0; i < count; ++i) {
      out += value_text(t, read(offset + i * static_cast<uint32_t>(bytes), bytes));
      if (i + 1 < count) out += (i % 8 == 7) ? ",\n        " : ", ";
    }
    out += '\n';
  }

  void gap(uint32_t from, uint32_t to) {
    if (to <= from) return;
    item("", ElemType::U16, from, (to - from) / 2);
  }
};

std::string dsd_text(const DescriptorInit& d, const ObjectImage& img, const ProgramNames& names) {
  const Descriptor& v = d.value;
  const bool memory = v.kind == DsdKind::MEM1D || v.kind == DsdKind::MEM4D || v.kind == DsdKind::CIRCBUF ||
                      v.kind == DsdKind::FIFO;
  std::string base = fmt::format("{}", v.base);
  int default_width = 32;
  if (memory) {
    // Name the base by the symbol that holds it; the assembler infers the width from it.
    for (const Symbol& s : img.symbols) {
      const uint32_t size = s.count * static_cast<uint32_t>(elem_bytes(s.type));
      if (v.base == s.address || (v.base > s.address && v.base < s.address + size)) {
        base = v.base == s.address ? s.name : fmt::format("{} + {}", s.name, v.base - s.address);
        default_width = elem_bytes(s.type) * 8;
        break;
      }
    }
  }
  const std::string kind = fmt::format("{}{}", dsd_kind_name(v.kind),
                                       v.elem_bits != default_width ? fmt::format(".{}", v.elem_bits) : "");
  std::string args;
  switch (v.kind) {
    case DsdKind::MEM1D:
      args = fmt::format("{}, {}{}", base, v.length, v.stride != 1 ? fmt::format(", {}", v.stride) : "");
      break;
    case DsdKind::MEM4D:
      args = fmt::format("{}, [{}, {}, {}, {}], [{}, {}, {}, {}]", base, v.extents[0], v.extents[1], v.extents[2],
                         v.extents[3], v.strides[0], v.strides[1], v.strides[2], v.strides[3]);
      break;
    case DsdKind::CIRCBUF: args = fmt::format("{}, {}", base, v.length); break;
    case DsdKind::FIFO:
      args = fmt::format("{}, {}", base, v.length);
      if (v.activate_on_push >= 0) args += fmt::format(", activate_push={}", names.task(v.activate_on_push));
      if (v.activate_on_pop >= 0) args += fmt::format(", activate_pop={}", names.task(v.activate_on_pop));
      break;
    case DsdKind::FABIN:
      args = fmt::format("{}, {}, {}", v.color, v.queue, v.length);
      if (v.on_control == OnControl::TERMINATE) args += ", on_control=terminate";
      if (v.on_control == OnControl::ACTIVATE)
        args += fmt::format(", on_control=activate:{}", names.task(v.on_control_task));
      if (v.on_control == OnControl::UNBLOCK)
        args += fmt::format(", on_control=unblock:{}", names.task(v.on_control_task));
      break;
    case DsdKind::FABOUT:
      args = fmt::format("{}, {}, {}", v.color, v.queue, v.length);
      if (v.control) args += ", control=1";
      if (v.index != -1) args += fmt::format(", index={}", v.index);
      if (v.advance_switch) args += ", advance_switch=1";
      break;
    case DsdKind::NONE: return fmt::format("; descriptor '{}' in d{} is unset and cannot be written as .dsd\n", d.name, d.dsr);
  }
  return fmt::format(".dsd {} = {}({}) @ d{}\n", d.name, kind, args, d.dsr);
}

}  // namespace

std::string format_instruction(const Instruction& insn, const ObjectImage* program) {
  return instruction_text(insn, ProgramNames(program));
}

std::string disassemble(const ObjectImage& img) {
  const ProgramNames names(&img);
  std::string out = "; wsemu object, disassembled\n";
  if (!img.arch.empty()) out += fmt::format(".arch {}\n", img.arch);

  // Data, in address order, with the gaps between symbols as anonymous 16-bit words.
  if (img.data_size > 0 || !img.symbols.empty()) {
    out += "\n.data\n";
    std::vector<const Symbol*> syms;
    for (const Symbol& s : img.symbols) syms.push_back(&s);
    std::stable_sort(syms.begin(), syms.end(), [](const Symbol* a, const Symbol* b) { return a->address < b->address; });
    DataPrinter dp{img, out};
    uint32_t at = 0;  // offset from data_base
    for (size_t i = 0; i < syms.size();) {
      const Symbol& s = *syms[i];
      std::string labels = s.name + ": ";
      size_t j = i + 1;
      while (j < syms.size() && syms[j]->address == s.address && syms[j]->type == s.type &&
             syms[j]->count == s.count && s.count > 0) {
        labels += syms[j]->name + ": ";
        ++j;
      }
      const uint32_t offset = s.address >= img.data_base ? s.address - img.data_base : 0;
      dp.gap(at, offset);
      dp.item(labels, s.type, offset, s.count);
      at = std::max(at, offset + s.count * static_cast<uint32_t>(elem_bytes(s.type)));
      i = j;
    }
    dp.gap(at, img.data_size);
  }
  bool exported = false;
  for (const Symbol& s : img.symbols) exported |= s.exported;
  for (const Function& f : img.functions) exported |= f.exported;
  if (exported) {
    out += '\n';
    for (const Symbol& s : img.symbols)
      if (s.exported) out += fmt::format(".export {}\n", s.name);
    for (const Function& f : img.functions)
      if (f.exported) out += fmt::format(".export {}\n", f.name);
  }
  if (!img.descriptors.empty()) {
    out += '\n';
    for (const DescriptorInit& d : img.descriptors) out += dsd_text(d, img, names);
  }
  if (!img.queues.empty()) {
    out += '\n';
    for (const QueueBinding& q : img.queues)
      out += fmt::format(".{} {}, {}\n", q.output ? "oqinit" : "iqinit", q.queue, q.color);
  }
  if (!img.unblocked_ids.empty()) {
    out += '\n';
    for (const uint8_t id : img.unblocked_ids) out += fmt::format(".unblock {}\n", id);
  }

  out += "\n.code\n";
  for (const TaskBinding& t : img.tasks) {
    std::string how;
    switch (t.kind) {
      case TaskKind::DATA: how = fmt::format("data, {} {}", t.trigger_is_queue ? "queue" : "color", t.trigger); break;
      case TaskKind::LOCAL: how = fmt::format("local, {}", t.id); break;
      case TaskKind::CONTROL: how = fmt::format("control, {}", t.id); break;
    }
    out += fmt::format(".task {}, {}{}{}\n", t.name, how, t.starts_blocked ? ", blocked" : "",
                       t.starts_activated ? ", activated" : "");
  }
  if (!img.tasks.empty()) out += '\n';

  std::multimap<uint32_t, const Function*> labels;
  for (const Function& f : img.functions) labels.emplace(f.entry, &f);
  SourceLocation loc;  // the .loc in force
  for (size_t pc = 0; pc <= img.code.size(); ++pc) {
    auto [lo, hi] = labels.equal_range(static_cast<uint32_t>(pc));
    for (auto it = lo; it != hi; ++it) out += fmt::format("{}:\n", it->second->name);
    if (pc == img.code.size()) break;
    if (pc < img.source_locations.size() && img.source_locations[pc] != loc) {
      loc = img.source_locations[pc];
      if (loc.file == 0 || loc.file > img.source_files.size()) {
        loc = {};
        out += "        .loc\n";
      } else {
        out += fmt::format("        .loc {}, {}", quote_string(img.source_files[loc.file - 1]), loc.line);
        out += loc.col > 0 ? fmt::format(", {}\n", loc.col) : "\n";
      }
    }
    const uint64_t word = img.code[pc];
    const std::optional<Instruction> insn = decode(word);
    if (insn && expressible(word, *insn)) {
      // Mnemonics padded to a column, as people write them.
      const std::string text = instruction_text(*insn, names);
      const size_t space = text.find(' ');
      out += space == std::string::npos || space >= 8
                 ? fmt::format("        {}\n", text)
                 : fmt::format("        {:<8}{}\n", text.substr(0, space), text.substr(space + 1));
    } else {
      out += fmt::format("        .word 0x{:016x}{}\n", word,
                         insn ? fmt::format("  ; {} (non-canonical fields)", instruction_text(*insn, names))
                              : "  ; not a valid instruction");
    }
  }
  // Labels past the end of the code (a hand-made image) would be lost: keep them visible.
  for (auto it = labels.upper_bound(static_cast<uint32_t>(img.code.size())); it != labels.end(); ++it)
    out += fmt::format("; label '{}' at {} lies beyond the code and is not reproduced\n", it->second->name, it->first);
  return out;
}

}  // namespace wsemu::isa
