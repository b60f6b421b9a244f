// `wsemu isa`: the instruction reference, generated from isa/isa.def with the per-architecture
// costs of the emulator's profiles. Its --markdown output is the list in isa/README.md.
#include <fmt/format.h>

#include "emulator/arch_profile.hpp"
#include "isa/reference.hpp"
#include "tools/wsemu/subcommand.hpp"

namespace wsemu::cli {
namespace {

const Register kRegister{{"isa", [](CLI::App& app) -> std::function<int()> {
  auto markdown = std::make_shared<bool>(false);
  app.description(
      "Print the instruction set: syntax, opcode, timing class and meaning of every instruction. "
      "With --markdown, the tables of isa/README.md including each timing class's cost on wse2 and "
      "wse3 (cycles for scalar classes, elements per cycle for vector classes).");
  app.add_flag("--markdown", *markdown, "print the Markdown reference (as in isa/README.md)");
  return [markdown] {
    if (*markdown)
      fmt::print("{}", isa::instruction_reference_markdown([](isa::Timing t) { return emu::timing_summary(t); }));
    else
      fmt::print("{}", isa::instruction_reference_text());
    return 0;
  };
}}};

}  // namespace
}  // namespace wsemu::cli
