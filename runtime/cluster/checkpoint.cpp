#include "runtime/cluster/checkpoint.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <zlib.h>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <string_view>

namespace wsemu::cluster {

static uint32_t crc32_of(const char* data, size_t size) {
  return static_cast<uint32_t>(::crc32_z(::crc32_z(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data), size));
}

static void put_u32(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

static uint32_t get_u32(const char* p) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return value;
}

std::string encode_record(const google::protobuf::MessageLite& message) {
  std::string payload;
  if (!message.SerializeToString(&payload))
    throw std::runtime_error("cannot serialize a store record");
  std::string out;
  out.reserve(payload.size() + 8);
  put_u32(out, static_cast<uint32_t>(payload.size()));
  put_u32(out, crc32_of(payload.data(), payload.size()));
  out += payload;
  return out;
}

RecordFile read_record_file(const std::filesystem::path& path) {
  RecordFile result;
  std::ifstream in(path, std::ios::binary);
  if (!in) return result;
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t pos = 0;
  while (pos + 8 <= data.size()) {
    const uint32_t length = get_u32(data.data() + pos);
    const uint32_t crc = get_u32(data.data() + pos + 4);
    if (length > data.size() - pos - 8) break;
    if (crc32_of(data.data() + pos + 8, length) != crc) break;
    result.records.emplace_back(data, pos + 8, length);
    pos += 8 + length;
  }
  result.valid_bytes = pos;
  result.torn = pos != data.size();
  return result;
}

// 0, or the errno of the write that failed.
static int write_fully(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

static void write_all(int fd, const std::string& data, const std::filesystem::path& path) {
  if (const int error = write_fully(fd, data))
    throw std::runtime_error(fmt::format("cannot write '{}': {}", path.string(), std::strerror(error)));
}

WriteAheadLog::WriteAheadLog(std::filesystem::path path, uint64_t keep_bytes, bool sync)
    : path_(std::move(path)), sync_(sync) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw std::runtime_error(
        fmt::format("cannot open the log '{}': {}", path_.string(), std::strerror(errno)));
  if (::ftruncate(fd_, static_cast<off_t>(keep_bytes)) != 0 ||
      ::lseek(fd_, static_cast<off_t>(keep_bytes), SEEK_SET) < 0) {
    throw std::runtime_error(
        fmt::format("cannot position the log '{}': {}", path_.string(), std::strerror(errno)));
  }
  bytes_ = keep_bytes;
  if (sync_) {
    ::fsync(fd_);
    fsync_directory(path_.parent_path());
  }
}

WriteAheadLog::~WriteAheadLog() {
  if (fd_ >= 0) ::close(fd_);
}

void WriteAheadLog::append(const pb::LogRecord& record) {
  const std::string data = encode_record(record);
  // Cut a torn record of an earlier failed append first: a record behind it would be unreadable.
  if (needs_cut_) {
    if (::ftruncate(fd_, static_cast<off_t>(bytes_)) != 0 ||
        ::lseek(fd_, static_cast<off_t>(bytes_), SEEK_SET) < 0) {
      throw LogWriteError(fmt::format("MemoryX cannot write its log '{}': {}", path_.string(),
                                      std::strerror(errno)));
    }
    needs_cut_ = false;
  }
  int error = write_fully(fd_, data);
  if (error == 0 && sync_ && ::fdatasync(fd_) != 0) error = errno;
  if (error == 0) {
    bytes_ += data.size();
    return;
  }
  // Nothing of this record may stay: the caller will not acknowledge it, and the next record
  // must follow the last whole one.
  needs_cut_ = ::ftruncate(fd_, static_cast<off_t>(bytes_)) != 0 ||
               ::lseek(fd_, static_cast<off_t>(bytes_), SEEK_SET) < 0;
  throw LogWriteError(fmt::format("MemoryX cannot write its log '{}': {}", path_.string(),
                                  std::strerror(error)));
}

std::filesystem::path checkpoint_path(const std::filesystem::path& dir, uint64_t sequence) {
  return dir / fmt::format("checkpoint-{:08}.ckpt", sequence);
}

std::filesystem::path log_path(const std::filesystem::path& dir, uint64_t sequence) {
  return dir / fmt::format("wal-{:08}.log", sequence);
}

// The sequence number of "<prefix><digits><suffix>", if the name has that form.
static std::optional<uint64_t> sequence_in(const std::string& name, std::string_view prefix,
                                           std::string_view suffix) {
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) ||
      !name.ends_with(suffix)) {
    return std::nullopt;
  }
  const std::string digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return std::stoull(digits);
}

StoreListing list_store(const std::filesystem::path& dir) {
  StoreListing listing;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (auto sequence = sequence_in(name, "checkpoint-", ".ckpt")) {
      listing.checkpoints[*sequence] = entry.path();
    } else if (auto sequence = sequence_in(name, "wal-", ".log")) {
      listing.logs[*sequence] = entry.path();
    }
  }
  return listing;
}

void fsync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::filesystem::path write_checkpoint(const std::filesystem::path& dir,
                                       const pb::CheckpointHeader& header,
                                       const std::vector<uint64_t>& tensor_ids,
                                       const std::function<pb::TensorState(uint64_t)>& state_of) {
  const auto final_path = checkpoint_path(dir, header.sequence());
  const auto temp_path = std::filesystem::path(final_path.string() + ".tmp");
  const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw std::runtime_error(
        fmt::format("cannot create '{}': {}", temp_path.string(), std::strerror(errno)));
  }
  try {
    write_all(fd, encode_record(header), temp_path);
    for (uint64_t id : tensor_ids) write_all(fd, encode_record(state_of(id)), temp_path);
    pb::CheckpointFooter footer;
    footer.set_tensor_count(tensor_ids.size());
    write_all(fd, encode_record(footer), temp_path);
    if (::fsync(fd) != 0) {
      throw std::runtime_error(
          fmt::format("cannot sync '{}': {}", temp_path.string(), std::strerror(errno)));
    }
  } catch (...) {
    ::close(fd);
    std::error_code ignored;
    std::filesystem::remove(temp_path, ignored);
    throw;
  }
  ::close(fd);
  std::filesystem::rename(temp_path, final_path);
  fsync_directory(dir);
  return final_path;
}

pb::CheckpointHeader read_checkpoint(const std::filesystem::path& path,
                                     const std::function<void(const pb::TensorState&)>& on_tensor) {
  const RecordFile file = read_record_file(path);
  if (file.torn || file.records.size() < 2) {
    throw std::runtime_error(
        fmt::format("checkpoint '{}' is incomplete or corrupt", path.string()));
  }
  pb::CheckpointHeader header;
  pb::CheckpointFooter footer;
  if (!header.ParseFromString(file.records.front()) ||
      header.format_version() != kCheckpointFormatVersion ||
      !footer.ParseFromString(file.records.back()) ||
      footer.tensor_count() != header.tensor_count() ||
      file.records.size() != header.tensor_count() + 2) {
    throw std::runtime_error(
        fmt::format("checkpoint '{}' has an unknown format or a bad count", path.string()));
  }
  for (size_t i = 1; i + 1 < file.records.size(); ++i) {
    pb::TensorState state;
    if (!state.ParseFromString(file.records[i])) {
      throw std::runtime_error(
          fmt::format("checkpoint '{}': tensor record {} is corrupt", path.string(), i));
    }
    on_tensor(state);
  }
  return header;
}

}  // namespace wsemu::cluster
