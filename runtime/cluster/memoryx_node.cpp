#include "runtime/cluster/memoryx_node.hpp"

#include <spdlog/spdlog.h>

#include <csignal>

#include "runtime/cluster/handshake.hpp"
#include "runtime/cluster/optimizer.hpp"
#include "runtime/cluster/tensor_codec.hpp"

namespace wsemu::cluster {

MemoryXNode::MemoryXNode(MemoryXOptions options)
    : options_(std::move(options)),
      listener_(io_, options_.limits, server_tls_context(options_.tls)),
      stats_(options_.name, "memoryx"),
      store_(options_.store_dir / "spill", options_.memory_budget) {
  if (options_.shard_count == 0 || options_.shard_index >= options_.shard_count) {
    throw ConfigError("--shard I/N needs 0 <= I < N");
  }
  recover();
}

MemoryXNode::~MemoryXNode() = default;

void MemoryXNode::stop() {
  asio::post(io_, [this] {
    if (stopping_) return;
    stopping_ = true;
    spdlog::info("stopping: writing a final checkpoint");
    try {
      if (dirty_ || sequence_ == 0) checkpoint_now();
    } catch (const std::exception& error) {
      spdlog::error("final checkpoint failed: {}", error.what());
    }
    listener_.write_stats();
    listener_.close();
    for (auto& [id, peer] : peers_) peer.connection->close("node stopping");
    io_.stop();
  });
}

int MemoryXNode::run() {
  // Past a file size limit a write must fail (EFBIG) like a full disk, not kill the node.
  std::signal(SIGXFSZ, SIG_IGN);
  const Address bound = listener_.open(options_.listen, options_.port_file);
  stats_.set_info("listen", bound.to_string());
  stats_.set_info("shard", fmt::format("{}/{}", options_.shard_index, options_.shard_count));
  spdlog::info("memoryx '{}' listening on {} (shard {}/{}, {} tensors, store '{}')", options_.name,
               bound.to_string(), options_.shard_index, options_.shard_count, store_.size(),
               options_.store_dir.string());
  listener_.serve_node(*this, options_);
  return 0;
}

NodeListener::PeerHandlers MemoryXNode::accept(const std::shared_ptr<Connection>& connection) {
  const uint64_t id = connection->id();
  peers_[id].connection = connection;
  ++stats_.counter("connections_accepted");
  return {[this, id](pb::Envelope& envelope) { on_frame(id, envelope); },
          [this, id](const std::string& reason) { on_closed(id, reason); }};
}

void MemoryXNode::on_closed(uint64_t peer_id, const std::string& reason) {
  auto it = peers_.find(peer_id);
  if (it == peers_.end()) return;
  const Peer& peer = it->second;
  if (reason.find("protocol error") != std::string::npos ||
      reason.find("frame") != std::string::npos) {
    ++stats_.counter("protocol_errors");
    spdlog::warn("closed {} ({}): {}", peer.label.empty() ? peer.connection->remote() : peer.label,
                 peer.connection->remote(), reason);
  } else if (!peer.label.empty()) {
    spdlog::info("{} disconnected: {}", peer.label, reason);
  }
  std::erase_if(pending_requests_, [&](const PendingRequest& p) { return p.peer_id == peer_id; });
  peers_.erase(it);
}

void MemoryXNode::handshake(Peer& peer, pb::Envelope& envelope) {
  pb::Envelope reply;
  pb::HelloReply& answer = *reply.mutable_hello_reply();
  answer.set_protocol_version(kProtocolVersion);
  answer.set_role(pb::MEMORYX);
  answer.set_name(options_.name);
  answer.set_shard_index(options_.shard_index);
  answer.set_shard_count(options_.shard_count);
  std::string refusal;
  if (envelope.body_case() != pb::Envelope::kHello) {
    refusal = "the first frame must be Hello";
  } else {
    const pb::Hello& hello = envelope.hello();
    refusal = check_hello(*peer.connection, hello, options_.token, answer);
    if (refusal.empty() && hello.role() != pb::SWARMX && hello.role() != pb::LEAF &&
               hello.role() != pb::ORCHESTRATOR) {
      refusal = fmt::format("role '{}' cannot connect to memoryx", role_name(hello.role()));
    }
  }
  if (!refusal.empty()) {
    ++stats_.counter("connections_refused");
    spdlog::warn("refused connection from {}: {}", peer.connection->remote(), refusal);
    answer.clear_proof();
    answer.set_accepted(false);
    answer.set_reason(refusal);
    peer.connection->send(reply);
    peer.connection->close_after_flush("refused: " + refusal);
    return;
  }
  const pb::Hello& hello = envelope.hello();
  peer.role = hello.role();
  peer.rank = hello.rank();
  peer.label = hello.role() == pb::ORCHESTRATOR
                   ? fmt::format("orchestrator-{}", hello.name().empty() ? "unnamed" : hello.name())
                   : fmt::format("{}-{}", role_name(hello.role()), hello.rank());
  peer.connection->set_authenticated();
  peer.connection->attach_counters(
      stats_.peer(peer.label, std::string(role_name(peer.role)), "client"));
  answer.set_accepted(true);
  peer.connection->send(reply);
  send_alert(peer);  // a peer that connects while the log cannot be written learns why at once
  spdlog::info("{} connected from {}", peer.label, peer.connection->remote());
}

void MemoryXNode::on_frame(uint64_t peer_id, pb::Envelope& envelope) {
  Peer& peer = peers_.at(peer_id);
  if (!peer.connection->authenticated()) {
    handshake(peer, envelope);
    return;
  }
  switch (envelope.body_case()) {
    case pb::Envelope::kWeightRequest:
      handle_weight_request(peer_id, envelope.weight_request());
      break;
    case pb::Envelope::kGradientData:
      handle_gradient(peer_id, envelope.gradient_data());
      break;
    case pb::Envelope::kGradientQuery: {
      const auto& query = envelope.gradient_query();
      if (store_.contains(query.tensor_id()) &&
          query.step() < store_.meta(query.tensor_id()).next_step) {
        send_ack(peer_id, query.tensor_id(), query.step(), true);
      }
      break;
    }
    case pb::Envelope::kInitTensor:
      handle_init(peer_id, envelope.init_tensor());
      break;
    case pb::Envelope::kReadTensors:
      handle_read(peer_id, envelope.read_tensors());
      break;
    case pb::Envelope::kCheckpointRequest: {
      pb::Envelope reply;
      auto& answer = *reply.mutable_checkpoint_reply();
      answer.set_request_id(envelope.checkpoint_request().request_id());
      try {
        answer.set_path(checkpoint_now().string());
        answer.set_ok(true);
        answer.set_sequence(sequence_);
      } catch (const std::exception& error) {
        answer.set_message(error.what());
      }
      peer.connection->send(reply);
      break;
    }
    case pb::Envelope::kStatusRequest: {
      pb::Envelope reply;
      reply.mutable_status_reply()->set_request_id(envelope.status_request().request_id());
      reply.mutable_status_reply()->set_json(stats_json().dump());
      peer.connection->send(reply);
      break;
    }
    default:
      throw unexpected_message(envelope, "memoryx");
  }
}

void MemoryXNode::handle_weight_request(uint64_t peer_id, const pb::WeightRequest& request) {
  ++stats_.counter("weight_requests");
  if (request.chunk_elements() > (options_.limits.max_frame_bytes - 4096) / 8) {
    throw ProtocolError("chunk_elements too large for the frame limit");
  }
  start_or_defer(peer_id, request);
}

void MemoryXNode::start_or_defer(uint64_t peer_id, const pb::WeightRequest& request) {
  Peer& peer = peers_.at(peer_id);
  StreamJob job;
  job.request_id = request.request_id();
  job.step = request.step();
  job.layer = request.layer();
  job.pass = request.pass();
  job.dtype = request.dtype() == pb::DTYPE_UNSPECIFIED ? pb::FP32 : request.dtype();
  job.sparsity = request.sparsity();
  job.chunk_elements =
      request.chunk_elements() ? request.chunk_elements() : options_.default_chunk_elements;
  job.tensor_ids = store_.ids_in_layer(request.layer());
  if (job.tensor_ids.empty() && options_.shard_count == 1) {
    end_stream(peer, job, pb::WeightEnd::UNKNOWN,
               fmt::format("layer {} has no tensors", request.layer()));
    return;
  }
  for (uint64_t id : job.tensor_ids) {
    const uint64_t next = store_.meta(id).next_step;
    if (next > request.step()) {
      end_stream(peer, job, pb::WeightEnd::STALE,
                 fmt::format("tensor {} is already at step {}; the weights of step {} are gone", id,
                             next, request.step()));
      return;
    }
    if (next < request.step()) {
      pending_requests_.push_back({peer_id, request});
      return;
    }
  }
  peer.jobs.push_back(std::move(job));
  pump(peer_id);
}

void MemoryXNode::handle_read(uint64_t peer_id, const pb::ReadTensors& read) {
  StreamJob job;
  job.request_id = read.request_id();
  job.read_current = true;
  job.chunk_elements = options_.default_chunk_elements;
  if (read.tensor_ids().empty()) {
    job.tensor_ids = store_.ids();
  } else {
    for (uint64_t id : read.tensor_ids()) {
      if (!store_.contains(id)) {
        end_stream(peers_.at(peer_id), job, pb::WeightEnd::UNKNOWN,
                   fmt::format("no tensor {} on this shard", id));
        return;
      }
      job.tensor_ids.push_back(id);
    }
  }
  peers_.at(peer_id).jobs.push_back(std::move(job));
  pump(peer_id);
}

void MemoryXNode::retry_pending_requests() {
  if (pending_requests_.empty()) return;
  auto pending = std::move(pending_requests_);
  pending_requests_.clear();
  for (auto& p : pending) {
    if (peers_.count(p.peer_id)) start_or_defer(p.peer_id, p.request);
  }
}

void MemoryXNode::pump(uint64_t peer_id) {
  auto it = peers_.find(peer_id);
  if (it == peers_.end()) return;
  Peer& peer = it->second;
  peer.waiting_for_drain = false;
  while (!peer.jobs.empty() && peer.connection->is_open()) {
    if (peer.connection->congested()) {
      peer.waiting_for_drain = true;
      peer.connection->when_drained([this, peer_id] { pump(peer_id); });
      return;
    }
    if (!emit_chunk(peer, peer.jobs.front())) peer.jobs.pop_front();
  }
}

bool MemoryXNode::emit_chunk(Peer& peer, StreamJob& job) {
  if (job.tensor_index >= job.tensor_ids.size()) {
    end_stream(peer, job, pb::WeightEnd::OK, "");
    return false;
  }
  const uint64_t id = job.tensor_ids[job.tensor_index];
  TensorRecord& record = store_.get(id);
  if (!job.read_current && record.next_step != job.step) {
    end_stream(peer, job, pb::WeightEnd::STALE,
               fmt::format("tensor {} was updated to step {} while step {} was streaming", id,
                           record.next_step, job.step));
    return false;
  }
  const uint64_t elements = record.info.elements();
  if (job.offset == 0) job.keep = sparsity_keep_mask(record.weights, job.sparsity);
  const uint64_t count = std::min<uint64_t>(job.chunk_elements, elements - job.offset);
  pb::Envelope envelope;
  pb::WeightData& data = *envelope.mutable_weight_data();
  data.set_request_id(job.request_id);
  pb::Chunk& chunk = *data.mutable_chunk();
  chunk.set_tensor_id(id);
  chunk.set_layer(record.info.layer());
  chunk.set_step(record.next_step);
  chunk.set_offset(job.offset);
  chunk.set_tensor_elements(elements);
  std::span<const float> values(record.weights.data() + job.offset, count);
  std::span<const uint8_t> keep;
  if (!job.keep.empty()) keep = std::span<const uint8_t>(job.keep.data() + job.offset, count);
  encode_chunk_values(values, keep, job.dtype, chunk);
  job.bytes_sent += chunk_payload_bytes(chunk);
  job.bytes_dense += chunk_dense_bytes(chunk);
  stats_.add("weight_chunks_out", 1);
  stats_.add("weight_bytes_out", chunk_payload_bytes(chunk));
  stats_.add("weight_bytes_dense", chunk_dense_bytes(chunk));
  peer.connection->send(envelope);
  job.offset += count;
  if (job.offset >= elements) {
    job.offset = 0;
    job.keep.clear();
    ++job.tensor_index;
  }
  return true;
}

void MemoryXNode::end_stream(Peer& peer, const StreamJob& job, pb::WeightEnd::Status status,
                             const std::string& message) {
  pb::Envelope envelope;
  pb::WeightEnd& end = *envelope.mutable_weight_end();
  end.set_request_id(job.request_id);
  end.set_step(job.step);
  end.set_layer(job.layer);
  end.set_pass(job.pass);
  end.set_status(status);
  end.set_message(message);
  end.set_bytes_sent(job.bytes_sent);
  end.set_bytes_dense(job.bytes_dense);
  if (status == pb::WeightEnd::OK) {
    for (uint64_t id : job.tensor_ids) {
      *end.add_tensors() = store_.meta(id).info;
      end.add_next_steps(store_.meta(id).next_step);
    }
    ++stats_.counter("weight_streams_completed");
  } else {
    ++stats_.counter("weight_streams_failed");
    spdlog::warn("weight stream for {} (request {}, step {}, layer {}) ended: {}", peer.label,
                 job.request_id, job.step, job.layer, message);
  }
  peer.connection->send(envelope);
}

nlohmann::json MemoryXNode::stats_json() {
  stats_.set_info("tensors", store_.size());
  stats_.set_info("min_next_step", store_.min_next_step());
  stats_.set_info("checkpoint_sequence", sequence_);
  stats_.set_info("checkpointed_step", checkpointed_step_);
  stats_.set_info("resident_bytes", store_.resident_bytes());
  stats_.set_info("memory_budget", options_.memory_budget);
  stats_.set_info("spills", store_.spills());
  stats_.set_info("reloads", store_.reloads());
  stats_.set_info("pending_weight_requests", pending_requests_.size());
  stats_.set_info("open_assemblies", assemblies_.size());
  stats_.set_info("log_bytes", log_ ? log_->bytes() : 0);
  stats_.set_info("log_error", log_failure_);
  return stats_.to_json();
}

}  // namespace wsemu::cluster
