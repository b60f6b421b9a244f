#include "runtime/cluster/cluster_client.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>

#include "runtime/cluster/tensor_codec.hpp"
#include "runtime/cluster/upstream_link.hpp"

namespace wsemu::cluster {

const TensorValues& LayerWeights::tensor(uint64_t tensor_id) const {
  for (const auto& t : tensors) {
    if (t.info.tensor_id() == tensor_id) return t;
  }
  throw ClusterError(fmt::format("layer {} has no tensor {}", layer, tensor_id));
}

namespace {

struct PartialTensor {
  std::vector<float> values;
  std::set<uint64_t> offsets;
  uint64_t covered = 0;
};

struct PendingStream {
  pb::Envelope request;  // WeightRequest or ReadTensors, sent again after a reconnect
  bool is_read = false;
  std::promise<LayerWeights> weights;
  std::promise<std::vector<TensorValues>> read;
  std::map<uint64_t, PartialTensor> tensors;
  uint64_t bytes = 0;
  uint64_t dense = 0;
};

struct PendingControl {
  pb::Envelope request;
  std::promise<pb::Envelope> reply;
};

}  // namespace

struct ClusterClient::State : std::enable_shared_from_this<ClusterClient::State> {
  ClientOptions options;
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  asio::steady_timer give_up{io};
  std::shared_ptr<UpstreamLink> link;
  std::atomic<uint64_t> next_request_id{1};
  // io thread only
  std::map<uint64_t, PendingStream> streams;
  std::map<uint64_t, PendingControl> controls;
  std::map<std::pair<uint64_t, uint64_t>, std::vector<std::shared_ptr<const std::string>>> unacked;
  std::string failure;  // set once the client gave up for good
  bool ever_connected = false;
  std::promise<void> first_connect;
  bool first_connect_done = false;
  // shared with callers
  mutable std::mutex mutex;
  std::condition_variable cv;
  uint64_t unacked_bytes = 0;
  std::string failure_shared;  // `failure`, readable by callers
  ClientCounters counters;
  std::vector<pb::NodeAlert> alerts;  // not yet taken

  std::shared_ptr<Connection> connection() const { return link ? link->connection() : nullptr; }

  void fail_all(const std::string& reason) {
    failure = reason;
    {
      std::lock_guard lock(mutex);
      failure_shared = reason;
    }
    for (auto& [id, stream] : streams) {
      auto error = std::make_exception_ptr(ClusterError(reason));
      if (stream.is_read)
        stream.read.set_exception(error);
      else
        stream.weights.set_exception(error);
    }
    streams.clear();
    for (auto& [id, control] : controls)
      control.reply.set_exception(std::make_exception_ptr(ClusterError(reason)));
    controls.clear();
    if (!first_connect_done) {
      first_connect_done = true;
      first_connect.set_exception(std::make_exception_ptr(ClusterError(reason)));
    }
    {
      std::lock_guard lock(mutex);
      unacked.clear();
      unacked_bytes = 0;
      counters.unacked_bytes = 0;
    }
    cv.notify_all();
  }

  void on_connected(const std::shared_ptr<Connection>& connection) {
    give_up.cancel();
    if (!first_connect_done) {
      first_connect_done = true;
      first_connect.set_value();
    }
    if (ever_connected) {
      std::lock_guard lock(mutex);
      ++counters.reconnects;
    }
    const bool resend = ever_connected;
    ever_connected = true;
    if (!resend) return;
    for (auto& [id, stream] : streams) {
      stream.tensors.clear();
      stream.bytes = stream.dense = 0;
      if (stream.request.has_weight_request())
        stream.request.mutable_weight_request()->set_resend(true);
      connection->send(stream.request);
    }
    for (auto& [id, control] : controls) connection->send(control.request);
    uint64_t resent = 0;
    for (auto& [key, frames] : unacked) {
      for (auto& frame : frames) {
        pb::Envelope envelope =
            parse_envelope(frame->data() + kFrameHeaderBytes, frame->size() - kFrameHeaderBytes);
        envelope.mutable_gradient_data()->set_resend(true);
        connection->send(envelope);
        ++resent;
      }
    }
    std::lock_guard lock(mutex);
    counters.gradient_chunks_resent += resent;
  }

