#include "compiler/layout/diagnostic.hpp"

#include "isa/asm/source.hpp"

namespace wsemu::compiler::layout {

namespace {

std::string located(const std::string& file, int line, int col, Severity severity,
                    const std::string& message, const std::string& source_line) {
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

// The assembler's line split, copied: SourceText outlives the text it is given.
std::vector<std::string> split_lines(std::string_view text) {
  const std::vector<std::string_view> lines = isa::assembler::split_lines(text);
  return {lines.begin(), lines.end()};
}

}  // namespace

std::string Diagnostic::to_string() const {
  std::string out = located(file, line, col, severity, message, source_line);
  for (const IncludeSite& site : included_from)
    out += "\n" + located(site.file, site.line, site.col, Severity::NOTE, "included from here",
                          site.source_line);
  return out;
}

SourceText::SourceText(std::string file_name, std::string_view text) {
  files_.push_back({std::move(file_name), split_lines(text), {}});
}

int SourceText::add_file(std::string file_name, std::string_view text, Loc included_at) {
  files_.push_back({std::move(file_name), split_lines(text), included_at});
  return static_cast<int>(files_.size()) - 1;
}

std::string_view SourceText::line(int line_number, int file) const {
  if (file < 0 || file >= file_count()) return {};
  const std::vector<std::string>& lines = files_[file].lines;
  if (line_number < 1 || line_number > static_cast<int>(lines.size())) return {};
  return lines[line_number - 1];
}

Diagnostic SourceText::make(Severity severity, Loc loc, std::string message) const {
  Diagnostic d;
  d.severity = severity;
  const int file = loc.file >= 0 && loc.file < file_count() ? loc.file : 0;
  d.file = files_[file].name;
  d.line = loc.line;
  d.col = loc.col;
  d.message = std::move(message);
  d.source_line = std::string(line(loc.line, file));
  // Files are registered after the file that includes them, so this walk ends at file 0.
  for (int f = file; f > 0;) {
    const Loc site = files_[f].included_at;
    d.included_from.push_back(
        {files_[site.file].name, site.line, site.col, std::string(line(site.line, site.file))});
    f = site.file;
  }
  return d;
}

std::string SourceText::position(Loc loc) const {
  if (loc.file <= 0 || loc.file >= file_count()) return "line " + std::to_string(loc.line);
  return files_[loc.file].name + ":" + std::to_string(loc.line);
}

std::string format_diagnostics(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) {
    if (!out.empty()) out += "\n";
    out += d.to_string();
  }
  return out;
}

}  // namespace wsemu::compiler::layout
