// `wsemu cslc` as a library call: a CSL layout file (and the PE programs and modules it names)
// in, an executable out. The layout block is evaluated at comptime into placements, routes and
// host exports; every distinct (tile code file, parameters) pair becomes one PE program class,
// generated as wsemu assembly; the generated `layout.wsl` and the per-class `.wsa` files are
// written to the output folder (so they can be read and debugged) and linked by the layout
// linker (compiler/layout/build.hpp) into the `.wsx`.
//
// Contract: compile_csl never throws on bad input: every problem is a Diagnostic
// (`file:line:col: error:` with the source line, a caret and a note chain through module
// imports). An executable is returned only when there is no error. A construct or builtin that
// is not supported yet is an error naming it and its position, never a silent miscompile.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/csl/source.hpp"
#include "compiler/executable/executable.hpp"

namespace wsemu::compiler::csl {

// Where the kernel goes (--fabric-dims, --fabric-offsets): a fabric of W x H PEs, the kernel's
// rectangle at (offset_x, offset_y) of it.
struct CslPlacement {
  int fabric_w = 0, fabric_h = 0;  // 0: the smallest fabric that holds the kernel at its offsets
  int offset_x = 0, offset_y = 0;
};

struct CslOptions {
  std::string layout_file;
  std::string arch = "wse2";
  CslPlacement placement;
  std::vector<std::pair<std::string, std::string>> params;  // --params NAME:VALUE, in order
  std::vector<std::pair<std::string, std::string>> colors;  // --colors NAME:COLOR (params of type color)
  std::vector<std::string> import_paths;
  std::string stdlib_dir;             // <name> imports; empty: compiler/csl/lib of the source tree
  std::vector<std::string> asm_include_dirs;  // where the firmware (memcpy.wsa) is found
  bool memcpy = false;
  int channels = 1;
  int width_west_buf = 0, width_east_buf = 0;
  std::string out_dir;                // where the generated sources go; empty: a scratch folder
  int64_t max_comptime_steps = 0;     // comptime statements before "takes too long"; 0: 20 million
};

struct CslResult {
  std::optional<Executable> executable;
  std::vector<Diagnostic> diagnostics;
  std::string layout_wsl;                         // the generated layout
  std::map<std::string, std::string> programs;    // generated .wsa file name -> text
  std::vector<std::string> comptime_prints;       // @comptime_print lines
  double seconds = 0;                             // front end + link
  std::string summary;
  bool ok() const { return executable.has_value(); }
};

CslResult compile_csl(const CslOptions& options);

// The standard library folder of this source tree (compiler/csl/lib).
std::string default_stdlib_dir();

}  // namespace wsemu::compiler::csl
