// Internal to the debugger (debugger.cpp: the command loop; debugger_print.cpp: print and
// info): the command error and the number syntax both parts accept. Not part of the API.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace wsemu::debug::detail {

// A command's mistake: printed as "error: ..." by execute().
struct CommandError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A whole unsigned number, decimal or 0x-prefixed hexadecimal; nullopt for anything else.
inline std::optional<uint64_t> number(std::string_view s) {
  uint64_t v = 0;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    base = 16;
  }
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace wsemu::debug::detail
