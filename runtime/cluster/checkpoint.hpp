// MemoryX's durable files under --store DIR: atomic checkpoints and the write-ahead log (file
// layout in memoryx_store.proto).
//
// Contract: write_checkpoint() makes checkpoint-<seq>.ckpt appear whole or not at all (temp file,
// fsync, rename, directory fsync). read_record_file() stops at the first torn or corrupt record
// and reports how many bytes were valid, so a crash mid-append loses only the record that was
// being written (which was never acknowledged). WriteAheadLog::append() returns only once the
// record is written (and, when syncing, on disk); when it cannot (a full disk, a file size
// limit, an I/O error) it cuts the file back to the last whole record and throws LogWriteError,
// so a later append never lands behind a torn record and recovery finds exactly the records
// whose append returned. Nothing here knows about sockets.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runtime/cluster/memoryx_store.pb.h"

namespace wsemu::cluster {

inline constexpr uint32_t kCheckpointFormatVersion = 1;

// The log cannot take a record now (the message names the file and the system's reason, e.g.
// "No space left on device"); the log is unchanged and the append may be retried.
class LogWriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RecordFile {
  std::vector<std::string> records;  // payloads, in order
  uint64_t valid_bytes = 0;          // length of the intact prefix
  bool torn = false;                 // bytes after the intact prefix were ignored
};

RecordFile read_record_file(const std::filesystem::path& path);
std::string encode_record(const google::protobuf::MessageLite& message);

class WriteAheadLog {
 public:
  // Opens (creating it if needed) for appending after the first `keep_bytes` bytes; anything
  // after them (a torn record) is cut off.
  WriteAheadLog(std::filesystem::path path, uint64_t keep_bytes, bool sync);
  ~WriteAheadLog();
  WriteAheadLog(const WriteAheadLog&) = delete;
  WriteAheadLog& operator=(const WriteAheadLog&) = delete;

  // Throws LogWriteError (the file then ends at the previous record) when the record cannot be
  // written or synced.
  void append(const pb::LogRecord& record);
  const std::filesystem::path& path() const { return path_; }
  uint64_t bytes() const { return bytes_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  bool sync_;
  uint64_t bytes_ = 0;
  bool needs_cut_ = false;  // a failed append could not be cut off yet
};

struct StoreListing {
  std::map<uint64_t, std::filesystem::path> checkpoints;  // by sequence
  std::map<uint64_t, std::filesystem::path> logs;         // by sequence
};

StoreListing list_store(const std::filesystem::path& dir);
std::filesystem::path checkpoint_path(const std::filesystem::path& dir, uint64_t sequence);
std::filesystem::path log_path(const std::filesystem::path& dir, uint64_t sequence);

std::filesystem::path write_checkpoint(const std::filesystem::path& dir,
                                       const pb::CheckpointHeader& header,
                                       const std::vector<uint64_t>& tensor_ids,
                                       const std::function<pb::TensorState(uint64_t)>& state_of);

// Reads a checkpoint; throws std::runtime_error when it is incomplete or corrupt.
pb::CheckpointHeader read_checkpoint(const std::filesystem::path& path,
                                     const std::function<void(const pb::TensorState&)>& on_tensor);

void fsync_directory(const std::filesystem::path& dir);

}  // namespace wsemu::cluster
