// The host runtime: runs a linked executable (.wsx) on a virtual wafer, shaped like the SDK's
// SdkRuntime: load, memcpy_h2d / memcpy_d2h by symbol over a rectangle of PEs (and the row and
// column broadcasts memcpy_h2d_rowbcast / colbcast), launch of an
// exported function, run until quiescent or for a number of cycles, stop, read_symbol and
// dump_core for debugging, a cycle counter and stats.
//
// Contract:
// - Host data moves through the fabric as on the real system: the runtime pushes wavelets into
//   the west edge port of each row on the firmware's reserved colors, the memcpy firmware
//   (firmware/memcpy.wsa, linked into each program by `.include "memcpy.wsa"`) writes them to
//   SRAM or streams them to the kernel, and device-to-host data leaves through the east edge.
//   Its cost is in the cycle count; the host channel model (host_channel.hpp) limits the
//   wavelets per cycle of each channel and books a fixed per-transaction cost as host time,
//   apart from the fabric cycles. With RuntimeOptions::backdoor the copies use the wafer's
//   SRAM back door instead (no fabric cost), and the stats say so.
// - Host calls are serialized: each one sends its wavelets, then runs the wafer until it is
//   quiescent or blocked (waiting for the host is not an error); only run_until_quiescent()
//   treats a blocked wafer as a hang.
// - Coordinates of memcpy, launch and read_symbol are relative to the rectangle that holds the
//   symbol or function (as the SDK's are relative to the kernel's rectangle); dump_core takes
//   fabric coordinates.
// - Every failure is a HostError (host_error.hpp): usage errors before anything is sent,
//   the emulator's categorized faults and hang reports otherwise. Nothing here prints.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "emulator/wafer.hpp"
#include "compiler/executable/executable.hpp"
#include "runtime/host/host_channel.hpp"
#include "runtime/host/host_error.hpp"

namespace wsemu::runtime {
// The host side speaks the executable's vocabulary (compiler/executable).
using compiler::ColorRoute;
using compiler::ConfigRun;
using compiler::Direction;
using compiler::DirectionSet;
using compiler::Executable;
using compiler::HostFunction;
using compiler::HostSymbol;
using compiler::NamedColor;
using compiler::ParamSet;
using compiler::PeConfig;
using compiler::Program;
using compiler::Rect;
using compiler::RouteSet;
using compiler::SwitchPosition;
using compiler::direction_name;
using compiler::kFirmwareSramReserve;
using compiler::kFirstFirmwareColor;
using compiler::kNumDirections;
using compiler::kNumRoutableColors;
using compiler::kPeSramBytes;
using compiler::kProgramSramLimit;
using compiler::opposite;
}  // namespace wsemu::runtime

namespace wsemu::runtime::host {

enum class MemcpyOrder {
  ROW_MAJOR,  // data is the C-order tensor [h][w][elems_per_pe]
  COL_MAJOR,  // the same tensor in Fortran order: element e of PE (x, y) at y + h * (x + w * e)
};
enum class MemcpyDataType { MEMCPY_32BIT, MEMCPY_16BIT };

struct MemcpyOptions {
  // false: copy to / from the symbol's SRAM. true: H2D elements are delivered to the kernel as
  // data wavelets on the stream's color (`stream_color`); D2H elements are taken from the
  // firmware's memcpy_d2h_fifo, which the kernel fills. The first argument then names the
  // rectangle.
  bool streaming = false;
  // H2D streaming: the stream, by its color (the SDK's MEMCPYH2D_DATA_*_ID, the color the layout
  // gave <memcpy/get_params>); -1: the program's only one. Programs without stream colors (wsemu
  // assembly kernels) take every stream on color 23, input queue 1.
  int stream_color = -1;
  MemcpyOrder order = MemcpyOrder::ROW_MAJOR;
  MemcpyDataType data_type = MemcpyDataType::MEMCPY_32BIT;
};

struct RuntimeOptions {
  int threads = 1;
  uint64_t max_cycles = 1'000'000'000;  // over the whole session; HostError(CYCLE_LIMIT) beyond
  HostChannelModel channel;
  bool backdoor = false;  // copy through Wafer::write_sram / read_sram (no fabric cost)
  std::vector<std::string> profile_overrides;  // "key=value", see emulator/arch_profile.hpp
};

// One host call as it shows in the stats.
struct HostPhase {
  std::string what;      // "memcpy_h2d A", "launch compute", "run", "memcpy_d2h y"
  uint64_t cycles = 0;   // fabric cycles the call took
  uint64_t elements = 0; // payload elements moved (memcpy)
  uint64_t wavelets = 0; // wavelets through the edge ports, headers included
  bool backdoor = false;
};

struct HostStats {
  uint64_t load_cycles = 0;     // firmware start-up
  uint64_t memcpy_cycles = 0;   // inside memcpy_h2d / memcpy_d2h
  uint64_t launch_cycles = 0;   // inside launch (until the wafer settles)
  uint64_t run_cycles = 0;      // inside run / run_until_quiescent
  uint64_t h2d_elements = 0, d2h_elements = 0;
  uint64_t edge_wavelets_in = 0, edge_wavelets_out = 0;  // through edge ports, headers included
  uint64_t backdoor_bytes_written = 0, backdoor_bytes_read = 0;  // memcpy and read_symbol
  uint64_t loader_bytes_written = 0;  // firmware configuration words written at load
  uint64_t transactions = 0;
  double host_overhead_us = 0;  // transactions x the model's fixed cost, not in the cycles
  std::vector<HostPhase> phases;
};

class SdkRuntime {
 public:
  explicit SdkRuntime(Executable exe, RuntimeOptions options = {});
  ~SdkRuntime();
  SdkRuntime(const SdkRuntime&) = delete;
  SdkRuntime& operator=(const SdkRuntime&) = delete;

