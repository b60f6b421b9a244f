// The host's side of the memcpy firmware contract (firmware/memcpy.wsa, firmware/README.md):
// reserved colors, queues, task ids and SRAM addresses, the command encoding, and where the
// firmware's include folder is.
//
// Contract: constants and pure encoders only; every value here must equal the .equ and .task
// of memcpy.wsa (tests/runtime/host_firmware_test.cpp checks them against the assembled
// firmware). Nothing here touches a wafer.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

#include "firmware/data_paths.hpp"
#include "firmware/firmware_paths.hpp"  // generated: kFirmwareSourceDir
#include "isa/control_payload.hpp"

namespace wsemu::firmware {

constexpr int kColorA = 21;       // chain color into even participants
constexpr int kColorB = 22;       // chain color into odd participants
constexpr int kStreamColor = 23;  // ramp -> ramp loopback: launches and host streams
constexpr int kChainQueue = 0;
constexpr int kStreamQueue = 1;  // input queue of color 23 (launches, legacy streams)
// Output queue of the firmware's ramp-to-ramp sends (launches, host streams on any color): bound
// per send, flushed after it (kTaskFlushed then resumes the chain).
constexpr int kLoopQueue = 1;
constexpr int kLegacyStreamOutQueue = 5;  // wse2: legacy color-23 streams (microthread 5)

// Control task ids of the commands.
constexpr int kTaskH2D = 21;
constexpr int kTaskD2H = 22;
constexpr int kTaskLaunch = 63;  // the top id: 31 names no task; SDK kernels bind 23 and 24
constexpr int kTaskToHost = 30;
// H2D and D2H in copy mode of an indirect symbol: the address field names a pointer variable and
// the target copies to or from the array it points to (compiler::HostSymbol::indirect). Their
// own ids, so that the direct commands cost what they did.
constexpr int kTaskH2DIndirect = 46;
constexpr int kTaskD2HIndirect = 47;
// Local tasks.
constexpr int kTaskResume = 27;
constexpr int kTaskInit = 28;
constexpr int kTaskFlushed = 29;  // the profiles' teardown task (qflush completion); CSL programs only
// Descriptor registers d40..d47 and microthreads 0 (and on wse2 1 and 5) belong to the firmware.
constexpr int kFirstFirmwareDsr = 40;

// SRAM: the top 4 KiB of the 48 KiB.
constexpr uint32_t kReserveBase = 0xB000;
constexpr uint32_t kConfigAddress = kReserveBase;       // [0] flags, [1] chain index, [2] firmware state
constexpr uint32_t kArgsAddress = kReserveBase + 16;    // launch arguments
// The firmware state word (MEMCPY_LOOP_SENT): kSentLaunch in its low byte and the function's
// control task id in bits 16.. while a launch waits for the kernel's unblock_cmd_stream() (CSL
// programs): that PE's command stream is blocked until then.
constexpr uint32_t kStateAddress = kReserveBase + 8;
constexpr uint32_t kSentLaunch = 3;
constexpr int kMaxLaunchArgs = 8;
constexpr uint32_t kFifoBase = kReserveBase + 0x400;
constexpr uint32_t kFifoCapacity = 768;

constexpr uint32_t kConfigOdd = 1;   // flags bit 0: odd chain position
constexpr uint32_t kConfigWse3 = 2;  // flags bit 1: wse3 triggers (queues, not colors)
// flags bit 2: a CSL program (<memcpy/memcpy>, which records its stream colors): the SDK's
// conventions, launches and streams through the loop queue (output queue 1, flushed after each
// send), task 29 the firmware's. Without it (assembly kernels): launches and color-23 streams
// through output queue 5, task 29 and output queue 1 the kernel's.
constexpr uint32_t kConfigCsl = 4;

constexpr uint32_t kFlag16Bit = 1;   // command flags (address word, bits 16..)
constexpr uint32_t kFlagStream = 2;  // H2D: the address field is the color to deliver on
// H2D row broadcast: the target and the n participants after it store the same data; n sits in
// the flags from bit kBroadcastCountShift (address word bits 20..31).
constexpr uint32_t kFlagBroadcast = 4;
constexpr uint32_t kBroadcastCountShift = 4;
constexpr uint32_t kMaxBroadcastCount = 4095;

// <memcpy/memcpy>'s record of the host-to-device stream colors a PE program takes (a u32 array
// in its data; 23 = the legacy stream on color 23 / input queue 1): the loader routes each other
// color ramp to ramp on that PE, and a streaming memcpy_h2d delivers on the one it names.
constexpr const char* kStreamColorsSymbol = "memcpy_h2d_colors";

// The name of the firmware's init task in a program's task table: its presence says the
// program includes the firmware.
constexpr const char* kInitTaskName = "memcpy_init";

// A command's control wavelet payload: control task id, 16-bit data, no router commands
// (isa/control_payload.hpp has the layout).
constexpr uint32_t control_payload(int task, uint16_t data) {
  return isa::make_control_payload({}, task, data);
}
constexpr uint32_t address_word(uint32_t address, uint32_t flags) {
  return (address & 0xFFFF) | (flags << 16);
}

// Where `.include "memcpy.wsa"` is found: $WSEMU_FIRMWARE_DIR, else the installed
// share/wsemu/firmware beside the running binary, else this source tree's firmware/.
inline std::string include_dir() { return data_dir("firmware", "WSEMU_FIRMWARE_DIR", kFirmwareSourceDir); }

}  // namespace wsemu::firmware
