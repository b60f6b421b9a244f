// One PE program class: instantiating its module, generating its code, and writing its `.wsa`.
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

#include "compiler/csl/compiler_impl.hpp"

namespace wsemu::compiler::csl {

namespace {

constexpr int kMaxDsds = 4096;  // beyond the registers they live in memory (dsd_placement.cpp)

// An i8 or u8 variable takes one 16-bit word (the smallest that SRAM addresses) holding its
// value sign- or zero-extended; arrays of them would be read as 16-bit elements by DSDs and the
// host, so they are refused.
std::string data_directive(const TypeRef& t, bool array_element, Span at) {
  switch (t->kind) {
    case TK::FLOAT: return t->bits == 16 ? ".f16" : ".f32";
    case TK::INT:
      if (t->bits == 8 && array_element)
        fail(at, "unsupported: arrays of " + t->str() + " (wsemu keeps an 8-bit integer in a 16-bit word; use an array of " +
                     (t->is_signed ? "i16" : "u16") + ")");
      if (t->bits == 16 || t->bits == 8) return t->is_signed ? ".i16" : ".u16";
      if (t->bits == 32) return t->is_signed ? ".i32" : ".u32";
      fail(at, "unsupported: " + t->str() + " variables (wsemu data is 8, 16 or 32 bits wide)");
    case TK::BOOL: case TK::COLOR: case TK::DATA_TASK_ID: case TK::LOCAL_TASK_ID: case TK::CONTROL_TASK_ID:
    case TK::ENUM: return ".u16";
    case TK::MANY_PTR: case TK::PTR: return ".u32";
    default: fail(at, "unsupported: a global variable of type " + t->str());
  }
}

std::string f32_text(double v) {
  if (std::isnan(v) || std::isinf(v)) {
    float f = float(v);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return "bits(" + std::to_string(u) + ")";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

std::string Compiler::asm_value(const Value& v, const TypeRef& t, Span at) {
  switch (v.k) {
    case Value::K::INT: return t->kind == TK::FLOAT ? f32_text(double(v.i)) : std::to_string(v.i);
    case Value::K::FLOAT: return f32_text(v.f);
    case Value::K::BOOL: case Value::K::COLOR: case Value::K::TASK_ID: case Value::K::ENUM: return std::to_string(v.i);
    case Value::K::POINTER: {
      const int eb = v.global->type->kind == TK::ARRAY ? v.global->type->elem->byte_size() : v.global->type->byte_size();
      return v.global->asm_name + (v.offset ? " + " + std::to_string(v.offset * eb) : "");
    }
    default: fail(at, "unsupported: initial value " + v.str());
  }
}

std::string Compiler::alloc_dsr(Program& p, Span at) {
  if (p.next_dsr >= kMaxDsds) fail(at, "more than " + std::to_string(kMaxDsds) + " distinct DSDs in one PE program");
  return "dsd" + std::to_string(p.next_dsr++);
}

// A fabric DSD's queue and color as the program binds them: the host streams' queues map to the
// firmware's, a DSD without .fabric_color takes its queue's color.
DsdValue Compiler::resolve_fabric(const Program& p, const DsdValue& d0) const {
  DsdValue d = d0;
  if (d.kind == "fabin_dsd") {
    if (p.stream_in_queues.count(d.queue)) {
      d.color = kH2dStreamColor;
      d.queue = kStreamQueue;
    }
    if (d.color < 0) {
      auto it = p.input_queue_colors.find(d.queue);
      if (it == p.input_queue_colors.end())
        fail(d.span, "fabin_dsd on input queue " + std::to_string(d.queue) + " has no .fabric_color and no @initialize_queue binds the queue");
      d.color = it->second;
    }
  } else if (d.kind == "fabout_dsd") {
    if (p.stream_out_queues.count(d.queue)) {
      d.kind = "d2h_fifo";
      return d;
    }
    if (d.color < 0) {
      auto it = p.output_queue_colors.find(d.queue);
      if (it == p.output_queue_colors.end())
        fail(d.span, "fabout_dsd on output queue " + std::to_string(d.queue) + " has no .fabric_color and no @initialize_queue binds the queue");
      d.color = it->second;
    }
  }
  return d;
}

std::string Compiler::dsd_template(Program& p, const DsdValue& d0, Span at) {
  const DsdValue d = resolve_fabric(p, d0);
  if (d.kind == "d2h_fifo") {
    if (!p.includes.count("memcpy.wsa")) fail(at, "a stream to the host (MEMCPYD2H_1) needs <memcpy/memcpy>");
    return "memcpy_d2h_fifo";
  }
  const std::string k = d.key();
  auto it = p.dsd_templates.find(k);
  if (it != p.dsd_templates.end()) return it->second;
  const std::string r = alloc_dsr(p, at);
  p.dsd_templates[k] = r;
  p.dsd_regs.push_back({r, std::make_shared<DsdValue>(d)});
  return r;
}

namespace {

std::string dsd_text(const DsdValue& d) {
  const std::string w = d.elem_bits == 16 ? ".16" : ".32";
  if (d.kind == "mem1d_dsd" || d.kind == "mem4d_dsd") {
    const int eb = d.elem_bits / 8;
    // No base: a template whose base a dsdbase sets at run time (make_dsd).
    const std::string base = (d.base ? d.base->asm_name : "0") + (d.base_offset ? " + " + std::to_string(d.base_offset * eb) : "");
    if (d.extents.size() <= 1) {
      const int64_t len = d.extents.empty() ? 0 : d.extents[0];
      const int64_t stride = d.strides.empty() ? 1 : d.strides[0];
      return "mem1d" + w + "(" + base + ", " + std::to_string(len) + (stride != 1 ? ", " + std::to_string(stride) : "") + ")";
    }
    std::string e, s;
    for (size_t i = 0; i < d.extents.size(); ++i) {
      e += (i ? ", " : "") + std::to_string(d.extents[i]);
      s += (i ? ", " : "") + std::to_string(d.strides[i]);
    }
    return "mem4d" + w + "(" + base + ", [" + e + "], [" + s + "])";
  }
  const int64_t len = d.extents.empty() ? 0 : d.extents[0];
  if (d.kind == "fifo") return "fifo(" + d.base->asm_name + ", " + std::to_string(len) + ")";
  if (d.kind == "fabin_dsd") return "fabin" + w + "(" + std::to_string(d.color) + ", " + std::to_string(d.queue) + ", " + std::to_string(len) + ")";
  std::string s = "fabout" + w + "(" + std::to_string(d.color) + ", " + std::to_string(d.queue) + ", " + std::to_string(len);
  if (d.control) s += ", control=1";
  if (d.wavelet_index >= 0) s += ", index=" + std::to_string(d.wavelet_index);
  if (d.advance_switch) s += ", advance_switch=1";
  return s + ")";
}

// The identifiers (assembly names: letters, digits, '_', '$') of a line, added to `words`.
void add_words(const std::string& line, std::set<std::string>& words) {
  size_t i = 0;
  while (i < line.size()) {
    auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; };
    if (line[i] == ';') return;  // a comment
    if (!is_word(line[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < line.size() && is_word(line[j])) ++j;
    words.insert(line.substr(i, j - i));
    i = j;
  }
}

// A global that nothing names (no instruction, descriptor, export or other global's initial
// value) takes no memory, as in CSL, whose declarations are analysed lazily: pipeline-03's
// memcpy edge PEs import both FIFO modules and use one (81,928 bytes declared, 48 KiB to hold
// them). wsemu still analyses every declaration, so their errors show.
void drop_unused_globals(std::vector<std::string>& out, const std::vector<std::pair<size_t, size_t>>& global_lines) {
  std::vector<bool> in_global(out.size(), false);
  for (const auto& [first, end] : global_lines)
    for (size_t i = first; i < end; ++i) in_global[i] = true;
  std::set<std::string> named;
  for (size_t i = 0; i < out.size(); ++i)
    if (!in_global[i]) add_words(out[i], named);
  auto label_of = [&](const std::pair<size_t, size_t>& r) {
    for (size_t i = r.first; i < r.second; ++i) {
      const size_t colon = out[i].find(':');
      if (out[i].rfind(".align", 0) != 0 && out[i].rfind(";", 0) != 0 && colon != std::string::npos) return out[i].substr(0, colon);
    }
    return std::string();
  };
  std::vector<bool> kept(global_lines.size(), false);
  for (bool grew = true; grew;) {  // a kept global's initial value may name another (&array)
    grew = false;
    for (size_t k = 0; k < global_lines.size(); ++k) {
      const std::string label = label_of(global_lines[k]);
      if (kept[k] || (!label.empty() && !named.count(label))) continue;
      kept[k] = grew = true;
      for (size_t i = global_lines[k].first; i < global_lines[k].second; ++i) {
        const std::string& l = out[i];
        add_words(l.find(':') == std::string::npos ? l : l.substr(l.find(':') + 1), named);
      }
    }
  }
  std::vector<std::string> kept_out;
  size_t k = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    while (k < global_lines.size() && global_lines[k].second <= i) ++k;
    if (in_global[i] && k < global_lines.size() && !kept[k]) {
      if (i == global_lines[k].first) kept_out.push_back("; " + label_of(global_lines[k]) + ": named nowhere, not placed");
      continue;
    }
    kept_out.push_back(out[i]);
  }
  out = std::move(kept_out);
}

}  // namespace

std::string Compiler::write_program(Program& p) {
  std::vector<std::string> out;
  out.push_back("; Generated by wsemu cslc from " + p.file + "; do not edit.");
  out.push_back("; Parameters: " + p.key.substr(p.key.find('|') + 1));
  out.push_back(".arch " + p.arch);
  for (const std::string& inc : p.includes) out.push_back(".include \"" + inc + "\"");
  // A DSD variable takes the element width of the arrays it is based at (CSL's DSDs are untyped;
  // the width is the operation's); its description's offset and lengths are kept in elements.
  for (auto& [reg, d] : p.dsd_regs) {
    auto it = p.dsr_base_bits.find(reg);
    if (it == p.dsr_base_bits.end() || it->second == d->elem_bits || d->base_offset != 0) continue;
    if (d->kind != "mem1d_dsd" && d->kind != "mem4d_dsd") continue;
    auto retyped = std::make_shared<DsdValue>(*d);
    retyped->elem_bits = it->second;
    d = retyped;
  }
  std::vector<std::string> images;
  const std::set<std::string> in_memory = place_dsds(p, images);
  out.push_back("");
  out.push_back(".data");
  std::vector<std::pair<size_t, size_t>> global_lines;  // each global's lines in `out`, [first, end)
  for (GlobalVar* g : p.globals) {
    if (!g->dsr.empty()) continue;
    struct Mark {
      std::vector<std::pair<size_t, size_t>>& lines;
      const std::vector<std::string>& out;
      size_t first;
      ~Mark() { lines.push_back({first, out.size()}); }
    } mark{global_lines, out, out.size()};
    if (g->align > 1) out.push_back(".align " + std::to_string(g->align));
    const bool array = g->type->kind == TK::ARRAY;
    const TypeRef et = array ? g->type->elem : g->type;
    const std::string dir = data_directive(et, array, g->span);
    const int64_t n = array ? g->type->element_count() : 1;
    std::string line = g->asm_name + ": " + dir + " ";
    const Value& init = g->init;
    if (n == 0) {
      out.push_back("; " + g->csl_name + ": zero elements");
      continue;
    }
    if (init.k == Value::K::UNDEFINED || init.k == Value::K::VOID) {
      out.push_back(line + "[" + std::to_string(n) + "]");
    } else if (init.k == Value::K::STRUCT) {
      const bool splat = init.st->values.size() == 1 && init.i == 1;
      const bool zero = splat && ((init.st->values[0].k == Value::K::INT && init.st->values[0].i == 0) ||
                                  (init.st->values[0].k == Value::K::FLOAT && init.st->values[0].f == 0 && !std::signbit(init.st->values[0].f)));
      if (zero) {
        out.push_back(line + "[" + std::to_string(n) + "]");
        continue;
      }
      std::string body;
      for (int64_t i = 0; i < n; ++i) {
        const Value& v = splat ? init.st->values[0] : init.st->values[size_t(i)];
        body += asm_value(v, et, g->span);
        if (i + 1 < n) body += (i % 16 == 15) ? ",\n        " : ", ";
      }
      out.push_back(line + body);
    } else {
      out.push_back(line + asm_value(init, et, g->span));
    }
  }
  for (const std::string& d : p.extra_data) out.push_back(d);
  if (!images.empty()) out.push_back("; DSDs kept in memory (more than the registers hold), loaded with dsdld where used");
  for (const std::string& d : images) out.push_back(d);
  out.push_back("");
  for (const auto& [host, sym] : p.exported_symbols) out.push_back(".export " + sym);
  for (const std::string& f : p.exported_functions) out.push_back(".export " + f);
  auto named_in_code = [&](const std::string& reg) {
    for (const std::string& l : p.code)
      for (size_t at = l.find(reg); at != std::string::npos; at = l.find(reg, at + 1)) {
        const size_t end = at + reg.size();
        const bool word_start = at == 0 || !(std::isalnum(static_cast<unsigned char>(l[at - 1])) || l[at - 1] == '_' || l[at - 1] == '$');
        const bool word_end = end == l.size() || !(std::isalnum(static_cast<unsigned char>(l[end])) || l[end] == '_');
        if (word_start && word_end) return true;
      }
    return false;
  };
  for (const auto& [reg, d] : p.dsd_regs) {
    if (in_memory.count(reg)) continue;
    if ((d->kind == "fabin_dsd" || d->kind == "fabout_dsd") && d->color < 0 && !named_in_code(reg)) {
      // A fabric DSD variable without a color (`.fabric_color = {}`, a stream the layout left
      // out) that no instruction uses, as pipeline-03's memcpy_edge declares: no descriptor.
      out.push_back(".dsd " + reg + " = mem1d(0, 1)  ; a " + d->kind + " without a color, never used");
      continue;
    }
    const DsdValue r = resolve_fabric(p, *d);
    if (r.kind == "d2h_fifo") {
      // Its uses name the firmware's memcpy_d2h_fifo instead (Compiler::dsd_operand).
      out.push_back(".dsd " + reg + " = mem1d(0, 1)  ; a fabout_dsd to the host: operations use memcpy_d2h_fifo");
      continue;
    }
    out.push_back(".dsd " + reg + " = " + dsd_text(r));
  }
  for (const std::string& r : p.plain_dsrs) out.push_back(".dsd " + r + " = mem1d(0, 1)");
  for (int i = 0; i < 4 && !in_memory.empty(); ++i)
    out.push_back(".dsd dsd_spill" + std::to_string(i) + " = mem1d(0, 1) @ d" + std::to_string(32 + i));
  for (int i = 0; i < 4; ++i) out.push_back(".dsd dsd_scratch" + std::to_string(i) + " = mem1d(0, 1) @ d" + std::to_string(36 + i));
  std::map<int, int> queue_of_color;
  for (const auto& [q, c] : p.input_queue_colors) {
    // A color reaches one input queue. Fabric DSDs that name one color with several queues (the
    // SDK's residual gives unused DSDs a "don't care" color) bind the lowest queue; a transfer on
    // another then finds its queue unbound, a run-time error naming it.
    if (!queue_of_color.emplace(c, q).second) {
      out.push_back("; input queue " + std::to_string(q) + " not bound: color " + std::to_string(c) + " is bound to queue " +
                    std::to_string(queue_of_color[c]));
      continue;
    }
    out.push_back(".iqinit " + std::to_string(q) + ", " + std::to_string(c));
  }
  for (const auto& [q, c] : p.output_queue_colors) out.push_back(".oqinit " + std::to_string(q) + ", " + std::to_string(c));
  for (const auto& [id, line] : p.task_lines) {
    std::string l = line;
    const std::string q = ", data, queue " + std::to_string(id);
    if (p.arch == "wse3" && p.stream_in_queues.count(id) && l.size() >= q.size() && l.compare(l.size() - q.size(), q.size(), q) == 0)
      l = l.substr(0, l.size() - q.size()) + ", data, queue " + std::to_string(kStreamQueue);
    out.push_back(".task " + l + (p.blocked_tasks.count(id) ? ", blocked" : "") + (p.activated_tasks.count(id) ? ", activated" : ""));
  }
  // An id no task is bound to starts blocked unless a comptime @unblock names it: topic-07 of the
  // SDK unblocks a color with no data task so that its control wavelets reach the core. A host
  // stream's queue on wse3 is the firmware's (its own .task says how it starts).
  for (const int id : p.unblocked_ids)
    if (!p.task_lines.count(id) && !(p.arch == "wse3" && p.stream_in_queues.count(id)))
      out.push_back(".unblock " + std::to_string(id));
  for (const auto& [id, at] : p.activated_tasks)
    if (!p.task_lines.count(id))
      fail(at, "local task id " + std::to_string(id) + " is activated at comptime but no task is bound to it (@bind_local_task)");
  out.push_back("");
  out.push_back(".code");
  for (const std::string& c : p.code) out.push_back(c);
  drop_unused_globals(out, global_lines);
  std::string text;
  for (const std::string& l : out) text += l + "\n";
  return text;
}

// The teardown task 29 of a program with @set_teardown_handler: it reads the colors a TEARDOWN
// command tore down since it last ran (`tdpend`) and calls each one's handler, in color order.
// The handler (or a task after it) ends the teardown with <tile_config>'s teardown.exit(c).
// Task 29 is also the qflush task: where the memcpy firmware is included it binds 29 to its
// flush handler, so this task is bound at run time instead (`bind` at the start of every
// launched function: a teardown can only follow the kernel's start) and passes a completed
// flush (`qfpend`) on to the firmware's handler.
void Compiler::write_teardown_task(Program& p) {
  if (p.teardown_handlers.empty()) return;
  const bool firmware = p.includes.count("memcpy.wsa") > 0;
  auto line = [&](const std::string& l) { p.code.push_back("        " + l); };
  if (firmware) {
    p.task_lines.erase(29);
    for (const std::string& f : p.exported_functions) {
      for (size_t i = 0; i < p.code.size(); ++i) {
        if (p.code[i].rfind(f + ":", 0) != 0) continue;
        p.code.insert(p.code.begin() + long(i) + 1, "        bind    29, wsemu$teardown");
        break;
      }
    }
  }
  p.code.push_back("");
  p.code.push_back("wsemu$teardown:                 ; task 29: the teardown handlers (@set_teardown_handler)");
  line(".loc");
  p.last_loc.clear();
  line("tdpend  r1");
  line("li      r3, wsemu$td_pending");
  line("st32    [r3], r1");
  for (const auto& [color, fi] : p.teardown_handlers) {
    const std::string skip = "wsemu$td_skip" + std::to_string(color);
    line("li      r3, wsemu$td_pending");
    line("ld32    r1, [r3]");
    line("shri    r1, r1, " + std::to_string(color));
    line("andi    r1, r1, 1");
    line("li      r2, 0");
    line("beq     r1, r2, " + skip);
    line("call    " + fi->label);
    p.code.push_back(skip + ":");
  }
  if (firmware) {
    line("qfpend  r1");
    line("li      r2, 0");
    line("bne     r1, r2, memcpy_flushed");
  }
  line("exit");
  p.extra_data.push_back("wsemu$td_pending: .u32 0");
}

Program* Compiler::program_for(const Placement& pl) {
  auto it = programs_by_key.find(pl.key);
  if (it != programs_by_key.end()) return it->second;
  auto p = std::make_unique<Program>();
  p->file = pl.file;
  p->key = pl.key;
  p->arch = opt.arch;
  Program* raw = p.get();
  programs.push_back(std::move(p));
  programs_by_key[pl.key] = raw;
  ModuleInstance* m = instantiate(pl.file, pl.params.st, pl.span, raw, false, true);
  run_comptime_blocks(m);
  generate_functions(*raw);
  write_teardown_task(*raw);
  raw->asm_text = write_program(*raw);
  return raw;
}

}  // namespace wsemu::compiler::csl
