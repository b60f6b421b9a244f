#include "inspect/trace/trace_reader.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace wsemu::trace {

std::string_view end_status_name(EndStatus s) {
  switch (s) {
    case EndStatus::QUIESCENT: return "quiescent";
    case EndStatus::CYCLE_LIMIT: return "cycle limit";
    case EndStatus::HANG: return "hang";
    case EndStatus::FAULT: return "fault";
    case EndStatus::STOPPED: return "stopped";
  }
  return "unknown";
}

namespace {

nlohmann::json parse_json_chunk(const std::string& text, const std::string& path, const char* what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw TraceError(fmt::format("{}: the {} chunk is not valid JSON: {}", path, what, e.what()));
  }
}

}  // namespace

TraceReader::TraceReader(std::string path) : path_(std::move(path)) {
  std::ifstream in(path_, std::ios::binary);
  if (!in) throw TraceError(fmt::format("cannot open trace file {}: {}", path_, std::strerror(errno)));
  in.seekg(0, std::ios::end);
  const uint64_t file_size = uint64_t(in.tellg());
  in.seekg(0);
  std::vector<uint8_t> head(kFileHeaderBytes);
  if (file_size < kFileHeaderBytes || !in.read(reinterpret_cast<char*>(head.data()), kFileHeaderBytes))
    throw TraceError(fmt::format("{} is not a wsemu trace: it is shorter than the {}-byte header", path_, kFileHeaderBytes));
  if (!std::equal(kMagic.begin(), kMagic.end(), head.begin()))
    throw TraceError(fmt::format("{} is not a wsemu trace (bad magic bytes)", path_));
  ByteCursor c{head.data() + kMagic.size(), head.data() + head.size()};
  header_.version_major = c.u16();
  header_.version_minor = c.u16();
  const uint32_t header_bytes = c.u32();
  if (header_.version_major != kVersionMajor)
    throw TraceError(fmt::format("{} is trace format version {}.{}; this wsemu reads version {}.x", path_,
                                 header_.version_major, header_.version_minor, kVersionMajor));
  if (header_bytes < kFileHeaderBytes || header_bytes > file_size)
    throw TraceError(fmt::format("{}: corrupt header (header size {})", path_, header_bytes));
  header_.width = c.u16();
  header_.height = c.u16();
  char arch[13] = {};
  for (int i = 0; i < 12; ++i) arch[i] = char(c.u8());
  header_.arch = arch;
  const uint64_t clock_bits = c.u64();
  std::memcpy(&header_.clock_mhz, &clock_bits, 8);
  header_.start_cycle = c.u64();
  // No wafer is larger (compiler/layout's max_fabric); a larger fabric would size the PE tables
  // for billions of PEs (found by tests/fuzz/trace_fuzz.cpp).
  if (header_.width < 1 || header_.height < 1 || header_.width > 1024 || header_.height > 1280)
    throw TraceError(fmt::format("{}: corrupt header (fabric {}x{}: larger than any wafer, or empty)", path_,
                                 header_.width, header_.height));

  const bool checksummed = header_.version_minor >= kFirstChecksummedMinor;
  if (checksummed) {
    std::vector<uint8_t> zeroed = head;
    uint32_t stored = 0;
    for (int i = 0; i < 4; ++i) {
      stored |= uint32_t(zeroed[kHeaderChecksumOffset + i]) << (8 * i);
      zeroed[kHeaderChecksumOffset + i] = 0;
    }
    if (crc32_of({{zeroed.data(), zeroed.size()}}) != stored)
      throw TraceError(fmt::format("{}: the header (bytes 0-63) fails its checksum: the file is corrupt", path_));
  } else if (!std::all_of(head.begin() + kHeaderChecksumOffset, head.end(), [](uint8_t b) { return b == 0; })) {
    throw TraceError(fmt::format("{}: corrupt header (reserved bytes 48-63 are not zero)", path_));
  }

  std::optional<nlohmann::json> programs_json, pe_map_json;
  uint64_t at = header_bytes;
  bool first_events = true;
  while (at + 8 <= file_size) {
    in.seekg(std::streamoff(at));
    uint8_t ch[8];
    if (!in.read(reinterpret_cast<char*>(ch), 8)) break;
    ByteCursor cc{ch, ch + 8};
    const uint32_t type = cc.u32(), size = cc.u32();
    if (size > kMaxChunkBytes || at + 8 + size > file_size) {
      warnings_.push_back(fmt::format("the trace is cut short at byte {} (an incomplete chunk); the rest is ignored", at));
      break;
    }
    const ChunkRef ref{at + 8, size};
    std::optional<std::string> payload;
    if (checksummed) {
      // Every chunk is checked before anything of it is believed, so a flipped bit is an error
      // naming its chunk, never a quietly wrong summary.
      if (type == kChunkChecksum)
        throw TraceError(fmt::format("{}: corrupt trace: a checksum chunk at byte {} follows no chunk", path_, at));
      const uint64_t check_at = at + 8 + size;
      if (check_at + 12 > file_size) {
        warnings_.push_back(fmt::format(
            "the trace is cut short at byte {} (a chunk without its checksum); the rest is ignored", at));
        break;
      }
      payload = read_payload(ref);
      const uint32_t crc = crc32_of({{ch, 8}, {payload->data(), payload->size()}});
      uint8_t check[12];
      in.seekg(std::streamoff(check_at));
      in.read(reinterpret_cast<char*>(check), 12);
      ByteCursor k{check, check + 12};
      const uint32_t check_type = k.u32(), check_size = k.u32(), stored = k.u32();
      if (!in || check_type != kChunkChecksum || check_size != 4)
        throw TraceError(fmt::format("{}: corrupt trace: the chunk at byte {} is not followed by its checksum (byte {})",
                                     path_, at, check_at));
      if (crc != stored)
        throw TraceError(fmt::format("{}: corrupt trace: the chunk at byte {} ({} bytes) fails its checksum", path_, at,
                                     8 + uint64_t(size)));
      at = check_at + 12;
    } else {
      at += 8 + uint64_t(size);
    }
    if (type == kChunkEvents) {
      if (size < 12) throw TraceError(fmt::format("{}: corrupt event chunk at byte {}", path_, ref.offset - 8));
      in.seekg(std::streamoff(ref.offset));
      uint8_t eh[12];
      in.read(reinterpret_cast<char*>(eh), 12);
      ByteCursor ec{eh, eh + 12};
      const uint64_t first = ec.u64();
      const uint32_t count = ec.u32();
      if (first_events) first_event_cycle_ = first;
      first_events = false;
      event_count_ += count;
      event_chunks_.push_back(ref);
      continue;
    }
    if (!payload) payload = read_payload(ref);
    if (type == kChunkFilter) {
      ByteCursor f{reinterpret_cast<const uint8_t*>(payload->data()), reinterpret_cast<const uint8_t*>(payload->data()) + payload->size()};
      filter_.kinds = f.u32();
      filter_.rect.x = int(f.u32());
      filter_.rect.y = int(f.u32());
      filter_.rect.width = int(f.u32());
      filter_.rect.height = int(f.u32());
      filter_.colors = f.u32();
      filter_.cycles.first = f.u64();
      filter_.cycles.end = f.u64();
      if (!f.ok) throw TraceError(fmt::format("{}: corrupt filter chunk", path_));
    } else if (type == kChunkPrograms) {
      programs_json = parse_json_chunk(*payload, path_, "PROG");
    } else if (type == kChunkPeMap) {
      pe_map_json = parse_json_chunk(*payload, path_, "PEMP");
    } else if (type == kChunkHang) {
      hang_ = WaitForGraph::from_json(parse_json_chunk(*payload, path_, "HANG"));
    } else if (type == kChunkStats) {
      stats_ = parse_json_chunk(*payload, path_, "STAT");
    } else if (type == kChunkEnd) {
      ByteCursor e{reinterpret_cast<const uint8_t*>(payload->data()), reinterpret_cast<const uint8_t*>(payload->data()) + payload->size()};
      TraceEnd end;
      end.status = EndStatus(e.u8());
      end.end_cycle = e.u64();
      end.events_written = e.u64();
      end.events_filtered_out = e.u64();
      if (!e.ok) throw TraceError(fmt::format("{}: corrupt END chunk", path_));
      end_ = end;
    }
    // Other chunk types come from newer writers: skipped.
  }
  if (!end_) warnings_.push_back("the trace has no END chunk: the recording did not finish (crash or still running)");
  try {
    programs_ = ProgramTable::from_json(programs_json.value_or(nlohmann::json()), pe_map_json.value_or(nlohmann::json()),
                                        header_.width, header_.height);
  } catch (const TraceError& e) {
    throw TraceError(fmt::format("{}: {}", path_, e.what()));
  }
  if (!event_chunks_.empty()) {
    // The last event's cycle: decode the last chunk only.
    TraceFilter all;
    all.kinds = ~KindMask(0);
    std::ifstream events(path_, std::ios::binary);
    std::vector<uint8_t> buf;
    scan_chunk(events, event_chunks_.back(), buf, all, [this](const emu::TraceEvent& e) {
      last_event_cycle_ = e.cycle;
      return true;
    });
  }
}

