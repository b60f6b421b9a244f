// `wsemu trace FILE VIEW`: the views of a recorded trace; and the --trace options of
// `wsemu run` (tools/wsemu/trace_options.hpp).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "inspect/trace/trace_reader.hpp"
#include "inspect/trace/trace_views.hpp"
#include "inspect/trace/trace_writer.hpp"
#include "tools/wsemu/subcommand.hpp"
#include "tools/wsemu/trace_options.hpp"

namespace wsemu::cli {

// ---- recording (wsemu run --trace) ----

class TraceRecording {
 public:
  TraceRecording(emu::Wafer& wafer, const std::string& path, const trace::TraceWriterOptions& o)
      : wafer_(wafer), writer_(path, wafer, o) {
    wafer_.set_event_sink(&writer_);
  }
  ~TraceRecording() { wafer_.set_event_sink(nullptr); }
  void finish(const emu::RunResult& r) {
    wafer_.set_event_sink(nullptr);
    writer_.finish(wafer_, r);
  }
  const trace::TraceWriter& writer() const { return writer_; }

 private:
  emu::Wafer& wafer_;
  trace::TraceWriter writer_;
};

void TraceRecordingDeleter::operator()(TraceRecording* r) const { delete r; }

void add_trace_options(CLI::App& app, TraceRecordingOptions& o) {
  app.add_option("--trace", o.path, "Record the fabric's events into this .wstrace file (view it with `wsemu trace FILE ...`)");
  app.add_option("--trace-events", o.events, "Event kinds to record: wavelets (hops, landings), instructions, tasks, stalls (core and link stalls), router (switch changes), all, or event names such as link_stall")
      ->default_str("all");
  app.add_option("--trace-rect", o.rect, "Record only the PEs of this rectangle: x0,y0,w,h");
  app.add_option("--trace-colors", o.colors, "Record wavelet events of these colors only: 1,2 or 3-5");
  app.add_option("--trace-cycles", o.cycles, "Record only cycles a:b (b exclusive; a: or :b open)");
}

TraceRecordingPtr start_trace_recording(runtime::host::SdkRuntime& rt, const TraceRecordingOptions& o) {
  if (o.path.empty()) return nullptr;
  trace::TraceWriterOptions w;
  try {
    w.filter.kinds = trace::parse_kinds(o.events);
    if (!o.rect.empty()) w.filter.rect = trace::parse_rect(o.rect);
    if (!o.colors.empty()) w.filter.colors = trace::parse_colors(o.colors);
    if (!o.cycles.empty()) w.filter.cycles = trace::parse_cycles(o.cycles);
  } catch (const trace::TraceError& e) {
    throw runtime::host::HostError(runtime::host::HostError::Kind::USAGE, std::string("--trace: ") + e.what());
  }
  if (!rt.loaded()) rt.load();
  try {
    return TraceRecordingPtr(new TraceRecording(rt.wafer(), o.path, w));
  } catch (const trace::TraceError& e) {
    throw runtime::host::HostError(runtime::host::HostError::Kind::USAGE, e.what());
  }
}

void finish_trace_recording(TraceRecordingPtr& recording, runtime::host::SdkRuntime& rt,
                            const runtime::host::HostError* error) {
  if (!recording) return;
  emu::RunResult r;
  r.cycle = rt.wafer().cycle();
  r.status = emu::RunResult::Status::QUIESCENT;
  if (error) {
    using Kind = runtime::host::HostError::Kind;
    switch (error->kind()) {
      case Kind::HANG:
        r.status = emu::RunResult::Status::HANG;
        r.hang = error->hang();
        if (!r.hang) r.hang = rt.wafer().hang_report();
        break;
      case Kind::FAULT:
        r.status = emu::RunResult::Status::FAULT;
        r.fault = error->fault();
        break;
      case Kind::CYCLE_LIMIT: r.status = emu::RunResult::Status::CYCLE_LIMIT; break;
      case Kind::USAGE: r.status = emu::RunResult::Status::CYCLE_LIMIT; break;
    }
  }
  try {
    recording->finish(r);
    const trace::TraceWriter& w = recording->writer();
    std::printf("wrote trace %s: %llu events, %.1f KiB (view: wsemu trace %s summary)\n", w.path().c_str(),
                static_cast<unsigned long long>(w.events_written()), double(w.bytes_written()) / 1024.0, w.path().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wsemu: error: the trace is incomplete: %s\n", e.what());
  }
  recording.reset();
}

// ---- the views ----

namespace {

constexpr const char* kViews[] = {"summary", "text", "perfetto", "heatmap", "html", "hang"};

constexpr const char* kFooter = R"(
Views:
  summary   per color and per link wavelet counts, link utilization and backpressure, the
            busiest PEs (busy / stall / idle), top stall reasons, and the hang's wait-for graph
  text      one line per event: "@1234 P3.2 hop E c4 0x3f800000" (filters below)
  perfetto  Chrome trace-event JSON for ui.perfetto.dev or chrome://tracing: a track per PE and
            per link, flows following each wavelet
  heatmap   PNG of link utilization and backpressure per exit (N, E, S, W, core panels), PEs
            labelled by x and y; --colors: the two rows per color
  html      one self-contained offline page: fabric grid with link loads, a cycle slider, per-PE
            task timeline and instruction trace, the hang's wait-for graph
  hang      the hang's wait-for graph as text (--dot: Graphviz)

Files are written next to the trace unless -o says where (FILE.perfetto.json, FILE.heatmap.png,
FILE.html); summary, text and hang print to stdout. Exit status: 0, or 2 for a bad option or a
file that is not a readable trace.

Examples:
  wsemu trace run.wstrace summary
  wsemu trace run.wstrace text --pe 3,2 --colors 4 --cycles 100:200 --kinds wavelets,stalls
  wsemu trace run.wstrace heatmap --colors 1,2 -o links.png
)";

struct TraceViewArgs {
  std::string file, view, output;
  std::string pe, rect, colors, cycles, kinds;
  bool json = false, dot = false, no_instructions = false, no_flows = false;
  int top = 10, cell = 0;
  uint64_t max_lines = ~uint64_t{0};
};

std::string default_output(const std::string& trace_file, const std::string& suffix) {
  std::filesystem::path p(trace_file);
  if (p.extension() == ".wstrace") p.replace_extension();
  return p.string() + suffix;
}

int view_command(const TraceViewArgs& a) {
  try {
    trace::TraceReader reader(a.file);
    trace::TraceFilter filter;
    if (!a.kinds.empty()) filter.kinds = trace::parse_kinds(a.kinds);
    if (!a.pe.empty() && !a.rect.empty()) throw trace::TraceError("give --pe or --rect, not both");
    if (!a.pe.empty()) filter.rect = trace::parse_pe(a.pe);
    if (!a.rect.empty()) filter.rect = trace::parse_rect(a.rect);
    if (!a.colors.empty()) filter.colors = trace::parse_colors(a.colors);
    if (!a.cycles.empty()) filter.cycles = trace::parse_cycles(a.cycles);
    for (const std::string& w : reader.warnings()) std::fprintf(stderr, "wsemu trace: warning: %s\n", w.c_str());

    auto open_out = [&](const std::string& path) {
      auto f = std::make_unique<std::ofstream>(path, std::ios::binary);
      if (!*f) throw trace::TraceError(fmt::format("cannot write {}", path));
      return f;
    };
    if (a.view == "summary") {
      trace::SummaryOptions o;
      o.top = a.top;
      if (a.json) {
        std::cout << trace::summary_json(reader, o).dump(2) << "\n";
      } else {
        trace::write_summary(reader, o, std::cout);
      }
    } else if (a.view == "text") {
      if (a.output.empty()) {
        trace::write_text(reader, filter, std::cout, a.max_lines);
      } else {
        auto f = open_out(a.output);
        const uint64_t n = trace::write_text(reader, filter, *f, a.max_lines);
        std::printf("wrote %s: %llu lines\n", a.output.c_str(), static_cast<unsigned long long>(n));
      }
    } else if (a.view == "perfetto") {
      const std::string out = a.output.empty() ? default_output(a.file, ".perfetto.json") : a.output;
      trace::PerfettoOptions o;
      o.filter = filter;
      o.instructions = !a.no_instructions;
      o.flows = !a.no_flows;
      {
        auto f = open_out(out);
        trace::write_perfetto(reader, o, *f);
      }
      std::printf("wrote %s (open it in ui.perfetto.dev or chrome://tracing)\n", out.c_str());
    } else if (a.view == "heatmap") {
      const std::string out = a.output.empty() ? default_output(a.file, ".heatmap.png") : a.output;
      trace::HeatmapOptions o;
      o.cell = a.cell;
      if (!a.colors.empty()) o.colors = filter.colors;
      o.cycles = filter.cycles;
      const trace::Image img = trace::render_heatmap(reader, o);
      trace::write_png(img, out);
      std::printf("wrote %s (%dx%d)\n", out.c_str(), img.width, img.height);
    } else if (a.view == "html") {
      const std::string out = a.output.empty() ? default_output(a.file, ".html") : a.output;
      {
        auto f = open_out(out);
        *f << trace::html_page(reader, {});
        if (!*f) throw trace::TraceError(fmt::format("cannot write {}", out));
      }
      std::printf("wrote %s (open it in a browser; it needs no network)\n", out.c_str());
    } else if (a.view == "hang") {
      if (!reader.hang()) {
        std::printf("%s: the run did not hang (it ended: %s)\n", a.file.c_str(),
                    reader.end() ? std::string(trace::end_status_name(reader.end()->status)).c_str() : "incomplete recording");
        return 0;
      }
      std::cout << (a.dot ? reader.hang()->to_dot() : reader.hang()->to_text());
    }
    return 0;
  } catch (const trace::TraceError& e) {
    std::fprintf(stderr, "wsemu trace: error: %s\n", e.what());
    return 2;
  }
}

const Register kTrace{Subcommand{"trace", [](CLI::App& app) -> std::function<int()> {
                                   auto a = std::make_shared<TraceViewArgs>();
                                   app.description("Views of a recorded trace (.wstrace from `wsemu run --trace`): "
                                                   "summary, text, perfetto, heatmap, html, hang");
                                   app.add_option("file", a->file, "The .wstrace file")->required();
                                   app.add_option("view", a->view, "summary | text | perfetto | heatmap | html | hang")
                                       ->required()
                                       ->check(CLI::IsMember(std::vector<std::string>(std::begin(kViews), std::end(kViews))));
                                   app.add_option("-o,--output", a->output, "Output file (perfetto, heatmap, html; text)");
                                   app.add_option("--pe", a->pe, "Only this PE: x,y (text, perfetto)");
                                   app.add_option("--rect", a->rect, "Only these PEs: x0,y0,w,h (text, perfetto)");
                                   app.add_option("--colors", a->colors,
                                                  "Only these colors (text, perfetto); heatmap: a row of panels per color");
                                   app.add_option("--cycles", a->cycles, "Only cycles a:b, b exclusive (text, perfetto, heatmap)");
                                   app.add_option("--kinds", a->kinds,
                                                  "Only these event kinds: wavelets,instructions,tasks,stalls,router or event names such as link_stall (text, perfetto)");
                                   app.add_option("--max-lines", a->max_lines, "At most this many lines (text)");
                                   app.add_option("--top", a->top, "Rows per table (summary)")->check(CLI::Range(1, 100000));
                                   app.add_flag("--json", a->json, "Print the summary as JSON");
                                   app.add_option("--cell", a->cell, "Pixels per PE (heatmap; default: fit 512 px)")
                                       ->check(CLI::Range(1, 64));
                                   app.add_flag("--no-instructions", a->no_instructions, "Leave instruction slices out (perfetto)");
                                   app.add_flag("--no-flows", a->no_flows, "Leave the wavelet flow arrows out (perfetto)");
                                   app.add_flag("--dot", a->dot, "Graphviz output (hang)");
                                   app.footer(kFooter);
                                   return [a]() { return view_command(*a); };
                                 }}};

}  // namespace
}  // namespace wsemu::cli
