// Reads a .wstrace file: the header and metadata chunks at open, the events streamed.
//
// Contract: the constructor reads the header and every metadata chunk (skipping event chunks
// by their length), so opening costs little whatever the trace size; for_each_event() then
// streams the events in recorded order (cycle, then fabric order) holding one chunk in memory.
// A file that is not a trace, has another major version, or is corrupt gives TraceError with
// the path and what is wrong. A file cut short (a crashed run) is readable up to its last
// complete chunk; complete() says whether the END chunk was found. Never writes.
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inspect/trace/trace_filter.hpp"
#include "inspect/trace/trace_format.hpp"
#include "inspect/trace/trace_programs.hpp"
#include "inspect/trace/wait_for_graph.hpp"

namespace wsemu::trace {

struct TraceHeader {
  uint16_t version_major = 0, version_minor = 0;
  int width = 0, height = 0;
  std::string arch;
  double clock_mhz = 0;
  uint64_t start_cycle = 0;  // the wafer's cycle when recording started
};

struct TraceEnd {
  EndStatus status = EndStatus::STOPPED;
  uint64_t end_cycle = 0;  // the wafer's cycle when recording ended
  uint64_t events_written = 0;
  uint64_t events_filtered_out = 0;
};
std::string_view end_status_name(EndStatus s);

class TraceReader {
 public:
  explicit TraceReader(std::string path);

  const std::string& path() const { return path_; }
  const TraceHeader& header() const { return header_; }
  const TraceFilter& filter() const { return filter_; }
  const ProgramTable& programs() const { return programs_; }
  const std::optional<TraceEnd>& end() const { return end_; }
  bool complete() const { return end_.has_value(); }
  const std::optional<WaitForGraph>& hang() const { return hang_; }
  // The STAT chunk: {"wafer": Wafer::stats_json(), "fault": {...} when the run faulted}.
  const std::optional<nlohmann::json>& stats() const { return stats_; }
  // Events recorded (from the chunk headers) and the cycles they span.
  uint64_t event_count() const { return event_count_; }
  uint64_t first_event_cycle() const { return first_event_cycle_; }
  // The cycle span the trace covers: from the start (or the filter's first cycle) to the end.
  uint64_t first_cycle() const;
  uint64_t end_cycle() const;  // exclusive
  uint64_t cycles() const { return end_cycle() > first_cycle() ? end_cycle() - first_cycle() : 0; }
  std::vector<std::string> warnings() const { return warnings_; }

  // Streams every event (optionally only those `keep` accepts); the callback may stop the
  // stream early by returning false.
  void for_each_event(const std::function<bool(const emu::TraceEvent&)>& f) const;
  void for_each_event(const TraceFilter& keep, const std::function<bool(const emu::TraceEvent&)>& f) const;

 private:
  struct ChunkRef {
    uint64_t offset = 0;  // of the payload
    uint32_t size = 0;
  };
  std::string read_payload(const ChunkRef& c) const;
  // Decodes one event chunk; false when `f` asked to stop or the chunk is past keep's cycles.
  bool scan_chunk(std::ifstream& in, const ChunkRef& ref, std::vector<uint8_t>& buf, const TraceFilter& keep,
                  const std::function<bool(const emu::TraceEvent&)>& f) const;

  std::string path_;
  TraceHeader header_;
  TraceFilter filter_;
  ProgramTable programs_;
  std::optional<TraceEnd> end_;
  std::optional<WaitForGraph> hang_;
  std::optional<nlohmann::json> stats_;
  std::vector<ChunkRef> event_chunks_;
  uint64_t event_count_ = 0, first_event_cycle_ = 0, last_event_cycle_ = 0;
  std::vector<std::string> warnings_;
};

}  // namespace wsemu::trace