std::string TraceReader::read_payload(const ChunkRef& c) const {
  std::ifstream in(path_, std::ios::binary);
  std::string s(c.size, '\0');
  in.seekg(std::streamoff(c.offset));
  if (!in.read(s.data(), c.size)) throw TraceError(fmt::format("{}: cannot read {} bytes at {}", path_, c.size, c.offset));
  return s;
}

uint64_t TraceReader::first_cycle() const {
  uint64_t first = header_.start_cycle;
  if (filter_.cycles.first > first) first = filter_.cycles.first;
  return first;
}

uint64_t TraceReader::end_cycle() const {
  uint64_t end = end_ ? end_->end_cycle : (event_count_ ? last_event_cycle_ + 1 : first_cycle());
  if (filter_.cycles.end < end) end = filter_.cycles.end;
  if (event_count_ && last_event_cycle_ + 1 > end) end = last_event_cycle_ + 1;
  return end;
}

void TraceReader::for_each_event(const std::function<bool(const emu::TraceEvent&)>& f) const {
  TraceFilter all;
  all.kinds = ~KindMask(0);
  for_each_event(all, f);
}

void TraceReader::for_each_event(const TraceFilter& keep, const std::function<bool(const emu::TraceEvent&)>& f) const {
  std::ifstream in(path_, std::ios::binary);
  if (!in) throw TraceError(fmt::format("cannot open trace file {}: {}", path_, std::strerror(errno)));
  std::vector<uint8_t> buf;
  for (const ChunkRef& ref : event_chunks_)
    if (!scan_chunk(in, ref, buf, keep, f)) return;
}

bool TraceReader::scan_chunk(std::ifstream& in, const ChunkRef& ref, std::vector<uint8_t>& buf, const TraceFilter& keep,
                             const std::function<bool(const emu::TraceEvent&)>& f) const {
  buf.resize(ref.size);
  in.seekg(std::streamoff(ref.offset));
  if (!in.read(reinterpret_cast<char*>(buf.data()), ref.size))
    throw TraceError(fmt::format("{}: cannot read the event chunk at byte {}", path_, ref.offset));
  ByteCursor c{buf.data(), buf.data() + buf.size()};
  uint64_t cycle = c.u64();
  const uint32_t count = c.u32();
  if (keep.cycles.end <= cycle) return false;  // chunks are in cycle order
  for (uint32_t i = 0; i < count; ++i) {
    emu::TraceEvent e;
    const DecodeResult r = decode_event(c, cycle, e);
    if (r == DecodeResult::MALFORMED)
      throw TraceError(fmt::format("{}: corrupt event record {} of the chunk at byte {}", path_, i, ref.offset - 8));
    if (r == DecodeResult::SKIPPED_UNKNOWN_KIND || !keep.keep(e)) continue;
    if (!f(e)) return false;
  }
  return true;
}

}  // namespace wsemu::trace
