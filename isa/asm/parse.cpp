// Phase 1: lines to statements and definitions (see assembler_impl.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "isa/asm/assembler_impl.hpp"

namespace wsemu::isa::assembler {
namespace {

// Levenshtein distance, for "did you mean" hints on unknown names.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string mnemonic_hint(std::string_view word) {
  if (word.size() > 32) return "";
  std::string_view best;
  size_t best_d = 3;
  for (const InsnInfo& in : instruction_table()) {
    const size_t d = edit_distance(word, in.mnemonic);
    if (d < best_d) {
      best_d = d;
      best = in.mnemonic;
    }
  }
  return best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best);
}

}  // namespace

size_t Assembler::add_statement(int file, int line, int end_col) {
  Statement s;
  s.file = file;
  s.line = line;
  s.end_col = end_col;
  statements_.push_back(std::move(s));
  cur_stmt_ = statements_.size() - 1;
  have_stmt_ = true;
  return cur_stmt_;
}

void Assembler::error(int col, std::string message) {
  if (too_many_errors()) return;
  Diagnostic d;
  if (have_stmt_) {
    const Statement& s = statements_[cur_stmt_];
    const SourceFile& f = files_[static_cast<size_t>(s.file)];
    d.file = f.name;
    d.line = s.line;
    d.col = col;
    if (s.line >= 1 && static_cast<size_t>(s.line) <= f.lines.size()) {
      std::string_view text = f.lines[static_cast<size_t>(s.line - 1)];
      // Keep diagnostics small even for absurd lines; to_string() copes with the cut.
      d.source_line = std::string(text.substr(0, 1000));
    }
  } else {
    d.file = files_.empty() ? "<input>" : files_.front().name;
  }
  d.message = std::move(message);
  errors_.emplace_back(have_stmt_ ? cur_stmt_ : 0, std::move(d));
}

void Assembler::parse_file(int file) {
  SourceFile& f = files_[static_cast<size_t>(file)];
  const size_t nul = f.text.find('\0');
  if (nul != std::string::npos) {
    // Binary data: say so once rather than drowning the user in "unexpected character".
    const size_t line_start = f.text.rfind('\n', nul);
    const size_t start = line_start == std::string::npos ? 0 : line_start + 1;
    const int line = static_cast<int>(std::count(f.text.begin(), f.text.begin() + static_cast<long>(start), '\n')) + 1;
    f.lines = split_lines(f.text);
    add_statement(file, line, 1);
    error(static_cast<int>(nul - start) + 1,
          "binary data (a NUL byte) in the source: is this a .wsa text file?");
    return;
  }
  f.lines = split_lines(f.text);
  for (size_t i = 0; i < f.lines.size() && !too_many_errors(); ++i)
    parse_line(file, static_cast<int>(i) + 1, f.lines[i]);
}

void Assembler::parse_line(int file, int line, std::string_view text) {
  LexedLine lexed = lex_line(text);
  if (lexed.tokens.empty() && !lexed.error) return;
  const size_t s = add_statement(file, line, static_cast<int>(text.size()) + 1);
  if (lexed.error) {
    error(lexed.error->col, lexed.error->message);
    continued_item_.reset();
    return;
  }
  statements_[s].tokens = std::move(lexed.tokens);
  const std::vector<Token>& toks = statements_[s].tokens;

  if (continued_item_) {
    continue_values(s);
    return;
  }

  size_t pos = 0;
  std::vector<PendingLabel> labels;
  while (pos + 1 < toks.size() && toks[pos].kind == TokenKind::IDENT && toks[pos + 1].is(":")) {
    labels.push_back({std::string(toks[pos].text), s, toks[pos].col});
    pos += 2;
  }
  if (pos == toks.size()) {
    place_labels(labels);
    return;
  }
  const Token& head = toks[pos];
  if (head.kind == TokenKind::IDENT && head.text.starts_with(".")) {
    parse_directive(s, pos, labels);
    return;
  }
  if (head.kind == TokenKind::IDENT) {
    if (section_ == Section::DATA) {
      error(head.col, fmt::format("instruction '{}' in the .data section (switch back with .code)",
                                  head.text));
      return;
    }
    place_labels(labels);
    parse_instruction(s, pos);
    return;
  }
  if (head.kind == TokenKind::PUNCT && head.is(":") && pos == 0) {
    error(head.col, "a label needs a name before ':'");
    return;
  }
  error(head.col, fmt::format("expected a label, a directive or an instruction, found '{}'",
                              head.text.substr(0, 40)));
}

void Assembler::place_labels(std::vector<PendingLabel>& labels) {
  for (PendingLabel& l : labels) {
    if (section_ == Section::CODE) {
      set_stmt(l.stmt);
      define_code_label(l.name, l.stmt, l.col, static_cast<uint32_t>(instructions_.size()));
    } else {
      pending_data_labels_.push_back(std::move(l));
    }
  }
  labels.clear();
}

void Assembler::flush_pending_data_labels(std::string_view why) {
  const size_t keep = cur_stmt_;
  for (const PendingLabel& l : pending_data_labels_) {
    set_stmt(l.stmt);
    error(l.col, fmt::format("label '{}' in the .data section is not followed by data ({})", l.name, why));
  }
  pending_data_labels_.clear();
  set_stmt(keep);
}

