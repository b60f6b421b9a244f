// The control-wavelet payload: the hardware's bit layout, defined once for the assembler's
// ctl_* builtins, the emulator's routers and tasks, and the firmware's host commands.
//
// Contract: eight 3-bit command slots, one per router on the wavelet's path: a 2-bit command
// (NOP=0, SWITCH_ADV=1, SWITCH_RST=2, TEARDOWN=3) and above it a no-CE bit (that router does not
// deliver the wavelet to its core). Slot 0 is bits 24:22, slot 1 27:25, slot 2 has its command
// in 29:28 and its no-CE bit in bit 0, slots 3..7 are bits 3:1, 6:4, ..., 15:13. Bits [21:16]
// name the control task the receiving core runs (31: none); bits [15:0] are that task's data,
// which are the bits of slots 2..7: only a wavelet with at most two commands carries data.
// Bits 31:30 are unused. A router acts on slot 0 and pops it as its color's pop mode says: slots
// 1..7 move down one, slot 7 keeps its value. isa/README.md ("Control wavelets") names the SDK
// sources this layout is read from. Pure constexpr functions; nothing else.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace wsemu::isa {

enum class RouterCommand : uint8_t { NOP = 0, SWITCH_ADV = 1, SWITCH_RST = 2, TEARDOWN = 3 };

constexpr int kControlSlots = 8;
constexpr uint8_t kNoControlTask = 31;

// Where slot k's three bits sit: slot 2 is split (command in 29:28, no-CE bit in bit 0).
constexpr uint32_t control_slot(uint32_t p, int k) {
  if (k < 2) return (p >> (22 + 3 * k)) & 7;
  if (k == 2) return ((p >> 28) & 3) | ((p & 1) << 2);
  return (p >> (3 * k - 8)) & 7;
}
constexpr uint32_t with_control_slot(uint32_t p, int k, uint32_t slot) {
  slot &= 7;
  if (k < 2) return (p & ~(7u << (22 + 3 * k))) | (slot << (22 + 3 * k));
  if (k == 2) return (p & ~((3u << 28) | 1u)) | ((slot & 3) << 28) | (slot >> 2);
  return (p & ~(7u << (3 * k - 8))) | (slot << (3 * k - 8));
}
constexpr uint32_t control_slot_bits(RouterCommand command, bool ce_ignore) {
  return uint32_t(command) | (uint32_t(ce_ignore) << 2);
}

constexpr uint16_t control_data(uint32_t p) {
  return uint16_t(p & 0xFFFF);
}
constexpr uint8_t control_task(uint32_t p) {
  return uint8_t((p >> 16) & 0x3F);
}
constexpr bool control_runs_task(uint32_t p) {
  return control_task(p) != kNoControlTask;
}
// Slot 0, the one the router that holds the wavelet acts on.
constexpr RouterCommand control_command(uint32_t p) {
  return RouterCommand(control_slot(p, 0) & 3);
}
constexpr bool control_ce_ignore(uint32_t p) {
  return control_slot(p, 0) >> 2;
}
// The payload a router forwards after popping slot 0.
constexpr uint32_t control_pop(uint32_t p) {
  for (int k = 0; k + 1 < kControlSlots; ++k) p = with_control_slot(p, k, control_slot(p, k + 1));
  return p;
}
// A payload: `commands` for the first routers of the path (the rest NOP), the no-CE bit in
// every slot when ce_ignore, `task` (31: none) and `data`, whose bits a command in slots 2..7 or
// ce_ignore overwrite (the SDK: data only with a single command, and only to a core).
constexpr uint32_t make_control_payload(std::array<RouterCommand, kControlSlots> commands,
                                        int task = kNoControlTask, uint16_t data = 0,
                                        bool ce_ignore = false) {
  uint32_t p = (uint32_t(task & 0x3F) << 16) | data;
  for (int k = 0; k < kControlSlots; ++k)
    if (commands[size_t(k)] != RouterCommand::NOP || ce_ignore)
      p = with_control_slot(p, k, control_slot_bits(commands[size_t(k)], ce_ignore));
  return p;
}

}  // namespace wsemu::isa
