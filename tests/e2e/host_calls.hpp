// The host-call sequences the kernel tests and the CSL tests share, each written once: a runtime
// loaded on construction, reading a symbol back from a rectangle of PEs into a vector of its own,
// and launching a function and running the wafer until it settles.
//
// Contract: header-only test support over SdkRuntime, with its arguments and meaning
// (coordinates relative to the symbol's or function's rectangle, w * h * elems_per_pe words
// back, one 32-bit word per element). Every HostError passes through to the calling test, so a
// refused copy, a fault or a hang fails it with the runtime's own message. Nothing here checks
// a value: the tests compare what comes back against their own references.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "runtime/host/sdk_runtime.hpp"

namespace wsemu::testing {

// An SdkRuntime whose load() has run: how every test's session with a kernel begins.
class LoadedRuntime : public runtime::host::SdkRuntime {
 public:
  explicit LoadedRuntime(compiler::Executable exe, runtime::host::RuntimeOptions options = {})
      : SdkRuntime(std::move(exe), std::move(options)) {
    load();
  }
};

// memcpy_d2h of `symbol` on the w x h PEs at (x0, y0) into a vector sized for it.
inline std::vector<uint32_t> read_back(runtime::host::SdkRuntime& rt, const std::string& symbol, int x0, int y0, int w,
                                       int h, int elems_per_pe, const runtime::host::MemcpyOptions& options = {}) {
  // A negative extent sizes an empty vector, so that the runtime reports the usage error itself.
  const auto extent = [](int v) { return size_t(std::max(v, 0)); };
  std::vector<uint32_t> out(extent(w) * extent(h) * extent(elems_per_pe));
  rt.memcpy_d2h(out, symbol, x0, y0, w, h, elems_per_pe, options);
  return out;
}

// Launches `function` and runs until nothing is left to do; a wafer left blocked is a hang here
// (launch alone accepts one waiting for the host).
inline emu::RunResult launch_and_settle(runtime::host::SdkRuntime& rt, const std::string& function,
                                        std::span<const uint32_t> args = {}) {
  rt.launch(function, args);
  return rt.run_until_quiescent();
}

// launch_and_settle, counted: the cycles from the launch until the wafer settled.
inline uint64_t settle_cycles(runtime::host::SdkRuntime& rt, const std::string& function,
                              std::span<const uint32_t> args = {}) {
  const uint64_t start = rt.cycles();
  launch_and_settle(rt, function, args);
  return rt.cycles() - start;
}

}  // namespace wsemu::testing
