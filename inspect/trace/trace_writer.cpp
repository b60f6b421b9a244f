#include "inspect/trace/trace_writer.hpp"

#include <fmt/format.h>

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "inspect/trace/trace_programs.hpp"
#include "inspect/trace/wait_for_graph.hpp"

namespace wsemu::trace {

namespace {

EndStatus end_status(emu::RunResult::Status s) {
  switch (s) {
    case emu::RunResult::Status::QUIESCENT: return EndStatus::QUIESCENT;
    case emu::RunResult::Status::CYCLE_LIMIT: return EndStatus::CYCLE_LIMIT;
    case emu::RunResult::Status::HANG: return EndStatus::HANG;
    case emu::RunResult::Status::FAULT: return EndStatus::FAULT;
  }
  return EndStatus::STOPPED;
}

}  // namespace

TraceWriter::TraceWriter(const std::string& path, const emu::Wafer& wafer, TraceWriterOptions options)
    : path_(path), options_(options) {
  if (options_.chunk_bytes < 1024) options_.chunk_bytes = 1024;
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) throw TraceError(fmt::format("cannot create trace file {}: {}", path, std::strerror(errno)));
  buffer_.reserve(options_.chunk_bytes + 64);

  // Built from the magic rather than inserted into an empty vector: GCC 12 under -fsanitize=thread
  // reports a false -Wstringop-overflow for the insert.
  std::vector<uint8_t> h(kMagic.begin(), kMagic.end());
  put_u16(h, kVersionMajor);
  put_u16(h, kVersionMinor);
  put_u32(h, kFileHeaderBytes);
  put_u16(h, uint16_t(wafer.width()));
  put_u16(h, uint16_t(wafer.height()));
  char arch[12] = {};
  std::strncpy(arch, wafer.profile().name.c_str(), sizeof(arch) - 1);
  h.insert(h.end(), arch, arch + sizeof(arch));
  uint64_t clock_bits;
  const double clock = wafer.profile().clock_mhz;
  std::memcpy(&clock_bits, &clock, 8);
  put_u64(h, clock_bits);
  put_u64(h, wafer.cycle());
  h.resize(kFileHeaderBytes, 0);
  const uint32_t header_checksum = crc32_of({{h.data(), h.size()}});
  for (int i = 0; i < 4; ++i) h[kHeaderChecksumOffset + i] = uint8_t(header_checksum >> (8 * i));
  if (std::fwrite(h.data(), 1, h.size(), file_) != h.size()) {
    std::fclose(file_);
    file_ = nullptr;
    throw TraceError(fmt::format("cannot write trace file {}: {}", path, std::strerror(errno)));
  }
  bytes_written_ = h.size();

  const TraceFilter& f = options_.filter;
  std::vector<uint8_t> filt;
  put_u32(filt, f.kinds);
  put_u32(filt, uint32_t(f.rect.x));
  put_u32(filt, uint32_t(f.rect.y));
  put_u32(filt, uint32_t(f.rect.width));
  put_u32(filt, uint32_t(f.rect.height));
  put_u32(filt, f.colors);
  put_u64(filt, f.cycles.first);
  put_u64(filt, f.cycles.end);
  write_chunk(kChunkFilter, filt.data(), filt.size());

  const ProgramTable table = ProgramTable::from_wafer(wafer);
  write_json_chunk(kChunkPrograms, table.programs_json().dump());
  write_json_chunk(kChunkPeMap, table.pe_map_json().dump());
  if (!write_error_.empty()) throw TraceError(write_error_);
}

TraceWriter::~TraceWriter() {
  if (!file_) return;
  try {
    close(EndStatus::STOPPED, any_event_seen_ ? last_cycle_seen_ + 1 : 0);
  } catch (...) {
    // A destructor must not throw; the file is as complete as the disk allowed.
  }
}

void TraceWriter::write_chunk(uint32_t type, const uint8_t* data, size_t size) {
  if (!file_ || !write_error_.empty()) return;
  std::vector<uint8_t> head;
  put_u32(head, type);
  put_u32(head, uint32_t(size));
  const uint32_t crc = crc32_of({{head.data(), head.size()}, {data, size}});
  if (std::fwrite(head.data(), 1, head.size(), file_) != head.size() ||
      (size && std::fwrite(data, 1, size, file_) != size)) {
    write_error_ = fmt::format("cannot write trace file {}: {}", path_, std::strerror(errno));
    return;
  }
  bytes_written_ += head.size() + size;
  write_checksum(crc);
}

