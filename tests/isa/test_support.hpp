// Shared helpers of the isa tests: paths, running the wsemu binary, comparing objects.
#pragma once

#include <string>
#include <vector>

#include "isa/assembler.hpp"
#include "isa/object.hpp"

namespace wsemu::isa::test {

std::string source_dir();  // WSEMU_SOURCE_DIR
std::string bin_dir();     // WSEMU_BIN_DIR
std::string read_file(const std::string& path);

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// Runs a command line through /bin/sh; stdout and stderr captured separately.
CommandResult run_command(const std::string& command);

// The image without the fields that name where it came from (file name, line numbers).
ObjectImage without_origin(ObjectImage image);

// Assembles text that must be correct; fails the current test with the diagnostics otherwise.
ObjectImage assemble_ok(const std::string& text, const AssembleOptions& options = {},
                        const std::string& name = "test.wsa");

std::string all_errors(const AssembleResult& r);

}  // namespace wsemu::isa::test

#include <random>

namespace wsemu::isa::test {

// A random instruction that passes validate(), in canonical form (decode(encode(i)) == i).
// STR operands get `next_string` (and advance it), so that strings appear in first-use order.
Instruction random_instruction(Opcode op, std::mt19937_64& rng, int& next_string);

}  // namespace wsemu::isa::test
