#include "emulator/wavelet.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace wsemu::emu {

std::string_view direction_name(Direction d) {
  switch (d) {
    case Direction::NORTH: return "NORTH";
    case Direction::EAST: return "EAST";
    case Direction::SOUTH: return "SOUTH";
    case Direction::WEST: return "WEST";
    case Direction::RAMP: return "RAMP";
  }
  return "?";
}

bool parse_direction(std::string_view name, Direction& out) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::toupper(c); });
  for (int i = 0; i < kNumDirections; ++i) {
    const auto d = static_cast<Direction>(i);
    const std::string_view full = direction_name(d);
    if (n == full || (n.size() == 1 && n[0] == full[0])) {
      out = d;
      return true;
    }
  }
  return false;
}

}  // namespace wsemu::emu
