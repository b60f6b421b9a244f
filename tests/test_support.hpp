// What tests of every folder share, small and header-only: nothing here knows the wafer, the
// compiler or the runtime.
//
// Contract: thrown_message<Error>(call) runs `call` and returns the message of the Error it
// throws, or `none` when it returns normally; any other exception passes through, so a test
// that expects one error type cannot mistake another for it.
#pragma once

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

}  // namespace wsemu::testing
