// How a test of a kernel that must fail runs it: launch the functions in order and run to
// quiescence; the run must end in a HostError of the given kind, which is returned for the
// test's own checks. Any other ending is an exception naming what happened instead, so the
// calling test fails with it.
#pragma once

#include <initializer_list>
#include <stdexcept>
#include <string>

#include "runtime/host/host_error.hpp"
#include "runtime/host/sdk_runtime.hpp"

namespace wsemu::testing {

inline runtime::host::HostError run_expecting(runtime::host::SdkRuntime& rt, std::initializer_list<std::string> launches,
                                              runtime::host::HostError::Kind kind) {
  try {
    for (const std::string& function : launches) rt.launch(function);
    rt.run_until_quiescent();
  } catch (const runtime::host::HostError& e) {
    if (e.kind() == kind) return e;
    throw std::runtime_error(std::string("the run ended in another host error: ") + e.what());
  }
  throw std::runtime_error("the run ended without the expected host error");
}

}  // namespace wsemu::testing
