// Checks on the text a test gets back (a tool's output, a report): contains(text, needle), and
// holds_all(text, {needles}), a GoogleTest assertion that every needle stands in the text, whose
// failure names each missing one and then shows the text.
//
// Contract: header-only test support; nothing here knows the wafer, the compiler or the runtime.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>

namespace wsemu::testing {

inline bool contains(std::string_view text, std::string_view needle) { return text.find(needle) != std::string_view::npos; }

inline ::testing::AssertionResult holds_all(std::string_view text, std::initializer_list<std::string_view> needles) {
  std::string missing;
  for (std::string_view needle : needles)
    if (!contains(text, needle)) missing += "missing: " + std::string(needle) + "\n";
  if (missing.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << missing << "in:\n" << text;
}

}  // namespace wsemu::testing
