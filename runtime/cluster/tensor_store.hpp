// MemoryX's tensors in memory: weights plus optimizer slots, with the least recently used ones
// spilled to files under <store>/spill when the resident bytes exceed the memory budget.
//
// Contract: single-threaded. get(id) returns the tensor resident; the reference stays valid until
// the next get()/create() (which may spill other tensors, never the one returned last). Spill
// files are a cache, not durable state: recovery uses checkpoints and the log (checkpoint.hpp),
// and the spill folder is emptied at start-up. Metadata (info, optimizer, steps) never leaves
// memory, so meta() never touches the disk.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <vector>

#include "runtime/cluster/memoryx_store.pb.h"
#include "runtime/cluster/protocol.hpp"

namespace wsemu::cluster {

struct TensorRecord {
  pb::TensorInfo info;
  pb::OptimizerConfig optimizer;
  uint64_t next_step = 0;
  uint64_t updates_applied = 0;
  std::vector<float> weights;
  std::vector<float> slot1;
  std::vector<float> slot2;
  bool resident = true;
  uint64_t last_use = 0;

  uint64_t data_bytes() const;  // bytes of weights + slots, resident or not
};

class TensorStore {
 public:
  TensorStore(std::filesystem::path spill_dir, uint64_t memory_budget_bytes);

  bool contains(uint64_t id) const { return tensors_.count(id) != 0; }
  const TensorRecord& meta(uint64_t id) const { return tensors_.at(id); }
  TensorRecord& get(uint64_t id);
  void create(TensorRecord record);
  // The tensor as stored in a checkpoint, read from the spill file when it is not resident.
  pb::TensorState snapshot(uint64_t id) const;
  void restore(const pb::TensorState& state);  // create from a checkpoint/log record

  std::vector<uint64_t> ids() const;                         // ascending
  std::vector<uint64_t> ids_in_layer(uint32_t layer) const;  // ascending
  size_t size() const { return tensors_.size(); }
  uint64_t resident_bytes() const { return resident_bytes_; }
  uint64_t spills() const { return spills_; }
  uint64_t reloads() const { return reloads_; }
  uint64_t min_next_step() const;  // over all tensors; 0 when there are none

  // Steps are tracked in memory; the data of a tensor only changes through get().
  void set_steps(uint64_t id, uint64_t next_step, uint64_t updates_applied);

 private:
  void enforce_budget(uint64_t keep_id);
  void spill(TensorRecord& record);
  void reload(TensorRecord& record);
  std::filesystem::path spill_path(uint64_t id) const;

  std::filesystem::path spill_dir_;
  uint64_t budget_;
  std::map<uint64_t, TensorRecord> tensors_;
  uint64_t resident_bytes_ = 0;
  uint64_t clock_ = 0;
  uint64_t spills_ = 0;
  uint64_t reloads_ = 0;
};

}  // namespace wsemu::cluster
