// SdkRuntime's host calls: argument checks, the firmware commands each call sends, and the
// back-door variants.
#include "runtime/host/sdk_runtime.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "firmware/memcpy_protocol.hpp"
#include "runtime/host/channel_pump.hpp"
#include "runtime/host/runtime_state.hpp"

namespace wsemu::runtime::host {
namespace {

using Kind = HostError::Kind;

[[noreturn]] void usage(const std::string& message) { throw HostError(Kind::USAGE, message); }

// Index of element e of rectangle PE (x, y) in the host array.
size_t host_index(MemcpyOrder order, int x, int y, int e, int w, int h, int elems) {
  if (order == MemcpyOrder::ROW_MAJOR) return (size_t(y) * size_t(w) + size_t(x)) * size_t(elems) + size_t(e);
  return size_t(y) + size_t(h) * (size_t(x) + size_t(w) * size_t(e));
}

// What a memcpy call addresses, resolved and checked.
struct Target {
  const Rect* rect = nullptr;
  const HostSymbol* symbol = nullptr;  // null when streaming to a rectangle
  int bits = 32;
};

}  // namespace

SdkRuntime::SdkRuntime(Executable exe, RuntimeOptions options) : state_(std::make_unique<State>()) {
  state_->exe = std::move(exe);
  state_->options = std::move(options);
}

SdkRuntime::~SdkRuntime() = default;

void SdkRuntime::load() {
  if (state_->loaded) usage("load: the executable is already loaded");
  if (state_->stopped) usage("load: the runtime was stopped");
  // An executable built in memory has not been through load_executable()'s check; every lookup
  // below relies on its cross references (a host symbol's program symbol on every PE of its rect).
  const std::vector<std::string> problems = validate(state_->exe);
  if (!problems.empty()) {
    std::string all;
    for (const std::string& p : problems) all += "\n  " + p;
    usage(fmt::format("load: the executable is inconsistent:{}", all));
  }
  state_->load();
}

namespace {

Target resolve(const SdkRuntime::State& s, const std::string& call, const std::string& name, int x0, int y0, int w,
               int h, int elems, const MemcpyOptions& o, size_t data_size, bool writing) {
  Target t;
  if (o.streaming) {
    for (const Rect& r : s.exe.rects)
      if (r.name == name) t.rect = &r;
    if (!t.rect) {
      if (const HostSymbol* sym = s.exe.find_symbol(name)) t.rect = &s.exe.rects[sym->rect];
      if (const HostFunction* fn = s.exe.find_function(name)) t.rect = &s.exe.rects[fn->rect];
    }
    if (!t.rect)
      usage(fmt::format("{} (streaming): '{}' names no rectangle, symbol or function of the executable", call, name));
    t.bits = o.data_type == MemcpyDataType::MEMCPY_16BIT ? 16 : 32;
  } else {
    t.symbol = s.exe.find_symbol(name);
    if (!t.symbol) {
      std::string known;
      for (const HostSymbol& sym : s.exe.symbols) known += (known.empty() ? "" : ", ") + sym.name;
      usage(fmt::format("{}: no exported symbol '{}' (the executable exports: {})", call, name,
                        known.empty() ? "none" : known));
    }
    if (writing && !t.symbol->host_writable) usage(fmt::format("{}: symbol '{}' is not host-writable", call, name));
    if (!writing && !t.symbol->host_readable) usage(fmt::format("{}: symbol '{}' is not host-readable", call, name));
    t.rect = &s.exe.rects[t.symbol->rect];
    t.bits = isa::elem_bytes(t.symbol->type) * 8;
    const int want = o.data_type == MemcpyDataType::MEMCPY_16BIT ? 16 : 32;
    if (t.bits != want)
      usage(fmt::format("{}: symbol '{}' holds {} ({}-bit) elements; use {}", call, name,
                        isa::elem_type_name(t.symbol->type), t.bits,
                        t.bits == 16 ? "MEMCPY_16BIT" : "MEMCPY_32BIT"));
    // A read may go on past the symbol's end, into the memory after it, as the SDK's memcpy
    // does (benchmarks/25-pt-stencil reads 6 words of a 5-word symbol); a write may not.
    if (writing && uint32_t(std::max(elems, 0)) > t.symbol->elems_per_pe)
      usage(fmt::format("{}: {} elements per PE, but symbol '{}' holds {} per PE", call, elems, name,
                        t.symbol->elems_per_pe));
  }
  if (w <= 0 || h <= 0 || elems <= 0)
    usage(fmt::format("{}: width {}, height {} and elements per PE {} must be positive", call, w, h, elems));
  if (x0 < 0 || y0 < 0 || int64_t(x0) + w > int64_t(t.rect->width) || int64_t(y0) + h > int64_t(t.rect->height))
    usage(fmt::format("{}: PEs ({}, {}) .. ({}, {}) are outside rectangle '{}' ({} x {})", call, x0, y0, x0 + w - 1,
                      y0 + h - 1, t.rect->name, t.rect->width, t.rect->height));
  const size_t need = size_t(w) * size_t(h) * size_t(elems);
  if (data_size != need)
    usage(fmt::format("{}: {} x {} PEs x {} elements = {} elements, but the {} holds {}", call, w, h, elems, need,
                      writing ? "data" : "output", data_size));
  if (elems > 0xFFFF) usage(fmt::format("{}: at most 65535 elements per PE per call", call));
  return t;
}

// `symbol` in the program of fabric PE (fx, fy). load() validated that every PE of the symbol's
// rect runs a program defining it; the check here keeps a broken invariant a usage error.
const isa::Symbol& program_symbol(const SdkRuntime::State& s, const HostSymbol& symbol, int fx, int fy) {
  const PeConfig* pc = s.exe.pe_config_at(uint32_t(fx), uint32_t(fy));
  const isa::Symbol* ps = pc && pc->program >= 0 && size_t(pc->program) < s.images.size()
                              ? s.images[size_t(pc->program)]->find_symbol(symbol.program_symbol)
                              : nullptr;
  if (!ps)
    usage(fmt::format("symbol '{}': PE ({}, {}) runs no program defining '{}'", symbol.name, fx, fy,
                      symbol.program_symbol));
  return *ps;
}

// Where `symbol`'s program symbol lives on fabric PE (fx, fy): per-PE programs may place it
// differently. For an indirect symbol that is its pointer variable, which the firmware follows.
uint32_t symbol_address(const SdkRuntime::State& s, const HostSymbol& symbol, int fx, int fy) {
  return program_symbol(s, symbol, fx, fy).address;
}

// Where `symbol`'s elements are on fabric PE (fx, fy) now: an indirect symbol's are where its
// pointer variable points (the low 16 bits of the word, as the firmware reads it). A fault of
// the access propagates.
uint32_t element_address(const SdkRuntime::State& s, const HostSymbol& symbol, int fx, int fy) {
  const uint32_t address = symbol_address(s, symbol, fx, fy);
  if (!symbol.indirect) return address;
  std::array<uint8_t, 2> pointer{};
  s.wafer->read_sram(fx, fy, address, pointer);
  return uint32_t(pointer[0]) | uint32_t(pointer[1]) << 8;
}

// How many elements `symbol` has on fabric PE (fx, fy): an indirect symbol's pointer variable is
// one word, its elements the host symbol's count.
uint32_t element_count(const SdkRuntime::State& s, const HostSymbol& symbol, int fx, int fy) {
  return symbol.indirect ? symbol.elems_per_pe : program_symbol(s, symbol, fx, fy).count;
}

// The PE's position on its row's memcpy chain; a usage error when its program has no firmware.
int chain_position_or_fail(const SdkRuntime::State& s, const std::string& what, int fx, int fy,
                           bool backdoor_would_do) {
  const int k = s.chain_position(fx, fy);
  if (k < 0)
    usage(fmt::format("{}: PE({},{}) does not run the memcpy firmware (its program must "
                      "`.include \"memcpy.wsa\"`{})",
                      what, fx, fy, backdoor_would_do ? "; or run with the back door" : ""));
  return k;
}

// One host call through the channel: it counts as a transaction (with its host overhead) from
// construction; row() plans its traffic, send() moves it, finish() waits for the wafer to
// settle and books the phase.
struct Transaction {
  SdkRuntime::State& s;
  HostPhase phase;
  uint64_t start;
  std::vector<RowTraffic> rows;

