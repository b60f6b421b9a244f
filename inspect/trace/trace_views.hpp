// The views of a recorded trace (`wsemu trace FILE <view>`): summary, text log, Perfetto /
// Chrome trace-event JSON, link-utilization heatmap (PNG) and the self-contained HTML page.
//
// Contract: every view reads the trace through TraceReader (streaming the events once or
// twice) and writes to the stream or file it is given; memory stays bounded by the fabric
// size, the number of links in use and the caps in the options, never by the run length.
// Errors (unwritable output, bad options) throw TraceError. Views never modify the trace.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inspect/trace/trace_filter.hpp"
#include "inspect/trace/trace_reader.hpp"

namespace wsemu::trace {

// Runs a view over `trace`'s JSON chunks. A corrupt chunk whose checksum was made to match (or a
// writer bug) can hold a field of the wrong JSON type; that is a corrupt trace, said so, never an
// uncaught exception.
template <typename View>
auto with_json_errors_as_corrupt_trace(const TraceReader& trace, View view) -> decltype(view()) {
  try {
    return view();
  } catch (const nlohmann::json::exception& e) {
    throw TraceError(trace.path() + ": a JSON chunk of the trace has a field of the wrong type (" + e.what() +
                     "): the file is corrupt");
  }
}

// ---- text: one line per event, "@1234 P3.2 hop E c4 0x3f800000" (README.md, "Text log") ----
std::string event_text(const emu::TraceEvent& e, const ProgramTable& programs);
// Writes the lines `filter` keeps; returns how many.
uint64_t write_text(const TraceReader& trace, const TraceFilter& filter, std::ostream& out, uint64_t max_lines = ~uint64_t{0});

// ---- summary ----
struct SummaryOptions {
  int top = 10;  // hottest links, busiest PEs, stall reasons shown
};
void write_summary(const TraceReader& trace, const SummaryOptions& options, std::ostream& out);
nlohmann::json summary_json(const TraceReader& trace, const SummaryOptions& options);

// ---- perfetto / chrome trace-event JSON ----
struct PerfettoOptions {
  TraceFilter filter;
  bool instructions = true;    // one slice per retired instruction
  bool flows = true;           // flow arrows linking the hops of one wavelet
  uint64_t max_events = 2'000'000;  // output events beyond this are dropped (with a note)
};
// One track (thread) per PE with events, under process "PEs"; one per link with traffic,
// under process "links". Timestamps are microseconds at the trace's clock; every slice has
// its cycle in args.
void write_perfetto(const TraceReader& trace, const PerfettoOptions& options, std::ostream& out);

// ---- heatmap ----
struct HeatmapOptions {
  int cell = 0;                  // pixels per PE; 0: 512 / max(W, H), clamped to 1..32
  std::optional<uint32_t> colors;  // one row of panels per listed color; none: all colors together
  CycleRange cycles;
};
struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // row-major, 3 bytes per pixel
};
// Five panels side by side, one per exit of each router (the links to N, E, S, W and the RAMP to
// its own core), a PE per cell with x and y labelled, colour = events / cycles (0: dark blue ..
// 1: red; no event: grey). Two rows of panels per color group: utilization (wavelets that left
// by that exit) and backpressure (cycles a wavelet waited at that exit for room downstream,
// from the link_stall events). A legend says what is drawn, then the colour scale.
// Size: width = 12 + 5 * (W * cell) + 6 * 8, height = 8 + rows * (16 + H * cell + 12 + 8) + 48,
// rows = 2 * (1 or the number of colors asked for).
Image render_heatmap(const TraceReader& trace, const HeatmapOptions& options);
void write_png(const Image& image, const std::string& path);

// ---- html ----
struct HtmlOptions {
  uint64_t max_events_per_pe = 5000;  // instruction / task records kept per PE for the panel
  int slider_buckets = 200;           // cycle slider positions
};
std::string html_page(const TraceReader& trace, const HtmlOptions& options);

}  // namespace wsemu::trace
