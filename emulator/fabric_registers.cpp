#include "emulator/fabric_registers.hpp"

#include <fmt/format.h>

#include <array>
#include <bit>

#include "emulator/fault.hpp"

namespace wsemu::emu {
namespace {

constexpr uint32_t kColorConfigBase = 0xFE40;   // word 0x7F20
constexpr uint32_t kSwitchConfigBase = 0xFE80;  // word 0x7F40
constexpr int kInvalidPosition = 5;
constexpr uint16_t kTeardownBit = 1u << 14;
constexpr uint16_t kUnmodelledColorBits = 0xFC00;  // swaps, pop mode, teardown, point to point

// The register's direction numbers (0 W, 1 E, 2 S, 3 N, 4 RAMP), also the bit order of its masks.
constexpr std::array<Direction, 5> kRegisterDirections = {Direction::WEST, Direction::EAST, Direction::SOUTH,
                                                          Direction::NORTH, Direction::RAMP};

uint16_t register_mask(DirectionMask m) {
  uint16_t out = 0;
  for (int i = 0; i < 5; ++i)
    if (m & bit(kRegisterDirections[size_t(i)])) out |= uint16_t(1u << i);
  return out;
}

DirectionMask direction_mask(uint16_t register_bits) {
  DirectionMask out = 0;
  for (int i = 0; i < 5; ++i)
    if (register_bits & (1u << i)) out |= bit(kRegisterDirections[size_t(i)]);
  return out;
}

int register_direction(DirectionMask single) {
  for (int i = 0; i < 5; ++i)
    if (single == bit(kRegisterDirections[size_t(i)])) return i;
  return -1;
}

uint16_t color_config(const RouterState& router, int color) {
  const ColorChannel* ch = router.channel(color);
  if (!ch) return (router.torn_down >> color) & 1u ? kTeardownBit : 0;
  const ColorRoute& r = ch->route;
  uint16_t v = uint16_t(register_mask(r.positions[0].tx) | register_mask(r.positions[0].rx) << 5);
  if (r.swap_y) v |= 1u << 10;
  if (r.swap_x) v |= 1u << 11;
  v |= uint16_t(uint16_t(r.pop_mode) << 12);
  if ((router.torn_down >> color) & 1u) v |= kTeardownBit;
  return v;
}

// Position k (1..3) as the one side it changes from position k - 1.
uint16_t position_nibble(const ColorRoute& r, int k, int color) {
  if (k >= r.num_positions) return uint16_t(kInvalidPosition | ((r.invalid_position_selects >> (k - 1)) & 1u) << 3);
  const RoutePosition& before = r.positions[size_t(k - 1)];
  const RoutePosition& p = r.positions[size_t(k)];
  const int rx = register_direction(p.rx), tx = register_direction(p.tx);
  if (p.tx == before.tx && rx >= 0) return uint16_t(0x8 | rx);
  if (p.rx == before.rx && tx >= 0) return uint16_t(tx);
  unsupported(fmt::format("switch position {} of color {} changes both sides or names several directions, which "
                          "the switch configuration register cannot express (read at 0x{:X})",
                          k, color, kSwitchConfigBase + 2 * uint32_t(color)));
}

// The position a register nibble makes of the one before it: one side changed.
RoutePosition after(RoutePosition before, uint16_t nibble) {
  (nibble & 0x8 ? before.rx : before.tx) = bit(kRegisterDirections[nibble & 0x7]);
  return before;
}

uint16_t switch_config(const RouterState& router, int color) {
  const ColorChannel* ch = router.channel(color);
  if (!ch) return kInvalidPosition | kInvalidPosition << 4 | kInvalidPosition << 8;
  const ColorRoute& r = ch->route;
  uint16_t v = 0;
  for (int k = 1; k <= 3; ++k) v |= uint16_t(position_nibble(r, k, color) << (4 * (k - 1)));
  if (r.ring_mode) v |= 1u << 12;
  v |= uint16_t(r.current << 13);
  return v;
}

}  // namespace

std::optional<FabricRegister> fabric_register_at(uint32_t addr) {
  for (const bool sw : {false, true}) {
    const uint32_t base = sw ? kSwitchConfigBase : kColorConfigBase;
    if (addr >= base && addr < base + 2 * isa::kNumColors) {
      if (addr % 2) kernel_error(fmt::format("a configuration register at 0x{:X} is read and written as a whole 16-bit word", addr));
      return FabricRegister{sw, int(addr - base) / 2};
    }
  }
  return std::nullopt;
}

uint16_t read_fabric_register(const RouterState& router, FabricRegister reg) {
  return reg.switch_config ? switch_config(router, reg.color) : color_config(router, reg.color);
}

bool write_fabric_register(const RouterState& router, ColorChannel& ch, FabricRegister reg, uint16_t value) {
  ColorRoute& r = ch.route;
  const int c = reg.color;
  if (!reg.switch_config) {
    const uint16_t now = color_config(router, c);
    if ((value ^ now) & kUnmodelledColorBits)
      unsupported(fmt::format("writing 0x{:04X} to the color configuration of color {} changes bits 15:10 (0x{:04X} "
                              "now: swaps, pop mode, teardown, point to point); wsemu changes only positions 0's "
                              "inputs and outputs this way",
                              value, c, now));
    // The switch configuration register holds positions 1..3 as the one side each changes, so
    // they stay what that register reads and take their other side from the new position 0.
    std::array<uint16_t, 4> nibbles{};
    for (int k = 1; k < r.num_positions; ++k) nibbles[size_t(k)] = position_nibble(r, k, c);
    r.positions[0] = {direction_mask(uint16_t(value >> 5) & 0x1F), direction_mask(value & 0x1F)};
    for (int k = 1; k < r.num_positions; ++k) r.positions[size_t(k)] = after(r.positions[size_t(k - 1)], nibbles[size_t(k)]);
    return false;
  }
  if (value & 0x8000)
    kernel_error(fmt::format("writing 0x{:04X} to the switch configuration of color {}: bit 15 is not a setting", value, c), c);
  uint8_t positions = 1, invalid_selects = 0;
  for (int k = 1; k <= 3; ++k) {
    const int nibble = (value >> (4 * (k - 1))) & 0xF, dir = nibble & 0x7;
    if (dir == kInvalidPosition) {
      for (int j = k; j <= 3; ++j) invalid_selects |= uint8_t(((value >> (4 * (j - 1) + 3)) & 1u) << (j - 1));
      break;
    }
    if (dir > kInvalidPosition)
      kernel_error(fmt::format("writing 0x{:04X} to the switch configuration of color {}: position {} names "
                               "direction {} (0 W, 1 E, 2 S, 3 N, 4 RAMP, 5 invalid)",
                               value, c, k, dir),
                   c);
    r.positions[size_t(k)] = after(r.positions[size_t(k - 1)], uint16_t(nibble));
    positions = uint8_t(k + 1);
  }
  for (int k = positions + 1; k <= 3; ++k)
    if (((value >> (4 * (k - 1))) & 0x7) != kInvalidPosition)
      unsupported(fmt::format("writing 0x{:04X} to the switch configuration of color {}: a valid position {} after "
                              "an invalid one",
                              value, c, k));
  const int current = (value >> 13) & 0x3;
  if (current >= positions)
    kernel_error(fmt::format("writing 0x{:04X} to the switch configuration of color {}: current position {} is "
                             "not one of its {} valid positions",
                             value, c, current, positions),
                 c);
  r.num_positions = positions;
  r.invalid_position_selects = invalid_selects;
  r.ring_mode = (value >> 12) & 1u;
  const bool moved = r.current != current;
  r.current = uint8_t(current);
  return moved;
}

}  // namespace wsemu::emu
