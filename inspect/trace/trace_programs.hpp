// What a trace knows about the programs on the wafer: per program its disassembly, source
// lines, tasks and symbols; per PE which program it runs. Written once at the start of a
// recording (PROG and PEMP chunks), so that every view can print `ld32 r1, [sum]` and
// task names without the original .wsa or .wsx files.
//
// Contract: built from a wafer (Wafer::program_at) or from the two JSON chunks; lookups never
// throw (an unknown PE, pc or task gives nullptr or an empty string). Plain data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "emulator/wafer.hpp"

namespace wsemu::trace {

struct TraceProgram {
  struct Task {
    int id = 0;
    std::string kind;  // "data", "local", "control"
    std::string name;
    uint32_t entry = 0;
  };
  struct Symbol {
    std::string name;
    uint32_t address = 0;
    std::string type;  // "f32", "u32", ...
    uint32_t count = 1;
  };
  std::string name;  // the source file name the assembler recorded
  std::vector<std::string> instructions;  // disassembly, one per pc
  std::vector<uint32_t> source_lines;     // 0: unknown
  std::vector<Task> tasks;
  std::vector<Symbol> symbols;

  std::string instruction(uint32_t pc) const { return pc < instructions.size() ? instructions[pc] : std::string(); }
  // The task with this id: a data or local task first, a control task otherwise; "" if none.
  std::string task_name(int id) const;
};

class ProgramTable {
 public:
  static ProgramTable from_wafer(const emu::Wafer& wafer);
  static ProgramTable from_json(const nlohmann::json& programs, const nlohmann::json& pe_map, int width, int height);
  nlohmann::json programs_json() const;  // {"programs": [...]}
  nlohmann::json pe_map_json() const;    // {"runs": [[y, x0, count, program], ...]}

  const TraceProgram* at(int x, int y) const;
  const std::vector<TraceProgram>& programs() const { return programs_; }
  int width() const { return width_; }
  int height() const { return height_; }
  size_t pes_with_program() const;

 private:
  int width_ = 0, height_ = 0;
  std::vector<TraceProgram> programs_;
  std::vector<int32_t> pe_program_;  // y * width + x -> index into programs_, or -1
};

}  // namespace wsemu::trace
