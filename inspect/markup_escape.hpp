// Text made safe inside an HTML or XML element or double-quoted attribute, for the trace's HTML
// page and wsemu check's JUnit file.
//
// Contract: < > & " become entities; the control characters XML 1.0 forbids even as references
// (below 0x20 except tab, newline and carriage return, and 0x7F) become '?', so a JUnit consumer
// does not reject the whole file and a browser shows no invisible text; every other byte is
// kept, UTF-8 sequences included.
#pragma once

#include <string>
#include <string_view>

namespace wsemu::inspect {

inline std::string markup_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\t': case '\n': case '\r': out += c; break;
      default: out += static_cast<unsigned char>(c) < 0x20 || c == 0x7F ? '?' : c;
    }
  }
  return out;
}

}  // namespace wsemu::inspect
