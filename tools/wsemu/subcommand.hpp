// Subcommands of the `wsemu` CLI register themselves here, one file each (tools/wsemu/cmd_*.cpp),
// so that adding a subcommand never touches main.cpp.
//
// Contract: `setup` adds a CLI11 subcommand (with its options and --help text) to the app and
// returns the callback to run when that subcommand was chosen; the callback returns the
// process exit code. Errors the user can fix are printed to stderr as one clear line and give a
// non-zero exit, never an uncaught exception.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace wsemu::cli {

struct Subcommand {
  std::string name;
  std::function<std::function<int()>(CLI::App& app)> setup;
};

std::vector<Subcommand>& registry();

struct Register {
  explicit Register(Subcommand cmd) { registry().push_back(std::move(cmd)); }
};

}  // namespace wsemu::cli
