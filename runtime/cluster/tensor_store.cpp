#include "runtime/cluster/tensor_store.hpp"

#include <fmt/format.h>

#include <fstream>

#include "runtime/cluster/optimizer.hpp"
#include "runtime/cluster/tensor_codec.hpp"

namespace wsemu::cluster {

uint64_t TensorRecord::data_bytes() const {
  const uint64_t slots = static_cast<uint64_t>(optimizer_slot_count(optimizer.kind()));
  return info.elements() * 4 * (1 + slots);
}

TensorStore::TensorStore(std::filesystem::path spill_dir, uint64_t memory_budget_bytes)
    : spill_dir_(std::move(spill_dir)), budget_(memory_budget_bytes) {
  std::error_code ec;
  std::filesystem::remove_all(spill_dir_, ec);
  std::filesystem::create_directories(spill_dir_, ec);
  if (ec)
    throw ConfigError(
        fmt::format("cannot create the spill folder '{}': {}", spill_dir_.string(), ec.message()));
}

std::filesystem::path TensorStore::spill_path(uint64_t id) const {
  return spill_dir_ / fmt::format("tensor-{}.bin", id);
}

TensorRecord& TensorStore::get(uint64_t id) {
  TensorRecord& record = tensors_.at(id);
  record.last_use = ++clock_;
  if (!record.resident) reload(record);
  enforce_budget(id);
  return record;
}

void TensorStore::create(TensorRecord record) {
  const uint64_t id = record.info.tensor_id();
  record.resident = true;
  record.last_use = ++clock_;
  resident_bytes_ += record.data_bytes();
  tensors_[id] = std::move(record);
  enforce_budget(id);
}

void TensorStore::enforce_budget(uint64_t keep_id) {
  while (resident_bytes_ > budget_) {
    TensorRecord* victim = nullptr;
    for (auto& [id, record] : tensors_) {
      if (id == keep_id || !record.resident) continue;
      if (!victim || record.last_use < victim->last_use) victim = &record;
    }
    if (!victim) return;  // only the tensor in use is left: it may exceed the budget alone
    spill(*victim);
  }
}

void TensorStore::spill(TensorRecord& record) {
  const auto path = spill_path(record.info.tensor_id());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  auto write = [&](const std::vector<float>& v) {
    out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
  };
  write(record.weights);
  write(record.slot1);
  write(record.slot2);
  if (!out)
    throw std::runtime_error(fmt::format("cannot write the spill file '{}'", path.string()));
  resident_bytes_ -= record.data_bytes();
  std::vector<float>().swap(record.weights);
  std::vector<float>().swap(record.slot1);
  std::vector<float>().swap(record.slot2);
  record.resident = false;
  ++spills_;
}

static void read_spill(const std::filesystem::path& path, const TensorRecord& record,
                       std::vector<float>& weights, std::vector<float>& slot1,
                       std::vector<float>& slot2) {
  std::ifstream in(path, std::ios::binary);
  const uint64_t n = record.info.elements();
  const int slots = optimizer_slot_count(record.optimizer.kind());
  weights.resize(n);
  slot1.resize(slots >= 1 ? n : 0);
  slot2.resize(slots >= 2 ? n : 0);
  auto read = [&](std::vector<float>& v) {
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
  };
  read(weights);
  read(slot1);
  read(slot2);
  if (!in) throw std::runtime_error(fmt::format("cannot read the spill file '{}'", path.string()));
}

void TensorStore::reload(TensorRecord& record) {
  read_spill(spill_path(record.info.tensor_id()), record, record.weights, record.slot1,
             record.slot2);
  record.resident = true;
  resident_bytes_ += record.data_bytes();
  ++reloads_;
}

pb::TensorState TensorStore::snapshot(uint64_t id) const {
  const TensorRecord& record = tensors_.at(id);
  pb::TensorState state;
  *state.mutable_info() = record.info;
  *state.mutable_optimizer() = record.optimizer;
  state.set_next_step(record.next_step);
  state.set_updates_applied(record.updates_applied);
  if (record.resident) {
    state.set_weights_fp32(floats_to_bytes(record.weights));
    state.set_slot1_fp32(floats_to_bytes(record.slot1));
    state.set_slot2_fp32(floats_to_bytes(record.slot2));
  } else {
    std::vector<float> w, s1, s2;
    read_spill(spill_path(id), record, w, s1, s2);
    state.set_weights_fp32(floats_to_bytes(w));
    state.set_slot1_fp32(floats_to_bytes(s1));
    state.set_slot2_fp32(floats_to_bytes(s2));
  }
  return state;
}

void TensorStore::restore(const pb::TensorState& state) {
  TensorRecord record;
  record.info = state.info();
  record.optimizer = state.optimizer();
  record.next_step = state.next_step();
  record.updates_applied = state.updates_applied();
  record.weights = bytes_to_floats(state.weights_fp32());
  record.slot1 = bytes_to_floats(state.slot1_fp32());
  record.slot2 = bytes_to_floats(state.slot2_fp32());
  const uint64_t n = record.info.elements();
  const int slots = optimizer_slot_count(record.optimizer.kind());
  if (record.weights.size() != n || record.slot1.size() != (slots >= 1 ? n : 0) ||
      record.slot2.size() != (slots >= 2 ? n : 0)) {
    throw std::runtime_error(
        fmt::format("stored tensor {} has inconsistent sizes", record.info.tensor_id()));
  }
  if (contains(record.info.tensor_id())) {
    TensorRecord& old = tensors_.at(record.info.tensor_id());
    if (old.resident) resident_bytes_ -= old.data_bytes();
    tensors_.erase(record.info.tensor_id());
  }
  create(std::move(record));
}

std::vector<uint64_t> TensorStore::ids() const {
  std::vector<uint64_t> out;
  out.reserve(tensors_.size());
  for (const auto& [id, record] : tensors_) out.push_back(id);
  return out;
}

std::vector<uint64_t> TensorStore::ids_in_layer(uint32_t layer) const {
  std::vector<uint64_t> out;
  for (const auto& [id, record] : tensors_) {
    if (record.info.layer() == layer) out.push_back(id);
  }
  return out;
}

uint64_t TensorStore::min_next_step() const {
  if (tensors_.empty()) return 0;
  uint64_t lowest = UINT64_MAX;
  for (const auto& [id, record] : tensors_) lowest = std::min(lowest, record.next_step);
  return lowest;
}

void TensorStore::set_steps(uint64_t id, uint64_t next_step, uint64_t updates_applied) {
  TensorRecord& record = tensors_.at(id);
  record.next_step = next_step;
  record.updates_applied = updates_applied;
}

}  // namespace wsemu::cluster