  Transaction(SdkRuntime::State& state, std::string what, uint64_t elements)
      : s(state), phase{std::move(what), 0, elements, 0, false}, start(state.wafer->cycle()) {
    ++s.stats.transactions;
    s.stats.host_overhead_us += s.options.channel.transaction_overhead_us;
  }
  // The traffic of fabric row y (valid until the next row() call).
  RowTraffic& row(int y) {
    rows.emplace_back().y = y;
    return rows.back();
  }
  void send() {
    for (const RowTraffic& r : rows) phase.wavelets += r.out.size() + r.expect_in;
    s.pump(rows, phase.what);
  }
  // The rows sent must have their firmware idle again. Adds the cycles to `booked`.
  void finish(uint64_t& booked) {
    std::vector<int> ys;
    for (const RowTraffic& r : rows) ys.push_back(r.y);
    const emu::RunResult settled = s.settle(phase.what);
    s.check_firmware_idle(ys, settled, phase.what);
    phase.cycles = s.wafer->cycle() - start;
    booked += phase.cycles;
    s.add_phase(phase);
  }
  void finish_backdoor() {
    phase.backdoor = true;
    s.add_phase(phase);
  }
};

// The control wavelet that starts firmware task `task` at chain position `position`, then the
// command's two header words.
void push_command(RowTraffic& r, uint16_t task, int position, uint32_t first_word, uint32_t second_word) {
  r.out.push_back({firmware::control_payload(task, uint16_t(position)), uint8_t(firmware::kColorA), true});
  r.out.push_back({first_word, uint8_t(firmware::kColorA), false});
  r.out.push_back({second_word, uint8_t(firmware::kColorA), false});
}

void push_data(RowTraffic& r, uint32_t word) { r.out.push_back({word, uint8_t(firmware::kColorA), false}); }

// A back-door copy visits every PE of the rectangle, (x, y) relative to it, with the fabric
// position and the symbol's elements' address there; a fault of the access is the call's
// HostError.
template <typename Visit>
void visit_backdoor(const SdkRuntime::State& s, const Target& t, int x0, int y0, int w, int h,
                    const std::string& what, Visit visit) {
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int fx = int(t.rect->x) + x0 + x, fy = int(t.rect->y) + y0 + y;
      try {
        visit(x, y, fx, fy, element_address(s, *t.symbol, fx, fy));
      } catch (const emu::FaultError& e) {
        throw HostError(e.fault(), what);
      }
    }
}

}  // namespace

