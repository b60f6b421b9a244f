// Phase 1: directives other than data (see assembler_impl.hpp for the phases).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "isa/asm/assembler_impl.hpp"

namespace wsemu::isa::assembler {
namespace {

namespace fs = std::filesystem;

constexpr uintmax_t kMaxSourceBytes = 64u << 20;

const std::pair<std::string_view, ElemType> kDataDirectives[] = {
    {".i16", ElemType::I16}, {".u16", ElemType::U16}, {".i32", ElemType::I32},
    {".u32", ElemType::U32}, {".f16", ElemType::F16}, {".f32", ElemType::F32},
};

constexpr std::string_view kDirectives[] = {
    ".arch", ".param", ".equ", ".include", ".code", ".data", ".i16", ".u16", ".i32", ".u32",
    ".f16", ".f32", ".align", ".export", ".dsd", ".task", ".iqinit", ".oqinit", ".unblock", ".word", ".loc"};

std::string directive_hint(std::string_view word) {
  for (std::string_view d : kDirectives) {
    size_t common = 0;
    while (common < d.size() && common < word.size() && d[common] == word[common]) ++common;
    if (word.size() >= 3 && common + 1 >= std::min(d.size(), word.size()) && common >= 2)
      return fmt::format(" (did you mean '{}'?)", d);
  }
  return "";
}

std::string canonical_path(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal().string() : c.string();
}

}  // namespace

void Assembler::parse_directive(size_t s, size_t pos, std::vector<PendingLabel>& labels) {
  const Token& head = statements_[s].tokens[pos];
  const std::string_view name = head.text;
  TokenCursor cur = cursor(s, pos + 1);
  for (const auto& [dname, type] : kDataDirectives) {
    if (name == dname) {
      directive_data(s, cur, type, head.col, labels);
      return;
    }
  }
  place_labels(labels);
  using Handler = void (Assembler::*)(size_t, TokenCursor&);
  static constexpr std::pair<std::string_view, Handler> kHandlers[] = {
      {".align", &Assembler::directive_align},   {".loc", &Assembler::directive_loc},
      {".include", &Assembler::directive_include}, {".arch", &Assembler::directive_arch},
      {".param", &Assembler::directive_param},   {".equ", &Assembler::directive_equ},
      {".export", &Assembler::directive_export}, {".dsd", &Assembler::directive_dsd},
      {".task", &Assembler::directive_task},
  };
  for (const auto& [handled, handler] : kHandlers)
    if (name == handled) return (this->*handler)(s, cur);
  if (name == ".code" || name == ".data") {
    if (!expect_end(cur, name)) return;
    if (name == ".code" && section_ == Section::DATA && !pending_data_labels_.empty())
      flush_pending_data_labels("the .code section starts");
    section_ = name == ".code" ? Section::CODE : Section::DATA;
  } else if (name == ".word") {
    if (section_ != Section::CODE) {
      error(head.col, ".word (a raw instruction word) belongs in the .code section");
      return;
    }
    if (cur.at_end()) {
      error(cur.col(), ".word needs a value: the 64-bit instruction word");
      return;
    }
    if (instructions_.size() >= kMaxInstructions) {
      report_too_many_instructions(head.col);
      return;
    }
    instructions_.push_back({s, nullptr, false, pos + 1, head.col, loc_of(s)});
  } else if (name == ".iqinit" || name == ".oqinit") {
    if (cur.at_end()) {
      error(cur.col(), fmt::format("{} needs a queue and a color: {} Q, C", name, name));
      return;
    }
    queue_decls_.push_back({s, name == ".oqinit", cur.pos()});
  } else if (name == ".unblock") {
    if (cur.at_end()) {
      error(cur.col(), ".unblock needs a task id: .unblock ID");
      return;
    }
    unblock_decls_.push_back({s, cur.pos()});
  } else {
    error(head.col, fmt::format("unknown directive '{}'{}", name.substr(0, 60), directive_hint(name)));
  }
}

// `.loc "pe.csl", LINE[, COL]`: the following instructions come from that place of the source
// the assembly was generated from (the line table of the object; fault and hang reports name it).
// It holds until the next .loc of the same file (a bare `.loc` ends it); an .include'd file's code
// is not covered.
void Assembler::directive_loc(size_t s, TokenCursor& cur) {
  current_loc_file_ = statements_[s].file;
  if (cur.at_end()) {  // a bare .loc: the following instructions have no location
    current_loc_ = {};
    return;
  }
  const Token* t = cur.peek();
  if (!t || t->kind != TokenKind::STRING || t->str.empty() || t->str.size() > 4096 ||
      t->str.find('\0') != std::string::npos) {
    error(cur.col(), fmt::format(".loc needs a file name in quotes: .loc \"FILE\", LINE[, COL]; found {}", cur.describe_next()));
    return;
  }
  const std::string file = t->str;
  cur.next();
  int64_t line = 0, col = 0;
  if (!expect_punct(cur, ",", "after the .loc file name") || !parse_int_in(cur, 1, 0xFFFFFFF, ".loc line", line)) return;
  if (cur.accept(",") && !parse_int_in(cur, 1, 0xFFFF, ".loc column", col)) return;
  if (!expect_end(cur, "the .loc line and column")) return;
  size_t index = 0;
  while (index < loc_files_.size() && loc_files_[index] != file) ++index;
  if (index == loc_files_.size()) loc_files_.push_back(file);
  current_loc_ = {static_cast<uint32_t>(index + 1), static_cast<uint32_t>(line), static_cast<uint32_t>(col)};
}

void Assembler::directive_include(size_t s, TokenCursor& cur) {
  const Token* t = cur.peek();
  if (!t || t->kind != TokenKind::STRING) {
    error(cur.col(), fmt::format(".include needs a file name in quotes, found {}", cur.describe_next()));
    return;
  }
  const int col = t->col;
  const std::string file = t->str;
  cur.next();
  if (!expect_end(cur, "the .include file name")) return;
  if (include_stack_.size() >= static_cast<size_t>(kMaxIncludeDepth)) {
    include_failed_ = true;
    error(col, fmt::format(".include nested more than {} deep", kMaxIncludeDepth));
    return;
  }
  if (file.empty() || file.find('\0') != std::string::npos) {
    error(col, "the .include file name is empty or not a valid path");
    return;
  }
  const SourceFile& including = files_[static_cast<size_t>(statements_[s].file)];
  std::vector<fs::path> candidates;
  const fs::path wanted(file);
  if (wanted.is_absolute()) {
    candidates.push_back(wanted);
  } else {
    candidates.push_back(fs::path(including.name).parent_path() / wanted);
    for (const std::string& dir : options_.include_dirs) candidates.push_back(fs::path(dir) / wanted);
  }
  std::error_code ec;
  const fs::path* found = nullptr;
  for (const fs::path& c : candidates) {
    if (fs::is_regular_file(c, ec)) {
      found = &c;
      break;
    }
  }
  if (!found) {
    std::string searched;
    for (const fs::path& c : candidates) searched += (searched.empty() ? "" : ", ") + c.string();
    include_failed_ = true;
    error(col, fmt::format("cannot find include file '{}' (searched {})", file, searched));
    return;
  }
  const std::string canon = canonical_path(*found);
  for (size_t i = 0; i < include_stack_.size(); ++i) {
    if (include_stack_[i] != canon) continue;
    std::string chain;
    for (size_t j = i; j < include_stack_.size(); ++j) chain += fs::path(include_stack_[j]).filename().string() + " -> ";
    include_failed_ = true;
    error(col, fmt::format("include cycle: {}{}", chain, fs::path(canon).filename().string()));
    return;
  }
  const uintmax_t size = fs::file_size(*found, ec);
  if (ec || size > kMaxSourceBytes) {
    include_failed_ = true;
    error(col, fmt::format("include file '{}' is unreadable or larger than 64 MiB", found->string()));
    return;
  }
  std::ifstream in(*found, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    include_failed_ = true;
    error(col, fmt::format("cannot read include file '{}'", found->string()));
    return;
  }
  SourceFile inc;
  inc.name = found->lexically_normal().string();
  inc.path = canon;
  inc.text = std::move(text).str();
  files_.push_back(std::move(inc));
  const int index = static_cast<int>(files_.size()) - 1;
  include_stack_.push_back(canon);
  const Section section = section_;
  parse_file(index);
  if (continued_item_) {
    error(statements_[cur_stmt_].end_col, "the data values end with ',' at the end of an included file");
    continued_item_.reset();
  }
  section_ = section;  // an included file cannot leave the includer in another section
  include_stack_.pop_back();
  set_stmt(s);
}

void Assembler::directive_arch(size_t s, TokenCursor& cur) {
  const Token* t = cur.peek();
  if (!t || t->kind != TokenKind::IDENT || (t->text != "wse2" && t->text != "wse3")) {
    error(cur.col(), fmt::format(".arch needs wse2 or wse3, found {}", cur.describe_next()));
    return;
  }
  const std::string arch(t->text);
  const int col = t->col;
  cur.next();
  if (!expect_end(cur, ".arch")) return;
  if (!arch_.empty() && arch_ != arch) {
    const Statement& prev = statements_[arch_stmt_];
    error(col, fmt::format(".arch {} contradicts .arch {} at {}:{}", arch, arch_,
                           files_[static_cast<size_t>(prev.file)].name, prev.line));
    return;
  }
  if (!options_.arch.empty() && options_.arch != arch) {
    error(col, fmt::format("this program is written for {} but is being assembled for {}", arch,
                           options_.arch));
    return;
  }
  arch_ = arch;
  arch_stmt_ = s;
}

void Assembler::directive_param(size_t s, TokenCursor& cur) {
  do {
    const Token* t = expect_name(cur, ".param needs parameter names,");
    if (!t) return;
    const std::string name(t->text);
    ParamDef p{name, 0, false};
    auto it = options_.params.find(name);
    if (it == options_.params.end()) {
      p.missing = true;
      error(t->col, fmt::format("parameter '{}' has no value (pass --param {}=... or set it in the layout)",
                                name, name));
    } else {
      p.value = it->second;
    }
    if (define_name(name, NameKind::PARAM, params_.size(), s, t->col)) params_.push_back(p);
  } while (cur.accept(","));
  expect_end(cur, "the .param names");
}

// A .equ or .dsd: its name, statement and where the rest starts (read by a later phase, once
// every name is known), kept when the name is new.
template <typename Decl>
void Assembler::declare_for_later(std::vector<Decl>& decls, size_t Decl::*rest_field, NameKind kind, const Token& name,
                                  size_t s, size_t rest_pos) {
  Decl d;
  d.name = std::string(name.text);
  d.stmt = s;
  d.*rest_field = rest_pos;
  if (define_name(d.name, kind, decls.size(), s, name.col)) decls.push_back(std::move(d));
}

void Assembler::directive_equ(size_t s, TokenCursor& cur) {
  const Token* t = expect_name(cur, ".equ needs a name: .equ NAME, value;");
  if (!t) return;
  if (!expect_punct(cur, ",", "after the .equ name")) return;
  if (cur.at_end()) {
    error(cur.col(), fmt::format(".equ {} needs a value", t->text));
    return;
  }
  declare_for_later(equs_, &EquDef::expr_pos, NameKind::EQU, *t, s, cur.pos());
}

void Assembler::directive_export(size_t s, TokenCursor& cur) {
  do {
    const Token* t = expect_name(cur, ".export needs symbol or function names,");
    if (!t) return;
    exports_.push_back({std::string(t->text), s, t->col});
  } while (cur.accept(","));
  expect_end(cur, "the .export names");
}

void Assembler::directive_dsd(size_t s, TokenCursor& cur) {
  const Token* t = expect_name(cur, ".dsd needs a name: .dsd NAME = mem1d(...);");
  if (!t) return;
  if (!expect_punct(cur, "=", "after the .dsd name")) return;
  const Token* kind = cur.peek();
  if (!kind || kind->kind != TokenKind::IDENT) {
    error(cur.col(), fmt::format("expected a descriptor kind (mem1d, mem4d, circbuf, fabin, fabout, fifo), found {}",
                                 cur.describe_next()));
    return;
  }
  declare_for_later(dsds_, &DsdDecl::kind_pos, NameKind::DSD, *t, s, cur.pos());
}

void Assembler::directive_task(size_t s, TokenCursor& cur) {
  const Token* t = expect_name(cur, ".task needs a name: .task NAME, data|local|control, ...;");
  if (!t) return;
  if (!expect_punct(cur, ",", "after the task name")) return;
  TaskDecl task;
  task.name = std::string(t->text);
  task.stmt = s;
  task.name_col = t->col;
  task.kind_pos = cur.pos();
  if (section_ == Section::CODE) task.code_index = static_cast<uint32_t>(instructions_.size());
  task.binding.name = task.name;
  if (is_register_name(task.name) || builtin_constant(task.name)) {
    error(t->col, fmt::format("'{}' is reserved and cannot name a task", task.name));
    return;
  }
  auto [it, inserted] = task_index_.try_emplace(task.name, tasks_.size());
  if (!inserted) {
    const Statement& prev = statements_[tasks_[it->second].stmt];
    error(t->col, fmt::format("task '{}' is already declared at {}:{}", task.name,
                              files_[static_cast<size_t>(prev.file)].name, prev.line));
    return;
  }
  tasks_.push_back(std::move(task));
}

}  // namespace wsemu::isa::assembler