  // Places programs and routes (the kernel's and the firmware's) and starts the firmware.
  void load();

  // `data` holds w * h * elems_per_pe elements as 32-bit words (16-bit data in the low half).
  void memcpy_h2d(const std::string& symbol, std::span<const uint32_t> data, int x0, int y0, int w, int h,
                  int elems_per_pe, const MemcpyOptions& options = {});
  void memcpy_d2h(std::span<uint32_t> out, const std::string& symbol, int x0, int y0, int w, int h,
                  int elems_per_pe, const MemcpyOptions& options = {});
  // The SDK's broadcasts. rowbcast: `data` holds h * elems_per_pe words,
  // row y's elements for every PE of row y of the rectangle; the firmware replicates them along
  // the row, so they cross the host channel once per row (when the row's PEs hold the symbol at
  // one address; else each PE gets its own copy). colbcast: `data` holds w * elems_per_pe words,
  // column x's elements for every PE of column x; each row is its own chain, so every row is
  // sent its copy. `options.order` orders `data` as [lines][elems] (ROW_MAJOR) or the transpose.
  // With `options.streaming` each PE of the rectangle gets its line's elements on its stream
  // (as memcpy_h2d streaming of the expanded tensor; the row is not replicated on the wafer).
  void memcpy_h2d_rowbcast(const std::string& symbol, std::span<const uint32_t> data, int x0, int y0, int w, int h,
                           int elems_per_pe, const MemcpyOptions& options = {});
  void memcpy_h2d_colbcast(const std::string& symbol, std::span<const uint32_t> data, int x0, int y0, int w, int h,
                           int elems_per_pe, const MemcpyOptions& options = {});
  // Calls the exported function on every PE of its rectangle; up to 8 u32 arguments, which the
  // function finds in MEMCPY_ARGS. Returns once the wafer has settled.
  void launch(const std::string& function, std::span<const uint32_t> args = {});

  // Runs until nothing is left to do; a hang, fault or the cycle limit is a HostError.
  emu::RunResult run_until_quiescent();
  // Runs at most `cycles` cycles (faults are a HostError; a hang is returned, not thrown).
  emu::RunResult run(uint64_t cycles);
  void stop();  // ends the session: later calls are usage errors

  // Host streams at the fabric's edge, as the SdkLayout API's streams run (no memcpy firmware):
  // each stream pushes `words` as data wavelets of `color` into the edge port of fabric PE
  // (x, y) on `side` (where the host is), or waits there for `expect` data wavelets (control
  // wavelets that reach the edge are dropped), all streams at once (the SDK's nonblocking send
  // and receive); returns the payloads each received. A stall is a HANG HostError naming the
  // stream.
  struct EdgeStream {
    int x = 0, y = 0;
    emu::Direction side = emu::Direction::WEST;
    int color = 0;
    std::vector<uint32_t> words;
    uint64_t expect = 0;
  };
  std::vector<std::vector<uint32_t>> edge_streams(const std::vector<EdgeStream>& streams);

  // Debugging (the back door; counted in the stats): the symbol on PE (x, y) of its rectangle,
  // one 32-bit word per element (16-bit elements zero-extended).
  std::vector<uint32_t> read_symbol(int x, int y, const std::string& symbol);
  // Before load(): `words` (one per element, 16-bit elements in the low half) become the first
  // elements of the symbol on PE (x, y) of its rectangle when load() places the programs,
  // before any task runs (SdkLayout's set_symbol values). Checked at load.
  void initial_symbol(int x, int y, const std::string& symbol, std::vector<uint32_t> words);
  // Registers, descriptors, tasks, queues and stats of fabric PE (x, y), as text.
  std::string dump_core(int fx, int fy) const;

  uint64_t cycles() const;
  double clock_mhz() const;
  const HostStats& stats() const;
  nlohmann::json stats_json() const;
  const Executable& executable() const;
  emu::Wafer& wafer();
  bool loaded() const;

  struct State;  // runtime_state.hpp

 private:
  std::unique_ptr<State> state_;
};

}  // namespace wsemu::runtime::host
