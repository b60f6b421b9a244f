// What every wsemu executable's command line does alike: `--version`, and the documented exit
// codes for command-line mistakes. CLI11 reports each kind of parse error with its own exit code
// (104..109); the docs promise 2 for every usage error, so each main maps them here.
//
// Contract: header-only, used by the `main` of each executable under tools/; `--help` and
// `--version` exit 0, any other parse error prints CLI11's message and exits 2.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "wsemu_version.hpp"

namespace wsemu::cli {

inline constexpr int kExitUsage = 2;

inline void add_version_flag(CLI::App& app, const std::string& program) {
  app.set_version_flag("--version", program + " " + kVersion, "print the version and exit");
}

// CLI11 prints the message (or the help text); the exit code follows the docs.
inline int exit_for_parse_error(CLI::App& app, const CLI::ParseError& error) {
  return app.exit(error) == 0 ? 0 : kExitUsage;
}

}  // namespace wsemu::cli

// CLI11_PARSE with the documented exit codes.
#define WSEMU_CLI_PARSE(app, argc, argv)                      \
  try {                                                       \
    (app).parse((argc), (argv));                              \
  } catch (const CLI::ParseError& parse_error) {              \
    return ::wsemu::cli::exit_for_parse_error((app), parse_error); \
  }
