#include "runtime/wstrain/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace wsemu::wstrain {

ChildProcess::ChildProcess(std::string program, std::vector<std::string> args, std::filesystem::path stderr_log)
    : program_(std::move(program)), args_(std::move(args)), stderr_log_(std::move(stderr_log)) {}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exit_code_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

void ChildProcess::start() {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  const int log_fd = ::open(stderr_log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(fmt::format("cannot write {}: {}", stderr_log_.string(), std::strerror(errno)));
  }
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program_.c_str()));
  for (std::string& a : args_) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execv(program_.c_str(), argv.data());
    const std::string message = fmt::format("cannot run {}: {}\n", program_, std::strerror(errno));
    (void)!::write(STDERR_FILENO, message.data(), message.size());
    ::_exit(127);
  }
  ::close(fds[1]);
  ::close(log_fd);
  pid_ = pid;
  stdout_fd_ = fds[0];
  ::fcntl(stdout_fd_, F_SETFL, ::fcntl(stdout_fd_, F_GETFL) | O_NONBLOCK);
  ::fcntl(stdout_fd_, F_SETFD, FD_CLOEXEC);
}

std::vector<std::string> ChildProcess::read_available_lines() {
  std::vector<std::string> lines;
  char chunk[65536];
  while (!eof_) {
    const ssize_t n = ::read(stdout_fd_, chunk, sizeof chunk);
    if (n > 0) {
      buffer_.append(chunk, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) eof_ = true;
    else if (errno != EAGAIN && errno != EINTR) eof_ = true;
    break;
  }
  size_t start = 0;
  for (size_t nl; (nl = buffer_.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(buffer_.substr(start, nl - start));
  buffer_.erase(0, start);
  return lines;
}

int ChildProcess::wait() {
  if (exit_code_) return *exit_code_;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return *exit_code_;
}

void ChildProcess::kill_now() {
  if (pid_ > 0 && !exit_code_) ::kill(pid_, SIGKILL);
}

std::string ChildProcess::stderr_tail(size_t max_bytes) const {
  std::ifstream in(stderr_log_);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.size() > max_bytes) text = "..." + text.substr(text.size() - max_bytes);
  return text;
}

void wait_readable(const std::vector<int>& fds, std::chrono::milliseconds timeout) {
  std::vector<pollfd> p;
  for (int fd : fds) p.push_back({fd, POLLIN, 0});
  ::poll(p.data(), p.size(), static_cast<int>(timeout.count()));
}

}  // namespace wsemu::wstrain
