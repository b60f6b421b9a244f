// `wsemu disasm`: print a .wso object as assembly that assembles back to the same object.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>

#include "isa/assembler.hpp"
#include "isa/disassembler.hpp"
#include "isa/object_io.hpp"
#include "tools/wsemu/subcommand.hpp"

namespace wsemu::cli {
namespace {

struct DisasmArgs {
  std::string input;
  std::string output;
};

int run_disasm(const DisasmArgs& args) {
  isa::ObjectImage object;
  try {
    object = isa::read_object_file(args.input);
  } catch (const isa::FormatError& e) {
    fmt::print(stderr, "wsemu disasm: error: {}\n", e.what());
    return 1;
  }
  const std::string text = isa::disassemble(object);
  if (args.output.empty() || args.output == "-") {
    fmt::print("{}", text);
    return 0;
  }
  std::ofstream out(args.output, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    fmt::print(stderr, "wsemu disasm: error: cannot write '{}'\n", args.output);
    return 1;
  }
  return 0;
}

const Register kRegister{{"disasm", [](CLI::App& app) -> std::function<int()> {
  auto args = std::make_shared<DisasmArgs>();
  app.description(
      "Print a .wso object as .wsa assembly (data, symbols, exports, tasks, descriptors, queue "
      "bindings and code). Assembling the output gives the identical object.");
  app.add_option("input", args->input, "the .wso object file")->required();
  app.add_option("-o,--output", args->output, "write the assembly here instead of standard output");
  return [args] { return run_disasm(*args); };
}}};

}  // namespace
}  // namespace wsemu::cli
