// Where wsemu finds the data files its tools read at run time (the memcpy firmware, the
// weight-streaming kernels, the CSL standard library): in this source tree when run from a
// build tree, in <prefix>/share/wsemu/ when installed (`cmake --install`), so an installed
// binary works after the source tree is gone.
//
// Contract: data_dir(sub, env, source_dir) returns $env when set and non-empty; else
// <folder of the running executable>/../share/wsemu/<sub> when that folder exists; else
// `source_dir` (the source tree's folder, compiled in). It never throws and never creates
// anything; a folder that does not exist is the caller's error to report.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace wsemu::firmware {

inline std::string data_dir(const std::string& sub, const char* env, const std::string& source_dir) {
  if (const char* value = std::getenv(env); value != nullptr && *value != '\0') return value;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path installed = exe.parent_path().parent_path() / "share" / "wsemu" / sub;
    if (std::filesystem::is_directory(installed, ec)) return installed.string();
  }
  return source_dir;
}

}  // namespace wsemu::firmware