namespace {

enum class Broadcast { NONE, ROW, COL };

// memcpy_h2d and its broadcast forms. With ROW, `data` holds h * elems words (row y's elements
// for every PE of the row); with COL, w * elems (column x's for every PE of the column).
void h2d(SdkRuntime::State& s, const char* call, const std::string& symbol, std::span<const uint32_t> data, int x0,
         int y0, int w, int h, int elems, const MemcpyOptions& o, Broadcast mode) {
  s.require_loaded(call);
  const std::string what = mode == Broadcast::NONE ? fmt::format("memcpy_h2d {}", symbol)
                                                   : fmt::format("{} {}", call, symbol);
  if (mode != Broadcast::NONE) {
    const size_t lines = size_t(std::max(mode == Broadcast::ROW ? h : w, 0));
    const size_t need = lines * size_t(std::max(elems, 0));
    if (data.size() != need)
      usage(fmt::format("{}: {} {} x {} elements = {} elements, but the data holds {}", call, lines,
                        mode == Broadcast::ROW ? "rows" : "columns", elems, need, data.size()));
  }
  const size_t full = size_t(std::max(w, 0)) * size_t(std::max(h, 0)) * size_t(std::max(elems, 0));
  const Target t = resolve(s, call, symbol, x0, y0, w, h, elems, o, mode == Broadcast::NONE ? data.size() : full, true);
  // The element the host sends for element e of rectangle PE (x, y).
  auto value = [&](int x, int y, int e) {
    switch (mode) {
      case Broadcast::ROW: return data[host_index(o.order, 0, y, e, 1, h, elems)];
      case Broadcast::COL: return data[host_index(o.order, x, 0, e, w, 1, elems)];
      case Broadcast::NONE: break;
    }
    return data[host_index(o.order, x, y, e, w, h, elems)];
  };
  Transaction transaction(s, what, full);
  // A 16-bit stream keeps the whole word: its high half reaches the kernel's data task (the
  // index input_array_to_u32 puts there, read as a second u16 parameter), as in the SDK.
  const uint32_t mask = t.bits == 16 && !o.streaming ? 0xFFFFu : 0xFFFFFFFFu;

  if (s.options.backdoor && !o.streaming) {
    const uint32_t bytes = uint32_t(t.bits / 8);
    std::vector<uint8_t> buf(size_t(elems) * bytes);
    visit_backdoor(s, t, x0, y0, w, h, what, [&](int x, int y, int fx, int fy, uint32_t address) {
      for (int e = 0; e < elems; ++e) {
        const uint32_t v = value(x, y, e) & mask;
        for (uint32_t b = 0; b < bytes; ++b) buf[size_t(e) * bytes + b] = uint8_t(v >> (8 * b));
      }
      s.wafer->write_sram(fx, fy, address, buf);
    });
    s.stats.h2d_elements += full;
    transaction.finish_backdoor();
    return;
  }

  for (int y = 0; y < h; ++y) {
    RowTraffic& r = transaction.row(int(t.rect->y) + y0 + y);
    std::vector<int> positions;
    std::vector<uint32_t> addresses;
    for (int x = 0; x < w; ++x) {
      const int fx = int(t.rect->x) + x0 + x;
      positions.push_back(chain_position_or_fail(s, what, fx, r.y, true));
      // Streaming: the address field names the color the firmware delivers on.
      addresses.push_back(o.streaming ? uint32_t(s.stream_color(what, fx, r.y, o.stream_color))
                                      : symbol_address(s, *t.symbol, fx, r.y));
    }
    const uint32_t flags = (t.bits == 16 ? firmware::kFlag16Bit : 0) | (o.streaming ? firmware::kFlagStream : 0);
    // A row broadcast goes once through the channel when the firmware can replicate it: the
    // PEs are consecutive participants and hold the symbol at one address (per-PE programs may
    // place it differently; then each PE gets its own copy, as a plain memcpy would send).
    // A streamed broadcast goes to each PE's stream in turn (the firmware's relay stores, it
    // does not deliver); so does an indirect symbol's (each PE's pointer may point elsewhere).
    const bool indirect = !o.streaming && t.symbol->indirect;
    bool one_copy = mode == Broadcast::ROW && !o.streaming && !indirect && w > 1 &&
                    uint32_t(w - 1) <= firmware::kMaxBroadcastCount;
    for (int x = 1; one_copy && x < w; ++x)
      one_copy = positions[size_t(x)] == positions[0] + x && addresses[size_t(x)] == addresses[0];
    const int targets = one_copy ? 1 : w;
    for (int x = 0; x < targets; ++x) {
      const uint32_t f = one_copy ? flags | firmware::kFlagBroadcast |
                                        uint32_t(w - 1) << firmware::kBroadcastCountShift
                                  : flags;
      push_command(r, indirect ? firmware::kTaskH2DIndirect : firmware::kTaskH2D, positions[size_t(x)],
                   firmware::address_word(addresses[size_t(x)], f), uint32_t(elems));
      for (int e = 0; e < elems; ++e) push_data(r, value(x, y, e) & mask);
    }
  }
  transaction.send();
  s.stats.h2d_elements += full;
  transaction.finish(s.stats.memcpy_cycles);
}

}  // namespace

