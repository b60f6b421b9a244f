// Where a PE program's descriptors live: in descriptor registers while they fit, otherwise the
// least-used in SRAM as descriptor images (isa/README.md "Descriptor images"), as the hardware
// keeps DSDs in memory. Code generation names every DSD by its register name (dsdN); this pass
// runs once the program's code is complete and, for a DSD placed in memory, puts a `dsdld` into
// a spill register before each instruction that names it, and a `dsdst` after each one that
// changes it, so that the image is always the descriptor's current value.
// A program whose descriptors fit is left exactly as generated (same registers, same cycles).
#include <algorithm>

#include "compiler/csl/compiler_impl.hpp"

namespace wsemu::compiler::csl {

namespace {

constexpr int kAllRegisters = 36;   // d0..d35 (d36..d39 statement scratch, d40..d47 the memcpy firmware's)
constexpr int kSpillRegisters = 4;  // d32..d35 once some DSDs live in memory: an op names up to 4 DSDs

bool is_dsd_name(const std::string& s) {
  if (s.size() < 4 || s.compare(0, 3, "dsd") != 0) return false;
  for (size_t i = 3; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

// An instruction line split into its mnemonic and operands (a trailing comment kept aside).
struct Line {
  std::string mnemonic;
  std::vector<std::string> operands;
  std::string comment;
};

bool split_instruction(const std::string& text, Line& out) {
  std::string body = text;
  const size_t semi = body.find(';');
  if (semi != std::string::npos) {
    out.comment = body.substr(semi);
    body = body.substr(0, semi);
  }
  body = trim(body);
  if (body.empty() || body[0] == '.' || body.back() == ':') return false;  // directive or label
  const size_t sp = body.find_first_of(" \t");
  out.mnemonic = body.substr(0, sp);
  if (sp == std::string::npos) return true;
  std::string rest = body.substr(sp);
  size_t start = 0;
  for (size_t i = 0; i <= rest.size(); ++i)
    if (i == rest.size() || rest[i] == ',') {
      out.operands.push_back(trim(rest.substr(start, i - start)));
      start = i + 1;
    }
  return true;
}

bool changes_first_operand(const std::string& m) {
  static const std::set<std::string> mutators = {"dsdbase",  "dsdlen",  "dsdstride", "dsdinc",  "dsdcolor",
                                                 "dsdqueue", "dsdctl",  "dsdindex",  "dsdlen4", "dsdstride4"};
  return mutators.count(m) > 0;
}

std::string image_label(const std::string& dsd) { return "wsemu$image_" + dsd; }

}  // namespace

// The 20 words of a DSD's image (isa/README.md), as a `.u16` line; the base is a symbol expression.
std::string Compiler::dsd_image_line(const Program& p, const std::string& name, const DsdValue& d0) {
  const DsdValue d = resolve_fabric(p, d0);
  std::vector<std::string> w(20, "0");
  const bool memory = d.kind == "mem1d_dsd" || d.kind == "mem4d_dsd";
  const bool mem4d = d.kind == "mem4d_dsd" && d.extents.size() > 1;
  w[0] = mem4d ? "2" : memory ? "1" : d.kind == "fabin_dsd" ? "4" : "5";
  w[1] = d.elem_bits == 16 ? "16" : "32";
  if (memory) w[2] = (d.base ? d.base->asm_name : "0") + (d.base_offset ? " + " + std::to_string(d.base_offset * d.elem_bits / 8) : "");
  w[5] = "1";
  if (mem4d) {
    for (size_t i = 0; i < 4; ++i) {
      w[6 + i] = std::to_string(i < d.extents.size() ? d.extents[i] : 1);
      w[10 + i] = std::to_string(i < d.strides.size() ? d.strides[i] & 0xFFFF : 0);
    }
  } else {
    const int64_t len = d.extents.empty() ? 0 : d.extents[0];
    if (len < 0 || len > 0xFFFF) fail(d.span, "unsupported: a DSD of length " + std::to_string(len));
    w[3] = std::to_string(len);
    if (memory && !d.strides.empty()) w[5] = std::to_string(d.strides[0] & 0xFFFF);
  }
  if (!memory) {
    w[14] = std::to_string(d.color);
    w[15] = std::to_string(d.queue);
    w[16] = std::to_string((d.control ? 1 : 0) | (d.advance_switch ? 2 : 0));
  }
  const int64_t index = d.kind == "fabout_dsd" ? d.wavelet_index : -1;
  w[17] = index < 0 ? "65535" : std::to_string(index & 0xFFFF);
  w[18] = index < 0 ? "65535" : "0";
  std::string line = image_label(name) + ": .u16 ";
  for (size_t i = 0; i < w.size(); ++i) line += (i ? ", " : "") + w[i];
  return line + "  ; " + name;
}

std::set<std::string> Compiler::place_dsds(Program& p, std::vector<std::string>& image_data) {
  const int total = p.next_dsr;  // at most 4096 (alloc_dsr)
  if (total <= kAllRegisters) return {};
  // Descriptors that must stay in a register: @get_dsr registers (the program names them as
  // hardware DSRs), FIFOs (their ring state has no image).
  std::set<std::string> pinned(p.plain_dsrs.begin(), p.plain_dsrs.end());
  std::map<std::string, const DsdValue*> value;
  for (const auto& [r, d] : p.dsd_regs) {
    value[r] = d.get();
    const bool imaged = d->kind == "mem1d_dsd" || d->kind == "mem4d_dsd" || d->kind == "fabin_dsd" || d->kind == "fabout_dsd";
    if (!imaged || resolve_fabric(p, *d).kind == "d2h_fifo") pinned.insert(r);
  }
  const int resident_budget = kAllRegisters - kSpillRegisters;
  if (int(pinned.size()) > resident_budget) {
    Span at;  // the first FIFO past the budget (the @get_dsr registers have no place of their own)
    int n = int(p.plain_dsrs.size());
    for (const auto& [r, d] : p.dsd_regs)
      if (pinned.count(r) && ++n > resident_budget && at.line == 0) at = d->span;
    fail(at, "unsupported: more than " + std::to_string(resident_budget) +
                 " FIFO and @get_dsr descriptors in one PE program (they cannot live in memory)");
  }
  // The most-used stay in registers (uses counted in the code; a change costs a load and a store).
  std::map<std::string, int> uses;
  std::vector<Line> lines(p.code.size());
  std::vector<bool> is_insn(p.code.size());
  for (size_t i = 0; i < p.code.size(); ++i) {
    is_insn[i] = split_instruction(p.code[i], lines[i]);
    if (!is_insn[i]) continue;
    for (size_t k = 0; k < lines[i].operands.size(); ++k)
      if (is_dsd_name(lines[i].operands[k])) uses[lines[i].operands[k]] += (k == 0 && changes_first_operand(lines[i].mnemonic)) ? 3 : 1;
  }
  std::vector<std::pair<int, int>> order;  // (-uses, register number)
  for (int n = 0; n < total; ++n) {
    const std::string r = "dsd" + std::to_string(n);
    if (!pinned.count(r)) order.emplace_back(-uses[r], n);
  }
  std::sort(order.begin(), order.end());
  std::set<std::string> in_memory;
  int resident = int(pinned.size());
  for (const auto& [neg_uses, n] : order) {
    const std::string r = "dsd" + std::to_string(n);
    if (resident < resident_budget) {
      ++resident;
      continue;
    }
    in_memory.insert(r);
    auto it = value.find(r);
    image_data.push_back(it != value.end() ? dsd_image_line(p, r, *it->second)
                                           : image_label(r) + ": .u16 [20]  ; " + r);
  }
  // Each instruction naming a DSD in memory: its image loaded into a spill register first.
  std::vector<std::string> code;
  code.reserve(p.code.size() * 5 / 4);
  for (size_t i = 0; i < p.code.size(); ++i) {
    Line& l = lines[i];
    bool any = false;
    for (const std::string& o : l.operands) any = any || in_memory.count(o);
    if (!is_insn[i] || !any) {
      code.push_back(p.code[i]);
      continue;
    }
    const std::string pad = "        ";
    if (l.mnemonic == "dsdcopy" && l.operands.size() == 2) {
      const std::string dst = l.operands[0], src = l.operands[1];
      std::string from = src;
      if (in_memory.count(src)) {
        from = in_memory.count(dst) ? "dsd_spill0" : dst;
        code.push_back(pad + "dsdld   " + from + ", " + image_label(src) + "  ; " + src);
      }
      if (in_memory.count(dst)) code.push_back(pad + "dsdst   " + image_label(dst) + ", " + from + "  ; " + dst);
      else if (from != dst) code.push_back(pad + "dsdcopy " + dst + ", " + from);
      continue;
    }
    std::map<std::string, std::string> spill_of;
    for (std::string& o : l.operands) {
      if (!in_memory.count(o)) continue;
      auto [it, fresh] = spill_of.try_emplace(o, "dsd_spill" + std::to_string(spill_of.size()));
      if (fresh) code.push_back(pad + "dsdld   " + it->second + ", " + image_label(o) + "  ; " + o);
      o = it->second;
    }
    std::string text = pad + l.mnemonic;
    for (size_t k = 0; k < l.operands.size(); ++k) text += (k ? ", " : " ") + l.operands[k];
    code.push_back(text + (l.comment.empty() ? "" : "  " + l.comment));
    if (changes_first_operand(l.mnemonic)) {
      for (const auto& [name, spill] : spill_of)
        if (spill == l.operands[0]) code.push_back(pad + "dsdst   " + image_label(name) + ", " + spill + "  ; " + name);
    }
  }
  p.code = std::move(code);
  return in_memory;
}

}  // namespace wsemu::compiler::csl