void TraceWriter::write_checksum(uint32_t crc) {
  std::vector<uint8_t> chunk;
  put_u32(chunk, kChunkChecksum);
  put_u32(chunk, 4);
  put_u32(chunk, crc);
  if (std::fwrite(chunk.data(), 1, chunk.size(), file_) != chunk.size()) {
    write_error_ = fmt::format("cannot write trace file {}: {}", path_, std::strerror(errno));
    return;
  }
  bytes_written_ += chunk.size();
}

void TraceWriter::write_json_chunk(uint32_t type, const std::string& json) {
  write_chunk(type, reinterpret_cast<const uint8_t*>(json.data()), json.size());
}

void TraceWriter::on_events(std::span<const emu::TraceEvent> events) {
  if (!file_ || !write_error_.empty()) return;
  events_seen_ += events.size();
  if (!events.empty()) {
    last_cycle_seen_ = events.back().cycle;
    any_event_seen_ = true;
  }
  const TraceFilter& f = options_.filter;
  for (const emu::TraceEvent& e : events) {
    if (!f.keep(e)) continue;
    if (chunk_events_ == 0) {
      chunk_first_cycle_ = e.cycle;
      previous_cycle_ = e.cycle;
    }
    encode_event(buffer_, e, previous_cycle_);
    previous_cycle_ = e.cycle;
    ++chunk_events_;
    ++events_written_;
  }
  if (buffer_.size() >= options_.chunk_bytes) flush_events();
}

void TraceWriter::flush_events() {
  if (chunk_events_ == 0) return;
  std::vector<uint8_t> head;
  put_u64(head, chunk_first_cycle_);
  put_u32(head, chunk_events_);
  std::vector<uint8_t> type_len;
  put_u32(type_len, kChunkEvents);
  put_u32(type_len, uint32_t(head.size() + buffer_.size()));
  if (write_error_.empty() && file_) {
    const uint32_t crc = crc32_of({{type_len.data(), type_len.size()}, {head.data(), head.size()},
                                   {buffer_.data(), buffer_.size()}});
    if (std::fwrite(type_len.data(), 1, type_len.size(), file_) != type_len.size() ||
        std::fwrite(head.data(), 1, head.size(), file_) != head.size() ||
        std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
      write_error_ = fmt::format("cannot write trace file {}: {}", path_, std::strerror(errno));
    } else {
      bytes_written_ += type_len.size() + head.size() + buffer_.size();
      write_checksum(crc);
    }
  }
  buffer_.clear();
  chunk_events_ = 0;
}

void TraceWriter::flush() {
  flush_events();
  if (file_ && write_error_.empty() && std::fflush(file_) != 0)
    write_error_ = fmt::format("cannot write trace file {}: {}", path_, std::strerror(errno));
  if (!write_error_.empty()) throw TraceError(write_error_);
}

void TraceWriter::close(EndStatus status, uint64_t end_cycle) {
  flush_events();
  std::vector<uint8_t> end;
  put_u8(end, uint8_t(status));
  put_u64(end, end_cycle);
  put_u64(end, events_written_);
  put_u64(end, events_seen_ - events_written_);
  write_chunk(kChunkEnd, end.data(), end.size());
  if (std::fclose(file_) != 0 && write_error_.empty())
    write_error_ = fmt::format("cannot write trace file {}: {}", path_, std::strerror(errno));
  file_ = nullptr;
  if (!write_error_.empty()) throw TraceError(write_error_);
}

void TraceWriter::finish(const emu::Wafer& wafer, const emu::RunResult& result) {
  if (!file_) throw TraceError(fmt::format("trace {} is already finished", path_));
  flush_events();
  if (result.hang) write_json_chunk(kChunkHang, WaitForGraph::build(*result.hang, wafer).to_json().dump());
  if (result.fault) {
    nlohmann::json fault{{"text", result.fault->to_string()}};
    if (result.fault->x) fault["x"] = *result.fault->x;
    if (result.fault->y) fault["y"] = *result.fault->y;
    if (result.fault->cycle) fault["cycle"] = *result.fault->cycle;
    write_json_chunk(kChunkStats, nlohmann::json{{"fault", fault}, {"wafer", wafer.stats_json()}}.dump());
  } else {
    write_json_chunk(kChunkStats, nlohmann::json{{"wafer", wafer.stats_json()}}.dump());
  }
  close(end_status(result.status), wafer.cycle());
}

void TraceWriter::finish(const emu::Wafer& wafer) {
  if (!file_) throw TraceError(fmt::format("trace {} is already finished", path_));
  flush_events();
  write_json_chunk(kChunkStats, nlohmann::json{{"wafer", wafer.stats_json()}}.dump());
  close(EndStatus::STOPPED, wafer.cycle());
}

}  // namespace wsemu::trace
