// Wavelets, link directions and the control-wavelet payload layout.
//
// Contract: a Wavelet is the unit the fabric moves: a 32-bit payload, a 5-bit color and the
// control flag, which travels outside the payload (as on the hardware's 38-bit links). The
// control payload layout is wsemu's own encoding (documented in emulator/README.md):
//   bits [15:0]   16-bit data, given to a control task in r0
//   bits [21:16]  control task id (0..63)
//   bit  22       run that control task at the receiving CE ("entry" bit)
//   bit  23       ce_ignore: no router delivers the wavelet to its core (RAMP); it only moves
//                 switches and tears colors down on its way
//   bits [31:24]  four 2-bit router commands; command 0 in bits [25:24]:
//                 NOP=0, SWITCH_ADV=1, SWITCH_RST=2, TEARDOWN=3
// Every router a control wavelet passes executes command 0 after forwarding it and, as its
// route's pop mode says (ColorRoute::pop_mode), shifts the remaining commands down by 2 bits.
// Pure data and constexpr helpers only.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace wsemu::emu {

enum class Direction : uint8_t { NORTH = 0, EAST = 1, SOUTH = 2, WEST = 3, RAMP = 4 };
constexpr int kNumLinkDirections = 4;  // N, E, S, W
constexpr int kNumDirections = 5;      // plus RAMP (the link to the PE's own core)

using DirectionMask = uint8_t;  // bit i = Direction(i)
constexpr DirectionMask bit(Direction d) { return DirectionMask(1u << static_cast<int>(d)); }
constexpr Direction opposite(Direction d) {
  constexpr std::array<Direction, 5> opp = {Direction::SOUTH, Direction::WEST, Direction::NORTH,
                                            Direction::EAST, Direction::RAMP};
  return opp[static_cast<int>(d)];
}
// Neighbour offsets: x grows to the east, y grows to the south (PE(0,0) is the NW corner).
constexpr int dx(Direction d) { return d == Direction::EAST ? 1 : d == Direction::WEST ? -1 : 0; }
constexpr int dy(Direction d) { return d == Direction::SOUTH ? 1 : d == Direction::NORTH ? -1 : 0; }
std::string_view direction_name(Direction d);
bool parse_direction(std::string_view name, Direction& out);  // "N", "north", "EAST", "ramp"...

struct Wavelet {
  uint32_t payload = 0;
  uint8_t color = 0;
  bool control = false;
  // Set by a fabout with advance_switch on its last wavelet: the first router advances the
  // color's switch once this wavelet has passed. Never travels past that router.
  bool advance_switch_after = false;
  friend bool operator==(const Wavelet&, const Wavelet&) = default;
};

enum class RouterCommand : uint8_t { NOP = 0, SWITCH_ADV = 1, SWITCH_RST = 2, TEARDOWN = 3 };

constexpr uint16_t control_data(uint32_t p) { return uint16_t(p & 0xFFFF); }
constexpr uint8_t control_task(uint32_t p) { return uint8_t((p >> 16) & 0x3F); }
constexpr bool control_entry(uint32_t p) { return (p >> 22) & 1; }
constexpr bool control_ce_ignore(uint32_t p) { return (p >> 23) & 1; }
constexpr RouterCommand control_command(uint32_t p) { return RouterCommand((p >> 24) & 3); }
// The payload a router forwards after executing command 0.
constexpr uint32_t control_shift_commands(uint32_t p) {
  return (p & 0x00FFFFFFu) | (((p >> 26) & 0x3Fu) << 24);
}
constexpr uint32_t make_control_payload(std::array<RouterCommand, 4> commands, int task = 0,
                                        bool entry = false, uint16_t data = 0, bool ce_ignore = false) {
  uint32_t cmds = 0;
  for (int i = 0; i < 4; ++i) cmds |= uint32_t(commands[i]) << (2 * i);
  return (cmds << 24) | (uint32_t(ce_ignore) << 23) | (uint32_t(entry) << 22) | (uint32_t(task & 0x3F) << 16) |
         data;
}

}  // namespace wsemu::emu
