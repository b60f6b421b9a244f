#include "isa/object_io.hpp"

#include <fmt/format.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "isa/instruction.hpp"
#include "isa/object.pb.h"

namespace wsemu::isa {
namespace {

constexpr uint32_t kEndMarker = 0x444E4557;  // "WEND"
constexpr size_t kMaxObjectBytes = size_t{1} << 30;

// The bytes every object starts with: field 1 (magic, length-delimited) holding kObjectMagic.
std::string expected_header() {
  std::string h;
  h.push_back(0x0A);
  h.push_back(static_cast<char>(kObjectMagic.size()));
  h += kObjectMagic;
  return h;
}

[[noreturn]] void corrupt(std::string_view what, std::string_view detail) {
  throw FormatError(fmt::format("{}: corrupt wsemu object: {}", what, detail));
}

void check_version(uint64_t version, std::string_view what) {
  if (version < kOldestObjectFormatVersion || version > kObjectFormatVersion)
    throw FormatError(fmt::format("{}: object format version {} is not supported (this wsemu reads versions {} to {}); "
                                  "re-assemble the program with this wsemu",
                                  what, version, kOldestObjectFormatVersion, kObjectFormatVersion));
}

template <typename T>
T checked(uint64_t v, uint64_t limit, std::string_view what, std::string_view field) {
  if (v > limit) corrupt(what, fmt::format("{} = {} is out of range (at most {})", field, v, limit));
  return static_cast<T>(v);
}

template <typename T>
T checked_signed(int64_t v, int64_t lo, int64_t hi, std::string_view what, std::string_view field) {
  if (v < lo || v > hi) corrupt(what, fmt::format("{} = {} is out of range ({}..{})", field, v, lo, hi));
  return static_cast<T>(v);
}

}  // namespace

void to_proto(const ObjectImage& o, pb::Object& out) {
  out.Clear();
  out.set_magic(std::string(kObjectMagic));
  out.set_format_version(kObjectFormatVersion);
  out.set_source_name(o.source_name);
  out.set_arch(o.arch);
  out.mutable_code()->Add(o.code.begin(), o.code.end());
  out.set_data_base(o.data_base);
  out.set_data_size(o.data_size);
  out.set_data_init(std::string(o.data_init.begin(), o.data_init.end()));
  for (const Symbol& s : o.symbols) {
    pb::Symbol* p = out.add_symbols();
    p->set_name(s.name);
    p->set_address(s.address);
    p->set_type(static_cast<pb::ElemType>(s.type));
    p->set_count(s.count);
    p->set_exported(s.exported);
  }
  for (const TaskBinding& t : o.tasks) {
    pb::TaskBinding* p = out.add_tasks();
    p->set_name(t.name);
    p->set_kind(static_cast<pb::TaskKind>(t.kind));
    p->set_id(t.id);
    p->set_entry(t.entry);
    p->set_trigger(t.trigger);
    p->set_trigger_is_queue(t.trigger_is_queue);
    p->set_starts_blocked(t.starts_blocked);
    p->set_starts_activated(t.starts_activated);
  }
  for (const Function& f : o.functions) {
    pb::Function* p = out.add_functions();
    p->set_name(f.name);
    p->set_entry(f.entry);
    p->set_exported(f.exported);
  }
  for (const DescriptorInit& d : o.descriptors) {
    pb::DescriptorInit* p = out.add_descriptors();
    p->set_name(d.name);
    p->set_dsr(d.dsr);
    pb::Descriptor* v = p->mutable_value();
    const Descriptor& x = d.value;
    v->set_kind(static_cast<pb::DsdKind>(x.kind));
    v->set_elem_bits(x.elem_bits);
    v->set_base(x.base);
    v->set_length(x.length);
    v->set_stride(x.stride);
    for (int i = 0; i < 4; ++i) {
      v->add_extents(x.extents[static_cast<size_t>(i)]);
      v->add_strides(x.strides[static_cast<size_t>(i)]);
    }
    v->set_color(x.color);
    v->set_queue(x.queue);
    v->set_control(x.control);
    v->set_index(x.index);
    v->set_advance_switch(x.advance_switch);
    v->set_on_control(static_cast<pb::OnControl>(x.on_control));
    v->set_on_control_task(x.on_control_task);
    v->set_head(x.head);
    v->set_count(x.count);
    v->set_activate_on_push(x.activate_on_push);
    v->set_activate_on_pop(x.activate_on_pop);
  }
  for (const QueueBinding& q : o.queues) {
    pb::QueueBinding* p = out.add_queues();
    p->set_output(q.output);
    p->set_queue(q.queue);
    p->set_color(q.color);
  }
  for (const uint8_t id : o.unblocked_ids) out.add_unblocked_ids(id);
  for (const std::string& s : o.strings) out.add_strings(s);
  out.mutable_source_lines()->Add(o.source_lines.begin(), o.source_lines.end());
  for (const std::string& f : o.source_files) out.add_source_files(f);
  for (const SourceLocation& l : o.source_locations) {
    pb::SourceLocation* p = out.add_source_locations();
    p->set_file(l.file);
    p->set_line(l.line);
    p->set_col(l.col);
  }
  out.set_end_marker(kEndMarker);
}

ObjectImage from_proto(const pb::Object& in, std::string_view what) {
  if (in.magic() != kObjectMagic)
    throw FormatError(fmt::format("{}: not a wsemu object (bad magic)", what));
  check_version(in.format_version(), what);
  if (in.end_marker() != kEndMarker) corrupt(what, "the end marker is missing (truncated?)");
  ObjectImage o;
  o.source_name = in.source_name();
  o.arch = in.arch();
  if (!o.arch.empty() && o.arch != "wse2" && o.arch != "wse3")
    corrupt(what, fmt::format("unknown architecture '{}'", o.arch));
  if (in.code_size() > 65536) corrupt(what, fmt::format("{} instructions (at most 65536)", in.code_size()));
  o.code.assign(in.code().begin(), in.code().end());
  const uint32_t ncode = static_cast<uint32_t>(o.code.size());
  o.data_base = in.data_base();
  o.data_size = in.data_size();
  if (o.data_base % 8 != 0 || uint64_t{o.data_base} < uint64_t{ncode} * 8)
    corrupt(what, fmt::format("data_base {} overlaps the code or is not 8-byte aligned", o.data_base));
  const uint64_t data_end = uint64_t{o.data_base} + o.data_size;
  if (data_end > UINT32_MAX) corrupt(what, "data extends past the 32-bit address space");
  if (in.data_init().size() > o.data_size)
    corrupt(what, fmt::format("{} initialised data bytes but data_size is {}", in.data_init().size(), o.data_size));
  o.data_init.assign(in.data_init().begin(), in.data_init().end());
  for (const pb::Symbol& p : in.symbols()) {
    Symbol s;
    s.name = p.name();
    s.address = p.address();
    s.type = checked<ElemType>(static_cast<uint32_t>(p.type()), 5, what, "symbol type");
    s.count = p.count();
    s.exported = p.exported();
    const uint64_t end = uint64_t{s.address} + uint64_t{s.count} * static_cast<uint64_t>(elem_bytes(s.type));
    if (s.address < o.data_base || end > data_end)
      corrupt(what, fmt::format("symbol '{}' lies outside the data", s.name));
    o.symbols.push_back(std::move(s));
  }
  for (const pb::TaskBinding& p : in.tasks()) {
    TaskBinding t;
    t.name = p.name();
    t.kind = checked<TaskKind>(static_cast<uint32_t>(p.kind()), 2, what, "task kind");
    t.id = checked<uint8_t>(p.id(), kNumTaskIds - 1, what, "task id");
    t.entry = checked<uint32_t>(p.entry(), ncode, what, "task entry");
    t.trigger = checked<uint8_t>(p.trigger(), kNumColors - 1, what, "task trigger");
    t.trigger_is_queue = p.trigger_is_queue();
    t.starts_blocked = p.starts_blocked();
    t.starts_activated = p.starts_activated();
    o.tasks.push_back(std::move(t));
  }
  for (const pb::Function& p : in.functions())
    o.functions.push_back({p.name(), checked<uint32_t>(p.entry(), ncode, what, "function entry"), p.exported()});
  for (const pb::DescriptorInit& p : in.descriptors()) {
    DescriptorInit d;
    d.name = p.name();
    d.dsr = checked<uint8_t>(p.dsr(), kNumDsrs - 1, what, "descriptor register");
    const pb::Descriptor& v = p.value();
    Descriptor& x = d.value;
    x.kind = checked<DsdKind>(static_cast<uint32_t>(v.kind()), 6, what, "descriptor kind");
    if (v.elem_bits() != 16 && v.elem_bits() != 32) corrupt(what, fmt::format("element width {}", v.elem_bits()));
    x.elem_bits = static_cast<uint8_t>(v.elem_bits());
    x.base = checked<uint16_t>(v.base(), 65535, what, "descriptor base");
    x.length = v.length();
    x.stride = checked_signed<int16_t>(v.stride(), INT16_MIN, INT16_MAX, what, "descriptor stride");
    if (v.extents_size() != 4 || v.strides_size() != 4) corrupt(what, "mem4d extents/strides need 4 entries");
    for (int i = 0; i < 4; ++i) {
      x.extents[static_cast<size_t>(i)] = checked<uint16_t>(v.extents(i), 65535, what, "extent");
      x.strides[static_cast<size_t>(i)] = checked_signed<int16_t>(v.strides(i), INT16_MIN, INT16_MAX, what, "stride");
    }
    x.color = checked<uint8_t>(v.color(), kNumColors - 1, what, "descriptor color");
    x.queue = checked<uint8_t>(v.queue(), kNumQueues - 1, what, "descriptor queue");
    x.control = v.control();
    x.index = v.index();
    x.advance_switch = v.advance_switch();
    x.on_control = checked<OnControl>(static_cast<uint32_t>(v.on_control()), 3, what, "on_control");
    x.on_control_task = checked<uint8_t>(v.on_control_task(), kNumTaskIds - 1, what, "on_control task");
    x.head = v.head();
    x.count = v.count();
    x.activate_on_push = checked_signed<int8_t>(v.activate_on_push(), -1, kNumTaskIds - 1, what, "activate_push");
    x.activate_on_pop = checked_signed<int8_t>(v.activate_on_pop(), -1, kNumTaskIds - 1, what, "activate_pop");
    o.descriptors.push_back(std::move(d));
  }
  for (const pb::QueueBinding& p : in.queues())
    o.queues.push_back({p.output(), checked<uint8_t>(p.queue(), kNumQueues - 1, what, "queue"),
                        checked<uint8_t>(p.color(), kNumColors - 1, what, "queue color")});
  for (const uint32_t id : in.unblocked_ids())
    o.unblocked_ids.push_back(checked<uint8_t>(id, kNumTaskIds - 1, what, "unblocked task id"));
  o.strings.assign(in.strings().begin(), in.strings().end());
  if (in.source_lines_size() != 0 && in.source_lines_size() != in.code_size())
    corrupt(what, "source line table does not match the code");
  o.source_lines.assign(in.source_lines().begin(), in.source_lines().end());
  if (in.source_locations_size() != 0 && in.source_locations_size() != in.code_size())
    corrupt(what, "the line table does not match the code");
  o.source_files.assign(in.source_files().begin(), in.source_files().end());
  for (const pb::SourceLocation& l : in.source_locations()) {
    if (l.file() > o.source_files.size()) corrupt(what, fmt::format("a line table entry names file {} of {}", l.file(), o.source_files.size()));
    o.source_locations.push_back({l.file(), l.line(), l.col()});
  }
  return o;
}

std::string serialize_object(const ObjectImage& object) {
  pb::Object p;
  to_proto(object, p);
  std::string out;
  if (!p.SerializeToString(&out)) throw FormatError("cannot serialise the object");
  return out;
}

ObjectImage parse_object(std::string_view bytes, std::string_view what) {
  const std::string header = expected_header();
  const size_t n = std::min(bytes.size(), header.size());
  if (bytes.substr(0, n) != std::string_view(header).substr(0, n) || bytes.empty())
    throw FormatError(fmt::format("{}: not a wsemu object (.wso) file (bad magic)", what));
  if (bytes.size() <= header.size())
    throw FormatError(fmt::format("{}: truncated wsemu object ({} bytes)", what, bytes.size()));
  // The version comes right after the magic; read it before anything that might not parse in
  // another version.
  size_t at = header.size();
  if (static_cast<uint8_t>(bytes[at]) != 0x10) corrupt(what, "the format version is missing");
  ++at;
  uint64_t version = 0;
  for (int shift = 0;; shift += 7) {
    if (at >= bytes.size()) throw FormatError(fmt::format("{}: truncated wsemu object", what));
    if (shift > 63) corrupt(what, "bad format version field");
    const uint8_t b = static_cast<uint8_t>(bytes[at++]);
    version |= uint64_t{b & 0x7Fu} << shift;
    if ((b & 0x80) == 0) break;
  }
  check_version(version, what);
  if (bytes.size() > kMaxObjectBytes) corrupt(what, "larger than 1 GiB");
  pb::Object p;
  if (!p.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw FormatError(fmt::format("{}: truncated or corrupt wsemu object (it does not parse)", what));
  if (p.end_marker() != kEndMarker)
    throw FormatError(fmt::format("{}: truncated wsemu object (the end marker is missing)", what));
  return from_proto(p, what);
}

ObjectImage read_object_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw FormatError(fmt::format("{}: no such file", path));
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in) throw FormatError(fmt::format("{}: cannot read the file", path));
  return parse_object(bytes.str(), path);
}

void write_object_file(const std::string& path, const ObjectImage& object) {
  const std::string bytes = serialize_object(object);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw FormatError(fmt::format("{}: cannot write the object file", path));
}

}  // namespace wsemu::isa
