// A child process whose standard output the parent reads line by line (the orchestrator's wafer
// workers). POSIX fork/exec; the child's stderr goes to a log file so that its messages survive.
//
// Contract: start() throws std::runtime_error when the program cannot be started; the child
// is killed (SIGKILL) and reaped by the destructor if it is still running, so no worker
// outlives an orchestrator that failed. read_lines() never blocks longer than its timeout.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace wsemu::wstrain {

class ChildProcess {
 public:
  ChildProcess(std::string program, std::vector<std::string> args, std::filesystem::path stderr_log);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  void start();
  int stdout_fd() const { return stdout_fd_; }
  // Reads what is available on stdout and returns the complete lines; sets eof() at the end.
  std::vector<std::string> read_available_lines();
  bool eof() const { return eof_; }
  // Waits for the exit; returns the exit code (128 + signal when killed).
  int wait();
  std::optional<int> exit_code() const { return exit_code_; }
  void kill_now();
  const std::filesystem::path& stderr_log() const { return stderr_log_; }
  std::string stderr_tail(size_t max_bytes = 2000) const;
  pid_t pid() const { return pid_; }

 private:
  std::string program_;
  std::vector<std::string> args_;
  std::filesystem::path stderr_log_;
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string buffer_;
  bool eof_ = false;
  std::optional<int> exit_code_;
};

// Waits until one of the fds is readable or the timeout passes.
void wait_readable(const std::vector<int>& fds, std::chrono::milliseconds timeout);

}  // namespace wsemu::wstrain
