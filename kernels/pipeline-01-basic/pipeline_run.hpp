// What the pipeline kernel tests share (pipeline-01-basic, pipeline-02-fifo): one run of a
// pipeline kernel through the host runtime, as the SDK's run scripts drive it: launch `start`,
// stream the input into `pipe`, launch `drain`, stream `sink` back.
//
// Contract: header-only test support; HostError (a hang when the path cannot hold the stream)
// passes through to the test.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"

namespace wsemu::testing {

// Returns what came back (as many elements as went in); `cycles`, when given, gets the
// runtime's cycle count after the run. The assembly kernels stream into rect `pipe` and out of
// rect `sink`; a CSL version has one rectangle (`kernel`), its sink at x = `sink_x`.
inline std::vector<uint32_t> stream_through(const compiler::Executable& exe, const std::vector<uint32_t>& in,
                                            uint64_t* cycles = nullptr, const std::string& pipe = "pipe",
                                            const std::string& sink = "sink", int sink_x = 0) {
  LoadedRuntime rt(exe);
  runtime::host::MemcpyOptions stream;
  stream.streaming = true;
  const int size = static_cast<int>(in.size());
  rt.launch("start");
  rt.memcpy_h2d(pipe, in, 0, 0, 1, 1, size, stream);
  rt.launch("drain");
  std::vector<uint32_t> out = read_back(rt, sink, sink_x, 0, 1, 1, size, stream);
  if (cycles) *cycles = rt.cycles();
  return out;
}

}  // namespace wsemu::testing
