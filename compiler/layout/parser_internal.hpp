// Internal to the layout parser (parser.cpp: statements and expressions; parser_include.cpp:
// `include`): the Parser class the two share. Not part of the public API; include parser.hpp.
//
// The parser reads a token vector with one token of look-ahead. A syntax error is thrown as
// SyntaxError from where it is found and caught at statement level, where it is reported and
// the parser resynchronises (sync), so that one run reports each independent mistake once.
#pragma once

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/layout/lexer.hpp"
#include "compiler/layout/parser.hpp"

namespace wsemu::compiler::layout::detail {

// Thrown inside the parser only; caught at statement level, where the parser resynchronises.
struct SyntaxError {
  Loc loc;
  std::string message;
};

// The words that start a statement, where the parser resynchronises after an error.
inline constexpr std::string_view kTopKeywords[] = {"arch",  "fabric", "param",  "let",
                                                    "color", "rect",   "include"};
inline constexpr std::string_view kRectKeywords[] = {"let",   "program", "route",
                                                     "where", "export",  "include"};

// A token as an error message names it ("'rect'", "number 3", "end of file").
std::string describe(const Token& t);

class Parser {
 public:
  Parser(SourceText& source, std::vector<Token> tokens, const ParseOptions& options = {})
      : source_(source), tokens_(std::move(tokens)), options_(options) {
    std::error_code ec;
    open_files_.push_back(std::filesystem::weakly_canonical(source.file_name(), ec));
  }

  ParseResult run();
  ExprParseResult run_expression();

 private:
  // ---- token access -------------------------------------------------------------------
  const Token& peek(size_t ahead = 0) const {
    size_t i = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  bool at_end() const { return peek().kind == TokenKind::END; }
  const Token& next() {
    const Token& t = peek();
    if (t.kind == TokenKind::ERROR) throw SyntaxError{t.loc, t.text};
    if (pos_ < tokens_.size() - 1) ++pos_;
    return t;
  }
  bool is_punct(std::string_view p, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::PUNCT && peek(ahead).text == p;
  }
  bool is_word(std::string_view w, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::IDENT && peek(ahead).text == w;
  }
  bool accept_punct(std::string_view p) {
    if (!is_punct(p)) return false;
    next();
    return true;
  }
  [[noreturn]] void fail(Loc loc, std::string message) {
    throw SyntaxError{loc, std::move(message)};
  }
  void check_lexical() {
    if (peek().kind == TokenKind::ERROR) fail(peek().loc, peek().text);
  }
  const Token& expect_punct(std::string_view p, std::string_view what) {
    check_lexical();
    if (!is_punct(p))
      fail(peek().loc, "expected '" + std::string(p) + "' " + std::string(what) + ", found " +
                           describe(peek()));
    return next();
  }
  const Token& expect_ident(std::string_view what) {
    check_lexical();
    if (peek().kind != TokenKind::IDENT)
      fail(peek().loc, "expected " + std::string(what) + ", found " + describe(peek()));
    return next();
  }
  void expect_word(std::string_view w, std::string_view what) {
    check_lexical();
    if (!is_word(w))
      fail(peek().loc, "expected '" + std::string(w) + "' " + std::string(what) + ", found " +
                           describe(peek()));
    next();
  }

  void report(const SyntaxError& e) {
    errors_.push_back(source_.make(Severity::ERROR, e.loc, e.message));
  }
  void sync(std::span<const std::string_view> keywords, bool stop_at_close);

  // ---- statements (parser.cpp) --------------------------------------------------------
  void top_statement(LayoutAst& ast);
  Decl declaration(const Token& kw);
  RectAst rect(const Token& kw);
  void rect_item(RectAst& r, const std::vector<SharedExpr>& conditions);
  ProgramAst program(const Token& kw);
  DirSetAst dir_set(std::string_view what);
  RouteAst route(const Token& kw, const std::vector<SharedExpr>& conditions);
  ExportSymbolAst export_symbol(const Token& kw);
  ExportFunctionAst export_function(const Token& kw);
  // `export KIND HOST [= PROGRAM]`, into the AST's fields (the program's name is the host's
  // when there is no '=').
  struct ExportNames {
    Loc& loc;  // of the `export` keyword
    Loc& host_loc;
    std::string& host;
    Loc& program_loc;
    std::string& program;
  };
  void export_names(const Token& kw, std::string_view host_what, std::string_view program_what, ExportNames names);

  // ---- include (parser_include.cpp) ---------------------------------------------------
  void include(const Token& kw, std::span<const std::string_view> keywords,
               const std::function<void()>& statement);
  std::filesystem::path find_include_file(const Token& path_token) const;
  void check_include_cycle(const Token& path_token, const std::filesystem::path& found,
                           const std::filesystem::path& canonical);

  // ---- expressions (parser.cpp) -------------------------------------------------------
  ExprPtr expression();
  ExprPtr binary_level(size_t level);
  ExprPtr unary();
  ExprPtr primary();
  ExprPtr call(const Token& name);

  SourceText& source_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::vector<Diagnostic> errors_;
  ParseOptions options_;
  // The files being parsed, outermost first (canonical paths, to find include cycles), and
  // their SourceText indices.
  std::vector<std::filesystem::path> open_files_;
  std::vector<int> open_file_index_ = {0};
};

}  // namespace wsemu::compiler::layout::detail
