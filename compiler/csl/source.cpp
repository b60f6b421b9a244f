#include "compiler/csl/source.hpp"

namespace wsemu::compiler::csl {

int SourceMap::add(std::string name, std::string text, Span imported_at, bool has_importer) {
  File f{std::move(name), std::move(text), {0}, imported_at, has_importer};
  for (size_t i = 0; i < f.text.size(); ++i)
    if (f.text[i] == '\n') f.line_starts.push_back(i + 1);
  files_.push_back(std::move(f));
  return int(files_.size()) - 1;
}

std::string_view SourceMap::line(int file, int line) const {
  if (file < 0 || file >= size()) return {};
  const File& f = files_[size_t(file)];
  if (line < 1 || size_t(line) > f.line_starts.size()) return {};
  size_t start = f.line_starts[size_t(line) - 1];
  size_t end = f.text.find('\n', start);
  if (end == std::string::npos) end = f.text.size();
  std::string_view l(f.text.data() + start, end - start);
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  return l;
}

std::string SourceMap::where(Span at) const {
  if (at.file < 0 || at.file >= size()) return "<unknown>";
  return name(at.file) + ":" + std::to_string(at.line) + ":" + std::to_string(at.col);
}

std::vector<Diagnostic> SourceMap::diagnose(Span at, const std::string& message) const {
  std::vector<Diagnostic> out;
  auto make = [&](Severity sev, Span s, const std::string& msg) {
    Diagnostic d;
    d.severity = sev;
    d.file = s.file >= 0 && s.file < size() ? name(s.file) : "<unknown>";
    d.line = s.line;
    d.col = s.col;
    d.message = msg;
    d.source_line = std::string(line(s.file, s.line));
    out.push_back(std::move(d));
  };
  make(Severity::ERROR, at, message);
  // Imports are registered after their importer, so the chain ends at the root (bounded anyway).
  int file = at.file;
  for (int guard = 0; guard < 64 && file >= 0 && file < size() && files_[size_t(file)].has_importer; ++guard) {
    const Span site = files_[size_t(file)].imported_at;
    const std::string module = files_[size_t(file)].name.substr(files_[size_t(file)].name.find_last_of('/') + 1);
    make(Severity::NOTE, site, "in module " + module + " imported from " + where(site));
    if (site.file >= file) break;
    file = site.file;
  }
  return out;
}

}  // namespace wsemu::compiler::csl
