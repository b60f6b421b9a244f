// Trace recording for the commands that run a kernel (`wsemu run`): the --trace options and
// the recorder's life around a host-runtime session. Defined in cmd_trace.cpp.
//
// Contract: add_trace_options() adds --trace FILE, --trace-events, --trace-rect,
// --trace-colors and --trace-cycles (spellings in inspect/trace/README.md). Without --trace
// nothing is recorded and nothing costs anything. start_trace_recording() loads the runtime
// if needed, checks the options (a bad one is a HostError(USAGE) before anything runs) and
// installs the recorder on the wafer; finish_trace_recording() closes the file with the end
// of the session (success, or the HostError that ended it: hang -> wait-for graph, fault)
// and prints one line saying where the trace is. Never throws from finish.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "runtime/host/sdk_runtime.hpp"

namespace wsemu::cli {

struct TraceRecordingOptions {
  std::string path;
  std::string events = "all";
  std::string rect;
  std::string colors;
  std::string cycles;
};

void add_trace_options(CLI::App& app, TraceRecordingOptions& options);

class TraceRecording;  // owns the recorder; defined in cmd_trace.cpp
struct TraceRecordingDeleter {
  void operator()(TraceRecording* r) const;
};
using TraceRecordingPtr = std::unique_ptr<TraceRecording, TraceRecordingDeleter>;

// nullptr when `options.path` is empty.
TraceRecordingPtr start_trace_recording(runtime::host::SdkRuntime& rt, const TraceRecordingOptions& options);
// `error`: the HostError that ended the session, or nullptr when it succeeded.
void finish_trace_recording(TraceRecordingPtr& recording, runtime::host::SdkRuntime& rt,
                            const runtime::host::HostError* error);

}  // namespace wsemu::cli