void SdkRuntime::memcpy_h2d(const std::string& symbol, std::span<const uint32_t> data, int x0, int y0, int w, int h,
                            int elems, const MemcpyOptions& o) {
  h2d(*state_, "memcpy_h2d", symbol, data, x0, y0, w, h, elems, o, Broadcast::NONE);
}

void SdkRuntime::memcpy_h2d_rowbcast(const std::string& symbol, std::span<const uint32_t> data, int x0, int y0, int w,
                                     int h, int elems, const MemcpyOptions& o) {
  h2d(*state_, "memcpy_h2d_rowbcast", symbol, data, x0, y0, w, h, elems, o, Broadcast::ROW);
}

void SdkRuntime::memcpy_h2d_colbcast(const std::string& symbol, std::span<const uint32_t> data, int x0, int y0, int w,
                                     int h, int elems, const MemcpyOptions& o) {
  h2d(*state_, "memcpy_h2d_colbcast", symbol, data, x0, y0, w, h, elems, o, Broadcast::COL);
}

void SdkRuntime::memcpy_d2h(std::span<uint32_t> out, const std::string& symbol, int x0, int y0, int w, int h,
                            int elems, const MemcpyOptions& o) {
  State& s = *state_;
  s.require_loaded("memcpy_d2h");
  const std::string what = fmt::format("memcpy_d2h {}", symbol);
  const Target t = resolve(s, "memcpy_d2h", symbol, x0, y0, w, h, elems, o, out.size(), false);
  Transaction transaction(s, what, out.size());
  const uint32_t mask = t.bits == 16 ? 0xFFFFu : 0xFFFFFFFFu;

  if (s.options.backdoor && !o.streaming) {
    const uint32_t bytes = uint32_t(t.bits / 8);
    std::vector<uint8_t> buf(size_t(elems) * bytes);
    visit_backdoor(s, t, x0, y0, w, h, what, [&](int x, int y, int fx, int fy, uint32_t address) {
      s.wafer->read_sram(fx, fy, address, buf);
      for (int e = 0; e < elems; ++e) {
        uint32_t v = 0;
        for (uint32_t b = 0; b < bytes; ++b) v |= uint32_t(buf[size_t(e) * bytes + b]) << (8 * b);
        out[host_index(o.order, x, y, e, w, h, elems)] = v;
      }
    });
    s.stats.d2h_elements += out.size();
    transaction.finish_backdoor();
    return;
  }

  for (int y = 0; y < h; ++y) {
    RowTraffic& r = transaction.row(int(t.rect->y) + y0 + y);
    for (int x = 0; x < w; ++x) {
      const int fx = int(t.rect->x) + x0 + x;
      const int k = chain_position_or_fail(s, what, fx, r.y, true);
      // 16-bit streams: each FIFO slot holds an element in its low half; it leaves zero-extended.
      const uint32_t flags = (o.streaming ? firmware::kFlagStream : 0) | (t.bits == 16 ? firmware::kFlag16Bit : 0);
      const uint32_t address = o.streaming ? 0 : symbol_address(s, *t.symbol, fx, r.y);
      const bool indirect = !o.streaming && t.symbol->indirect;
      push_command(r, indirect ? firmware::kTaskD2HIndirect : firmware::kTaskD2H, k,
                   firmware::address_word(address, flags), uint32_t(elems));
      r.expect_in += 2 + uint64_t(elems);
    }
  }
  transaction.send();
  // Each target answered with [control: its chain index], [count], data, in west-to-east order.
  for (size_t i = 0; i < transaction.rows.size(); ++i) {
    const RowTraffic& r = transaction.rows[i];
    size_t at = 0;
    for (int x = 0; x < w; ++x) {
      const int fx = int(t.rect->x) + x0 + x;
      const uint32_t header = r.received[at], count = r.received[at + 1];
      const int k = s.chain_position(fx, r.y);
      if ((header & 0xFFFF) != uint32_t(k) || count != uint32_t(elems))
        throw HostError(Kind::USAGE,
                        fmt::format("{}: row {} answered out of protocol: segment from chain position {} with {} "
                                    "elements, expected position {} with {}",
                                    what, r.y, header & 0xFFFF, count, k, elems));
      at += 2;
      for (int e = 0; e < elems; ++e) out[host_index(o.order, x, int(i), e, w, h, elems)] = r.received[at++] & mask;
    }
  }
  s.stats.d2h_elements += out.size();
  transaction.finish(s.stats.memcpy_cycles);
}