  void on_disconnected(const std::string& reason) {
    spdlog::debug("client {}: connection lost ({}); reconnecting", options.name, reason);
    give_up.expires_after(options.reconnect_timeout);
    give_up.async_wait([self = shared_from_this(), reason](const boost::system::error_code& ec) {
      if (ec || self->connection()) return;
      self->fail_all(fmt::format("lost the connection to {} for {} ms (last error: {})",
                                 self->options.address, self->options.reconnect_timeout.count(),
                                 reason));
    });
  }

  void on_frame(pb::Envelope& envelope) {
    switch (envelope.body_case()) {
      case pb::Envelope::kWeightData:
        on_weight_data(envelope.weight_data());
        break;
      case pb::Envelope::kWeightEnd:
        on_weight_end(envelope.weight_end());
        break;
      case pb::Envelope::kGradientAck: {
        const auto key =
            std::make_pair(envelope.gradient_ack().tensor_id(), envelope.gradient_ack().step());
        auto it = unacked.find(key);
        if (it == unacked.end()) break;
        uint64_t bytes = 0;
        for (const auto& frame : it->second) bytes += frame->size();
        unacked.erase(it);
        {
          std::lock_guard lock(mutex);
          unacked_bytes -= std::min(unacked_bytes, bytes);
          counters.unacked_bytes = unacked_bytes;
        }
        cv.notify_all();
        break;
      }
      case pb::Envelope::kInitTensorReply:
        complete_control(envelope.init_tensor_reply().request_id(), envelope);
        break;
      case pb::Envelope::kCheckpointReply:
        complete_control(envelope.checkpoint_reply().request_id(), envelope);
        break;
      case pb::Envelope::kStatusReply:
        complete_control(envelope.status_reply().request_id(), envelope);
        break;
      case pb::Envelope::kError:
        spdlog::warn("client {}: the node reports: {}", options.name, envelope.error().message());
        break;
      case pb::Envelope::kNodeAlert: {
        const pb::NodeAlert& alert = envelope.node_alert();
        if (alert.resolved())
          spdlog::info("client {}: {} reports: {}", options.name, alert.node(), alert.message());
        else
          spdlog::error("client {}: {} reports: {}", options.name, alert.node(), alert.message());
        std::lock_guard lock(mutex);
        alerts.push_back(alert);
        break;
      }
      default:
        throw ProtocolError(
            fmt::format("unexpected message #{}", static_cast<int>(envelope.body_case())));
    }
  }

  void complete_control(uint64_t request_id, pb::Envelope& envelope) {
    auto it = controls.find(request_id);
    if (it == controls.end()) return;
    it->second.reply.set_value(std::move(envelope));
    controls.erase(it);
  }

  void on_weight_data(const pb::WeightData& data) {
    auto it = streams.find(data.request_id());
    if (it == streams.end()) return;
    const pb::Chunk& chunk = data.chunk();
    if (chunk.tensor_elements() > (1ull << 34)) throw ProtocolError("tensor too large");
    PartialTensor& partial = it->second.tensors[chunk.tensor_id()];
    if (partial.values.empty()) partial.values.assign(chunk.tensor_elements(), 0.0f);
    if (partial.values.size() != chunk.tensor_elements())
      throw ProtocolError("chunks disagree on the tensor size");
    if (!partial.offsets.insert(chunk.offset()).second) return;  // sent again after a reconnect
    std::vector<float> values = decode_chunk(chunk);
    std::copy(values.begin(), values.end(),
              partial.values.begin() + static_cast<ptrdiff_t>(chunk.offset()));
    partial.covered += chunk.count();
    it->second.bytes += chunk_payload_bytes(chunk);
    it->second.dense += chunk_dense_bytes(chunk);
  }

