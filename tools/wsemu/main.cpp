// wsemu: the command-line front end. Each subcommand lives in its own cmd_*.cpp file.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>

#include "tools/cli_conventions.hpp"
#include "tools/wsemu/subcommand.hpp"

namespace wsemu::cli {
std::vector<Subcommand>& registry() {
  static std::vector<Subcommand> commands;
  return commands;
}
}  // namespace wsemu::cli

int main(int argc, char** argv) {
  using namespace wsemu::cli;
  CLI::App app{"wsemu: a wafer-scale hardware emulator (run `wsemu SUBCOMMAND --help`)"};
  app.require_subcommand(1);
  add_version_flag(app, "wsemu");
  auto& cmds = registry();
  std::sort(cmds.begin(), cmds.end(), [](auto& a, auto& b) { return a.name < b.name; });
  std::map<CLI::App*, std::function<int()>> actions;
  for (auto& cmd : cmds) {
    CLI::App* sub = app.add_subcommand(cmd.name);
    actions[sub] = cmd.setup(*sub);
  }
  // CLI11 would call an unknown first word "A subcommand is required"; name it instead.
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(cmds.begin(), cmds.end(), [&](const Subcommand& c) { return c.name == argv[1]; })) {
    std::fprintf(stderr, "wsemu: unknown subcommand '%s' (`wsemu --help` lists them)\n", argv[1]);
    return kExitUsage;
  }
  WSEMU_CLI_PARSE(app, argc, argv);
  try {
    for (auto& [sub, action] : actions)
      if (sub->parsed()) return action();
  } catch (const std::exception& e) {
    // Subcommands report what they can name themselves; anything that escapes is still the
    // input's fault far more often than ours (an unreadable file, a malformed argument).
    std::fprintf(stderr, "wsemu: error: %s\n", e.what());
    return kExitUsage;
  }
  return 1;
}