void SdkRuntime::launch(const std::string& function, std::span<const uint32_t> args) {
  State& s = *state_;
  s.require_loaded("launch");
  const std::string what = fmt::format("launch {}", function);
  const HostFunction* fn = s.exe.find_function(function);
  if (!fn) {
    std::string known;
    for (const HostFunction& f : s.exe.functions) known += (known.empty() ? "" : ", ") + f.name;
    usage(fmt::format("launch: no exported function '{}' (the executable exports: {})", function,
                      known.empty() ? "none" : known));
  }
  if (args.size() > size_t(firmware::kMaxLaunchArgs))
    usage(fmt::format("launch {}: {} arguments, at most {}", function, args.size(), firmware::kMaxLaunchArgs));
  const Rect& rect = s.exe.rects[fn->rect];
  Transaction transaction(s, what, 0);
  const int task = s.function_task.at(function);
  for (uint32_t ry = 0; ry < rect.height; ++ry) {
    RowTraffic& r = transaction.row(int(rect.y + ry));
    int first = -1;
    for (uint32_t rx = 0; rx < rect.width; ++rx) {
      const int k = chain_position_or_fail(s, what, int(rect.x + rx), r.y, false);
      if (rx == 0) first = k;
    }
    push_command(r, firmware::kTaskLaunch, first, rect.width, uint32_t(task) | uint32_t(args.size()) << 16);
    for (uint32_t a : args) push_data(r, a);
  }
  transaction.send();
  transaction.finish(s.stats.launch_cycles);
}

