#include "inspect/trace/trace_programs.hpp"

#include <map>
#include <nlohmann/json.hpp>

#include "inspect/trace/trace_filter.hpp"
#include "isa/disassembler.hpp"

namespace wsemu::trace {

namespace {

std::string_view task_kind_text(isa::TaskKind k) {
  switch (k) {
    case isa::TaskKind::DATA: return "data";
    case isa::TaskKind::LOCAL: return "local";
    case isa::TaskKind::CONTROL: return "control";
  }
  return "?";
}

TraceProgram describe(const isa::ObjectImage& img) {
  TraceProgram p;
  p.name = img.source_name;
  p.instructions.reserve(img.code.size());
  for (uint64_t word : img.code) {
    const std::optional<isa::Instruction> insn = isa::decode(word);
    p.instructions.push_back(insn ? isa::format_instruction(*insn, &img) : std::string("(invalid instruction word)"));
  }
  p.source_lines = img.source_lines;
  p.source_lines.resize(img.code.size(), 0);
  for (const isa::TaskBinding& t : img.tasks) p.tasks.push_back({t.id, std::string(task_kind_text(t.kind)), t.name, t.entry});
  for (const isa::Symbol& s : img.symbols)
    p.symbols.push_back({s.name, s.address, std::string(isa::elem_type_name(s.type)), s.count});
  return p;
}

}  // namespace

std::string TraceProgram::task_name(int id) const {
  for (const Task& t : tasks)
    if (t.id == id && t.kind != "control") return t.name;
  for (const Task& t : tasks)
    if (t.id == id) return t.name;
  return "";
}

ProgramTable ProgramTable::from_wafer(const emu::Wafer& wafer) {
  ProgramTable t;
  t.width_ = wafer.width();
  t.height_ = wafer.height();
  t.pe_program_.assign(size_t(t.width_) * size_t(t.height_), -1);
  std::map<const isa::ObjectImage*, int32_t> index;
  for (int y = 0; y < t.height_; ++y) {
    for (int x = 0; x < t.width_; ++x) {
      const isa::ObjectImage* img = wafer.program_at(x, y);
      if (!img) continue;
      auto [it, added] = index.emplace(img, int32_t(t.programs_.size()));
      if (added) t.programs_.push_back(describe(*img));
      t.pe_program_[size_t(y) * size_t(t.width_) + size_t(x)] = it->second;
    }
  }
  return t;
}

nlohmann::json ProgramTable::programs_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const TraceProgram& p : programs_) {
    nlohmann::json tasks = nlohmann::json::array(), symbols = nlohmann::json::array();
    for (const TraceProgram::Task& t : p.tasks)
      tasks.push_back({{"id", t.id}, {"kind", t.kind}, {"name", t.name}, {"entry", t.entry}});
    for (const TraceProgram::Symbol& s : p.symbols)
      symbols.push_back({{"name", s.name}, {"address", s.address}, {"type", s.type}, {"count", s.count}});
    list.push_back({{"name", p.name},
                    {"instructions", p.instructions},
                    {"source_lines", p.source_lines},
                    {"tasks", tasks},
                    {"symbols", symbols}});
  }
  return {{"programs", list}};
}

nlohmann::json ProgramTable::pe_map_json() const {
  nlohmann::json runs = nlohmann::json::array();
  for (int y = 0; y < height_; ++y) {
    int x = 0;
    while (x < width_) {
      const int32_t p = pe_program_[size_t(y) * size_t(width_) + size_t(x)];
      int end = x + 1;
      while (end < width_ && pe_program_[size_t(y) * size_t(width_) + size_t(end)] == p) ++end;
      if (p >= 0) runs.push_back({y, x, end - x, p});
      x = end;
    }
  }
  return {{"runs", runs}};
}

ProgramTable ProgramTable::from_json(const nlohmann::json& programs, const nlohmann::json& pe_map, int width,
                                     int height) {
  ProgramTable t;
  t.width_ = width;
  t.height_ = height;
  t.pe_program_.assign(size_t(width) * size_t(height), -1);
  try {
    if (programs.is_object())
      for (const nlohmann::json& pj : programs.at("programs")) {
        TraceProgram p;
        p.name = pj.value("name", "");
        p.instructions = pj.value("instructions", std::vector<std::string>{});
        p.source_lines = pj.value("source_lines", std::vector<uint32_t>{});
        for (const nlohmann::json& tj : pj.value("tasks", nlohmann::json::array()))
          p.tasks.push_back({tj.at("id").get<int>(), tj.value("kind", ""), tj.value("name", ""), tj.value("entry", 0u)});
        for (const nlohmann::json& sj : pj.value("symbols", nlohmann::json::array()))
          p.symbols.push_back({sj.at("name").get<std::string>(), sj.at("address").get<uint32_t>(), sj.value("type", "u32"),
                               sj.value("count", 1u)});
        t.programs_.push_back(std::move(p));
      }
    if (pe_map.is_object())
      for (const nlohmann::json& run : pe_map.at("runs")) {
        const int y = run.at(0).get<int>(), x0 = run.at(1).get<int>(), count = run.at(2).get<int>();
        const int32_t p = run.at(3).get<int32_t>();
        if (y < 0 || y >= height || x0 < 0 || count < 0 || x0 + count > width || p < 0 ||
            size_t(p) >= t.programs_.size())
          throw TraceError("the PE map names a PE outside the fabric or an unknown program");
        for (int x = x0; x < x0 + count; ++x) t.pe_program_[size_t(y) * size_t(width) + size_t(x)] = p;
      }
  } catch (const nlohmann::json::exception& e) {
    throw TraceError(std::string("malformed program table in the trace: ") + e.what());
  }
  return t;
}

const TraceProgram* ProgramTable::at(int x, int y) const {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) return nullptr;
  const int32_t p = pe_program_[size_t(y) * size_t(width_) + size_t(x)];
  return p < 0 ? nullptr : &programs_[size_t(p)];
}

size_t ProgramTable::pes_with_program() const {
  size_t n = 0;
  for (int32_t p : pe_program_) n += p >= 0;
  return n;
}

}  // namespace wsemu::trace
