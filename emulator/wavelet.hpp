// Wavelets, link directions and the control-wavelet payload layout.
//
// Contract: a Wavelet is the unit the fabric moves: a 32-bit payload, a 5-bit color and the
// control flag, which travels outside the payload (as on the hardware's 38-bit links). A control
// payload has the hardware's layout, defined in isa/control_payload.hpp (the lowest layer, so
// that the assembler and the firmware use the same definition) and named here in emu::.
// Pure data and constexpr helpers only.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "isa/control_payload.hpp"

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

using isa::control_ce_ignore;
using isa::control_command;
using isa::control_data;
using isa::control_pop;
using isa::control_runs_task;
using isa::control_slot;
using isa::control_task;
using isa::kControlSlots;
using isa::kNoControlTask;
using isa::make_control_payload;
using isa::RouterCommand;

}  // namespace wsemu::emu