emu::RunResult SdkRuntime::run_until_quiescent() {
  State& s = *state_;
  s.require_loaded("run_until_quiescent");
  const uint64_t start = s.wafer->cycle();
  emu::RunResult r = s.settle("run");
  s.stats.run_cycles += s.wafer->cycle() - start;
  s.add_phase({"run", s.wafer->cycle() - start, 0, 0, false});
  if (r.status == emu::RunResult::Status::HANG) throw HostError(*r.hang, "run");
  return r;
}

emu::RunResult SdkRuntime::run(uint64_t cycles) {
  State& s = *state_;
  s.require_loaded("run");
  const uint64_t start = s.wafer->cycle();
  emu::RunResult r = s.wafer->run(std::min(cycles, s.cycles_left()));
  if (r.status == emu::RunResult::Status::FAULT) throw HostError(*r.fault, "run");
  s.stats.run_cycles += s.wafer->cycle() - start;
  s.add_phase({"run", s.wafer->cycle() - start, 0, 0, false});
  return r;
}

void SdkRuntime::stop() { state_->stopped = true; }

std::vector<std::vector<uint32_t>> SdkRuntime::edge_streams(const std::vector<EdgeStream>& streams) {
  State& s = *state_;
  s.require_loaded("edge streams");
  std::vector<EdgeLane> lanes;
  for (size_t i = 0; i < streams.size(); ++i) {
    const EdgeStream& st = streams[i];
    if (st.x < 0 || st.y < 0 || uint32_t(st.x) >= s.exe.fabric_width || uint32_t(st.y) >= s.exe.fabric_height)
      usage(fmt::format("stream {}: PE ({}, {}) is outside the {} x {} fabric", i, st.x, st.y, s.exe.fabric_width,
                        s.exe.fabric_height));
    if (st.color < 0 || st.color > 23) usage(fmt::format("stream {}: color {} is not 0..23", i, st.color));
    EdgeLane lane;
    lane.name = fmt::format("the stream at PE ({}, {})", st.x, st.y);
    lane.in = {st.x, st.y, st.side};
    for (uint32_t w : st.words) lane.send.push_back(emu::Wavelet{w, uint8_t(st.color)});
    if (st.expect > 0) {
      lane.out = EdgePort{st.x, st.y, st.side};
      lane.expect = st.expect;
      lane.data_only = true;  // the host takes data; control wavelets end at the edge
    }
    lanes.push_back(std::move(lane));
  }
  EdgePumpOptions o;
  o.what = "stream";
  o.cycle_limit = s.options.max_cycles;
  o.policy = EdgePumpPolicy::host_memcpy();
  pump_edges(*s.wafer, lanes, o);
  std::vector<std::vector<uint32_t>> out;
  for (EdgeLane& lane : lanes) out.push_back(std::move(lane.received));
  return out;
}

