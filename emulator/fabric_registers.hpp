// The WSE-2 router's per-color configuration registers as its core reads and writes them with
// 16-bit loads and stores: a color configuration word per color at byte address 0xFE40 + 2c
// (word 0x7F20 + c) and a switch configuration word at 0xFE80 + 2c (word 0x7F40 + c), in the
// bit layout the SDK's spmv-hypersparse states and uses (allreduce2R1E/pe.csl, which reconfigures
// its one reduction color so in its teardown handler):
//
//   color configuration  [4:0] position 0's outputs, [9:5] its inputs (each W, E, S, N, RAMP
//                        from the low bit), 10 color swap of N/S inputs, 11 of E/W inputs,
//                        [13:12] control-wavelet pop mode, 14 teardown in progress, 15 point to
//                        point
//   switch configuration [3:0], [7:4], [11:8] positions 1, 2, 3: bit 3 of each selects the side
//                        it changes (1 input, 0 output), bits [2:0] the direction (0 W, 1 E,
//                        2 S, 3 N, 4 RAMP, 5 invalid); 12 ring mode; [14:13] the current position
//
// A position changes one side; the other is the previous position's. wsemu keeps both sides of
// each position (router.hpp), so a read gives each position as the side it changes from the one
// before, and writing position 0 carries its new sides into the later positions that kept them.
//
// Contract: reads see the live route; a write needs the color torn down at this router, as
// every route write does (a kernel error otherwise). The pop-mode, swap, point-to-point and
// teardown bits are read as wsemu has them (the pop mode as PopMode's value; the hardware's
// encoding is not documented) and must be written back unchanged: changing them this way is
// UNSUPPORTED, as is a position wsemu cannot express in one side and one direction.
#pragma once

#include <cstdint>
#include <optional>

#include "emulator/router.hpp"

namespace wsemu::emu {

struct FabricRegister {
  bool switch_config = false;  // else the color configuration
  int color = 0;
};

// The register at byte address `addr`, if it lies in the window.
std::optional<FabricRegister> fabric_register_at(uint32_t addr);

uint16_t read_fabric_register(const RouterState& router, FabricRegister reg);

// Writes `value` into the register of a torn-down channel; returns whether its current switch
// position changed.
bool write_fabric_register(const RouterState& router, ColorChannel& ch, FabricRegister reg, uint16_t value);

}  // namespace wsemu::emu
