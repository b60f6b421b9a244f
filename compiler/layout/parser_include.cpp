// `include "file.wsl"` in the layout parser: the file search, include-cycle detection and the
// swap of the included file's tokens in place of the including file's.
#include <fstream>
#include <sstream>

#include "compiler/layout/parser_internal.hpp"

namespace wsemu::compiler::layout::detail {

namespace fs = std::filesystem;

// The including file's folder first, then the include folders, as `.include` in programs.
fs::path Parser::find_include_file(const Token& path_token) const {
  const std::string& name = path_token.text;
  const fs::path here = fs::path(source_.file_name(path_token.loc.file)).parent_path();
  std::vector<fs::path> candidates;
  if (fs::path(name).is_absolute()) {
    candidates.push_back(name);
  } else {
    candidates.push_back(here / name);
    for (const std::string& dir : options_.include_dirs) candidates.push_back(fs::path(dir) / name);
  }
  std::error_code ec;
  for (const fs::path& c : candidates)
    if (fs::is_regular_file(c, ec)) return c.lexically_normal();
  std::string looked;
  for (const fs::path& c : candidates)
    looked += (looked.empty() ? "" : ", ") + c.lexically_normal().string();
  throw SyntaxError{path_token.loc,
                    "include file '" + name + "' not found (looked for " + looked + ")"};
}

void Parser::check_include_cycle(const Token& path_token, const fs::path& found,
                                 const fs::path& canonical) {
  for (size_t i = 0; i < open_files_.size(); ++i) {
    if (open_files_[i] != canonical) continue;
    std::string chain;
    for (size_t j = i; j < open_files_.size(); ++j)
      chain += source_.file_name(open_file_index_[j]) + " -> ";
    fail(path_token.loc, "include cycle: " + chain + found.string() + " (a file may not include "
                         "itself, directly or through other files)");
  }
}

// Parses the file's statements with `statement` (the statement kind of the place of the
// include) as if they stood here. The file's tokens temporarily replace the rest of the
// including file's, so every error inside it is reported and recovered from within the file,
// and the file must hold whole statements (a '}' cannot close the rect).
void Parser::include(const Token& kw, std::span<const std::string_view> keywords,
                     const std::function<void()>& statement) {
  check_lexical();
  if (peek().kind != TokenKind::STRING)
    fail(peek().loc, "expected the included file's name as a string (include \"file.wsl\"), "
                     "found " + describe(peek()));
  const Token path_token = next();
  if (path_token.text.empty()) fail(path_token.loc, "empty include file name");

  const fs::path found = find_include_file(path_token);
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(found, ec);
  check_include_cycle(path_token, found, canonical);

  std::ifstream in(found, std::ios::binary);
  std::stringstream text;
  if (in) text << in.rdbuf();
  if (!in || in.bad()) fail(path_token.loc, "cannot read include file '" + found.string() + "'");
  const std::string contents = text.str();
  const int file = source_.add_file(found.string(), contents, kw.loc);
  std::vector<Token> tokens = tokenize(contents);
  for (Token& t : tokens) t.loc.file = file;

  // Swap the file's tokens in; restore the including file's on every way out.
  struct Restore {
    Parser& p;
    std::vector<Token> tokens;
    size_t pos;
    ~Restore() {
      p.tokens_ = std::move(tokens);
      p.pos_ = pos;
      p.open_files_.pop_back();
      p.open_file_index_.pop_back();
    }
  } restore{*this, std::move(tokens_), pos_};
  tokens_ = std::move(tokens);
  pos_ = 0;
  open_files_.push_back(canonical);
  open_file_index_.push_back(file);
  while (!at_end()) {
    try {
      if (is_punct("}"))
        fail(peek().loc, "'}' without a matching '{' in an included file (an included file "
                         "holds whole statements; it cannot close the block around the include)");
      statement();
    } catch (const SyntaxError& e) {
      report(e);
      sync(keywords, /*stop_at_close=*/false);
    }
  }
}

}  // namespace wsemu::compiler::layout::detail
