// MemoryX's files: checkpoints round-trip, a torn log tail is ignored, a log append that fails
// half-way (a file size limit standing in for a full disk) leaves the log as it was, and tensors
// spilled past the memory budget come back unchanged.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <cstring>
#include <fstream>

#include "runtime/cluster/checkpoint.hpp"
#include "runtime/cluster/tensor_codec.hpp"
#include "runtime/cluster/tensor_store.hpp"

namespace wsemu::cluster {
namespace {

std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

pb::TensorState state(uint64_t id, std::vector<float> weights) {
  pb::TensorState s;
  s.mutable_info()->set_tensor_id(id);
  s.mutable_info()->set_elements(weights.size());
  s.mutable_info()->add_shape(weights.size());
  s.mutable_optimizer()->set_kind(pb::MOMENTUM);
  s.set_next_step(7);
  s.set_weights_fp32(floats_to_bytes(weights));
  s.set_slot1_fp32(floats_to_bytes(std::vector<float>(weights.size(), 0.5f)));
  return s;
}

TEST(ClusterStore, CheckpointRoundTripAndCorruptionIsDetected) {
  const auto dir = fresh_dir("ckpt");
  pb::CheckpointHeader header;
  header.set_format_version(kCheckpointFormatVersion);
  header.set_sequence(3);
  header.set_tensor_count(2);
  const auto path = write_checkpoint(dir, header, {4, 9}, [](uint64_t id) {
    return state(id, {static_cast<float>(id), 1.5f});
  });
  EXPECT_EQ(path, checkpoint_path(dir, 3));
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
  std::vector<pb::TensorState> loaded;
  EXPECT_EQ(
      read_checkpoint(path, [&](const pb::TensorState& s) { loaded.push_back(s); }).sequence(), 3u);
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(bytes_to_floats(loaded[1].weights_fp32()), (std::vector<float>{9.0f, 1.5f}));
  EXPECT_EQ(list_store(dir).checkpoints.count(3), 1u);
  // Flip one byte in the middle: the CRC catches it.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(path) / 2));
    f.put('\x5a');
  }
  EXPECT_THROW(read_checkpoint(path, [](const pb::TensorState&) {}), std::runtime_error);
}

TEST(ClusterStore, TornLogTailIsCutOff) {
  const auto dir = fresh_dir("wal");
  const auto path = log_path(dir, 0);
  {
    WriteAheadLog log(path, 0, true);
    for (uint64_t step = 0; step < 3; ++step) {
      pb::LogRecord record;
      record.mutable_applied()->set_tensor_id(1);
      record.mutable_applied()->set_step(step);
      log.append(record);
    }
  }
  const uint64_t whole = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, whole - 2);  // a crash in the middle of the last record
  RecordFile file = read_record_file(path);
  EXPECT_EQ(file.records.size(), 2u);
  EXPECT_TRUE(file.torn);
  {
    WriteAheadLog log(path, file.valid_bytes, false);  // reopen: the torn bytes go
    pb::LogRecord record;
    record.mutable_applied()->set_step(9);
    log.append(record);
  }
  file = read_record_file(path);
  ASSERT_EQ(file.records.size(), 3u);
  EXPECT_FALSE(file.torn);
  pb::LogRecord last;
  ASSERT_TRUE(last.ParseFromString(file.records[2]));
  EXPECT_EQ(last.applied().step(), 9u);
}

pb::LogRecord applied_record(uint64_t step, size_t gradient_bytes) {
  pb::LogRecord record;
  record.mutable_applied()->set_tensor_id(3);
  record.mutable_applied()->set_step(step);
  record.mutable_applied()->set_gradient_fp32(std::string(gradient_bytes, static_cast<char>(step)));
  return record;
}

TEST(ClusterStore, AFailedLogAppendIsCutOffAndTheNextOneFollowsTheLastWholeRecord) {
  const auto dir = fresh_dir("wal-full");
  const auto path = log_path(dir, 0);
  std::signal(SIGXFSZ, SIG_IGN);  // past the limit a write fails with EFBIG instead
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  WriteAheadLog log(path, 0, true);
  log.append(applied_record(0, 100));
  log.append(applied_record(1, 100));
  const uint64_t good = log.bytes();
  ASSERT_EQ(std::filesystem::file_size(path), good);
  // Room for 50 more bytes: the 1,000-byte record is written in part, then the write fails.
  rlimit tight = saved;
  tight.rlim_cur = good + 50;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &tight), 0);
  try {
    log.append(applied_record(2, 1000));
    ADD_FAILURE() << "the append past the limit succeeded";
  } catch (const LogWriteError& error) {
    EXPECT_NE(std::string(error.what()).find("MemoryX cannot write its log"), std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find(std::strerror(EFBIG)), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(log.append(applied_record(2, 1000)), LogWriteError);  // still full: still refused
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
  EXPECT_EQ(log.bytes(), good);
  EXPECT_EQ(std::filesystem::file_size(path), good);  // nothing of the failed record stayed
  log.append(applied_record(2, 1000));  // space again: the record follows the last whole one
  const RecordFile file = read_record_file(path);
  EXPECT_FALSE(file.torn);
  ASSERT_EQ(file.records.size(), 3u);
  for (uint64_t step = 0; step < 3; ++step) {
    pb::LogRecord record;
    ASSERT_TRUE(record.ParseFromString(file.records[step]));
    EXPECT_EQ(record.applied().step(), step);
  }
}

TEST(ClusterStore, SpilledTensorsComeBackUnchanged) {
  const auto dir = fresh_dir("spill");
  TensorStore store(dir / "spill", 3000);  // room for about one tensor of 100 floats x 2 arrays
  for (uint64_t id = 0; id < 5; ++id) {
    std::vector<float> w(100);
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(id * 1000 + i);
    store.restore(state(id, w));
  }
  EXPECT_GE(store.spills(), 2u);  // 5 x 800 bytes against a budget of 3000
  EXPECT_LE(store.resident_bytes(), 3000u);
  for (uint64_t id = 0; id < 5; ++id) {
    const auto snapshot = store.snapshot(id);  // from disk when spilled
    EXPECT_EQ(bytes_to_floats(snapshot.weights_fp32())[99], static_cast<float>(id * 1000 + 99));
    TensorRecord& record = store.get(id);
    ASSERT_TRUE(record.resident);
    EXPECT_EQ(record.weights[42], static_cast<float>(id * 1000 + 42));
    EXPECT_EQ(record.slot1[0], 0.5f);
  }
  EXPECT_GE(store.reloads(), 2u);
  EXPECT_EQ(store.ids_in_layer(0).size(), 5u);
  EXPECT_EQ(store.min_next_step(), 7u);
}

}  // namespace
}  // namespace wsemu::cluster
