// Internal state of SdkRuntime, shared by its implementation files (loader, channel pump,
// commands, debugging). Not part of the public API.
//
// Contract: the chains describe, per fabric row, the PEs that run the memcpy firmware in west
// to east order; `chain_index` maps a PE to its position there. Everything else is what the
// loader derived from the executable. Nothing here is used before load() except `exe`.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emulator/wafer.hpp"
#include "runtime/host/sdk_runtime.hpp"

namespace wsemu::runtime::host {

struct ChainRow {
  int y = 0;
  std::vector<int> xs;  // participants, west to east
  int channel = 0;
};

// What one row of the fabric sends and expects in one host call.
struct RowTraffic {
  int y = 0;
  std::deque<emu::Wavelet> out;     // to push into the west edge port
  uint64_t expect_in = 0;           // wavelets to pop from the east edge port
  std::vector<uint32_t> received;   // payloads popped, in order
};

struct SdkRuntime::State {
  Executable exe;
  RuntimeOptions options;
  std::unique_ptr<emu::Wafer> wafer;
  bool loaded = false;
  struct InitialSymbol {
    int x = 0, y = 0;
    std::string symbol;
    std::vector<uint32_t> words;
  };
  std::vector<InitialSymbol> initial_symbols;  // written by load() before any task runs
  void write_initial_symbols();
  bool stopped = false;
  // Per program index: the image placed on the wafer (the executable's object plus a control
  // task per exported function), and whether it includes the firmware.
  std::vector<std::shared_ptr<const isa::ObjectImage>> images;
  std::vector<bool> has_firmware;
  // Per program index: the host-to-device stream colors it takes (<memcpy/memcpy>'s
  // memcpy_h2d_colors, color 23 left out); empty: the legacy stream on color 23 only.
  std::vector<std::vector<int>> stream_colors;
  std::map<std::string, int> function_task;  // host function name -> control task id
  std::vector<ChainRow> chains;              // sorted by y
  std::map<std::pair<int, int>, int> chain_index;  // (x, y) -> position in its row's chain
  uint64_t backdoor_read_base = 0, backdoor_written_base = 0;
  HostStats stats;

  // loader.cpp
  void load();
  // channel_pump.cpp: moves the traffic through the edge ports under the channel model.
  void pump(std::vector<RowTraffic>& rows, const std::string& what);
  // Runs until quiescent or blocked; faults and the cycle limit throw. Returns the result.
  emu::RunResult settle(const std::string& what);
  // Throws HANG when firmware work is still pending on a participant of `rows`.
  void check_firmware_idle(const std::vector<int>& rows, const emu::RunResult& r, const std::string& what);
  // Rethrows a hang of host call `what` naming each PE whose command stream a launch left
  // blocked (no unblock_cmd_stream() yet); returns when there is none.
  void rethrow_naming_blocked_streams(const HostError& e, const std::string& what) const;
  uint64_t cycles_left() const;

  const ChainRow* chain(int y) const;
  int chain_position(int fx, int fy) const;  // -1 when the PE has no firmware
  // The color a host stream named `requested` (a color, or -1: not named) is delivered on at
  // fabric PE (fx, fy); a usage error when the PE's program takes no such stream.
  int stream_color(const std::string& what, int fx, int fy, int requested) const;
  void require_loaded(const char* call) const;
  void add_phase(HostPhase phase);
};

}  // namespace wsemu::runtime::host
