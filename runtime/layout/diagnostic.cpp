#include "runtime/layout/diagnostic.hpp"

namespace wsemu::runtime::layout {

std::string Diagnostic::to_string() const {
  std::string out = file;
  if (line > 0) {
    out += ':';
    out += std::to_string(line);
    if (col > 0) {
      out += ':';
      out += std::to_string(col);
    }
  }
  out += severity == Severity::ERROR ? ": error: " : ": note: ";
  out += message;
  if (line > 0 && !source_line.empty()) {
    out += '\n';
    out += source_line;
    if (col > 0) {
      // Tabs in the prefix stay tabs so that the caret lines up under the column.
      std::string pad;
      for (int i = 0; i < col - 1 && i < static_cast<int>(source_line.size()); ++i)
        pad += source_line[i] == '\t' ? '\t' : ' ';
      out += '\n';
      out += pad;
      out += '^';
    }
  }
  return out;
}

SourceText::SourceText(std::string file_name, std::string_view text)
    : file_name_(std::move(file_name)) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(start, end - start);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    lines_.emplace_back(l);
    start = end + 1;
  }
}

std::string_view SourceText::line(int line_number) const {
  if (line_number < 1 || line_number > static_cast<int>(lines_.size())) return {};
  return lines_[line_number - 1];
}

Diagnostic SourceText::make(Severity severity, Loc loc, std::string message) const {
  Diagnostic d;
  d.severity = severity;
  d.file = file_name_;
  d.line = loc.line;
  d.col = loc.col;
  d.message = std::move(message);
  d.source_line = std::string(line(loc.line));
  return d;
}

std::string format_diagnostics(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) {
    if (!out.empty()) out += "\n";
    out += d.to_string();
  }
  return out;
}

}  // namespace wsemu::runtime::layout
