// An assembled PE program (the contents of a .wso object): code, initial data, symbols,
// task bindings and the initial descriptor registers.
//
// Contract: plain data, fully resolved (every parameter has its value, every label its
// address), so that a PE core can run it without the assembler. SRAM layout of a PE running it:
// code occupies bytes [0, code.size() * 8); data follows at `data_base` (8-byte aligned) and
// spans `data_size` bytes, of which the first data_init.size() are initialised and the rest
// are zero. Everything above data_base + data_size is free (firmware, stacks of other users).
// Serialised as a versioned protobuf by isa/object_io.hpp; never by memcpy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "isa/descriptor.hpp"

namespace wsemu::isa {

// Version 2 added the line table (source_files, source_locations); version 1 objects have none
// and are still read.
constexpr uint32_t kObjectFormatVersion = 2;
constexpr uint32_t kOldestObjectFormatVersion = 1;

// The entry of `entries` (symbols, functions, ... of an object or an executable) whose `name`
// is `name`; nullptr when there is none.
template <typename Entries>
const typename Entries::value_type* find_named(const Entries& entries, std::string_view name) {
  for (const auto& entry : entries)
    if (entry.name == name) return &entry;
  return nullptr;
}

enum class ElemType : uint8_t { I16, U16, I32, U32, F16, F32 };
std::string_view elem_type_name(ElemType t);
// The type elem_type_name gives `name` ("f32", ...); nullopt for any other text.
std::optional<ElemType> elem_type_named(std::string_view name);
int elem_bytes(ElemType t);

struct Symbol {
  std::string name;
  uint32_t address = 0;  // byte address in SRAM
  ElemType type = ElemType::U32;
  uint32_t count = 1;    // elements
  bool exported = false; // visible to the host (memcpy, read_symbol)
  friend bool operator==(const Symbol&, const Symbol&) = default;
};

enum class TaskKind : uint8_t { DATA, LOCAL, CONTROL };

// A task bound at load time. Data tasks are triggered by a wavelet on `trigger`, which is a
// color on WSE-2 and an input queue on WSE-3 (the task id then equals the trigger).
struct TaskBinding {
  std::string name;
  TaskKind kind = TaskKind::LOCAL;
  uint8_t id = 0;
  uint32_t entry = 0;  // instruction index
  uint8_t trigger = 0;
  bool trigger_is_queue = false;
  bool starts_blocked = false;
  bool starts_activated = false;  // a local task: activated when the program loads
  friend bool operator==(const TaskBinding&, const TaskBinding&) = default;
};

// A function the host may launch (exported), or any named code label kept for debugging.
struct Function {
  std::string name;
  uint32_t entry = 0;
  bool exported = false;
  friend bool operator==(const Function&, const Function&) = default;
};

struct DescriptorInit {
  std::string name;  // the .dsd name, for the disassembler and the debugger
  uint8_t dsr = 0;
  Descriptor value;
  friend bool operator==(const DescriptorInit&, const DescriptorInit&) = default;
};

// Queues bound at load time (the SDK's @initialize_queue in a comptime block).
struct QueueBinding {
  bool output = false;
  uint8_t queue = 0;
  uint8_t color = 0;
  friend bool operator==(const QueueBinding&, const QueueBinding&) = default;
};

// Where an instruction came from in the source the assembly was generated from (a `.loc`
// directive: the CSL file, line and column). file is 1-based into ObjectImage::source_files;
// 0 means no location.
struct SourceLocation {
  uint32_t file = 0;
  uint32_t line = 0;
  uint32_t col = 0;
  friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

struct ObjectImage {
  std::string source_name;  // the source file's name, without its folder (reproducible objects)
  std::string arch;  // "wse2", "wse3", or empty when the program does not care
  std::vector<uint64_t> code;
  uint32_t data_base = 0;
  uint32_t data_size = 0;
  std::vector<uint8_t> data_init;
  std::vector<Symbol> symbols;
  std::vector<TaskBinding> tasks;
  std::vector<Function> functions;
  std::vector<DescriptorInit> descriptors;
  std::vector<QueueBinding> queues;
  // Task ids that no data or local task is bound to but that start unblocked (`.unblock ID`,
  // CSL's comptime @unblock of such an id): a control wavelet on that color or queue then reaches
  // the core and runs the control task it names, as the SDK documents for a color with no data task.
  std::vector<uint8_t> unblocked_ids;
  std::vector<std::string> strings;  // for dprint / dprintr
  // Source line of each instruction, for error messages and traces (0 when unknown).
  std::vector<uint32_t> source_lines;
  // The line table of generated code: empty when the source has no `.loc`, else one entry per
  // instruction (an instruction before the first `.loc` has file 0).
  std::vector<std::string> source_files;
  std::vector<SourceLocation> source_locations;
  friend bool operator==(const ObjectImage&, const ObjectImage&) = default;

  uint32_t sram_bytes() const { return data_base + data_size; }
  const Symbol* find_symbol(std::string_view name) const;
  const Function* find_function(std::string_view name) const;
  // "pe.csl:12:5" for the instruction at pc, or "" when the line table does not name one.
  std::string source_location(uint32_t pc) const;
};

}  // namespace wsemu::isa
