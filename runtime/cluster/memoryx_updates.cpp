// MemoryXNode's state changes: tensor creation, gradient assembly and application, checkpoints
// and recovery. (Networking and weight streams are in memoryx_node.cpp.)
#include <spdlog/spdlog.h>

#include "runtime/cluster/memoryx_node.hpp"
#include "runtime/cluster/optimizer.hpp"
#include "runtime/cluster/tensor_codec.hpp"

namespace wsemu::cluster {

namespace {

void apply_to_record(TensorRecord& record, std::span<const float> gradient) {
  apply_update(record.optimizer, record.updates_applied, record.weights, record.slot1, record.slot2,
               gradient);
  ++record.next_step;
  ++record.updates_applied;
}

}  // namespace

void MemoryXNode::recover() {
  std::error_code ec;
  std::filesystem::create_directories(options_.store_dir, ec);
  if (ec) {
    throw ConfigError(fmt::format("cannot create the store folder '{}': {}",
                                  options_.store_dir.string(), ec.message()));
  }
  const StoreListing listing = list_store(options_.store_dir);
  uint64_t base = 0;
  for (auto it = listing.checkpoints.rbegin(); it != listing.checkpoints.rend(); ++it) {
    std::vector<pb::TensorState> states;
    try {
      const pb::CheckpointHeader header = read_checkpoint(
          it->second, [&](const pb::TensorState& state) { states.push_back(state); });
      if (header.shard_count() != options_.shard_count ||
          header.shard_index() != options_.shard_index) {
        throw ConfigError(fmt::format("checkpoint '{}' belongs to shard {}/{}, this node is {}/{}",
                                      it->second.string(), header.shard_index(),
                                      header.shard_count(), options_.shard_index,
                                      options_.shard_count));
      }
    } catch (const ConfigError&) {
      throw;
    } catch (const std::exception& error) {
      spdlog::warn("skipping checkpoint: {}", error.what());
      continue;
    }
    for (const auto& state : states) store_.restore(state);
    base = it->first;
    spdlog::info("restored {} tensors from '{}'", states.size(), it->second.string());
    break;
  }
  sequence_ = base;
  checkpointed_step_ = store_.min_next_step();
  uint64_t replayed = 0;
  uint64_t last_log_bytes = 0;
  for (const auto& [sequence, path] : listing.logs) {
    if (sequence < base) continue;
    const RecordFile file = read_record_file(path);
    if (file.torn) spdlog::warn("log '{}' ends in a torn record; it is cut off", path.string());
    for (const std::string& payload : file.records) {
      pb::LogRecord record;
      if (!record.ParseFromString(payload))
        throw ConfigError(fmt::format("log '{}' holds a corrupt record", path.string()));
      if (record.has_created()) {
        if (!store_.contains(record.created().info().tensor_id())) store_.restore(record.created());
      } else if (record.has_applied() || record.has_applied_step()) {
        std::vector<pb::AppliedGradient> updates;
        if (record.has_applied()) updates.push_back(record.applied());
        for (const auto& tensor : record.applied_step().tensors()) updates.push_back(tensor);
        for (const auto& applied : updates) {
          if (!store_.contains(applied.tensor_id())) {
            throw ConfigError(fmt::format("log '{}' updates unknown tensor {}", path.string(),
                                          applied.tensor_id()));
          }
          const uint64_t next = store_.meta(applied.tensor_id()).next_step;
          if (applied.step() < next) continue;
          if (applied.step() > next) {
            throw ConfigError(fmt::format("log '{}' skips from step {} to {} of tensor {}",
                                          path.string(), next, applied.step(), applied.tensor_id()));
          }
          apply_to_record(store_.get(applied.tensor_id()),
                          bytes_to_floats(applied.gradient_fp32()));
        }
      }
      ++replayed;
      dirty_ = true;
    }
    sequence_ = sequence;
    last_log_bytes = file.valid_bytes;
  }
  if (replayed) spdlog::info("replayed {} log records", replayed);
  const bool append_existing = listing.logs.count(sequence_) != 0;
  log_ = std::make_unique<WriteAheadLog>(log_path(options_.store_dir, sequence_),
                                         append_existing ? last_log_bytes : 0, options_.sync_log);
}

const TensorRecord& MemoryXNode::checked_tensor(uint64_t tensor_id) const {
  if (tensor_id % options_.shard_count != options_.shard_index) {
    throw ProtocolError(fmt::format("tensor {} belongs to shard {}, not {}", tensor_id,
                                    tensor_id % options_.shard_count, options_.shard_index));
  }
  if (!store_.contains(tensor_id)) throw ProtocolError(fmt::format("unknown tensor {}", tensor_id));
  return store_.meta(tensor_id);
}

void MemoryXNode::send_ack(uint64_t peer_id, uint64_t tensor_id, uint64_t step, bool duplicate) {
  auto it = peers_.find(peer_id);
  if (it == peers_.end()) return;
  pb::Envelope envelope;
  auto& ack = *envelope.mutable_gradient_ack();
  ack.set_tensor_id(tensor_id);
  ack.set_step(step);
  ack.set_duplicate(duplicate);
  it->second.connection->send(envelope);
}

void MemoryXNode::handle_gradient(uint64_t peer_id, const pb::GradientData& data) {
  const pb::Chunk& chunk = data.chunk();
  const TensorRecord& meta = checked_tensor(chunk.tensor_id());
  if (chunk.tensor_elements() != meta.info.elements()) {
    throw ProtocolError(fmt::format("gradient chunk says tensor {} has {} elements; it has {}",
                                    chunk.tensor_id(), chunk.tensor_elements(),
                                    meta.info.elements()));
  }
  std::vector<float> values =
      decode_chunk(chunk, options_.limits.max_frame_bytes / 4);  // validates the range
  stats_.add("gradient_chunks_in", 1);
  stats_.add("gradient_bytes_in", chunk_payload_bytes(chunk));
  if (chunk.step() < meta.next_step) {
    ++stats_.counter("duplicate_gradient_chunks");
    send_ack(peer_id, chunk.tensor_id(), chunk.step(), true);
    return;
  }
  if (chunk.step() > meta.next_step + options_.max_future_steps) {
    throw ProtocolError(fmt::format("gradient for step {} of tensor {} is too far ahead of step {}",
                                    chunk.step(), chunk.tensor_id(), meta.next_step));
  }
  Assembly& assembly = assemblies_[{chunk.tensor_id(), chunk.step()}];
  if (assembly.values.empty()) assembly.values.assign(meta.info.elements(), 0.0f);
  auto next = assembly.chunks.lower_bound(chunk.offset());
  if (next != assembly.chunks.end() && next->first == chunk.offset()) {
    if (next->second != chunk.count())
      throw ProtocolError("gradient chunks of different sizes at the same offset");
    ++stats_.counter("duplicate_gradient_chunks");
    return;
  }
  if ((next != assembly.chunks.end() && next->first < chunk.offset() + chunk.count()) ||
      (next != assembly.chunks.begin() &&
       std::prev(next)->first + std::prev(next)->second > chunk.offset())) {
    throw ProtocolError("overlapping gradient chunks");
  }
  assembly.chunks.emplace(chunk.offset(), chunk.count());
  std::copy(values.begin(), values.end(),
            assembly.values.begin() + static_cast<ptrdiff_t>(chunk.offset()));
  assembly.covered += chunk.count();
  assembly.completed_by = peer_id;
  if (assembly.covered == meta.info.elements()) apply_ready(chunk.tensor_id());
}

void MemoryXNode::apply_ready(uint64_t tensor_id) {
  if (options_.step_atomic) {
    bool applied_any = false;
    while (apply_step()) applied_any = true;
    if (applied_any) after_updates();
    return;
  }
  bool applied_any = false;
  for (;;) {
    const uint64_t step = store_.meta(tensor_id).next_step;
    auto it = assemblies_.find({tensor_id, step});
    if (it == assemblies_.end() || it->second.covered != store_.meta(tensor_id).info.elements())
      break;
    pb::LogRecord record;
    auto& applied = *record.mutable_applied();
    applied.set_tensor_id(tensor_id);
    applied.set_step(step);
    applied.set_gradient_fp32(floats_to_bytes(it->second.values));
    if (!append_to_log(record)) break;  // the assembly stays, unacknowledged, for the retry
    Assembly assembly = std::move(it->second);
    assemblies_.erase(it);
    apply_to_record(store_.get(tensor_id), assembly.values);
    dirty_ = true;
    applied_any = true;
    ++stats_.counter("updates_applied");
    send_ack(assembly.completed_by, tensor_id, step, false);
  }
  if (applied_any) after_updates();
}

bool MemoryXNode::apply_step() {
  if (store_.size() == 0) return false;
  const uint64_t step = store_.min_next_step();
  std::vector<uint64_t> due;  // the tensors at `step`; later ones wait for it
  for (uint64_t id : store_.ids()) {
    if (store_.meta(id).next_step != step) continue;
    auto it = assemblies_.find({id, step});
    if (it == assemblies_.end() || it->second.covered != store_.meta(id).info.elements())
      return false;
    due.push_back(id);
  }
  pb::LogRecord record;
  auto& applied = *record.mutable_applied_step();
  applied.set_step(step);
  for (uint64_t id : due) {
    auto& tensor = *applied.add_tensors();
    tensor.set_tensor_id(id);
    tensor.set_step(step);
    tensor.set_gradient_fp32(floats_to_bytes(assemblies_.at({id, step}).values));
  }
  if (!append_to_log(record)) return false;  // the assemblies stay for the retry
  for (uint64_t id : due) {
    auto it = assemblies_.find({id, step});
    Assembly assembly = std::move(it->second);
    assemblies_.erase(it);
    apply_to_record(store_.get(id), assembly.values);
    ++stats_.counter("updates_applied");
    send_ack(assembly.completed_by, id, step, false);
  }
  dirty_ = true;
  return true;
}

void MemoryXNode::after_updates() {
  stats_.counter("steps_completed") = store_.min_next_step();
  retry_pending_requests();
  maybe_checkpoint();
}

void MemoryXNode::handle_init(uint64_t peer_id, const pb::InitTensor& init) {
  pb::Envelope envelope;
  auto& reply = *envelope.mutable_init_tensor_reply();
  reply.set_request_id(init.request_id());
  const pb::TensorInfo& info = init.info();
  reply.set_tensor_id(info.tensor_id());
  auto fail = [&](const std::string& message) {
    reply.set_status(pb::InitTensorReply::ERROR);
    reply.set_message(message);
    spdlog::warn("InitTensor {} ('{}') refused: {}", info.tensor_id(), info.name(), message);
    peers_.at(peer_id).connection->send(envelope);
  };
  uint64_t elements = 1;
  for (uint64_t dim : info.shape()) {
    if (dim != 0 && elements > UINT64_MAX / dim) return fail("shape overflows");
    elements *= dim;
  }
  if (info.tensor_id() % options_.shard_count != options_.shard_index) {
    return fail(fmt::format("tensor {} belongs to shard {} of {}", info.tensor_id(),
                            info.tensor_id() % options_.shard_count, options_.shard_count));
  }
  if (elements == 0) return fail("a tensor needs at least one element");
  if (info.elements() != 0 && info.elements() != elements)
    return fail("elements does not match the shape");
  if (elements > (1ull << 34)) return fail("tensor too large");
  if (store_.contains(info.tensor_id())) {
    const TensorRecord& existing = store_.meta(info.tensor_id());
    if (existing.info.name() != info.name() || existing.info.layer() != info.layer() ||
        !std::equal(existing.info.shape().begin(), existing.info.shape().end(),
                    info.shape().begin(), info.shape().end())) {
      return fail(fmt::format("tensor {} already exists as '{}' (layer {}) with another shape",
                              info.tensor_id(), existing.info.name(), existing.info.layer()));
    }
    reply.set_status(pb::InitTensorReply::EXISTS);
    reply.set_next_step(existing.next_step);
    peers_.at(peer_id).connection->send(envelope);
    return;
  }
  TensorRecord record;
  record.info = info;
  record.info.set_elements(elements);
  record.optimizer = resolve_optimizer(
      init.use_node_optimizer() ? pb::OptimizerConfig() : init.optimizer(), options_.optimizer);
  if (init.has_rule()) {
    record.weights = fill_initial_values(init.rule(), elements);
  } else {
    if (init.values_fp32().size() != elements * 4) {
      return fail(fmt::format("{} bytes of initial values for {} elements",
                              init.values_fp32().size(), elements));
    }
    record.weights = bytes_to_floats(init.values_fp32());
  }
  const int slots = optimizer_slot_count(record.optimizer.kind());
  if (slots >= 1) record.slot1.assign(elements, 0.0f);
  if (slots >= 2) record.slot2.assign(elements, 0.0f);
  record.next_step = init.start_step();
  pb::LogRecord log_record;
  pb::TensorState& state = *log_record.mutable_created();
  *state.mutable_info() = record.info;
  *state.mutable_optimizer() = record.optimizer;
  state.set_next_step(record.next_step);
  state.set_weights_fp32(floats_to_bytes(record.weights));
  state.set_slot1_fp32(floats_to_bytes(record.slot1));
  state.set_slot2_fp32(floats_to_bytes(record.slot2));
  if (!append_to_log(log_record)) return fail(log_failure_);
  spdlog::info("created tensor {} '{}' (layer {}, {} elements, {})", info.tensor_id(), info.name(),
               info.layer(), elements, optimizer_kind_name(record.optimizer.kind()));
  store_.create(std::move(record));
  dirty_ = true;
  if (store_.size() == 1) checkpointed_step_ = store_.min_next_step();
  reply.set_status(pb::InitTensorReply::CREATED);
  reply.set_next_step(init.start_step());
  peers_.at(peer_id).connection->send(envelope);
}

bool MemoryXNode::append_to_log(const pb::LogRecord& record) {
  try {
    log_->append(record);
  } catch (const LogWriteError& error) {
    log_failed(error.what());
    return false;
  }
  if (!log_failure_.empty()) {
    spdlog::info("the log can be written again; held updates are applied");
    log_failure_.clear();
    pb::Envelope envelope;
    auto& alert = *envelope.mutable_node_alert();
    alert.set_node(options_.name);
    alert.set_message("MemoryX can write its log again; training continues");
    alert.set_resolved(true);
    for (auto& [id, peer] : peers_) {
      if (peer.connection->authenticated()) peer.connection->send(envelope);
    }
  }
  return true;
}

void MemoryXNode::log_failed(const std::string& message) {
  ++stats_.counter("log_write_failures");
  const auto now = std::chrono::steady_clock::now();
  const bool news = log_failure_ != message;
  if (news || now - last_failure_report_ >= std::chrono::seconds(30)) {
    spdlog::error("{}; updates are held unacknowledged and retried until it can", message);
    last_failure_report_ = now;
  }
  log_failure_ = message;
  if (news) {
    for (auto& [id, peer] : peers_) {
      if (peer.connection->authenticated()) send_alert(peer);
    }
  }
  if (log_retry_armed_) return;
  log_retry_armed_ = true;
  log_retry_timer_.expires_after(options_.log_retry);
  log_retry_timer_.async_wait([this](const boost::system::error_code& ec) {
    log_retry_armed_ = false;
    if (!ec && !stopping_) retry_log();
  });
}

void MemoryXNode::send_alert(Peer& peer) {
  if (log_failure_.empty()) return;
  pb::Envelope envelope;
  auto& alert = *envelope.mutable_node_alert();
  alert.set_node(options_.name);
  alert.set_message(log_failure_);
  peer.connection->send(envelope);
}

void MemoryXNode::retry_log() {
  std::set<uint64_t> tensors;
  for (const auto& [key, assembly] : assemblies_) tensors.insert(key.first);
  for (uint64_t tensor_id : tensors) {
    if (store_.contains(tensor_id)) apply_ready(tensor_id);
    if (log_retry_armed_) return;  // failed again; the timer is set again
  }
}

void MemoryXNode::maybe_checkpoint() {
  if (options_.checkpoint_every == 0) return;
  if (store_.min_next_step() < checkpointed_step_ + options_.checkpoint_every) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_checkpoint_attempt_) return;
  try {
    checkpoint_now();
  } catch (const std::exception& error) {
    // The log still holds every update since the last checkpoint: nothing is lost, so training
    // goes on and the checkpoint is tried again a little later.
    spdlog::error("checkpoint failed (retried in 5 s; the log keeps every update): {}",
                  error.what());
    next_checkpoint_attempt_ = now + std::chrono::seconds(5);
  }
}

