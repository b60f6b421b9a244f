// The trace recorder: an emu::EventSink that streams the wafer's events into a .wstrace file.
//
// Contract:
// - Construct it with the wafer (the header, the programs and the PE map are written at once),
//   install it with wafer.set_event_sink(&writer), run, then call finish() with the run's
//   result (writes the hang's wait-for graph, the wafer's counters and the END chunk) before
//   uninstalling it. A writer destroyed without finish() still closes a readable file
//   (END status STOPPED, no counters).
// - Memory is bounded whatever the run length: events are encoded into one buffer of at most
//   `chunk_bytes` that is written out as an EVTS chunk when full.
// - Events the filter rejects cost a few compares; nothing else.
// - I/O errors (cannot create, disk full) throw TraceError from the constructor, flush() and
//   finish(); inside on_events (called from the wafer's run loop) a write error is remembered
//   and recording stops, so the run itself is never disturbed; finish() then throws it.
// Never opens any file but the one it was given; never prints.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "inspect/trace/trace_filter.hpp"
#include "inspect/trace/trace_format.hpp"
#include "emulator/wafer.hpp"

namespace wsemu::trace {

struct TraceWriterOptions {
  TraceFilter filter;
  size_t chunk_bytes = 256 * 1024;  // event bytes buffered before an EVTS chunk is written
};

class TraceWriter final : public emu::EventSink {
 public:
  TraceWriter(const std::string& path, const emu::Wafer& wafer, TraceWriterOptions options = {});
  ~TraceWriter() override;
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void on_events(std::span<const emu::TraceEvent> events) override;

  void flush();  // writes the buffered events (an EVTS chunk) and flushes the file
  // Ends the recording: HANG (when `result` is a hang), STAT and END chunks; closes the file.
  void finish(const emu::Wafer& wafer, const emu::RunResult& result);
  // Ends the recording without a run result (END status STOPPED), with the wafer's counters.
  void finish(const emu::Wafer& wafer);

  uint64_t events_written() const { return events_written_; }
  uint64_t events_filtered_out() const { return events_seen_ - events_written_; }
  uint64_t bytes_written() const { return bytes_written_; }
  const std::string& path() const { return path_; }

 private:
  void write_chunk(uint32_t type, const uint8_t* data, size_t size);  // and its CRC chunk
  void write_checksum(uint32_t crc);
  void write_json_chunk(uint32_t type, const std::string& json);
  void flush_events();
  void close(EndStatus status, uint64_t end_cycle);

  std::string path_;
  std::FILE* file_ = nullptr;
  TraceWriterOptions options_;
  std::vector<uint8_t> buffer_;
  uint64_t chunk_first_cycle_ = 0, previous_cycle_ = 0;
  uint32_t chunk_events_ = 0;
  uint64_t events_seen_ = 0, events_written_ = 0, bytes_written_ = 0;
  uint64_t last_cycle_seen_ = 0;
  bool any_event_seen_ = false;
  std::string write_error_;
};

}  // namespace wsemu::trace
