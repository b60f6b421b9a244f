#include "compiler/executable/executable_io.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "isa/object.pb.h"
#include "isa/object_io.hpp"
#include "compiler/executable/executable.pb.h"

#include <zlib.h>

namespace wsemu::compiler {
namespace {

constexpr std::string_view kMagic = "WSEMUEXE";
constexpr size_t kHeaderSize = 24;
// Generous: a full wafer with a distinct 48 KiB program per column is far below this.
constexpr uint64_t kMaxPayload = uint64_t{1} << 32;

// zlib's CRC-32 (the one every wsemu file format uses).
uint32_t crc32(std::string_view data) {
  return static_cast<uint32_t>(
      ::crc32_z(::crc32_z(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data.data()), data.size()));
}

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
uint64_t get_le(std::string_view in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(in[at + i]);
  return v;
}

pb::Executable to_proto(const Executable& exe) {
  pb::Executable p;
  p.set_format_version(kExecutableFormatVersion);
  p.set_arch(exe.arch);
  p.set_fabric_width(exe.fabric_width);
  p.set_fabric_height(exe.fabric_height);
  p.set_layout_file(exe.layout_file);
  for (const auto& [name, value] : exe.build_params) {
    pb::ParamValue* v = p.add_build_params();
    v->set_name(name);
    v->set_value(value);
  }
  for (const NamedColor& c : exe.colors) {
    pb::NamedColor* n = p.add_colors();
    n->set_name(c.name);
    n->set_color(c.color);
  }
  for (const Program& prog : exe.programs) {
    pb::Program* out = p.add_programs();
    out->set_source_path(prog.source_path);
    isa::to_proto(prog.object, *out->mutable_object());
  }
  for (const ParamSet& set : exe.param_sets) {
    pb::ParamSet* out = p.add_param_sets();
    for (const auto& [name, value] : set.values) {
      pb::ParamValue* v = out->add_values();
      v->set_name(name);
      v->set_value(value);
    }
  }
  for (const RouteSet& set : exe.route_sets) {
    pb::RouteSet* out = p.add_route_sets();
    for (const ColorRoute& r : set.routes) {
      pb::ColorRoute* cr = out->add_routes();
      cr->set_color(r.color);
      for (const SwitchPosition& pos : r.positions) {
        pb::SwitchPosition* sp = cr->add_positions();
        sp->set_rx(pos.rx.bits);
        sp->set_tx(pos.tx.bits);
      }
      cr->set_current_position(r.current_position);
      cr->set_ring_mode(r.ring_mode);
      cr->set_host_port(r.host_port);
      cr->set_filter(r.filter);
      cr->set_filter_min(r.filter_min);
      cr->set_filter_max(r.filter_max);
      cr->set_counter_filter(r.counter_filter);
      cr->set_count_data(r.count_data);
      cr->set_count_control(r.count_control);
      cr->set_counter_init(r.counter_init);
      cr->set_counter_max(r.counter_max);
      cr->set_counter_limit(r.counter_limit);
      cr->set_swap_x(r.swap_x);
      cr->set_swap_y(r.swap_y);
      cr->set_pop_mode(r.pop_mode);
      cr->set_reconfigurable(r.reconfigurable);
      cr->set_teardown(r.teardown);
    }
  }
  for (const PeConfig& c : exe.pe_configs) {
    pb::PeConfig* out = p.add_pe_configs();
    out->set_program(c.program);
    out->set_param_set(c.param_set);
    out->set_route_set(c.route_set);
  }
  for (const Rect& r : exe.rects) {
    pb::Rect* out = p.add_rects();
    out->set_name(r.name);
    out->set_x(r.x);
    out->set_y(r.y);
    out->set_width(r.width);
    out->set_height(r.height);
    for (const ConfigRun& run : r.runs) {
      out->add_run_counts(run.count);
      out->add_run_configs(run.config);
    }
  }
  for (const HostSymbol& s : exe.symbols) {
    pb::HostSymbol* out = p.add_symbols();
    out->set_name(s.name);
    out->set_program_symbol(s.program_symbol);
    out->set_type(static_cast<isa::pb::ElemType>(s.type));
    out->set_elems_per_pe(s.elems_per_pe);
    out->set_rect(s.rect);
    out->set_host_readable(s.host_readable);
    out->set_host_writable(s.host_writable);
    out->set_indirect(s.indirect);
  }
  for (const HostFunction& f : exe.functions) {
    pb::HostFunction* out = p.add_functions();
    out->set_name(f.name);
    out->set_program_function(f.program_function);
    out->set_rect(f.rect);
  }
  return p;
}

[[noreturn]] void corrupt(std::string_view name, const std::string& what) {
  throw ExecutableError(fmt::format("{}: corrupted executable: {}", name, what));
}

uint8_t small(uint32_t v, uint32_t limit, std::string_view name, const char* what) {
  if (v >= limit) corrupt(name, fmt::format("{} {} is out of range", what, v));
  return static_cast<uint8_t>(v);
}

uint16_t half_word(uint32_t v, std::string_view name, const char* what) {
  if (v > 0xFFFF) corrupt(name, fmt::format("{} {} is out of range", what, v));
  return static_cast<uint16_t>(v);
}

Executable from_proto(const pb::Executable& p, std::string_view name) {
  Executable exe;
  exe.arch = p.arch();
  exe.fabric_width = p.fabric_width();
  exe.fabric_height = p.fabric_height();
  exe.layout_file = p.layout_file();
  for (const pb::ParamValue& v : p.build_params()) exe.build_params.emplace_back(v.name(), v.value());
  for (const pb::NamedColor& c : p.colors())
    exe.colors.push_back({c.name(), small(c.color(), kNumRoutableColors, name, "color")});
  for (size_t i = 0; i < static_cast<size_t>(p.programs_size()); ++i) {
    const pb::Program& prog = p.programs(static_cast<int>(i));
    if (!prog.has_object()) corrupt(name, fmt::format("program {} has no object", i));
    try {
      exe.programs.push_back(
          {prog.source_path(),
           isa::from_proto(prog.object(), fmt::format("{} (program {}: {})", name, i,
                                                       prog.source_path()))});
    } catch (const isa::FormatError& e) {
      throw ExecutableError(e.what());
    }
  }
  for (const pb::ParamSet& set : p.param_sets()) {
    ParamSet out;
    for (const pb::ParamValue& v : set.values()) out.values.emplace_back(v.name(), v.value());
    exe.param_sets.push_back(std::move(out));
  }
  for (const pb::RouteSet& set : p.route_sets()) {
    RouteSet out;
    for (const pb::ColorRoute& cr : set.routes()) {
      ColorRoute r;
      r.color = small(cr.color(), kNumRoutableColors, name, "route color");
      for (const pb::SwitchPosition& sp : cr.positions())
        r.positions.push_back(
            {DirectionSet{small(sp.rx(), 1u << kNumDirections, name, "rx direction set")},
             DirectionSet{small(sp.tx(), 1u << kNumDirections, name, "tx direction set")}});
      r.current_position = small(cr.current_position(), 4, name, "current switch position");
      r.ring_mode = cr.ring_mode();
      r.host_port = cr.host_port();
      r.filter = cr.filter();
      r.filter_min = half_word(cr.filter_min(), name, "filter minimum");
      r.filter_max = half_word(cr.filter_max(), name, "filter maximum");
      r.counter_filter = cr.counter_filter();
      r.count_data = cr.count_data();
      r.count_control = cr.count_control();
      r.counter_init = half_word(cr.counter_init(), name, "counter filter start");
      r.counter_max = half_word(cr.counter_max(), name, "counter filter maximum");
      r.counter_limit = half_word(cr.counter_limit(), name, "counter filter limit");
      r.swap_x = cr.swap_x();
      r.swap_y = cr.swap_y();
      r.pop_mode = uint8_t(small(cr.pop_mode(), 3, name, "pop mode"));
      r.reconfigurable = cr.reconfigurable();
      r.teardown = cr.teardown();
      out.routes.push_back(std::move(r));
    }
    exe.route_sets.push_back(std::move(out));
  }
  for (const pb::PeConfig& c : p.pe_configs())
    exe.pe_configs.push_back({c.program(), c.param_set(), c.route_set()});
  for (const pb::Rect& r : p.rects()) {
    Rect out;
    out.name = r.name();
    out.x = r.x();
    out.y = r.y();
    out.width = r.width();
    out.height = r.height();
    if (r.run_counts_size() != r.run_configs_size())
      corrupt(name, "rect '" + r.name() + "' has mismatched runs");
    for (int i = 0; i < r.run_counts_size(); ++i)
      out.runs.push_back({r.run_counts(i), r.run_configs(i)});
    exe.rects.push_back(std::move(out));
  }
  for (const pb::HostSymbol& s : p.symbols()) {
    HostSymbol out;
    out.name = s.name();
    out.program_symbol = s.program_symbol();
    out.type = static_cast<isa::ElemType>(small(static_cast<uint32_t>(s.type()), 6, name,
                                                "element type"));
    out.elems_per_pe = s.elems_per_pe();
    out.rect = s.rect();
    out.host_readable = s.host_readable();
    out.host_writable = s.host_writable();
    out.indirect = s.indirect();
    exe.symbols.push_back(std::move(out));
  }
  for (const pb::HostFunction& f : p.functions())
    exe.functions.push_back({f.name(), f.program_function(), f.rect()});
  return exe;
}

}  // namespace

std::string serialize_executable(const Executable& exe) {
  std::string payload;
  if (!to_proto(exe).SerializeToString(&payload))
    throw ExecutableError("cannot encode the executable (protobuf serialisation failed)");
  std::string out(kMagic);
  put_le(out, kExecutableFormatVersion, 4);
  put_le(out, payload.size(), 8);
  put_le(out, crc32(payload), 4);
  out += payload;
  return out;
}

Executable parse_executable(std::string_view bytes, std::string_view name) {
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic) {
    if (bytes.size() < kMagic.size() && kMagic.substr(0, bytes.size()) == bytes)
      throw ExecutableError(fmt::format("{}: truncated executable ({} bytes)", name, bytes.size()));
    throw ExecutableError(fmt::format(
        "{}: not a wsemu executable (it does not start with \"{}\"; build one with `wsemu build`)",
        name, kMagic));
  }
  if (bytes.size() < kHeaderSize)
    throw ExecutableError(fmt::format("{}: truncated executable: {} bytes, shorter than the "
                                      "{}-byte header", name, bytes.size(), kHeaderSize));
  const uint32_t version = static_cast<uint32_t>(get_le(bytes, 8, 4));
  if (version < kOldestExecutableFormatVersion || version > kExecutableFormatVersion)
    throw ExecutableError(fmt::format(
        "{}: executable format version {}, but this wsemu reads versions {} to {}; rebuild it with "
        "this wsemu's `wsemu build`", name, version, kOldestExecutableFormatVersion, kExecutableFormatVersion));
  const uint64_t length = get_le(bytes, 12, 8);
  const uint32_t crc = static_cast<uint32_t>(get_le(bytes, 20, 4));
  const uint64_t have = bytes.size() - kHeaderSize;
  if (length > kMaxPayload) corrupt(name, fmt::format("payload length {} is implausible", length));
  if (have < length)
    throw ExecutableError(fmt::format("{}: truncated executable: the header announces {} bytes "
                                      "of payload, the file has {}", name, length, have));
  if (have > length)
    corrupt(name, fmt::format("{} unexpected bytes after the payload", have - length));
  std::string_view payload = bytes.substr(kHeaderSize);
  if (crc32(payload) != crc) corrupt(name, "checksum mismatch (the file was damaged)");
  pb::Executable p;
  if (!p.ParseFromArray(payload.data(), static_cast<int>(payload.size())))
    corrupt(name, "the payload cannot be decoded");
  if (p.format_version() != version)
    corrupt(name, fmt::format("the payload says format version {}, the header {}",
                              p.format_version(), version));
  Executable exe = from_proto(p, name);
  std::vector<std::string> problems = validate(exe);
  if (!problems.empty()) corrupt(name, problems.front());
  return exe;
}

void save_executable(const Executable& exe, const std::string& path) {
  std::string bytes = serialize_executable(exe);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw ExecutableError(fmt::format("{}: cannot create: {}", path, std::strerror(errno)));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw ExecutableError(fmt::format("{}: write error", path));
}

Executable load_executable(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ExecutableError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_executable(buffer.str(), path);
}

}  // namespace wsemu::compiler
