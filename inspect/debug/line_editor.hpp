// A small line editor for the debugger's prompt: on a terminal, cursor keys, history, Home /
// End, Ctrl-A / E / K / U / W, Backspace, Delete; elsewhere (a pipe, a file, TERM=dumb) plain
// line reading. No readline dependency.
//
// Contract: read_line() returns the next line without its newline, or nullopt at the end of
// input (Ctrl-D on an empty line). The terminal is put in raw mode only while a line is being
// edited and is always restored, also when the process gets SIGINT/SIGTERM during the edit
// (the handlers restore it and re-raise). Never throws.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace wsemu::debug {

class LineEditor {
 public:
  // Edits on the terminal when both `in_fd` and `out_fd` are terminals and TERM is not dumb.
  LineEditor(int in_fd = 0, int out_fd = 1);
  bool interactive() const { return interactive_; }
  std::optional<std::string> read_line(const std::string& prompt);

 private:
  std::optional<std::string> edit(const std::string& prompt);
  void refresh(const std::string& prompt, const std::string& line, size_t cursor) const;

  int in_fd_, out_fd_;
  bool interactive_ = false;
  std::vector<std::string> history_;
};

}  // namespace wsemu::debug
