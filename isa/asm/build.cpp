// Phase 5: the ObjectImage; and the public entry points of isa/assembler.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "isa/asm/assembler_impl.hpp"

namespace wsemu::isa {
namespace assembler {

ObjectImage Assembler::build_image() {
  ObjectImage img;
  // The file name only: an object's bytes must not depend on the folder it was built in
  // (reproducible builds); diagnostics still name the path as given.
  img.source_name = std::filesystem::path(files_.front().name).filename().string();
  img.arch = !arch_.empty() ? arch_ : options_.arch;
  img.code = code_;
  img.data_base = data_base_;
  img.data_size = data_size_;
  // Canonical form: the initialised part ends at the last non-zero byte.
  size_t used = data_.size();
  while (used > 0 && data_[used - 1] == 0) --used;
  img.data_init.assign(data_.begin(), data_.begin() + static_cast<long>(used));
  for (const DataSymbol& s : data_symbols_) img.symbols.push_back(s.symbol);
  for (const TaskDecl& t : tasks_) img.tasks.push_back(t.binding);
  std::vector<const CodeLabel*> labels;
  for (const CodeLabel& l : code_labels_) labels.push_back(&l);
  std::stable_sort(labels.begin(), labels.end(), [](const CodeLabel* a, const CodeLabel* b) {
    return a->index != b->index ? a->index < b->index : a->stmt < b->stmt;
  });
  for (const CodeLabel* l : labels) img.functions.push_back({l->name, l->index, l->exported});
  for (const DsdDecl& d : dsds_) img.descriptors.push_back({d.name, static_cast<uint8_t>(d.dsr), d.value});
  img.queues = queues_;
  img.unblocked_ids = unblocked_ids_;
  img.strings = strings_;
  img.source_lines = source_lines_;
  if (!loc_files_.empty()) {
    // Only the files an instruction uses, in the order of first use (as the disassembler's
    // .loc lines give them back).
    std::vector<uint32_t> renumber(loc_files_.size() + 1, 0);
    for (size_t i = 0; i < code_.size() && i < instructions_.size(); ++i) {
      SourceLocation l = instructions_[i].loc;
      if (l.file != 0 && renumber[l.file] == 0) {
        img.source_files.push_back(loc_files_[l.file - 1]);
        renumber[l.file] = static_cast<uint32_t>(img.source_files.size());
      }
      l.file = renumber[l.file];
      img.source_locations.push_back(l);
    }
    if (img.source_files.empty()) img.source_locations.clear();
  }
  return img;
}

}  // namespace assembler

std::string Diagnostic::to_string() const {
  if (line <= 0) return fmt::format("{}: error: {}", file, message);
  std::string out = fmt::format("{}:{}:{}: error: {}\n", file, line, col, message);
  std::string shown;
  for (char c : source_line) {
    const auto u = static_cast<unsigned char>(c);
    shown.push_back(u < 0x20 && c != '\t' ? '?' : u == 0x7F ? '?' : c);
  }
  out += shown;
  if (source_line.size() >= 1000) out += " ...";
  if (col >= 1 && static_cast<size_t>(col) <= source_line.size() + 1) {
    out += '\n';
    for (int i = 0; i < col - 1; ++i) {
      const char c = source_line[static_cast<size_t>(i)];
      if ((static_cast<unsigned char>(c) & 0xC0) == 0x80) continue;  // UTF-8 continuation byte
      out.push_back(c == '\t' ? '\t' : ' ');
    }
    out += '^';
  }
  return out;
}

AssembleResult assemble(std::string_view source, std::string_view file_name, const AssembleOptions& options) {
  namespace fs = std::filesystem;
  std::string canonical;
  std::error_code ec;
  if (!file_name.empty() && fs::is_regular_file(fs::path(file_name), ec)) {
    fs::path c = fs::weakly_canonical(fs::path(file_name), ec);
    if (!ec) canonical = c.string();
  }
  assembler::Assembler a(options);
  return a.run(std::string(source), file_name, canonical);
}

AssembleResult assemble_file(const std::string& path, const AssembleOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto fail = [&](std::string message) {
    AssembleResult r;
    r.errors.push_back(Diagnostic{path, 0, 0, std::move(message), ""});
    return r;
  };
  if (!fs::exists(path, ec)) return fail("no such file");
  if (!fs::is_regular_file(path, ec)) return fail("not a regular file");
  const uintmax_t size = fs::file_size(path, ec);
  if (ec || size > (64u << 20)) return fail("unreadable, or larger than 64 MiB");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) return fail("cannot read the file");
  return assemble(text.str(), path, options);
}

}  // namespace wsemu::isa