  void on_weight_end(const pb::WeightEnd& end) {
    auto it = streams.find(end.request_id());
    if (it == streams.end()) return;
    PendingStream stream = std::move(it->second);
    streams.erase(it);
    try {
      if (end.status() != pb::WeightEnd::OK) {
        throw ClusterError(fmt::format("weights of step {} layer {}: {} ({})", end.step(),
                                       end.layer(), pb::WeightEnd::Status_Name(end.status()),
                                       end.message()));
      }
      std::vector<TensorValues> tensors;
      for (int i = 0; i < end.tensors_size(); ++i) {
        const pb::TensorInfo& info = end.tensors(i);
        auto partial = stream.tensors.find(info.tensor_id());
        const uint64_t covered = partial == stream.tensors.end() ? 0 : partial->second.covered;
        if (covered != info.elements()) {
          throw ClusterError(
              fmt::format("stream ended with tensor {} incomplete ({} of {} elements)",
                          info.tensor_id(), covered, info.elements()));
        }
        TensorValues values;
        values.info = info;
        values.next_step = i < end.next_steps_size() ? end.next_steps(i) : 0;
        values.values = std::move(partial->second.values);
        tensors.push_back(std::move(values));
      }
      std::sort(tensors.begin(), tensors.end(), [](const TensorValues& a, const TensorValues& b) {
        return a.info.tensor_id() < b.info.tensor_id();
      });
      {
        std::lock_guard lock(mutex);
        counters.weight_bytes_received += stream.bytes;
        counters.weight_bytes_dense += stream.dense;
      }
      if (stream.is_read) {
        stream.read.set_value(std::move(tensors));
      } else {
        LayerWeights weights;
        weights.step = end.step();
        weights.layer = end.layer();
        weights.pass = end.pass();
        weights.tensors = std::move(tensors);
        weights.bytes_received = stream.bytes;
        weights.bytes_dense = stream.dense;
        stream.weights.set_value(std::move(weights));
      }
    } catch (...) {
      if (stream.is_read)
        stream.read.set_exception(std::current_exception());
      else
        stream.weights.set_exception(std::current_exception());
    }
  }
};

ClusterClient::ClusterClient(ClientOptions options)
    : options_(std::move(options)), state_(std::make_shared<State>()) {
  state_->options = options_;
  if (options_.name.empty()) {
    options_.name = fmt::format("{}-{}", role_name(options_.role), options_.rank);
    state_->options.name = options_.name;
  }
  UpstreamLink::Options link;
  link.address = parse_address(options_.address);
  link.hello.set_role(options_.role);
  link.hello.set_token(options_.token);
  link.hello.set_rank(options_.rank);
  link.hello.set_name(options_.name);
  link.limits.max_frame_bytes = options_.max_frame_bytes;
  link.backoff_initial = options_.backoff_initial;
  link.backoff_max = options_.backoff_max;
  link.tls = client_tls_context(TlsFiles{"", "", options_.tls_ca});
  std::weak_ptr<State> weak = state_;
  UpstreamLink::Handlers handlers;
  handlers.on_connected = [weak](const std::shared_ptr<Connection>& c, const pb::HelloReply&) {
    if (auto s = weak.lock()) s->on_connected(c);
  };
  handlers.on_frame = [weak](pb::Envelope& e) {
    if (auto s = weak.lock()) s->on_frame(e);
  };
  handlers.on_disconnected = [weak](const std::string& reason) {
    if (auto s = weak.lock()) s->on_disconnected(reason);
  };
  handlers.on_refused = [weak](const std::string& reason) {
    if (auto s = weak.lock()) {
      s->link->stop();
      s->fail_all(fmt::format("{} refused the connection: {}", s->options.address, reason));
    }
  };
  state_->link = std::make_shared<UpstreamLink>(state_->io, link, handlers);
  thread_ = std::thread([state = state_] { state->io.run(); });
}

ClusterClient::~ClusterClient() {
  asio::post(state_->io, [state = state_] {
    state->link->stop();
    state->give_up.cancel();
    if (state->failure.empty()) state->fail_all("the client was closed");
    state->work.reset();
    state->io.stop();
  });
  thread_.join();
}

void ClusterClient::connect() {
  auto future = state_->first_connect.get_future();
  asio::post(state_->io, [state = state_] { state->link->start(); });
  if (future.wait_for(options_.connect_timeout) != std::future_status::ready) {
    asio::post(state_->io,
               [state = state_, timeout = options_.connect_timeout, address = options_.address,
                hint = options_.tls_ca.empty() ? " (is the node running? a node that serves TLS needs --tls-ca)"
                                               : ""] {
                 if (!state->first_connect_done) {
                   state->link->stop();
                   state->fail_all(fmt::format("could not connect to {} within {} ms{}", address,
                                               timeout.count(), hint));
                 }
               });
  }
  future.get();
}

std::future<LayerWeights> ClusterClient::request_weights(uint64_t step, uint32_t layer,
                                                         uint32_t pass,
                                                         const WeightEncoding& encoding) {
  pb::Envelope envelope;
  pb::WeightRequest& request = *envelope.mutable_weight_request();
  request.set_request_id(state_->next_request_id++);
  request.set_step(step);
  request.set_layer(layer);
  request.set_pass(pass);
  request.set_dtype(encoding.dtype);
  *request.mutable_sparsity() = encoding.sparsity;
  request.set_chunk_elements(encoding.chunk_elements);
  auto promise = std::make_shared<std::promise<LayerWeights>>();
  auto future = promise->get_future();
  asio::post(state_->io, [state = state_, envelope, promise]() mutable {
    if (!state->failure.empty()) {
      promise->set_exception(std::make_exception_ptr(ClusterError(state->failure)));
      return;
    }
    const uint64_t id = envelope.weight_request().request_id();
    PendingStream& stream = state->streams[id];
    stream.request = envelope;
    stream.weights = std::move(*promise);
    if (auto connection = state->connection()) connection->send(envelope);
  });
  return future;
}

LayerWeights ClusterClient::fetch_weights(uint64_t step, uint32_t layer, uint32_t pass,
                                          const WeightEncoding& encoding) {
  return request_weights(step, layer, pass, encoding).get();
}

void ClusterClient::send_gradient(uint64_t tensor_id, uint32_t layer, uint64_t step,
                                  std::span<const float> gradient,
                                  const GradientEncoding& encoding) {
  const size_t chunk = std::max<uint32_t>(1, options_.chunk_elements);
  for (size_t offset = 0; offset < gradient.size(); offset += chunk) {
    const size_t count = std::min(chunk, gradient.size() - offset);
    send_gradient_chunk(tensor_id, layer, step, gradient.size(), offset,
                        gradient.subspan(offset, count), encoding);
  }
}

void ClusterClient::send_gradient_chunk(uint64_t tensor_id, uint32_t layer, uint64_t step,
                                        uint64_t tensor_elements, uint64_t offset,
                                        std::span<const float> values,
                                        const GradientEncoding& encoding) {
  pb::Envelope envelope;
  pb::Chunk& chunk = *envelope.mutable_gradient_data()->mutable_chunk();
  chunk.set_tensor_id(tensor_id);
  chunk.set_layer(layer);
  chunk.set_step(step);
  chunk.set_offset(offset);
  chunk.set_tensor_elements(tensor_elements);
  std::vector<uint8_t> keep;
  if (encoding.drop_zeros) {
    keep.resize(values.size());
    for (size_t i = 0; i < values.size(); ++i) keep[i] = values[i] != 0.0f;
  }
  encode_chunk_values(values, keep, encoding.dtype, chunk);
  auto frame =
      std::make_shared<const std::string>(encode_frame(envelope, options_.max_frame_bytes));
  {
    std::unique_lock lock(state_->mutex);
    state_->cv.wait(lock, [&] {
      return !state_->failure_shared.empty() || state_->unacked_bytes == 0 ||
             state_->unacked_bytes + frame->size() <= options_.max_unacked_bytes;
    });
    if (!state_->failure_shared.empty()) throw ClusterError(state_->failure_shared);
    state_->unacked_bytes += frame->size();
    state_->counters.unacked_bytes = state_->unacked_bytes;
    state_->counters.gradient_bytes_sent += chunk_payload_bytes(chunk);
    state_->counters.gradient_bytes_dense += chunk_dense_bytes(chunk);
  }
  asio::post(state_->io, [state = state_, frame, key = std::make_pair(tensor_id, step)] {
    if (!state->failure.empty()) return;
    state->unacked[key].push_back(frame);
    if (auto connection = state->connection()) connection->send_frame(frame);
  });
}

bool ClusterClient::wait_acknowledged(std::chrono::milliseconds timeout) {
  std::unique_lock lock(state_->mutex);
  const bool done = state_->cv.wait_for(
      lock, timeout, [&] { return state_->unacked_bytes == 0 || !state_->failure_shared.empty(); });
  if (!state_->failure_shared.empty()) throw ClusterError(state_->failure_shared);
  return done;
}

pb::Envelope ClusterClient::call(pb::Envelope request) {
  auto promise = std::make_shared<std::promise<pb::Envelope>>();
  auto future = promise->get_future();
  asio::post(state_->io, [state = state_, request = std::move(request), promise]() mutable {
    if (!state->failure.empty()) {
      promise->set_exception(std::make_exception_ptr(ClusterError(state->failure)));
      return;
    }
    uint64_t id = 0;
    if (request.has_init_tensor()) id = request.init_tensor().request_id();
    if (request.has_checkpoint_request()) id = request.checkpoint_request().request_id();
    if (request.has_status_request()) id = request.status_request().request_id();
    PendingControl& control = state->controls[id];
    control.request = request;
    control.reply = std::move(*promise);
    if (auto connection = state->connection()) connection->send(request);
  });
  return future.get();
}

pb::InitTensorReply ClusterClient::init_tensor(const pb::InitTensor& init) {
  pb::Envelope request;
  *request.mutable_init_tensor() = init;
  request.mutable_init_tensor()->set_request_id(state_->next_request_id++);
  return call(std::move(request)).init_tensor_reply();
}

pb::CheckpointReply ClusterClient::checkpoint() {
  pb::Envelope request;
  request.mutable_checkpoint_request()->set_request_id(state_->next_request_id++);
  return call(std::move(request)).checkpoint_reply();
}

nlohmann::json ClusterClient::status() {
  pb::Envelope request;
  request.mutable_status_request()->set_request_id(state_->next_request_id++);
  return nlohmann::json::parse(call(std::move(request)).status_reply().json());
}

std::vector<TensorValues> ClusterClient::read_tensors(const std::vector<uint64_t>& tensor_ids) {
  pb::Envelope envelope;
  pb::ReadTensors& read = *envelope.mutable_read_tensors();
  read.set_request_id(state_->next_request_id++);
  for (uint64_t id : tensor_ids) read.add_tensor_ids(id);
  auto promise = std::make_shared<std::promise<std::vector<TensorValues>>>();
  auto future = promise->get_future();
  asio::post(state_->io, [state = state_, envelope, promise]() mutable {
    if (!state->failure.empty()) {
      promise->set_exception(std::make_exception_ptr(ClusterError(state->failure)));
      return;
    }
    PendingStream& stream = state->streams[envelope.read_tensors().request_id()];
    stream.request = envelope;
    stream.is_read = true;
    stream.read = std::move(*promise);
    if (auto connection = state->connection()) connection->send(envelope);
  });
  return future.get();
}

MemoryXControl::MemoryXControl(const std::vector<std::string>& shard_addresses,
                               const std::string& token, const std::string& name,
                               const std::string& tls_ca) {
  if (shard_addresses.empty())
    throw ClusterError("MemoryXControl needs at least one shard address");
  for (size_t i = 0; i < shard_addresses.size(); ++i) {
    ClientOptions options;
    options.address = shard_addresses[i];
    options.token = token;
    options.role = pb::ORCHESTRATOR;
    options.tls_ca = tls_ca;
    options.rank = static_cast<uint32_t>(i);
    options.name = shard_addresses.size() == 1 ? name : fmt::format("{}-shard{}", name, i);
    shards_.push_back(std::make_unique<ClusterClient>(options));
  }
}

void MemoryXControl::connect() {
  for (auto& shard : shards_) shard->connect();
}

pb::InitTensorReply MemoryXControl::init_tensor(const pb::InitTensor& init) {
  return shards_[init.info().tensor_id() % shards_.size()]->init_tensor(init);
}

std::vector<TensorValues> MemoryXControl::read_tensors(const std::vector<uint64_t>& tensor_ids) {
  std::vector<TensorValues> all;
  for (size_t i = 0; i < shards_.size(); ++i) {
    std::vector<uint64_t> mine;
    for (uint64_t id : tensor_ids) {
      if (id % shards_.size() == i) mine.push_back(id);
    }
    if (!tensor_ids.empty() && mine.empty()) continue;
    auto part = shards_[i]->read_tensors(mine);
    for (auto& t : part) all.push_back(std::move(t));
  }
  std::sort(all.begin(), all.end(), [](const TensorValues& a, const TensorValues& b) {
    return a.info.tensor_id() < b.info.tensor_id();
  });
  return all;
}

void MemoryXControl::checkpoint() {
  for (auto& shard : shards_) {
    const auto reply = shard->checkpoint();
    if (!reply.ok()) throw ClusterError("checkpoint failed: " + reply.message());
  }
}

ClientCounters ClusterClient::counters() const {
  std::lock_guard lock(state_->mutex);
  ClientCounters counters = state_->counters;
  counters.reconnects = state_->counters.reconnects;
  return counters;
}

std::vector<pb::NodeAlert> ClusterClient::take_alerts() {
  std::lock_guard lock(state_->mutex);
  return std::exchange(state_->alerts, {});
}

}  // namespace wsemu::cluster
