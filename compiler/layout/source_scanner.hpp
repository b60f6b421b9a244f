// The character cursor under the compiler's two hand-written lexers (the layout language's and
// CSL's): it walks one source text, counting 1-based lines and columns, and skips blanks and line
// comments.
//
// Contract: peek() past the end reads '\0'; advance() is only called before the end. The text
// must outlive the scanner.
#pragma once

#include <cstddef>
#include <string_view>

namespace wsemu::compiler {

class SourceScanner {
 protected:
  // `hash_comments`: '#' starts a comment as well as "//" (the layout language).
  SourceScanner(std::string_view text, bool hash_comments) : text_(text), hash_comments_(hash_comments) {}

  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        advance();
      } else if ((hash_comments_ && c == '#') || (c == '/' && peek(1) == '/')) {
        while (pos_ < text_.size() && text_[pos_] != '\n') advance();
      } else {
        return;
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;

 private:
  bool hash_comments_;
};

}  // namespace wsemu::compiler