std::vector<uint32_t> SdkRuntime::read_symbol(int x, int y, const std::string& symbol) {
  State& s = *state_;
  s.require_loaded("read_symbol");
  const HostSymbol* sym = s.exe.find_symbol(symbol);
  if (!sym) usage(fmt::format("read_symbol: no exported symbol '{}'", symbol));
  const Rect& rect = s.exe.rects[sym->rect];
  if (x < 0 || y < 0 || uint32_t(x) >= rect.width || uint32_t(y) >= rect.height)
    usage(fmt::format("read_symbol: PE ({}, {}) is outside rectangle '{}' ({} x {})", x, y, rect.name, rect.width,
                      rect.height));
  const int fx = int(rect.x) + x, fy = int(rect.y) + y;
  const uint32_t count = element_count(s, *sym, fx, fy);
  const uint32_t bytes = uint32_t(isa::elem_bytes(sym->type));
  std::vector<uint8_t> buf(size_t(count) * bytes);
  try {
    s.wafer->read_sram(fx, fy, element_address(s, *sym, fx, fy), buf);
  } catch (const emu::FaultError& e) {
    throw HostError(e.fault(), "read_symbol " + symbol);
  }
  std::vector<uint32_t> out(count);
  for (size_t e = 0; e < out.size(); ++e)
    for (uint32_t b = 0; b < bytes; ++b) out[e] |= uint32_t(buf[e * bytes + b]) << (8 * b);
  return out;
}

void SdkRuntime::initial_symbol(int x, int y, const std::string& symbol, std::vector<uint32_t> words) {
  State& s = *state_;
  if (s.loaded) usage("initial_symbol: call it before load()");
  s.initial_symbols.push_back({x, y, symbol, std::move(words)});
}

