// `wsemu build` as a library call: layout text in, linked Executable out. Parses and checks the
// layout (parser.hpp, checker.hpp), assembles each program once per distinct set of parameter
// values, stores identical objects once, checks what needs the assembled programs (SRAM size,
// exported symbols and functions), and packs the per-PE placement into rectangles of runs.
//
// Contract: never throws on bad input: every problem is a Diagnostic (layout errors as
// file:line:col, assembler errors with their own file:line:col plus a note naming the layout
// line, rect, PE and parameters). An Executable is returned only when there is no error.
// Program and include paths are relative to the folder of the file that names them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/executable/executable.hpp"
#include "compiler/layout/diagnostic.hpp"

namespace wsemu::compiler::layout {

struct BuildOptions {
  std::map<std::string, int64_t> params;  // --param NAME=VALUE overrides
  std::string arch;                       // --arch; empty: the layout's `arch`, or wse2
  // Searched after the including file's folder, by the assembler's `.include` and by the
  // layout's `include`.
  std::vector<std::string> include_dirs;
};

struct BuildSummary {
  uint64_t placed_pes = 0;
  size_t rects = 0;
  size_t programs = 0;     // distinct assembled objects stored
  size_t assemblies = 0;   // assembler runs (distinct program file + parameter values)
  size_t param_sets = 0;
  size_t route_sets = 0;
  size_t routes = 0;       // color routes over all PEs
  uint32_t max_sram_bytes = 0;  // largest code + data of any program
  std::string max_sram_program;  // its source path
};

struct BuildResult {
  std::optional<Executable> executable;
  std::vector<Diagnostic> diagnostics;
  BuildSummary summary;
  bool ok() const { return executable.has_value(); }
};

// `file_name` is used in messages and its folder resolves program paths.
BuildResult build_layout(std::string_view text, const std::string& file_name,
                         const BuildOptions& options = {});
BuildResult build_layout_file(const std::string& path, const BuildOptions& options = {});

// "fabric 9 x 4 (wse2): 4 PEs in 1 rect, 2 distinct programs from 2 assemblies, ..."
std::string summary_line(const BuildSummary& summary, const Executable& exe);

}  // namespace wsemu::compiler::layout
