// The host's side of the wafer (wafer.hpp): loading programs, routes, the edge ports, SRAM
// reads and writes, activating a task, core views and the log and event sinks. Everything here
// runs between cycles, never inside step_cycle; the stepping itself is in wafer.cpp, the run
// loop in wafer_run.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "emulator/wafer.hpp"

namespace wsemu::emu {

PeCore& Wafer::core_at(int x, int y, const char* what) {
  check_xy(x, y, what);
  const uint32_t s = state_at(x, y);
  if (s == kNone || states_[s].core == kNone) config_error(fmt::format("{}: PE({},{}) has no program", what, x, y));
  settle(s);
  return cores_[states_[s].core];
}

bool Wafer::has_core(int x, int y) const {
  const uint32_t s = state_at(x, y);
  return s != kNone && states_[s].core != kNone;
}

void Wafer::load_program(int x, int y, std::shared_ptr<const isa::ObjectImage> image, int rect_x, int rect_y) {
  check_xy(x, y, "load_program");
  if (!image) config_error("load_program: no program");
  uint32_t pi;
  auto it = program_index_.find(image.get());
  if (it != program_index_.end()) {
    pi = it->second;
  } else {
    pi = uint32_t(programs_.size());
    programs_.emplace_back(image);
    program_index_[image.get()] = pi;
  }
  PeCore core;
  try {
    core = PeCore(profile_, pi, programs_[pi], rect_x, rect_y, cycle_);
  } catch (const FaultError& e) {
    Fault f = e.fault();
    f.kind = f.kind == FaultKind::KERNEL_ERROR ? FaultKind::CONFIGURATION_ERROR : f.kind;
    f.x = x;
    f.y = y;
    throw FaultError(std::move(f));
  }
  const uint32_t s = ensure_state(x, y);
  if (states_[s].core == kNone) {
    states_[s].core = uint32_t(cores_.size());
    cores_.push_back(std::move(core));
  } else {
    cores_[states_[s].core] = std::move(core);
  }
  activate_state(s);
}

void Wafer::refresh_credits(uint32_t s, int color) {
  TileState& t = states_[s];
  ColorChannel* ch = t.router.channel(color);
  for (int d = 0; d < kNumLinkDirections; ++d) {
    const uint32_t n = neighbors_[s][d];
    const int back = int(opposite(Direction(d)));
    ColorChannel* nc = n == kNone ? nullptr : states_[n].router.channel(color);
    if (ch) {
      ch->credits[d] = int8_t(nc && (nc->buffered & (1u << back))
                                  ? profile_.router_buffer_depth - nc->input[back].size()
                                  : -1);
    }
    if (nc) {
      nc->credits[back] =
          int8_t(ch && (ch->buffered & (1u << d)) ? profile_.router_buffer_depth - ch->input[d].size() : -1);
    }
  }
}

void Wafer::set_route(int x, int y, int color, const ColorRoute& route) {
  check_xy(x, y, "set_route");
  auto bad = [&](const std::string& why) {
    Fault f;
    f.kind = FaultKind::CONFIGURATION_ERROR;
    f.message = fmt::format("route: {}", why);
    f.x = x;
    f.y = y;
    f.color = color;
    throw FaultError(std::move(f));
  };
  if (color < 0 || color >= profile_.routable_colors)
    bad(fmt::format("color {} is not routable (0..{})", color, profile_.routable_colors - 1));
  if (route.num_positions < 1 || route.num_positions > 4) bad("a route has 1..4 switch positions");
  if (route.current >= route.num_positions)
    bad(fmt::format("current switch position {} but only {} positions", route.current, route.num_positions));
  for (int p = 0; p < route.num_positions; ++p)
    if ((route.positions[p].rx | route.positions[p].tx) & ~0x1F) bad("unknown direction bits");
  if (route.filter && route.filter_min > route.filter_max) bad("filter range min > max");
  if (route.filter && route.counter.on) bad("a color has a range filter or a counter filter, not both");
  if (route.counter.on && route.counter.init > route.counter.limit)
    bad(fmt::format("counter filter starts at {}, past its limit {}", route.counter.init, route.counter.limit));
  const uint32_t s = ensure_state(x, y);
  RouterState& r = states_[s].router;
  if (route.filter || route.counter.on) {
    int filters = 1;
    for (const ColorChannel& ch : r.channels)
      if ((ch.route.filter || ch.route.counter.on) && ch.color != color) ++filters;
    if (filters > profile_.num_filters)
      bad(fmt::format("more than {} colors with a filter on one router ({})", profile_.num_filters, profile_.name));
  }
  ColorChannel& ch = r.add_channel(color);
  // A route the core may rewrite at run time receives on every link, so that no rewrite changes
  // a buffer or a neighbour's credit (router.hpp).
  const DirectionMask buffered =
      route.reconfigurable || route.teardown ? DirectionMask(0x0F) : DirectionMask(route.rx_union() & 0x0F);
  for (int d = 0; d < kNumLinkDirections; ++d)
    if (!(buffered & (1u << d)) && !ch.input[d].empty())
      bad(fmt::format("the new route stops receiving from {} while wavelets wait there", direction_name(Direction(d))));
  ch.route = route;
  ch.filter_counter = route.counter.init;
  const uint32_t color_bit = 1u << color;
  r.swap_x_colors = route.swap_x ? r.swap_x_colors | color_bit : r.swap_x_colors & ~color_bit;
  r.swap_y_colors = route.swap_y ? r.swap_y_colors | color_bit : r.swap_y_colors & ~color_bit;
  if (route.teardown) r.torn_down |= color_bit;  // from the start; not pending, no teardown task
  ch.buffered = buffered;
  for (auto& b : ch.input) b.capacity = uint8_t(profile_.router_buffer_depth);
  refresh_credits(s, color);
  activate_state(s);
  // The neighbours' credits toward this router changed: a neighbour waiting for one wakes.
  for (const uint32_t n : neighbors_[s])
    if (n != kNone && states_[n].waiting_since != kAwake) activate_state(n);
}

std::optional<ColorRoute> Wafer::route(int x, int y, int color) const {
  const uint32_t s = state_at(x, y);
  if (s == kNone || color < 0 || color >= isa::kNumColors) return std::nullopt;
  const ColorChannel* ch = states_[s].router.channel(color);
  if (!ch) return std::nullopt;
  return ch->route;
}

bool Wafer::push_edge(int x, int y, Direction side, const Wavelet& w) {
  check_xy(x, y, "push_edge");
  const uint32_t s = state_at(x, y);
  const int d = int(side);
  if (side == Direction::RAMP || s == kNone || !(states_[s].router.off_fabric & bit(side)))
    config_error(fmt::format("push_edge: the {} side of PE({},{}) is not a fabric edge port", direction_name(side), x, y));
  ColorChannel* ch = w.color < isa::kNumColors ? states_[s].router.channel(w.color) : nullptr;
  if (!ch || !(ch->buffered & bit(side)))
    config_error(fmt::format("push_edge: PE({},{}) does not receive color {} from {}", x, y, w.color,
                             direction_name(side)));
  if (ch->input[d].full()) return false;
  Wavelet in = w;
  in.advance_switch_after = false;
  states_[s].router.push_input(*ch, d, in);
  activate_state(s);
  return true;
}

int Wafer::edge_input_space(int x, int y, Direction side, int color) const {
  const uint32_t s = state_at(x, y);
  if (side == Direction::RAMP || s == kNone || !(states_[s].router.off_fabric & bit(side))) return 0;
  const ColorChannel* ch = color >= 0 && color < isa::kNumColors ? states_[s].router.channel(color) : nullptr;
  return ch && (ch->buffered & bit(side)) ? ch->input[int(side)].space() : 0;
}

std::optional<Wavelet> Wafer::pop_edge(int x, int y, Direction side) {
  check_xy(x, y, "pop_edge");
  const uint32_t s = state_at(x, y);
  if (side == Direction::RAMP || s == kNone) return std::nullopt;
  WaveletBuffer& b = states_[s].router.edge_out[int(side)];
  if (b.empty()) return std::nullopt;
  const Wavelet w = b.pop();
  activate_state(s);
  return w;
}

size_t Wafer::edge_output_count(int x, int y, Direction side) const {
  const uint32_t s = state_at(x, y);
  if (side == Direction::RAMP || s == kNone) return 0;
  return size_t(states_[s].router.edge_out[int(side)].size());
}

void Wafer::read_sram(int x, int y, uint32_t address, std::span<uint8_t> out) {
  core_at(x, y, "read_sram").sram.read(address, out);
  backdoor_read_ += out.size();
}

void Wafer::write_sram(int x, int y, uint32_t address, std::span<const uint8_t> in) {
  PeCore& core = core_at(x, y, "write_sram");
  if (!in.empty() && address < core.sram.code_bytes())
    config_error(fmt::format("write_sram: PE({},{}) address {:#x} is inside the code (first {} bytes)", x, y,
                             address, core.sram.code_bytes()));
  core.sram.write(address, in);
  backdoor_written_ += in.size();
}

void Wafer::activate_task(int x, int y, int task_id) {
  PeCore& core = core_at(x, y, "activate_task");
  if (task_id < 0 || task_id >= isa::kNumTaskIds) config_error(fmt::format("activate_task: task id {} (0..63)", task_id));
  try {
    core.activate(task_id, nullptr);
  } catch (const FaultError& e) {
    config_error(fmt::format("activate_task: PE({},{}): {}", x, y, e.fault().message));
  }
  activate_state(state_at(x, y));
}

const isa::ObjectImage* Wafer::program_at(int x, int y) const {
  const uint32_t s = state_at(x, y);
  if (s == kNone || states_[s].core == kNone) return nullptr;
  return programs_[cores_[states_[s].core].program_index].image.get();
}

void Wafer::peek_sram(int x, int y, uint32_t address, std::span<uint8_t> out) const {
  check_xy(x, y, "peek_sram");
  const uint32_t s = state_at(x, y);
  if (s == kNone || states_[s].core == kNone) config_error(fmt::format("peek_sram: PE({},{}) has no program", x, y));
  settle(s);
  cores_[states_[s].core].sram.read(address, out);
}

CoreView Wafer::core_view(int x, int y) const {
  check_xy(x, y, "core_view");
  const uint32_t s = state_at(x, y);
  if (s == kNone || states_[s].core == kNone) config_error(fmt::format("core_view: PE({},{}) has no program", x, y));
  settle(s);
  const PeCore& c = cores_[states_[s].core];
  CoreView v;
  v.x = x;
  v.y = y;
  v.rect_x = c.rect_x;
  v.rect_y = c.rect_y;
  v.regs = c.regs;
  v.dsrs = c.dsrs;
  v.running = c.main.running;
  v.pc = c.main.pc;
  v.task = c.main.task;
  v.bound_local = c.tasks.local;
  v.bound_data = c.tasks.data;
  v.bound_control = c.tasks.control;
  v.activated = c.tasks.activated;
  v.blocked = c.tasks.blocked;
  for (int q = 0; q < isa::kNumQueues; ++q) {
    v.input_queue_color[q] = c.iq[q].color;
    v.output_queue_color[q] = c.oq[q].color;
    for (int i = 0; i < c.iq[q].ring.size(); ++i) v.input_queues[q].push_back(c.iq[q].ring.at(i));
    for (int i = 0; i < c.oq[q].ring.size(); ++i) v.output_queues[q].push_back(c.oq[q].ring.at(i).wavelet);
    v.microthread_busy[q] = c.ops[q].active;
  }
  v.stats = c.stats;
  return v;
}

void Wafer::set_log_sink(std::function<void(const LogLine&)> sink) { log_sink_ = std::move(sink); }

std::vector<LogLine> Wafer::take_log() { return std::exchange(log_, {}); }

void Wafer::set_event_sink(EventSink* sink) {
  settle_all();  // a traced tile's instructions are events at their own cycles
  event_sink_ = sink;
  if (sink) wake_all_waiting();  // a traced tile is stepped every cycle: its stalls are events
}

}  // namespace wsemu::emu