void SdkRuntime::State::write_initial_symbols() {
  for (const InitialSymbol& i : initial_symbols) {
    const HostSymbol* sym = exe.find_symbol(i.symbol);
    if (!sym) usage(fmt::format("initial value of '{}': no exported symbol of that name", i.symbol));
    const Rect& rect = exe.rects[sym->rect];
    if (i.x < 0 || i.y < 0 || uint32_t(i.x) >= rect.width || uint32_t(i.y) >= rect.height)
      usage(fmt::format("initial value of '{}': PE ({}, {}) is outside rectangle '{}' ({} x {})", i.symbol, i.x, i.y,
                        rect.name, rect.width, rect.height));
    const int fx = int(rect.x) + i.x, fy = int(rect.y) + i.y;
    const uint32_t count = element_count(*this, *sym, fx, fy);
    if (i.words.size() > count)
      usage(fmt::format("initial value of '{}': {} elements, the symbol holds {} on PE ({}, {})", i.symbol,
                        i.words.size(), count, i.x, i.y));
    const uint32_t bytes = uint32_t(isa::elem_bytes(sym->type));
    std::vector<uint8_t> buf(i.words.size() * bytes);
    for (size_t e = 0; e < i.words.size(); ++e)
      for (uint32_t b = 0; b < bytes; ++b) buf[e * bytes + b] = uint8_t(i.words[e] >> (8 * b));
    try {
      wafer->write_sram(fx, fy, element_address(*this, *sym, fx, fy), buf);
    } catch (const emu::FaultError& e) {
      throw HostError(e.fault(), "initial value of '" + i.symbol + "'");
    }
  }
}

uint64_t SdkRuntime::cycles() const { return state_->wafer ? state_->wafer->cycle() : 0; }

double SdkRuntime::clock_mhz() const {
  return state_->wafer ? state_->wafer->profile().clock_mhz : emu::arch_profile(state_->exe.arch).clock_mhz;
}

const HostStats& SdkRuntime::stats() const {
  State& s = *state_;
  if (s.wafer) {
    s.stats.backdoor_bytes_read = s.wafer->backdoor_bytes_read() - s.backdoor_read_base;
    s.stats.backdoor_bytes_written = s.wafer->backdoor_bytes_written() - s.backdoor_written_base;
  }
  return s.stats;
}

nlohmann::json SdkRuntime::stats_json() const {
  const HostStats& st = stats();
  nlohmann::json host;
  host["cycles"] = cycles();
  host["clock_mhz"] = clock_mhz();
  host["fabric_time_us"] = double(cycles()) / clock_mhz();
  host["load_cycles"] = st.load_cycles;
  host["memcpy_cycles"] = st.memcpy_cycles;
  host["launch_cycles"] = st.launch_cycles;
  host["run_cycles"] = st.run_cycles;
  host["h2d_elements"] = st.h2d_elements;
  host["d2h_elements"] = st.d2h_elements;
  host["edge_wavelets_in"] = st.edge_wavelets_in;
  host["edge_wavelets_out"] = st.edge_wavelets_out;
  host["backdoor"] = state_->options.backdoor;
  host["backdoor_bytes_written"] = st.backdoor_bytes_written;
  host["backdoor_bytes_read"] = st.backdoor_bytes_read;
  host["loader_bytes_written"] = st.loader_bytes_written;
  host["transactions"] = st.transactions;
  host["host_overhead_us"] = st.host_overhead_us;
  const HostChannelModel& m = state_->options.channel;
  host["channel"] = {{"channels", m.channels},
                     {"gbps_per_channel", m.gbps_per_channel},
                     {"wavelets_per_cycle", m.wavelets_per_cycle(clock_mhz())},
                     {"transaction_overhead_us", m.transaction_overhead_us}};
  host["phases"] = nlohmann::json::array();
  for (const HostPhase& p : st.phases)
    host["phases"].push_back({{"what", p.what},
                              {"cycles", p.cycles},
                              {"elements", p.elements},
                              {"wavelets", p.wavelets},
                              {"backdoor", p.backdoor}});
  nlohmann::json j;
  if (state_->wafer) j = state_->wafer->stats_json();
  j["host"] = host;
  return j;
}

const Executable& SdkRuntime::executable() const { return state_->exe; }

emu::Wafer& SdkRuntime::wafer() {
  if (!state_->wafer) usage("wafer: call load() first");
  return *state_->wafer;
}

bool SdkRuntime::loaded() const { return state_->loaded; }

}  // namespace wsemu::runtime::host