std::filesystem::path MemoryXNode::checkpoint_now() {
  pb::CheckpointHeader header;
  header.set_format_version(kCheckpointFormatVersion);
  header.set_sequence(sequence_ + 1);
  header.set_tensor_count(store_.size());
  header.set_shard_index(options_.shard_index);
  header.set_shard_count(options_.shard_count);
  header.set_written_unix_ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count());
  const auto path = write_checkpoint(options_.store_dir, header, store_.ids(),
                                     [this](uint64_t id) { return store_.snapshot(id); });
  std::unique_ptr<WriteAheadLog> next_log;
  try {
    next_log = std::make_unique<WriteAheadLog>(log_path(options_.store_dir, header.sequence()), 0,
                                               options_.sync_log);
  } catch (...) {
    // Recovery starts at the newest checkpoint and reads only its log: a checkpoint without one
    // would hide the records still appended to the current log.
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    fsync_directory(options_.store_dir);
    throw;
  }
  sequence_ = header.sequence();
  log_ = std::move(next_log);
  checkpointed_step_ = store_.min_next_step();
  dirty_ = false;
  ++stats_.counter("checkpoints_written");
  spdlog::info("checkpoint {} written at step {}: {}", sequence_, checkpointed_step_,
               path.string());
  // Keep the newest checkpoints and every log a kept checkpoint may need.
  const StoreListing listing = list_store(options_.store_dir);
  std::vector<uint64_t> sequences;
  for (const auto& [sequence, p] : listing.checkpoints) sequences.push_back(sequence);
  const size_t keep = std::max<uint32_t>(1, options_.keep_checkpoints);
  if (sequences.size() > keep) {
    const uint64_t oldest_kept = sequences[sequences.size() - keep];
    std::error_code ec;
    for (const auto& [sequence, p] : listing.checkpoints) {
      if (sequence < oldest_kept) std::filesystem::remove(p, ec);
    }
    for (const auto& [sequence, p] : listing.logs) {
      if (sequence < oldest_kept) std::filesystem::remove(p, ec);
    }
  }
  return path;
}

}  // namespace wsemu::cluster
