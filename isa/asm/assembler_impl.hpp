// The assembler's internal state and phases (private to isa/asm; the public API is
// isa/assembler.hpp).
//
// Phases, each in its own file:
//   1. parse (parse.cpp, directives.cpp, data_directives.cpp): read every line of the source and
//      its includes, define every name (labels, data symbols, constants, parameters,
//      descriptors, tasks) and record what to evaluate later. One instruction per line, so code
//      label indices are final here.
//   2. layout (layout.cpp): data_base follows the code; data items get their offsets in source
//      order. Sizes may only use what is known at that point.
//   3. resolve (resolve.cpp): tasks, descriptors, queue bindings, exports.
//   4. encode (operands.cpp): instruction operands, then data initialisers (layout.cpp).
//   5. build (build.cpp): the ObjectImage.
// Every error is recorded against the statement being processed (cur_stmt_) and sorted into
// source order at the end; nothing here throws on bad input.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "isa/asm/expression.hpp"
#include "isa/asm/lexer.hpp"
#include "isa/asm/source.hpp"
#include "isa/assembler.hpp"
#include "isa/instruction.hpp"
#include "isa/object.hpp"

namespace wsemu::isa::assembler {

constexpr int kMaxErrorsShown = 50;
constexpr int kMaxErrorsKept = 200;      // collection stops here (bounds memory on huge inputs)
constexpr int kMaxIncludeDepth = 32;
constexpr int kMaxConstantDepth = 64;    // .equ defined through .equ through ...
constexpr uint32_t kAddressSpace = 65536;  // descriptor bases and labels are 16-bit
constexpr uint32_t kMaxInstructions = kAddressSpace / 8;

struct Statement {
  int file = 0;
  int line = 0;  // 1-based
  int end_col = 1;
  std::vector<Token> tokens;
};

enum class Section { CODE, DATA };
enum class NameKind { EQU, PARAM, DATA, CODE, DSD };

struct NameEntry {
  NameKind kind;
  size_t index;  // into the vector of that kind
  size_t stmt;   // where it was defined
};

struct EquDef {
  enum class State { NEW, BUSY, DONE, FAILED };
  std::string name;
  size_t stmt = 0;
  size_t expr_pos = 0;
  State state = State::NEW;
  Value value;
};

struct ParamDef {
  std::string name;
  int64_t value = 0;
  bool missing = false;  // reported at the .param line; uses fail silently
};

struct DataItem {
  enum class Kind { ZERO, VALUES, ALIGN };
  Kind kind = Kind::ZERO;
  size_t stmt = 0;
  ElemType type = ElemType::U32;
  size_t count_pos = 0;            // ZERO: the count expression; ALIGN: the alignment
  std::vector<std::pair<size_t, size_t>> value_pos;  // VALUES: (statement, token) of each value
  std::vector<size_t> symbols;     // data symbols naming this item
  uint32_t offset = 0;             // from data_base
  uint32_t count = 0;
};

struct DataSymbol {
  Symbol symbol;  // address and count are filled in by the layout
  size_t item = 0;
  size_t stmt = 0;
  bool laid_out = false;
};

struct CodeLabel {
  std::string name;
  uint32_t index = 0;
  size_t stmt = 0;
  bool exported = false;
};

struct InsnStmt {
  size_t stmt = 0;
  const InsnInfo* info = nullptr;  // nullptr: a raw .word
  bool async = false;
  size_t operand_pos = 0;
  int mnemonic_col = 1;
  SourceLocation loc;  // the .loc in force (file 0: none)
};

struct DsdDecl {
  std::string name;
  size_t stmt = 0;
  size_t kind_pos = 0;  // token of the kind (mem1d, fabin.16, ...)
  int explicit_dsr = -1;
  int explicit_dsr_col = 1;
  int dsr = -1;
  Descriptor value;
};

struct TaskDecl {
  std::string name;
  size_t stmt = 0;
  int name_col = 1;
  size_t kind_pos = 0;
  std::optional<uint32_t> code_index;  // where the .task line stood, when in .code
  TaskBinding binding;
  bool resolved = false;
  bool busy = false;
  bool failed = false;
};

struct QueueDecl {
  size_t stmt = 0;
  bool output = false;
  size_t pos = 0;
};

struct UnblockDecl {
  size_t stmt = 0;
  size_t pos = 0;
};

struct ExportDecl {
  std::string name;
  size_t stmt = 0;
  int col = 1;
};

struct PendingLabel {
  std::string name;
  size_t stmt = 0;
  int col = 1;
};

class Assembler : public ExprContext {
 public:
  explicit Assembler(const AssembleOptions& options) : options_(options) {}
  AssembleResult run(std::string source, std::string_view file_name, std::string path);

  // ExprContext
  Status name_value(const Token& name, Value& out) override;
  Status size_of(const Token& name, int64_t& out) override;
  std::optional<int64_t> task_id(std::string_view name) override;
  void error(int col, std::string message) override;

