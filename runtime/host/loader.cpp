// Loading an executable into the wafer: programs (with a control task per exported function,
// the target of `launch`), the layout's routes, the firmware's row chains, and the firmware's
// start-up.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "firmware/memcpy_protocol.hpp"
#include "runtime/host/runtime_state.hpp"

namespace wsemu::runtime::host {
namespace {

emu::Direction to_emu(compiler::Direction d) {
  switch (d) {
    case compiler::Direction::NORTH: return emu::Direction::NORTH;
    case compiler::Direction::SOUTH: return emu::Direction::SOUTH;
    case compiler::Direction::EAST: return emu::Direction::EAST;
    case compiler::Direction::WEST: return emu::Direction::WEST;
    case compiler::Direction::RAMP: return emu::Direction::RAMP;
  }
  return emu::Direction::RAMP;
}

emu::DirectionMask to_emu(DirectionSet set) {
  emu::DirectionMask m = 0;
  for (int d = 0; d < kNumDirections; ++d)
    if (set.contains(compiler::Direction(d))) m |= emu::bit(to_emu(compiler::Direction(d)));
  return m;
}

emu::ColorRoute to_emu(const ColorRoute& r) {
  emu::ColorRoute e;
  for (size_t i = 0; i < r.positions.size() && i < 4; ++i)
    e.positions[i] = {to_emu(r.positions[i].rx), to_emu(r.positions[i].tx)};
  e.num_positions = uint8_t(std::max<size_t>(1, std::min<size_t>(4, r.positions.size())));
  e.current = r.current_position;
  e.ring_mode = r.ring_mode;
  e.filter = r.filter;
  e.filter_min = r.filter_min;
  e.filter_max = r.filter_max;
  e.counter = {r.counter_filter, r.count_data, r.count_control, r.counter_init, r.counter_max, r.counter_limit};
  e.swap_x = r.swap_x;
  e.swap_y = r.swap_y;
  e.pop_mode = emu::PopMode(r.pop_mode);
  e.reconfigurable = r.reconfigurable;
  e.teardown = r.teardown;
  return e;
}

bool includes_firmware(const isa::ObjectImage& img) {
  for (const isa::TaskBinding& t : img.tasks)
    if (t.name == firmware::kInitTaskName && t.kind == isa::TaskKind::LOCAL && t.id == firmware::kTaskInit)
      return true;
  return false;
}

// The host-to-device stream colors <memcpy/memcpy> recorded in the program's data (its
// memcpy_h2d_colors array), without color 23 (the legacy stream) and without repeats.
std::vector<int> h2d_stream_colors(const isa::ObjectImage& img) {
  std::vector<int> colors;
  const isa::Symbol* sym = img.find_symbol(firmware::kStreamColorsSymbol);
  if (!sym || sym->address < img.data_base) return colors;
  for (uint32_t i = 0; i < sym->count; ++i) {
    // The initialised data ends at its last non-zero byte: bytes past it are zero.
    uint32_t c = 0;
    for (size_t b = 0; b < 4; ++b) {
      const size_t at = size_t(sym->address - img.data_base) + 4 * i + b;
      if (at < img.data_init.size()) c |= uint32_t(img.data_init[at]) << (8 * b);
    }
    if (int(c) != firmware::kStreamColor && std::find(colors.begin(), colors.end(), int(c)) == colors.end())
      colors.push_back(int(c));
  }
  return colors;
}

}  // namespace

void SdkRuntime::State::load() {
  const std::vector<std::string> problems = validate(exe);
  if (!problems.empty())
    throw HostError(HostError::Kind::USAGE, "the executable is inconsistent: " + problems.front());
  emu::ArchProfile profile;
  emu::WaferOptions wo;
  wo.threads = std::max(1, options.threads);
  try {
    profile = emu::arch_profile_with(exe.arch, options.profile_overrides);
    wafer = std::make_unique<emu::Wafer>(profile, int(exe.fabric_width), int(exe.fabric_height), wo);
  } catch (const emu::FaultError& e) {
    throw HostError(e.fault(), "load");
  }

  // Control task ids for the exported functions: from 63 down, skipping every id a program
  // binds as a control task itself.
  std::set<int> used{firmware::kTaskH2D,         firmware::kTaskD2H,         firmware::kTaskLaunch,
                     firmware::kTaskToHost,      firmware::kTaskH2DIndirect, firmware::kTaskD2HIndirect};
  for (const Program& p : exe.programs)
    for (const isa::TaskBinding& t : p.object.tasks)
      if (t.kind == isa::TaskKind::CONTROL) used.insert(t.id);
  int next = 63;
  for (const HostFunction& f : exe.functions) {
    while (next >= 0 && used.count(next)) --next;
    if (next < 0)
      throw HostError(HostError::Kind::USAGE,
                      fmt::format("no control task id is left for exported function '{}'", f.name));
    function_task[f.name] = next;
    used.insert(next--);
  }

  images.clear();
  has_firmware.clear();
  stream_colors.clear();
  for (const Program& p : exe.programs) {
    auto img = std::make_shared<isa::ObjectImage>(p.object);
    for (const HostFunction& f : exe.functions) {
      const isa::Function* fn = img->find_function(f.program_function);
      if (!fn) continue;
      isa::TaskBinding t;
      t.name = f.program_function;
      t.kind = isa::TaskKind::CONTROL;
      t.id = uint8_t(function_task[f.name]);
      t.entry = fn->entry;
      img->tasks.push_back(t);
    }
    has_firmware.push_back(includes_firmware(*img));
    stream_colors.push_back(has_firmware.back() ? h2d_stream_colors(*img) : std::vector<int>{});
    images.push_back(std::move(img));
  }

  try {
    for (const Rect& rect : exe.rects) {
      const std::vector<uint32_t> configs = rect.expand();
      for (uint32_t ry = 0; ry < rect.height; ++ry)
        for (uint32_t rx = 0; rx < rect.width; ++rx) {
          const PeConfig& pc = exe.pe_configs[configs[ry * rect.width + rx]];
          const int fx = int(rect.x + rx), fy = int(rect.y + ry);
          if (pc.program >= 0) wafer->load_program(fx, fy, images[size_t(pc.program)], int(rx), int(ry));
          for (const ColorRoute& r : exe.route_sets[pc.route_set].routes)
            wafer->set_route(fx, fy, r.color, to_emu(r));
        }
    }
  } catch (const emu::FaultError& e) {
    throw HostError(e.fault(), "load");
  }

  // The firmware's chains: every PE whose program includes the firmware, row by row.
  std::map<int, std::vector<int>> rows;
  for (const Rect& rect : exe.rects) {
    const std::vector<uint32_t> configs = rect.expand();
    for (uint32_t ry = 0; ry < rect.height; ++ry)
      for (uint32_t rx = 0; rx < rect.width; ++rx) {
        const PeConfig& pc = exe.pe_configs[configs[ry * rect.width + rx]];
        if (pc.program >= 0 && has_firmware[size_t(pc.program)])
          rows[int(rect.y + ry)].push_back(int(rect.x + rx));
      }
  }
  chains.clear();
  chain_index.clear();
  const int channels = std::max(1, options.channel.channels);
  for (auto& [y, xs] : rows) {
    std::sort(xs.begin(), xs.end());
    ChainRow row;
    row.y = y;
    row.xs = xs;
    row.channel = int(chains.size()) % channels;
    chains.push_back(row);
  }

  // The program's host stream colors loop from the ramp back to the ramp, as the SDK's memcpy
  // reserves the colors its layout gave <memcpy/get_params>: a layout route on one is an error.
  auto route_streams = [&](int x, int y) {
    const PeConfig* pc = exe.pe_config_at(uint32_t(x), uint32_t(y));
    if (!pc || pc->program < 0) return;
    for (int c : stream_colors[size_t(pc->program)]) {
      for (const ColorRoute& r : exe.route_sets[pc->route_set].routes)
        if (int(r.color) == c)
          throw HostError(HostError::Kind::USAGE,
                          fmt::format("load: PE({},{}) takes host streams on color {} (<memcpy/get_params>), "
                                      "which its layout also routes",
                                      x, y, c));
      wafer->set_route(x, y, c, emu::ColorRoute::simple(emu::bit(emu::Direction::RAMP), emu::bit(emu::Direction::RAMP)));
    }
  };
  const bool wse3 = profile.data_task_by_queue;
  const uint64_t written_before = wafer->backdoor_bytes_written();
  try {
    for (const ChainRow& row : chains) {
      auto pass = [&](int x, int color) {
        wafer->set_route(x, row.y, color,
                         emu::ColorRoute::simple(emu::bit(emu::Direction::WEST), emu::bit(emu::Direction::EAST)));
      };
      int color = firmware::kColorA;  // what arrives from the west at the next PE
      int x = 0;
      for (size_t k = 0; k < row.xs.size(); ++k) {
        for (; x < row.xs[k]; ++x) pass(x, color);
        const int in = (k % 2 == 0) ? firmware::kColorA : firmware::kColorB;
        const int out = in == firmware::kColorA ? firmware::kColorB : firmware::kColorA;
        wafer->set_route(x, row.y, in,
                         emu::ColorRoute::simple(emu::bit(emu::Direction::WEST), emu::bit(emu::Direction::RAMP)));
        wafer->set_route(x, row.y, out,
                         emu::ColorRoute::simple(emu::bit(emu::Direction::RAMP), emu::bit(emu::Direction::EAST)));
        wafer->set_route(x, row.y, firmware::kStreamColor,
                         emu::ColorRoute::simple(emu::bit(emu::Direction::RAMP), emu::bit(emu::Direction::RAMP)));
        route_streams(x, row.y);
        chain_index[{x, row.y}] = int(k);
        color = out;
        ++x;
      }
      for (; x < int(exe.fabric_width); ++x) pass(x, color);
      for (size_t k = 0; k < row.xs.size(); ++k) {
        const PeConfig* pc = exe.pe_config_at(uint32_t(row.xs[k]), uint32_t(row.y));
        const bool csl = pc && pc->program >= 0 &&
                         images[size_t(pc->program)]->find_symbol(firmware::kStreamColorsSymbol) != nullptr;
        const uint32_t config[2] = {(k % 2 ? firmware::kConfigOdd : 0u) | (wse3 ? firmware::kConfigWse3 : 0u) |
                                        (csl ? firmware::kConfigCsl : 0u),
                                    uint32_t(k)};
        wafer->write_sram(row.xs[k], row.y, firmware::kConfigAddress,
                          std::span(reinterpret_cast<const uint8_t*>(config), sizeof config));
        wafer->activate_task(row.xs[k], row.y, firmware::kTaskInit);
      }
    }
  } catch (const emu::FaultError& e) {
    throw HostError(e.fault(), "load (memcpy firmware routes and start-up)");
  }
  stats.loader_bytes_written = wafer->backdoor_bytes_written() - written_before;
  backdoor_read_base = wafer->backdoor_bytes_read();
  backdoor_written_base = wafer->backdoor_bytes_written();
  write_initial_symbols();
  loaded = true;
  const uint64_t start = wafer->cycle();
  emu::RunResult r = settle("load (memcpy firmware start-up)");
  // A kernel task activated at load (CSL's comptime @activate) may wait for host data already:
  // as after every host call, only firmware that did not finish is an error here.
  std::vector<int> ys;
  for (const ChainRow& c : chains) ys.push_back(c.y);
  check_firmware_idle(ys, r, "load (memcpy firmware start-up)");
  stats.load_cycles = wafer->cycle() - start;
}

}  // namespace wsemu::runtime::host