bool Assembler::define_name(const std::string& name, NameKind kind, size_t index, size_t stmt, int col) {
  if (is_register_name(name)) {
    error(col, fmt::format("'{}' is a register name and cannot be defined", name));
    return false;
  }
  if (builtin_constant(name)) {
    error(col, fmt::format("'{}' is a builtin constant and cannot be redefined", name));
    return false;
  }
  if (name.starts_with(".")) {
    error(col, fmt::format("a name cannot start with '.' ('{}'): those are directives", name));
    return false;
  }
  auto [it, inserted] = names_.try_emplace(name, NameEntry{kind, index, stmt});
  if (!inserted) {
    const Statement& prev = statements_[it->second.stmt];
    error(col, fmt::format("'{}' is already defined at {}:{}", name,
                           files_[static_cast<size_t>(prev.file)].name, prev.line));
    return false;
  }
  return true;
}

void Assembler::define_code_label(const std::string& name, size_t stmt, int col, uint32_t index) {
  if (define_name(name, NameKind::CODE, code_labels_.size(), stmt, col))
    code_labels_.push_back({name, index, stmt, false});
}

void Assembler::parse_instruction(size_t s, size_t pos) {
  const Token& tok = statements_[s].tokens[pos];
  std::string_view word = tok.text;
  bool async = false;
  if (word.ends_with(".async")) {
    word.remove_suffix(6);
    async = true;
  }
  const InsnInfo* info = find_mnemonic(word);
  if (!info) {
    error(tok.col, fmt::format("unknown instruction '{}'{}", tok.text.substr(0, 60), mnemonic_hint(word)));
    return;
  }
  if (async && !is_vector(info->timing)) {
    error(tok.col, fmt::format("'{}' is not a vector operation; only vector operations take .async",
                               info->mnemonic));
    return;
  }
  if (instructions_.size() >= kMaxInstructions) {
    report_too_many_instructions(tok.col);
    return;
  }
  instructions_.push_back({s, info, async, pos + 1, tok.col, loc_of(s)});
}

// A `.task` whose name is not defined as a label anywhere defines it where the .task line
// stands (so that `.task recv, data, color 4` followed by code reads naturally).
void Assembler::define_task_labels() {
  for (TaskDecl& t : tasks_) {
    if (names_.count(t.name)) continue;
    set_stmt(t.stmt);
    if (!t.code_index) {
      error(t.name_col, fmt::format("task '{}' has no code: define the label '{}:' in .code, or put "
                                    "the .task line in .code just before the task's first instruction",
                                    t.name, t.name));
      t.failed = true;
      continue;
    }
    define_code_label(t.name, t.stmt, t.name_col, *t.code_index);
  }
}

void Assembler::report_too_many_instructions(int col) {
  if (too_many_instructions_) return;
  too_many_instructions_ = true;
  error(col, fmt::format("too many instructions: at most {} fit in the 64 KiB address space", kMaxInstructions));
}

bool Assembler::expect_end(TokenCursor& cur, std::string_view what) {
  if (cur.at_end()) return true;
  error(cur.col(), fmt::format("unexpected {} after {}", cur.describe_next(), what));
  return false;
}

bool Assembler::expect_punct(TokenCursor& cur, std::string_view punct, std::string_view what) {
  if (cur.accept(punct)) return true;
  error(cur.col(), fmt::format("expected '{}' {}, found {}", punct, what, cur.describe_next()));
  return false;
}

const Token* Assembler::expect_name(TokenCursor& cur, std::string_view wanted) {
  const Token* t = cur.peek();
  if (t && t->kind == TokenKind::IDENT) {
    cur.next();
    return t;
  }
  error(cur.col(), fmt::format("{} found {}", wanted, cur.describe_next()));
  return nullptr;
}

std::string Assembler::effective_arch() const {
  if (!options_.arch.empty()) return options_.arch;
  if (!arch_.empty()) return arch_;
  return "wse2";
}

AssembleResult Assembler::run(std::string source, std::string_view file_name, std::string path) {
  SourceFile main;
  main.name = std::string(file_name);
  main.path = std::move(path);
  main.text = std::move(source);
  files_.push_back(std::move(main));
  if (!files_.front().path.empty()) include_stack_.push_back(files_.front().path);
  if (!options_.arch.empty() && options_.arch != "wse2" && options_.arch != "wse3") {
    error(0, fmt::format("unknown architecture '{}' (wse2 or wse3)", options_.arch));
  } else {
    parse_file(0);
    if (continued_item_) {
      error(statements_[cur_stmt_].end_col, "the data values end with ',' but no more values follow");
      continued_item_.reset();
    }
    flush_pending_data_labels("end of input");
    define_task_labels();
    layout_data();
    for (EquDef& e : equs_) evaluate_equ(e);  // report errors in unused constants too
    resolve_tasks();
    resolve_dsds();
    resolve_queues();
    resolve_unblocks();
    resolve_exports();
    encode_instructions();
    fill_data();
  }

  AssembleResult result;
  std::stable_sort(errors_.begin(), errors_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  const size_t total = errors_.size();
  for (size_t i = 0; i < total && i < static_cast<size_t>(kMaxErrorsShown); ++i)
    result.errors.push_back(std::move(errors_[i].second));
  if (total > static_cast<size_t>(kMaxErrorsShown)) {
    Diagnostic d;
    d.file = files_.front().name;
    d.message = fmt::format("too many errors; stopped after {}", kMaxErrorsShown);
    result.errors.push_back(std::move(d));
  }
  if (result.errors.empty()) result.object = build_image();
  return result;
}

}  // namespace wsemu::isa::assembler
