// A linked wsemu executable (the contents of a .wsx file): the fabric size, the assembled
// programs (each distinct one stored once), where each PE's program and routes come from,
// and the host's view (exported symbols and functions, named colors). `wsemu build` makes
// one from a layout; the host runtime loads one into the virtual wafer.
//
// Contract: plain data with indices, no pointers, like isa::ObjectImage. Placement is stored
// per rectangle as runs of PE configurations in row-major order, so that a full-size wafer
// running one program is a handful of entries, not a million. A PE outside every rectangle
// has no program and no routes. Routes are fully resolved: every switch position holds its
// complete rx and tx sets. Serialised by executable_io.hpp (versioned protobuf), never by
// memcpy. validate() says whether the indices hang together; load_executable() calls it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "isa/object.hpp"

namespace wsemu::compiler {

// Version 4: a host symbol may be indirect (HostSymbol::indirect), which a version-3 reader would
// take for the pointer word itself; version-3 files have no indirect symbols and are still read.
// Version 3: control wavelets in the hardware's bit layout (isa/control_payload.hpp) and counter
// filters in the routes. Files of versions 1 and 2 hold programs whose control payloads meant
// wsemu's earlier layout, so they are refused with a request to rebuild, never run wrongly.
// (Version 2 added the line table, isa object format 2.)
constexpr uint32_t kExecutableFormatVersion = 4;
constexpr uint32_t kOldestExecutableFormatVersion = 3;

// Resources the layout may not give to kernels, because the memcpy firmware (host I/O and
// launch) owns them, as in the SDK: colors 21, 22 and 23, and the top kFirmwareSramReserve
// bytes of each PE's SRAM. A program's code + data must fit below that reserve.
constexpr int kNumRoutableColors = 24;  // colors 0..23 can be routed
constexpr int kFirstFirmwareColor = 21;  // 21..23 belong to the memcpy firmware
constexpr uint32_t kPeSramBytes = 48 * 1024;  // WSE-2 and WSE-3 alike
constexpr uint32_t kFirmwareSramReserve = 4 * 1024;
constexpr uint32_t kProgramSramLimit = kPeSramBytes - kFirmwareSramReserve;

// Router ports. RAMP is the link between a router and its own PE core.
enum class Direction : uint8_t { NORTH = 0, SOUTH = 1, EAST = 2, WEST = 3, RAMP = 4 };
constexpr int kNumDirections = 5;
std::string_view direction_name(Direction d);  // "N", "S", "E", "W", "RAMP"
Direction opposite(Direction d);                // precondition: d != RAMP

// A set of router ports, bit i = Direction i.
struct DirectionSet {
  uint8_t bits = 0;
  bool contains(Direction d) const { return (bits >> static_cast<int>(d)) & 1u; }
  void insert(Direction d) { bits |= static_cast<uint8_t>(1u << static_cast<int>(d)); }
  bool empty() const { return bits == 0; }
  std::string to_string() const;  // "[RAMP, E]", "[]"
  friend bool operator==(const DirectionSet&, const DirectionSet&) = default;
};

struct SwitchPosition {
  DirectionSet rx;
  DirectionSet tx;
  friend bool operator==(const SwitchPosition&, const SwitchPosition&) = default;
};

// The router configuration of one color on one PE. positions[0] is the base route; positions
// 1..3, when present, are the switch positions that control wavelets advance through. After the
// last position a switch advance stays there, or wraps to position 0 in ring mode.
struct ColorRoute {
  uint8_t color = 0;
  std::vector<SwitchPosition> positions;  // 1..4 entries
  uint8_t current_position = 0;
  bool ring_mode = false;
  // The route may receive from or send to the fabric edge: host I/O enters and leaves there.
  bool host_port = false;
  // Range filter: data wavelets reach the RAMP only when their upper 16 bits are in
  // [filter_min, filter_max] (emulator/router.hpp).
  bool filter = false;
  uint16_t filter_min = 0, filter_max = 0xFFFF;
  // Counter filter (emulator/router.hpp): counted wavelets (data, control) reach the RAMP while
  // the counter, starting at counter_init and wrapping to 0 after counter_limit, is <= counter_max.
  bool counter_filter = false;
  bool count_data = true, count_control = false;
  uint16_t counter_init = 0, counter_max = 0, counter_limit = 0;
  // Color swap (WSE-2): wavelets of this color arriving from E/W (swap_x) or N/S (swap_y) become
  // color ^ 1.
  bool swap_x = false, swap_y = false;
  // What routers do with the commands of control wavelets they forward (emu::PopMode): 0 pop
  // always, 1 never (the default, as on the hardware), 2 only a SWITCH_ADV.
  uint8_t pop_mode = 1;
  // The PE may rewrite the route at run time (<tile_config>): the router buffers every link.
  bool reconfigurable = false;
  // The color starts in teardown (the SDK's `.teardown = true`); implies reconfigurable.
  bool teardown = false;
  friend bool operator==(const ColorRoute&, const ColorRoute&) = default;
};

// All the routes of one PE, sorted by color, at most one per color.
struct RouteSet {
  std::vector<ColorRoute> routes;
  const ColorRoute* find(uint8_t color) const;
  friend bool operator==(const RouteSet&, const RouteSet&) = default;
};

// The values of a program's .param names for one group of PEs, sorted by name.
struct ParamSet {
  std::vector<std::pair<std::string, int64_t>> values;
  friend bool operator==(const ParamSet&, const ParamSet&) = default;
};

struct Program {
  std::string source_path;  // as the layout named it, relative to the layout file
  isa::ObjectImage object;
  friend bool operator==(const Program&, const Program&) = default;
};

// What one PE runs: indices into Executable::programs / param_sets / route_sets. A PE of a
// routing-only rectangle has program = param_set = -1.
struct PeConfig {
  int32_t program = -1;
  int32_t param_set = -1;
  uint32_t route_set = 0;
  friend bool operator==(const PeConfig&, const PeConfig&) = default;
};

struct ConfigRun {
  uint32_t count = 0;   // consecutive PEs, row-major within the rectangle
  uint32_t config = 0;  // index into Executable::pe_configs
  friend bool operator==(const ConfigRun&, const ConfigRun&) = default;
};

struct Rect {
  std::string name;
  uint32_t x = 0, y = 0;  // origin: the north-west PE, in fabric coordinates
  uint32_t width = 0, height = 0;
  std::vector<ConfigRun> runs;  // counts sum to width * height
  // Configuration of the PE at rectangle-relative (rx, ry). Precondition: inside.
  uint32_t config_at(uint32_t rx, uint32_t ry) const;
  std::vector<uint32_t> expand() const;  // one entry per PE, row-major
  bool contains(uint32_t fx, uint32_t fy) const {
    return fx >= x && fy >= y && fx - x < width && fy - y < height;
  }
  friend bool operator==(const Rect&, const Rect&) = default;
};

// A host-visible array: `program_symbol` of every PE's program in rectangle `rect`.
struct HostSymbol {
  std::string name;            // what the host calls it (memcpy, read_symbol)
  std::string program_symbol;  // the symbol in the PE programs
  isa::ElemType type = isa::ElemType::F32;
  uint32_t elems_per_pe = 0;
  uint32_t rect = 0;  // index into Executable::rects
  bool host_readable = true;
  bool host_writable = true;
  // `program_symbol` is a pointer variable (a u32 word holding a byte address, CSL's
  // `var p: [*]f32 = &a; @export_symbol(p, "a")`): copies go to and from the array it points to
  // at the time of the copy; `type` and `elems_per_pe` describe that array.
  bool indirect = false;
  friend bool operator==(const HostSymbol&, const HostSymbol&) = default;
};

struct HostFunction {
  std::string name;              // what the host launches
  std::string program_function;  // the function in the PE programs
  uint32_t rect = 0;
  friend bool operator==(const HostFunction&, const HostFunction&) = default;
};

struct NamedColor {
  std::string name;
  uint8_t color = 0;
  friend bool operator==(const NamedColor&, const NamedColor&) = default;
};

struct Executable {
  std::string arch = "wse2";
  uint32_t fabric_width = 0, fabric_height = 0;
  std::string layout_file;  // for messages only
  std::vector<std::pair<std::string, int64_t>> build_params;  // final values, sorted by name
  std::vector<NamedColor> colors;
  std::vector<Program> programs;
  std::vector<ParamSet> param_sets;
  std::vector<RouteSet> route_sets;
  std::vector<PeConfig> pe_configs;
  std::vector<Rect> rects;  // never overlapping
  std::vector<HostSymbol> symbols;
  std::vector<HostFunction> functions;
  friend bool operator==(const Executable&, const Executable&) = default;

  // The rectangle holding fabric PE (x, y), or -1.
  int rect_at(uint32_t x, uint32_t y) const;
  // The configuration of fabric PE (x, y); nullptr outside every rectangle.
  const PeConfig* pe_config_at(uint32_t x, uint32_t y) const;
  const HostSymbol* find_symbol(std::string_view name) const;
  const HostFunction* find_function(std::string_view name) const;
  std::optional<uint8_t> find_color(std::string_view name) const;
  uint64_t placed_pes() const;  // PEs inside rectangles
};

// Problems with the indices and sizes of an executable (empty when consistent).
std::vector<std::string> validate(const Executable& exe);

}  // namespace wsemu::compiler
