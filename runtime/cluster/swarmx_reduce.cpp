// SwarmXNode's reduction path: gradient chunks from the children summed in rank order, sums
// kept until acknowledged, acknowledgements broadcast, and everything unacknowledged sent again
// after an upstream reconnect. (Connections and weight broadcast are in swarmx_node.cpp.)
#include <spdlog/spdlog.h>

#include "runtime/cluster/swarmx_node.hpp"
#include "runtime/cluster/tensor_codec.hpp"

namespace wsemu::cluster {
namespace {

// The answer to a child that sends or asks about a step already acknowledged.
pb::Envelope duplicate_ack(uint64_t tensor_id, uint64_t step) {
  pb::Envelope envelope;
  auto& ack = *envelope.mutable_gradient_ack();
  ack.set_tensor_id(tensor_id);
  ack.set_step(step);
  ack.set_duplicate(true);
  return envelope;
}

}  // namespace

void SwarmXNode::handle_gradient(uint32_t rank, const pb::GradientData& data) {
  const pb::Chunk& chunk = data.chunk();
  const StepKey step_key{chunk.tensor_id(), chunk.step()};
  stats_.add("gradient_chunks_in", 1);
  stats_.add("gradient_bytes_in", chunk_payload_bytes(chunk));
  if (acked_.count(step_key)) {  // it missed the acknowledgement while away
    children_.at(rank).connection->send(duplicate_ack(chunk.tensor_id(), chunk.step()));
    return;
  }
  auto retained = retained_.find(step_key);
  if (retained != retained_.end() && retained->second.count(chunk.offset()))
    return;  // already summed
  // Checked before anything is allocated for it: a hostile count must not size the buffer.
  auto known = tensor_elements_.find(chunk.tensor_id());
  if (known != tensor_elements_.end() && known->second != chunk.tensor_elements()) {
    throw ProtocolError(fmt::format("gradient chunk says tensor {} has {} elements; it has {}",
                                    chunk.tensor_id(), chunk.tensor_elements(), known->second));
  }
  std::vector<float> values = decode_chunk(chunk, options_.limits.max_frame_bytes / 4);
  const SlotKey key{chunk.tensor_id(), chunk.step(), chunk.offset()};
  Slot& slot = slots_[key];
  if (slot.parts.empty()) {
    slot.count = chunk.count();
    slot.layer = chunk.layer();
    slot.tensor_elements = chunk.tensor_elements();
  } else if (slot.count != chunk.count() || slot.tensor_elements != chunk.tensor_elements()) {
    throw ProtocolError(
        fmt::format("gradient chunk of tensor {} step {} at offset {} has {} elements, another "
                    "child sent {}: all children must chunk the same way",
                    chunk.tensor_id(), chunk.step(), chunk.offset(), chunk.count(), slot.count));
  }
  Child& child = children_.at(rank);
  auto [part, inserted] = slot.parts.try_emplace(rank);
  if (inserted) child.buffered_bytes += values.size() * 4;
  part->second = std::move(values);
  if (data.resend() && !queried_.count(step_key)) {
    // After a restart here, the other children may already hold the acknowledgement.
    query_upstream(chunk.tensor_id(), chunk.step());
  }
  if (slot.parts.size() == options_.fanout && children_.size() == options_.fanout) {
    complete_slot(key, slot);
    slots_.erase(key);
    return;
  }
  if (child.buffered_bytes > options_.child_buffer_bytes && !child.paused_for_buffer &&
      child.connection) {
    child.paused_for_buffer = true;
    child.connection->pause_reading();
    ++stats_.counter("child_buffer_pauses");
  }
}

void SwarmXNode::complete_slot(const SlotKey& key, Slot& slot) {
  const auto& [tensor_id, step, offset] = key;
  // Fixed order: ascending rank (std::map order), one addition at a time.
  auto part = slot.parts.begin();
  std::vector<float> sum = part->second;
  for (++part; part != slot.parts.end(); ++part) {
    const std::vector<float>& values = part->second;
    for (size_t i = 0; i < sum.size(); ++i) sum[i] = sum[i] + values[i];
  }
  for (const auto& [rank, values] : slot.parts) release_buffer(rank, values.size() * 4);
  pb::Envelope envelope;
  pb::GradientData& data = *envelope.mutable_gradient_data();
  pb::Chunk& chunk = *data.mutable_chunk();
  chunk.set_tensor_id(tensor_id);
  chunk.set_layer(slot.layer);
  chunk.set_step(step);
  chunk.set_offset(offset);
  chunk.set_tensor_elements(slot.tensor_elements);
  encode_chunk_values(sum, {}, pb::FP32, chunk);
  auto frame =
      std::make_shared<const std::string>(encode_frame(envelope, options_.limits.max_frame_bytes));
  retained_[{tensor_id, step}][offset] = frame;
  ++stats_.counter("reductions_completed");
  stats_.add("gradient_chunks_out", 1);
  stats_.add("gradient_bytes_out", chunk_payload_bytes(chunk));
  send_upstream_frame(tensor_id, frame);
}

void SwarmXNode::release_buffer(uint32_t rank, uint64_t bytes) {
  Child& child = children_.at(rank);
  child.buffered_bytes -= std::min(child.buffered_bytes, bytes);
  if (child.paused_for_buffer && child.buffered_bytes <= options_.child_buffer_bytes / 2) {
    child.paused_for_buffer = false;
    if (child.connection) child.connection->resume_reading();
  }
}

void SwarmXNode::send_upstream_frame(uint64_t tensor_id,
                                     const std::shared_ptr<const std::string>& frame) {
  const size_t index = upstream_of(tensor_id);
  auto connection = upstreams_[index].link->connection();
  if (!connection) return;  // sent again on reconnect (resend_to_upstream)
  connection->send_frame(frame);
  if (connection->congested()) pause_children_for_upstream(index);
}

void SwarmXNode::send_upstream(uint64_t tensor_id, const pb::Envelope& envelope) {
  if (auto connection = upstreams_[upstream_of(tensor_id)].link->connection())
    connection->send(envelope);
}

void SwarmXNode::pause_children_for_upstream(size_t index) {
  if (!children_paused_for_upstream_.empty()) return;
  for (auto& [id, rank] : connection_rank_) {
    auto it = connections_.find(id);
    if (it == connections_.end()) continue;
    it->second->pause_reading();
    children_paused_for_upstream_.insert(id);
  }
  ++stats_.counter("children_pauses");
  auto connection = upstreams_[index].link->connection();
  auto resume = [this] {
    for (uint64_t id : children_paused_for_upstream_) {
      auto it = connections_.find(id);
      if (it != connections_.end()) it->second->resume_reading();
    }
    children_paused_for_upstream_.clear();
  };
  if (connection) {
    connection->when_drained(resume);
  } else {
    asio::post(io_, resume);
  }
}

void SwarmXNode::query_upstream(uint64_t tensor_id, uint64_t step) {
  queried_.insert({tensor_id, step});
  ++stats_.counter("gradient_queries_sent");
  pb::Envelope envelope;
  envelope.mutable_gradient_query()->set_tensor_id(tensor_id);
  envelope.mutable_gradient_query()->set_step(step);
  send_upstream(tensor_id, envelope);
}

void SwarmXNode::handle_child_query(uint32_t rank, const pb::GradientQuery& query) {
  const StepKey key{query.tensor_id(), query.step()};
  if (acked_.count(key)) {
    children_.at(rank).connection->send(duplicate_ack(query.tensor_id(), query.step()));
    return;
  }
  if (!queried_.count(key)) query_upstream(query.tensor_id(), query.step());
}

void SwarmXNode::handle_ack(const pb::GradientAck& ack) {
  const StepKey key{ack.tensor_id(), ack.step()};
  ++stats_.counter("acks_in");
  retained_.erase(key);
  queried_.erase(key);
  auto first = slots_.lower_bound(SlotKey{ack.tensor_id(), ack.step(), 0});
  auto last = first;
  while (last != slots_.end() && std::get<0>(last->first) == ack.tensor_id() &&
         std::get<1>(last->first) == ack.step()) {
    for (const auto& [rank, values] : last->second.parts) release_buffer(rank, values.size() * 4);
    ++last;
  }
  slots_.erase(first, last);
  remember_acked(key);
  pb::Envelope envelope;
  *envelope.mutable_gradient_ack() = ack;
  for (const auto& [rank, child] : children_) {
    if (child.connection && child.connection->is_open()) child.connection->send(envelope);
  }
}

void SwarmXNode::remember_acked(const StepKey& key) {
  if (!acked_.insert(key).second) return;
  acked_order_.push_back(key);
  while (acked_order_.size() > options_.history) {
    acked_.erase(acked_order_.front());
    acked_order_.pop_front();
  }
}

void SwarmXNode::resend_to_upstream(size_t index) {
  auto connection = upstreams_[index].link->connection();
  if (!connection) return;
  size_t requests = 0;
  size_t sums = 0;
  for (auto& [group_id, group] : groups_) {
    if (!group.forwarded || group.upstreams_ended.count(index)) continue;
    pb::Envelope envelope;
    pb::WeightRequest& request = *envelope.mutable_weight_request();
    request = group.request;
    request.set_request_id(group_id);
    request.set_resend(true);
    connection->send(envelope);
    ++requests;
  }
  for (const auto& [key, frames] : retained_) {
    if (upstream_of(key.first) != index) continue;
    for (const auto& [offset, frame] : frames) {
      // The stored frame has resend = false; the receiver treats both alike, except for queries.
      pb::Envelope envelope =
          parse_envelope(frame->data() + kFrameHeaderBytes, frame->size() - kFrameHeaderBytes);
      envelope.mutable_gradient_data()->set_resend(true);
      connection->send(envelope);
      ++sums;
    }
  }
  for (const auto& key : queried_) {
    if (upstream_of(key.first) != index) continue;
    pb::Envelope envelope;
    envelope.mutable_gradient_query()->set_tensor_id(key.first);
    envelope.mutable_gradient_query()->set_step(key.second);
    connection->send(envelope);
  }
  if (requests || sums) {
    spdlog::info("sent again to upstream {}: {} weight requests, {} gradient sums", index, requests,
                 sums);
  }
}

}  // namespace wsemu::cluster