 private:
  // ---- parse.cpp ----
  void parse_file(int file);
  void parse_line(int file, int line, std::string_view text);
  void define_code_label(const std::string& name, size_t stmt, int col, uint32_t index);
  void flush_pending_data_labels(std::string_view why);
  bool define_name(const std::string& name, NameKind kind, size_t index, size_t stmt, int col);
  void parse_instruction(size_t stmt, size_t pos);
  void place_labels(std::vector<PendingLabel>& labels);
  void define_task_labels();
  size_t add_statement(int file, int line, int end_col);
  void report_too_many_instructions(int col);
  // ---- directives.cpp ----
  void parse_directive(size_t stmt, size_t pos, std::vector<PendingLabel>& labels);
  void directive_include(size_t stmt, TokenCursor& cur);
  void directive_arch(size_t stmt, TokenCursor& cur);
  void directive_param(size_t stmt, TokenCursor& cur);
  void directive_equ(size_t stmt, TokenCursor& cur);
  void directive_export(size_t stmt, TokenCursor& cur);
  void directive_dsd(size_t stmt, TokenCursor& cur);
  void directive_task(size_t stmt, TokenCursor& cur);
  template <typename Decl>
  void declare_for_later(std::vector<Decl>& decls, size_t Decl::*rest_field, NameKind kind, const Token& name,
                         size_t stmt, size_t rest_pos);
  // ---- data_directives.cpp ----
  void directive_data(size_t stmt, TokenCursor& cur, ElemType type, int directive_col,
                      std::vector<PendingLabel>& labels);
  void directive_align(size_t stmt, TokenCursor& cur);
  // Records the comma-separated values from `pos` on; returns false when the line ends with
  // ',' (the values continue on the next line).
  bool collect_values(DataItem& item, size_t stmt, size_t pos);
  void continue_values(size_t stmt);
  // ---- layout.cpp ----
  void layout_data();
  void fill_data();
  // ---- resolve.cpp ----
  void resolve_tasks();
  void resolve_task(TaskDecl& task);
  void resolve_dsds();
  bool resolve_dsd(DsdDecl& dsd);
  void resolve_queues();
  void resolve_unblocks();
  void resolve_exports();
  // ---- operands.cpp ----
  void encode_instructions();
  bool encode_instruction(const InsnStmt& insn, uint64_t& word);
  // ---- build.cpp ----
  ObjectImage build_image();

  // Helpers shared by the phases.
  Statement& stmt(size_t i) { return statements_[i]; }
  TokenCursor cursor(size_t stmt, size_t pos) {
    return TokenCursor(statements_[stmt].tokens, pos, statements_[stmt].end_col);
  }
  void set_stmt(size_t s) { cur_stmt_ = s; }
  bool expect_end(TokenCursor& cur, std::string_view what);
  void directive_loc(size_t s, TokenCursor& cur);
  SourceLocation loc_of(size_t s) const {
    return statements_[s].file == current_loc_file_ ? current_loc_ : SourceLocation{};
  }
  bool expect_punct(TokenCursor& cur, std::string_view punct, std::string_view what);
  // Takes the identifier at the cursor; anything else is reported as "`wanted` found ..." (null).
  const Token* expect_name(TokenCursor& cur, std::string_view wanted);
  Status evaluate_equ(EquDef& equ, int use_col = 1);
  // Parses an integer and checks it is within [lo, hi]; `what` names it in the message.
  bool parse_int_in(TokenCursor& cur, int64_t lo, int64_t hi, std::string_view what, int64_t& out);
  bool parse_task_in(TokenCursor& cur, std::string_view what, int64_t& out);
  bool parse_in_range(TokenCursor& cur, Status (*parse)(TokenCursor&, ExprContext&, int64_t&), int64_t lo, int64_t hi,
                      std::string_view what, int64_t& out);
  std::string effective_arch() const;
  bool too_many_errors() const { return static_cast<int>(errors_.size()) >= kMaxErrorsKept; }

  const AssembleOptions& options_;
  SourceFiles files_;
  std::vector<Statement> statements_;
  size_t cur_stmt_ = 0;
  bool have_stmt_ = false;
  std::vector<std::pair<size_t, Diagnostic>> errors_;  // (statement, diagnostic)
  std::vector<std::string> include_stack_;             // canonical paths being parsed

  Section section_ = Section::CODE;
  std::vector<PendingLabel> pending_data_labels_;
  std::optional<size_t> continued_item_;  // a data directive whose line ended with ','
  int equ_depth_ = 0;
  bool too_many_instructions_ = false;
  bool include_failed_ = false;  // then undefined names are likely its fault: not reported
  std::string arch_;  // from .arch
  size_t arch_stmt_ = 0;

  std::unordered_map<std::string, NameEntry> names_;
  std::vector<EquDef> equs_;
  std::vector<ParamDef> params_;
  std::vector<DataItem> data_items_;
  std::vector<DataSymbol> data_symbols_;
  std::vector<CodeLabel> code_labels_;
  std::vector<InsnStmt> instructions_;
  SourceLocation current_loc_;            // set by .loc, given to each following instruction
  int current_loc_file_ = -1;             // ... of the same source file (not of an .include)
  std::vector<std::string> loc_files_;    // the files .loc named, in first-use order
  std::vector<DsdDecl> dsds_;
  std::vector<TaskDecl> tasks_;
  std::vector<QueueDecl> queue_decls_;
  std::vector<UnblockDecl> unblock_decls_;
  std::vector<uint8_t> unblocked_ids_;
  std::vector<ExportDecl> exports_;
  std::unordered_map<std::string, size_t> task_index_;  // task name -> tasks_

  // Results of the later phases.
  bool layout_done_ = false;
  uint32_t data_base_ = 0;
  uint32_t data_size_ = 0;
  std::vector<uint8_t> data_;
  std::vector<uint64_t> code_;
  std::vector<uint32_t> source_lines_;
  std::vector<std::string> strings_;
  std::unordered_map<std::string, uint16_t> string_index_;
  std::vector<QueueBinding> queues_;
};

// Names the assembler reserves: registers and builtin constants.
bool is_register_name(std::string_view name);
std::optional<int> parse_register(std::string_view name);    // r0..r15
std::optional<int> parse_dsr_name(std::string_view name);    // d0..d47
std::optional<int64_t> builtin_constant(std::string_view name);

}  // namespace wsemu::isa::assembler
