// `wsemu build`: layout file -> linked .wsx executable (compiler/layout/build.hpp).
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "firmware/memcpy_protocol.hpp"
#include "compiler/executable/executable_io.hpp"
#include "compiler/layout/build.hpp"
#include "tools/cli_conventions.hpp"
#include "tools/wsemu/subcommand.hpp"

namespace wsemu::cli {
namespace {

constexpr const char* kFooter = R"(
The layout language is described in compiler/layout/README.md. In short:

  arch wse2                          # or wse3; --arch overrides
  fabric 9 x 4                       # the whole fabric, W x H PEs
  param M = 4                        # build parameter; --param M=8 overrides
  color c_x = 0                      # a named color (0..20; 21..23 belong to the firmware)
  rect compute at (4, 1) size 2 x 2 {
    program "pe.wsa" { M = M, is_east = x == width - 1 }
    route c_x rx [RAMP] tx [E] where x == 0
    route c_x rx [W] tx [RAMP] where x == 1
    export symbol y : f32[M] read
    export function compute
  }

Program paths are relative to the layout file. Each program is assembled once per distinct
set of parameter values; identical results are stored once.

Exit status: 0 when the executable was written; 1 on any error (layout, assembly, I/O),
with every error printed as file:line:col: error: message.

Example:
  wsemu build compiler/layout/examples/gemv_2x2.wsl -o gemv.wsx --param M=64 --param N=32
)";

struct BuildArgs {
  std::string layout;
  std::string output;
  std::vector<std::string> params;
  std::string arch;
  std::vector<std::string> include_dirs;
  bool quiet = false;
};

// "NAME=VALUE" with an integer VALUE (parse_integer).
bool parse_param(const std::string& text, std::string& name, int64_t& value, std::string& error) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    error = "--param " + text + ": expected NAME=VALUE, e.g. --param M=64";
    return false;
  }
  name = text.substr(0, eq);
  for (size_t i = 0; i < name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    if (!(std::isalpha(c) || c == '_' || (i > 0 && std::isdigit(c)))) {
      error = "--param " + text + ": '" + name + "' is not a parameter name";
      return false;
    }
  }
  const std::optional<int64_t> parsed = parse_integer(std::string_view(text).substr(eq + 1));
  if (!parsed) {
    error = "--param " + text + ": the value must be an integer (e.g. 64, -3 or 0x40)";
    return false;
  }
  value = *parsed;
  return true;
}

int run_build(const BuildArgs& args) {
  compiler::layout::BuildOptions options;
  for (const std::string& p : args.params) {
    std::string name, error;
    int64_t value = 0;
    if (!parse_param(p, name, value, error)) {
      std::fprintf(stderr, "wsemu build: error: %s\n", error.c_str());
      return 1;
    }
    if (options.params.count(name)) {
      std::fprintf(stderr, "wsemu build: error: --param %s is given twice\n", name.c_str());
      return 1;
    }
    options.params[name] = value;
  }
  options.arch = args.arch;
  options.include_dirs = args.include_dirs;
  // Kernels `.include "memcpy.wsa"`, the host I/O firmware; its folder is always searched last.
  options.include_dirs.push_back(firmware::include_dir());
  compiler::layout::BuildResult result = compiler::layout::build_layout_file(args.layout, options);
  for (const compiler::layout::Diagnostic& d : result.diagnostics)
    std::fprintf(stderr, "%s\n", d.to_string().c_str());
  if (!result.ok()) {
    size_t errors = 0;
    for (const auto& d : result.diagnostics)
      if (d.severity == compiler::layout::Severity::ERROR) ++errors;
    std::fprintf(stderr, "wsemu build: %zu error%s; no executable written\n", errors,
                 errors == 1 ? "" : "s");
    return 1;
  }
  std::string output = args.output;
  if (output.empty())
    output = std::filesystem::path(args.layout).filename().replace_extension(".wsx").string();
  try {
    compiler::save_executable(*result.executable, output);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wsemu build: error: %s\n", e.what());
    return 1;
  }
  if (!args.quiet)
    std::printf("wsemu build: wrote %s: %s\n", output.c_str(),
                compiler::layout::summary_line(result.summary, *result.executable).c_str());
  return 0;
}

const Register kBuild{Subcommand{
    "build", [](CLI::App& app) -> std::function<int()> {
      auto args = std::make_shared<BuildArgs>();
      app.description(
          "Assemble the programs of a layout and link them into a wsemu executable (.wsx): "
          "fabric size, per-PE programs and parameters, color routes, host symbols and "
          "functions.");
      app.add_option("layout", args->layout, "Layout file (.wsl)")->required();
      app.add_option("-o,--output", args->output,
                     "Executable to write (default: the layout's name with .wsx, in the "
                     "current folder)");
      app.add_option("--param", args->params,
                     "Override a build parameter: NAME=VALUE (integer); repeatable")
          ->expected(1)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      app.add_option("--arch", args->arch, "Target architecture (default: the layout's, or wse2)")
          ->check(CLI::IsMember({"wse2", "wse3"}));
      app.add_option("-I,--include-dir", args->include_dirs,
                     "Folder searched by the programs' .include, after the program's own folder "
                     "and before the firmware folder (memcpy.wsa; $WSEMU_FIRMWARE_DIR overrides "
                     "it); repeatable")
          ->expected(1)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      app.add_flag("-q,--quiet", args->quiet, "Print nothing on success");
      app.footer(kFooter);
      return [args]() { return run_build(*args); };
    }}};

}  // namespace
}  // namespace wsemu::cli
