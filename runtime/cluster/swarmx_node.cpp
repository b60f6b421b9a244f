#include "runtime/cluster/swarmx_node.hpp"

#include "runtime/cluster/handshake.hpp"

#include <spdlog/spdlog.h>

#include "runtime/cluster/tensor_codec.hpp"

namespace wsemu::cluster {

SwarmXNode::SwarmXNode(SwarmXOptions options)
    : options_(std::move(options)),
      listener_(io_, options_.limits, server_tls_context(options_.tls)),
      stats_(options_.name, "swarmx") {
  if (options_.upstreams.empty()) throw ConfigError("a swarmx node needs --upstream ADDR");
  if (options_.fanout == 0) throw ConfigError("--fanout must be at least 1");
}

SwarmXNode::~SwarmXNode() = default;

void SwarmXNode::stop() {
  asio::post(io_, [this] {
    if (stopping_) return;
    stopping_ = true;
    listener_.write_stats();
    listener_.close();
    for (auto& upstream : upstreams_) upstream.link->stop();
    for (auto& [id, connection] : connections_) connection->close("node stopping");
    io_.stop();
  });
}

int SwarmXNode::run() {
  const Address bound = listener_.open(options_.listen, options_.port_file);
  stats_.set_info("listen", bound.to_string());
  stats_.set_info("fanout", options_.fanout);
  stats_.set_info("rank", options_.rank);
  const auto upstream_tls = client_tls_context(options_.tls);
  for (size_t i = 0; i < options_.upstreams.size(); ++i) {
    UpstreamLink::Options link_options;
    link_options.address = options_.upstreams[i];
    link_options.hello.set_role(pb::SWARMX);
    link_options.hello.set_token(options_.token);
    link_options.hello.set_rank(options_.rank);
    link_options.hello.set_name(options_.name);
    link_options.limits = options_.limits;
    link_options.tls = upstream_tls;
    UpstreamLink::Handlers handlers;
    handlers.on_connected = [this, i](const std::shared_ptr<Connection>& c,
                                      const pb::HelloReply& r) { on_upstream_connected(i, c, r); };
    handlers.on_frame = [this, i](pb::Envelope& envelope) { on_upstream_frame(i, envelope); };
    handlers.on_disconnected = [this, i](const std::string& reason) {
      spdlog::warn("upstream {} lost: {}; reconnecting", options_.upstreams[i].to_string(), reason);
      ++stats_.counter("upstream_disconnects");
      if (upstreams_[i].paused_for_children) {
        upstreams_[i].paused_for_children = false;
      }
    };
    handlers.on_refused = [this, i](const std::string& reason) {
      spdlog::error("upstream {} refused the handshake: {}", options_.upstreams[i].to_string(),
                    reason);
    };
    auto link = std::make_shared<UpstreamLink>(io_, link_options, handlers);
    link->attach_counters(stats_.peer(fmt::format("upstream-{}", i), "upstream", "upstream"));
    upstreams_.push_back({link, false});
  }
  spdlog::info("swarmx '{}' listening on {} (fanout {}, rank {}, {} upstream{})", options_.name,
               bound.to_string(), options_.fanout, options_.rank, upstreams_.size(),
               upstreams_.size() == 1 ? "" : "s");
  for (auto& upstream : upstreams_) upstream.link->start();
  listener_.serve_node(*this, options_);
  return 0;
}

NodeListener::PeerHandlers SwarmXNode::accept(const std::shared_ptr<Connection>& connection) {
  const uint64_t id = connection->id();
  connections_[id] = connection;
  ++stats_.counter("connections_accepted");
  return {[this, id](pb::Envelope& envelope) { on_child_frame(id, envelope); },
          [this, id](const std::string& reason) { on_child_closed(id, reason); }};
}

std::optional<uint32_t> SwarmXNode::rank_of(uint64_t connection_id) const {
  auto it = connection_rank_.find(connection_id);
  if (it == connection_rank_.end()) return std::nullopt;
  return it->second;
}

void SwarmXNode::child_handshake(uint64_t connection_id,
                                 const std::shared_ptr<Connection>& connection,
                                 pb::Envelope& envelope) {
  pb::Envelope reply;
  auto& answer = *reply.mutable_hello_reply();
  answer.set_protocol_version(kProtocolVersion);
  answer.set_role(pb::SWARMX);
  answer.set_name(options_.name);
  answer.set_shard_count(1);
  std::string refusal;
  if (envelope.body_case() != pb::Envelope::kHello) {
    refusal = "the first frame must be Hello";
  } else {
    const pb::Hello& hello = envelope.hello();
    refusal = check_hello(*connection, hello, options_.token, answer);
    if (refusal.empty() && hello.role() != pb::SWARMX && hello.role() != pb::LEAF &&
               hello.role() != pb::ORCHESTRATOR) {
      refusal = fmt::format("role '{}' cannot connect to swarmx", role_name(hello.role()));
    } else if (refusal.empty() && hello.role() != pb::ORCHESTRATOR && !children_.count(hello.rank()) &&
               children_.size() >= options_.fanout) {
      std::string ranks;
      for (const auto& [rank, child] : children_)
        ranks += fmt::format("{}{}", ranks.empty() ? "" : ",", rank);
      refusal = fmt::format("all {} child slots are taken (ranks {}); rank {} has no place",
                            options_.fanout, ranks, hello.rank());
    }
  }
  if (!refusal.empty()) {
    ++stats_.counter("connections_refused");
    spdlog::warn("refused connection from {}: {}", connection->remote(), refusal);
    answer.clear_proof();
    answer.set_accepted(false);
    answer.set_reason(refusal);
    connection->send(reply);
    connection->close_after_flush("refused: " + refusal);
    return;
  }
  const pb::Hello& hello = envelope.hello();
  connection->set_authenticated();
  answer.set_accepted(true);
  if (hello.role() == pb::ORCHESTRATOR) {
    connection->attach_counters(
        stats_.peer("orchestrator-" + hello.name(), "orchestrator", "client"));
    connection->send(reply);
    return;
  }
  const uint32_t rank = hello.rank();
  Child& child = children_[rank];
  if (child.connection && child.connection->is_open()) {
    spdlog::warn("rank {} connected again from {}; closing its old connection", rank,
                 connection->remote());
    child.connection->close("replaced by a new connection of the same rank");
  }
  child.connection = connection;
  connection_rank_[connection_id] = rank;
  connection->attach_counters(stats_.peer(fmt::format("{}-{}", role_name(hello.role()), rank),
                                          std::string(role_name(hello.role())), "child"));
  connection->send(reply);
  stats_.set_info("registered_children", children_.size());
  spdlog::info("child {} rank {} connected from {} ({}/{} registered)", role_name(hello.role()),
               rank, connection->remote(), children_.size(), options_.fanout);
  for (auto& upstream : upstreams_) {
    if (upstream.paused_for_children) {
      connection->pause_reading();
      children_paused_for_upstream_.insert(connection_id);
      break;
    }
  }
}

void SwarmXNode::on_child_frame(uint64_t connection_id, pb::Envelope& envelope) {
  const auto connection = connections_.at(connection_id);
  if (!connection->authenticated()) {
    child_handshake(connection_id, connection, envelope);
    return;
  }
  if (envelope.body_case() == pb::Envelope::kStatusRequest) {
    pb::Envelope reply;
    reply.mutable_status_reply()->set_request_id(envelope.status_request().request_id());
    reply.mutable_status_reply()->set_json(stats_json().dump());
    connection->send(reply);
    return;
  }
  const auto rank = rank_of(connection_id);
  if (!rank) throw ProtocolError("this connection may only ask for status");
  switch (envelope.body_case()) {
    case pb::Envelope::kWeightRequest:
      handle_weight_request(*rank, connection_id, envelope.weight_request());
      break;
    case pb::Envelope::kGradientData:
      handle_gradient(*rank, envelope.gradient_data());
      break;
    case pb::Envelope::kGradientQuery:
      handle_child_query(*rank, envelope.gradient_query());
      break;
    default:
      throw unexpected_message(envelope, "swarmx", "a child");
  }
}

void SwarmXNode::on_child_closed(uint64_t connection_id, const std::string& reason) {
  auto connection = connections_[connection_id];
  connections_.erase(connection_id);
  children_paused_for_upstream_.erase(connection_id);
  const auto rank = rank_of(connection_id);
  if (reason.find("protocol error") != std::string::npos ||
      reason.find("frame") != std::string::npos) {
    ++stats_.counter("protocol_errors");
    spdlog::warn("closed connection from {}: {}", connection ? connection->remote() : "?", reason);
  }
  if (!rank) return;
  connection_rank_.erase(connection_id);
  Child& child = children_.at(*rank);
  if (child.connection && child.connection->id() == connection_id) {
    child.connection.reset();
    ++stats_.counter("child_disconnects");
    spdlog::warn("child rank {} disconnected: {}", *rank, reason);
  }
  // Its requests still gathering are forgotten; it asks again (resend) when it reconnects.
  for (auto& [id, group] : groups_) {
    if (group.forwarded) continue;
    auto member = group.members.find(*rank);
    if (member != group.members.end() && member->second.connection_id == connection_id)
      group.members.erase(member);
  }
  // A stream it was receiving must not wait for it.
  for (size_t i = 0; i < upstreams_.size(); ++i) apply_child_backpressure(i);
}

void SwarmXNode::on_upstream_connected(size_t index, const std::shared_ptr<Connection>&,
                                       const pb::HelloReply& reply) {
  const uint32_t expected_count = static_cast<uint32_t>(upstreams_.size());
  const uint32_t count = reply.shard_count() == 0 ? 1 : reply.shard_count();
  if (count != expected_count || reply.shard_index() != index) {
    spdlog::error(
        "upstream {} is shard {}/{}, but it was given as upstream {} of {}: give --upstream once "
        "per "
        "memoryx shard, in shard order",
        options_.upstreams[index].to_string(), reply.shard_index(), count, index, expected_count);
    upstreams_[index].link->connection()->close("wrong shard layout");
    return;
  }
  spdlog::info("connected to upstream {} ({} '{}')", options_.upstreams[index].to_string(),
               role_name(reply.role()), reply.name());
  stats_.counter("upstream_reconnects") = 0;
  for (const auto& upstream : upstreams_)
    stats_.add("upstream_reconnects", upstream.link->reconnects());
  resend_to_upstream(index);
}

void SwarmXNode::on_upstream_frame(size_t index, pb::Envelope& envelope) {
  switch (envelope.body_case()) {
    case pb::Envelope::kWeightData:
      on_weight_data(index, *envelope.mutable_weight_data());
      break;
    case pb::Envelope::kWeightEnd:
      on_weight_end(index, envelope.weight_end());
      break;
    case pb::Envelope::kGradientAck:
      handle_ack(envelope.gradient_ack());
      break;
    case pb::Envelope::kError:
      spdlog::warn("upstream reports: {}", envelope.error().message());
      break;
    case pb::Envelope::kNodeAlert: {
      // Passed down so every leaf (and its operator) learns why the run stalls.
      const pb::NodeAlert& alert = envelope.node_alert();
      if (alert.resolved())
        spdlog::info("{}: {}", alert.node(), alert.message());
      else
        spdlog::error("{}: {}", alert.node(), alert.message());
      for (auto& [rank, child] : children_) {
        if (child.connection && child.connection->is_open()) child.connection->send(envelope);
      }
      break;
    }
    default:
      throw ProtocolError(fmt::format("unexpected message #{} from upstream",
                                      static_cast<int>(envelope.body_case())));
  }
}

void SwarmXNode::handle_weight_request(uint32_t rank, uint64_t connection_id,
                                       const pb::WeightRequest& request) {
  ++stats_.counter("weight_requests_in");
  const WeightKey key{
      request.step(),
      request.layer(),
      request.pass(),
      static_cast<int>(request.dtype() == pb::DTYPE_UNSPECIFIED ? pb::FP32 : request.dtype()),
      static_cast<int>(request.sparsity().mode()),
      request.sparsity().threshold(),
      request.sparsity().keep_fraction(),
      request.chunk_elements()};
  uint64_t group_id;
  auto gathering = gathering_.find(key);
  if (gathering != gathering_.end()) {
    group_id = gathering->second;
  } else {
    group_id = next_group_id_++;
    Group& group = groups_[group_id];
    group.key = key;
    group.request = request;
    gathering_[key] = group_id;
  }
  Group& group = groups_.at(group_id);
  group.members[rank] = Member{connection_id, request.request_id()};
  if (request.resend() && !group.resend) {
    group.resend = true;
    ++stats_.counter("resend_requests");
    group.flush_timer = std::make_shared<asio::steady_timer>(io_, options_.resend_flush);
    group.flush_timer->async_wait([this, group_id](const boost::system::error_code& ec) {
      if (ec) return;
      auto it = groups_.find(group_id);
      if (it != groups_.end() && !it->second.forwarded) forward(group_id);
    });
  }
  maybe_forward(group_id);
  if (!groups_.at(group_id).forwarded) watch_missing_children(group_id);
}

std::string SwarmXNode::missing_children() const {
  std::string present;
  for (const auto& [rank, child] : children_)
    present += fmt::format("{}{}", present.empty() ? "" : ",", rank);
  return fmt::format("{} of its {} children ever connected (ranks: {})", children_.size(),
                     options_.fanout, present.empty() ? "none" : present);
}

void SwarmXNode::watch_missing_children(uint64_t group_id) {
  Group& group = groups_.at(group_id);
  if (group.wait_timer || children_.size() >= options_.fanout) return;
  constexpr auto kReportEvery = std::chrono::seconds(10);
  group.wait_timer = std::make_shared<asio::steady_timer>(io_);
  const auto deadline = options_.child_wait.count() > 0
                            ? group.created + options_.child_wait
                            : std::chrono::steady_clock::time_point::max();
  auto next = std::min(std::chrono::steady_clock::now() + kReportEvery, deadline);
  group.wait_timer->expires_at(next);
  group.wait_timer->async_wait([this, group_id, deadline](const boost::system::error_code& ec) {
    if (ec) return;
    auto it = groups_.find(group_id);
    if (it == groups_.end() || it->second.forwarded) return;
    Group& waiting = it->second;
    waiting.wait_timer.reset();
    const auto waited = std::chrono::duration_cast<std::chrono::seconds>(
        std::chrono::steady_clock::now() - waiting.created);
    if (children_.size() >= options_.fanout) return;  // they came; maybe_forward decides
    const std::string who = missing_children();
    if (std::chrono::steady_clock::now() < deadline) {
      spdlog::warn("the weight request for step {} layer {} has waited {} s: only {}",
                   waiting.request.step(), waiting.request.layer(), waited.count(), who);
      watch_missing_children(group_id);
      return;
    }
    const std::string message = fmt::format(
        "swarmx '{}' gave up after {} s waiting for its children: only {} (check --fanout, "
        "and that every wafer under it runs)",
        options_.name, waited.count(), who);
    spdlog::error("{}", message);
    pb::Envelope envelope;
    pb::WeightEnd& end = *envelope.mutable_weight_end();
    end.set_step(waiting.request.step());
    end.set_layer(waiting.request.layer());
    end.set_pass(waiting.request.pass());
    end.set_status(pb::WeightEnd::ERROR);
    end.set_message(message);
    for (const auto& [rank, member] : waiting.members) {
      if (auto connection = member_connection(rank, member)) {
        end.set_request_id(member.request_id);
        connection->send(envelope);
      }
    }
    gathering_.erase(waiting.key);
    if (waiting.flush_timer) waiting.flush_timer->cancel();
    groups_.erase(it);
  });
}

void SwarmXNode::maybe_forward(uint64_t group_id) {
  Group& group = groups_.at(group_id);
  if (group.forwarded || children_.size() < options_.fanout) return;
  const auto served = served_.find(group.key);
  for (const auto& [rank, child] : children_) {
    const bool asked = group.members.count(rank) != 0;
    const bool had_it = served != served_.end() && served->second.count(rank) != 0;
    if (!asked && !had_it) return;
  }
  forward(group_id);
}

void SwarmXNode::forward(uint64_t group_id) {
  Group& group = groups_.at(group_id);
  gathering_.erase(group.key);
  group.forwarded = true;
  if (group.flush_timer) group.flush_timer->cancel();
  if (group.members.empty()) {  // everyone who asked went away
    groups_.erase(group_id);
    return;
  }
  ++stats_.counter("weight_requests_forwarded");
  if (group.members.size() < options_.fanout) ++stats_.counter("partial_group_fetches");
  pb::Envelope envelope;
  pb::WeightRequest& request = *envelope.mutable_weight_request();
  request = group.request;
  request.set_request_id(group_id);
  request.set_resend(group.resend);
  for (auto& upstream : upstreams_) {
    if (auto connection = upstream.link->connection()) connection->send(envelope);
  }
}

std::shared_ptr<Connection> SwarmXNode::member_connection(uint32_t rank,
                                                          const Member& member) const {
  auto it = children_.find(rank);
  if (it == children_.end() || !it->second.connection) return nullptr;
  if (it->second.connection->id() != member.connection_id || !it->second.connection->is_open())
    return nullptr;
  return it->second.connection;
}

void SwarmXNode::on_weight_data(size_t index, pb::WeightData& data) {
  auto it = groups_.find(data.request_id());
  stats_.add("weight_chunks_in", 1);
  stats_.add("weight_bytes_in", chunk_payload_bytes(data.chunk()));
  // MemoryX's word on a tensor's size, against which the children's gradients are checked.
  tensor_elements_[data.chunk().tensor_id()] = data.chunk().tensor_elements();
  if (it == groups_.end()) return;  // a stream whose receivers all left
  pb::Envelope envelope;
  for (const auto& [rank, member] : it->second.members) {
    auto connection = member_connection(rank, member);
    if (!connection) continue;
    data.set_request_id(member.request_id);
    *envelope.mutable_weight_data() = data;
    connection->send(envelope);
    stats_.add("weight_chunks_out", 1);
    stats_.add("weight_bytes_out", chunk_payload_bytes(data.chunk()));
  }
  apply_child_backpressure(index);
}

void SwarmXNode::apply_child_backpressure(size_t upstream_index) {
  Upstream& upstream = upstreams_[upstream_index];
  std::shared_ptr<Connection> congested;
  for (const auto& [rank, child] : children_) {
    if (child.connection && child.connection->is_open() && child.connection->congested()) {
      congested = child.connection;
      break;
    }
  }
  auto link_connection = upstream.link->connection();
  if (!congested) {
    if (upstream.paused_for_children) {
      upstream.paused_for_children = false;
      if (link_connection) link_connection->resume_reading();
    }
    return;
  }
  if (!upstream.paused_for_children && link_connection) {
    upstream.paused_for_children = true;
    link_connection->pause_reading();
    ++stats_.counter("upstream_pauses");
  }
  congested->when_drained([this, upstream_index] { apply_child_backpressure(upstream_index); });
}

void SwarmXNode::on_weight_end(size_t index, const pb::WeightEnd& end) {
  auto it = groups_.find(end.request_id());
  if (it == groups_.end()) return;
  Group& group = it->second;
  if (!group.upstreams_ended.insert(index).second) return;
  pb::WeightEnd& merged = group.end;
  if (group.upstreams_ended.size() == 1) {
    merged = end;
  } else {
    if (end.status() != pb::WeightEnd::OK && merged.status() == pb::WeightEnd::OK) {
      merged.set_status(end.status());
      merged.set_message(end.message());
    }
    for (const auto& tensor : end.tensors()) *merged.add_tensors() = tensor;
    for (uint64_t step : end.next_steps()) merged.add_next_steps(step);
    merged.set_bytes_sent(merged.bytes_sent() + end.bytes_sent());
    merged.set_bytes_dense(merged.bytes_dense() + end.bytes_dense());
  }
  if (group.upstreams_ended.size() < upstreams_.size()) return;
  if (merged.status() == pb::WeightEnd::OK && merged.tensors().empty()) {
    merged.set_status(pb::WeightEnd::UNKNOWN);
    merged.set_message(fmt::format("layer {} has no tensors on any shard", merged.layer()));
  }
  pb::Envelope envelope;
  for (const auto& [rank, member] : group.members) {
    auto connection = member_connection(rank, member);
    if (!connection) continue;
    merged.set_request_id(member.request_id);
    *envelope.mutable_weight_end() = merged;
    connection->send(envelope);
    remember_served(group.key, rank);
  }
  ++stats_.counter("weight_streams_completed");
  groups_.erase(it);
}

void SwarmXNode::remember_served(const WeightKey& key, uint32_t rank) {
  auto [it, inserted] = served_.try_emplace(key);
  it->second.insert(rank);
  if (!inserted) return;
  served_order_.push_back(key);
  while (served_order_.size() > options_.history) {
    served_.erase(served_order_.front());
    served_order_.pop_front();
  }
}

nlohmann::json SwarmXNode::stats_json() {
  stats_.set_info("registered_children", children_.size());
  size_t connected = 0;
  for (const auto& [rank, child] : children_) connected += child.connection != nullptr;
  stats_.set_info("connected_children", connected);
  stats_.set_info("open_sums", slots_.size());
  stats_.set_info("sums_awaiting_ack", retained_.size());
  stats_.set_info("weight_groups", groups_.size());
  size_t upstream_connected = 0;
  uint64_t reconnects = 0;
  for (const auto& upstream : upstreams_) {
    upstream_connected += upstream.link->connection() != nullptr;
    reconnects += upstream.link->reconnects();
  }
  stats_.set_info("connected_upstreams", upstream_connected);
  stats_.counter("upstream_reconnects") = reconnects;
  return stats_.to_json();
}

}  // namespace wsemu::cluster
