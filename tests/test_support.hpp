// What tests of every folder share, small and header-only: nothing here knows the wafer, the
// compiler or the runtime.
//
// Contract: thrown_message<Error>(call) runs `call` and returns the message of the Error it
// throws, or `none` when it returns normally; any other exception passes through, so a test
// that expects one error type cannot mistake another for it. source_dir() and bin_dir() are the
// source tree and the build's bin folder: $WSEMU_SOURCE_DIR / $WSEMU_BIN_DIR, else the ones the
// test was built with (WSEMU_DEFAULT_SOURCE_DIR / WSEMU_DEFAULT_BIN_DIR, which the test's
// CMakeLists defines; a test built without them has no such function).
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

namespace wsemu::testing {

template <class Error, class Call>
std::string thrown_message(Call&& call, std::string_view none = "(no error)") {
  try {
    std::forward<Call>(call)();
  } catch (const Error& e) {
    return e.what();
  }
  return std::string(none);
}

#ifdef WSEMU_DEFAULT_SOURCE_DIR
inline std::string source_dir() {
  const char* s = std::getenv("WSEMU_SOURCE_DIR");
  return s ? s : WSEMU_DEFAULT_SOURCE_DIR;
}
#endif

#ifdef WSEMU_DEFAULT_BIN_DIR
inline std::string bin_dir() {
  const char* s = std::getenv("WSEMU_BIN_DIR");
  return s ? s : WSEMU_DEFAULT_BIN_DIR;
}
#endif

}  // namespace wsemu::testing
