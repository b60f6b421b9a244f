#include "inspect/debug/line_editor.hpp"

#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

namespace wsemu::debug {

namespace {

// The terminal state to restore from a signal handler (one editor edits at a time).
struct termios g_saved;
int g_saved_fd = -1;

void restore_terminal() {
  if (g_saved_fd >= 0) tcsetattr(g_saved_fd, TCSAFLUSH, &g_saved);
  g_saved_fd = -1;
}

void on_signal(int sig) {
  restore_terminal();
  signal(sig, SIG_DFL);
  raise(sig);
}

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n <= 0) return;
    done += size_t(n);
  }
}

int read_byte(int fd) {
  unsigned char c;
  const ssize_t n = ::read(fd, &c, 1);
  return n == 1 ? c : -1;
}

}  // namespace

LineEditor::LineEditor(int in_fd, int out_fd) : in_fd_(in_fd), out_fd_(out_fd) {
  const char* term = std::getenv("TERM");
  interactive_ = isatty(in_fd) && isatty(out_fd) && term && std::strcmp(term, "dumb") != 0;
}

std::optional<std::string> LineEditor::read_line(const std::string& prompt) {
  if (!interactive_) {
    std::cout << prompt << std::flush;
    std::string line;
    if (!std::getline(std::cin, line)) return std::nullopt;
    return line;
  }
  std::cout.flush();
  struct termios raw;
  if (tcgetattr(in_fd_, &g_saved) != 0) {
    interactive_ = false;
    return read_line(prompt);
  }
  raw = g_saved;
  raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN);
  raw.c_iflag &= ~tcflag_t(IXON | ICRNL);
  raw.c_cc[VMIN] = 1;
  raw.c_cc[VTIME] = 0;
  g_saved_fd = in_fd_;
  struct sigaction sa {}, old_int {}, old_term {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  tcsetattr(in_fd_, TCSAFLUSH, &raw);
  std::optional<std::string> line = edit(prompt);
  restore_terminal();
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  write_all(out_fd_, "\r\n");
  if (line && !line->empty() && (history_.empty() || history_.back() != *line)) history_.push_back(*line);
  return line;
}

void LineEditor::refresh(const std::string& prompt, const std::string& line, size_t cursor) const {
  std::string s = "\r" + prompt + line + "\x1b[K";  // rewrite the line, clear to its end
  if (cursor < line.size()) s += "\x1b[" + std::to_string(line.size() - cursor) + "D";
  write_all(out_fd_, s);
}

std::optional<std::string> LineEditor::edit(const std::string& prompt) {
  std::string line;
  size_t cursor = 0;
  size_t hist = history_.size();  // history_.size(): the line being typed
  std::string typed;
  refresh(prompt, line, cursor);
  while (true) {
    const int c = read_byte(in_fd_);
    if (c < 0) return line.empty() ? std::nullopt : std::optional<std::string>(line);
    switch (c) {
      case '\r':
      case '\n': return line;
      case 4:  // Ctrl-D: end of input on an empty line, else delete under the cursor
        if (line.empty()) return std::nullopt;
        if (cursor < line.size()) line.erase(cursor, 1);
        break;
      case 3:  // Ctrl-C: drop the line
        write_all(out_fd_, "^C");
        return std::string();
      case 1: cursor = 0; break;             // Ctrl-A
      case 5: cursor = line.size(); break;   // Ctrl-E
      case 11: line.erase(cursor); break;    // Ctrl-K
      case 21: line.erase(0, cursor), cursor = 0; break;  // Ctrl-U
      case 23: {  // Ctrl-W: the word before the cursor
        size_t start = cursor;
        while (start > 0 && line[start - 1] == ' ') --start;
        while (start > 0 && line[start - 1] != ' ') --start;
        line.erase(start, cursor - start);
        cursor = start;
        break;
      }
      case 127:
      case 8:
        if (cursor > 0) line.erase(--cursor, 1);
        break;
      case 27: {  // escape sequences: arrows, Home, End, Delete
        const int a = read_byte(in_fd_);
        if (a != '[' && a != 'O') break;
        int b = read_byte(in_fd_);
        int tilde_code = -1;
        if (b >= '0' && b <= '9') {
          tilde_code = b - '0';
          if (read_byte(in_fd_) != '~') break;
        }
        auto recall = [&](size_t to) {
          if (hist == history_.size()) typed = line;
          hist = to;
          line = hist == history_.size() ? typed : history_[hist];
          cursor = line.size();
        };
        if (b == 'A' && hist > 0) recall(hist - 1);
        else if (b == 'B' && hist < history_.size()) recall(hist + 1);
        else if (b == 'C' && cursor < line.size()) ++cursor;
        else if (b == 'D' && cursor > 0) --cursor;
        else if (b == 'H' || tilde_code == 1 || tilde_code == 7) cursor = 0;
        else if (b == 'F' || tilde_code == 4 || tilde_code == 8) cursor = line.size();
        else if (tilde_code == 3 && cursor < line.size()) line.erase(cursor, 1);
        break;
      }
      default:
        if (c >= 32) line.insert(cursor++, 1, char(c));
        break;
    }
    refresh(prompt, line, cursor);
  }
}

}  // namespace wsemu::debug
