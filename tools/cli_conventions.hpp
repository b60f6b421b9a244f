// What every wsemu executable's command line does alike: `--version`, the documented exit
// codes for command-line mistakes, how an integer value is read and how a numeric option's range
// is checked. CLI11 reports each kind of parse error with its own exit code (104..109); the docs
// promise 2 for every usage error, so each main maps them here.
//
// Contract: header-only, used by the `main` of each executable under tools/ and of the programs
// under tests/bench; `--help` and `--version` exit 0, any other parse error prints CLI11's
// message and exits 2 (CTest house_help_and_version checks each program).
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

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

// An integer value given on the command line (`--param NAME=VALUE`): decimal or 0x hex, with an
// optional sign, the whole text and within int64; nullopt otherwise.
inline std::optional<int64_t> parse_integer(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), magnitude, base);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  if (magnitude > static_cast<uint64_t>(INT64_MAX) + (negative ? 1 : 0)) return std::nullopt;
  return negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
}

// A numeric option's value must be a number in [low, high] (above low when low_open), checked on
// the text before CLI11 converts it: its unsigned conversion turns "-5" into 2^64 - 5, and NaN
// passes every comparison. A refusal is a usage error (exit 2).
inline CLI::Validator in_range(double low, double high, bool low_open = false) {
  char bounds[64];
  std::snprintf(bounds, sizeof bounds, "%s%g..%g]", low_open ? "(" : "[", low, high);
  const std::string description = bounds;
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        size_t used = 0;
        double value = 0;
        try {
          value = std::stod(text, &used);
        } catch (const std::exception&) {
        }
        if (used == 0 || used != text.size()) return "'" + text + "' is not a number";
        const bool above_low = low_open ? value > low : value >= low;
        if (!(above_low && value <= high))  // false for NaN too
          return text + " is outside " + description;
        return std::string();
      },
      description);
}

// A numeric option checked by in_range, its default shown in --help.
template <class T>
CLI::Option* add_number(CLI::App& app, const std::string& name, T& value, const std::string& help,
                        double low, double high, bool low_open = false) {
  return app.add_option(name, value, help)
      ->check(in_range(low, high, low_open))
      ->capture_default_str();
}

}  // namespace wsemu::cli

// CLI11_PARSE with the documented exit codes.
#define WSEMU_CLI_PARSE(app, argc, argv)                      \
  try {                                                       \
    (app).parse((argc), (argv));                              \
  } catch (const CLI::ParseError& parse_error) {              \
    return ::wsemu::cli::exit_for_parse_error((app), parse_error); \
  }
