// `wsemu asm`: assemble a .wsa program into a .wso object.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "isa/assembler.hpp"
#include "isa/object_io.hpp"
#include "tools/cli_conventions.hpp"
#include "tools/wsemu/subcommand.hpp"

namespace wsemu::cli {
namespace {

struct AsmArgs {
  std::string input;
  std::string output;
  std::vector<std::string> params;
  std::vector<std::string> include_dirs;
  std::string arch;
};

int run_asm(const AsmArgs& args) {
  isa::AssembleOptions options;
  options.include_dirs = args.include_dirs;
  options.arch = args.arch;
  for (const std::string& p : args.params) {
    const size_t eq = p.find('=');
    std::optional<int64_t> value = eq == std::string::npos ? std::nullopt : parse_integer(std::string_view(p).substr(eq + 1));
    if (eq == 0 || !value) {
      fmt::print(stderr, "wsemu asm: error: --param needs NAME=INTEGER (decimal or 0x hex), got '{}'\n", p);
      return 1;
    }
    options.params[p.substr(0, eq)] = *value;
  }
  const isa::AssembleResult result = isa::assemble_file(args.input, options);
  for (const isa::Diagnostic& d : result.errors) fmt::print(stderr, "{}\n", d.to_string());
  if (!result.object) {
    fmt::print(stderr, "wsemu asm: {} error{}; no object written\n", result.errors.size(),
               result.errors.size() == 1 ? "" : "s");
    return 1;
  }
  std::string out = args.output;
  if (out.empty()) out = std::filesystem::path(args.input).replace_extension(".wso").string();
  try {
    isa::write_object_file(out, *result.object);
  } catch (const isa::FormatError& e) {
    fmt::print(stderr, "wsemu asm: error: {}\n", e.what());
    return 1;
  }
  return 0;
}

const Register kRegister{{"asm", [](CLI::App& app) -> std::function<int()> {
  auto args = std::make_shared<AsmArgs>();
  app.description(
      "Assemble a .wsa program into a .wso object. Errors are printed as file:line:col with the "
      "source line; the exit code is 1 when there are any. The syntax is in isa/README.md.");
  app.add_option("input", args->input, "the .wsa source file")->required();
  app.add_option("-o,--output", args->output, "the object file to write (default: input with .wso)");
  app.add_option("--param", args->params, "value of a .param name, NAME=INTEGER (repeatable)");
  app.add_option("-I,--include-dir", args->include_dirs,
                 "folder searched by .include after the including file's own (repeatable)");
  app.add_option("--arch", args->arch, "assemble for this architecture (checked against the program's .arch)")
      ->check(CLI::IsMember({"wse2", "wse3"}));
  return [args] { return run_asm(*args); };
}}};

}  // namespace
}  // namespace wsemu::cli
