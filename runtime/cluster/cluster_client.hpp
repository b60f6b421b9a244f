// The client side of the cluster, for leaves (wafers, test clients) and for the training
// orchestrator: connect with retry and backoff, request a layer's weights for a step, send
// gradient chunks, and (orchestrator, connected straight to MemoryX) create, read and checkpoint
// tensors.
//
// Contract:
// - Thread-safe: any thread may call any method; the network runs on the client's own thread.
// - After a lost connection the client redials with backoff and then sends again everything still
//   open: weight requests (marked resend; partial streams are discarded and received anew),
//   every gradient chunk not yet acknowledged for its (tensor, step), and pending control
//   requests. Together with MemoryX's exactly-once rule this means no update is lost or applied
//   twice. Outstanding calls fail with ClusterError only when the connection stays down longer
//   than reconnect_timeout, or when the far side refuses the handshake.
// - send_gradient*() keeps each chunk until its (tensor, step) is acknowledged and blocks while
//   more than max_unacked_bytes are unacknowledged, so memory stays bounded.
// - All leaves under one SwarmX node must chunk gradients the same way (same chunk_elements).
#pragma once

#include <atomic>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <span>
#include <thread>

#include "runtime/cluster/protocol.hpp"

namespace wsemu::cluster {

class ClusterError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ClientOptions {
  std::string address;  // "HOST:PORT" of the SwarmX node (leaves) or MemoryX shard (orchestrator)
  std::string token;
  pb::Role role = pb::LEAF;
  uint32_t rank = 0;  // leaves: the global rank; children of a node are reduced in rank order
  std::string name;
  std::chrono::milliseconds connect_timeout{30000};    // first connect
  std::chrono::milliseconds reconnect_timeout{60000};  // how long a lost connection may stay lost
  std::chrono::milliseconds backoff_initial{20};
  std::chrono::milliseconds backoff_max{1000};
  uint32_t chunk_elements = kDefaultChunkElements;  // gradient chunking
  uint64_t max_unacked_bytes = 256ull << 20;
  size_t max_frame_bytes = kDefaultMaxFrameBytes;
  std::string tls_ca;  // connect with TLS, the node's certificate chaining to this PEM CA (tls.hpp)
};

struct WeightEncoding {
  pb::DType dtype = pb::FP32;
  pb::Sparsity sparsity;        // default: dense
  uint32_t chunk_elements = 0;  // 0: the server's default
};

struct GradientEncoding {
  pb::DType dtype = pb::FP32;
  bool drop_zeros = false;  // send only the non-zero elements (sparse layouts)
};

struct TensorValues {
  pb::TensorInfo info;
  uint64_t next_step = 0;  // read_tensors(): the tensor's next expected step
  std::vector<float> values;
};

struct LayerWeights {
  uint64_t step = 0;
  uint32_t layer = 0;
  uint32_t pass = 0;
  std::vector<TensorValues> tensors;                     // ascending tensor id
  uint64_t bytes_received = 0;                           // payload bytes of the stream
  uint64_t bytes_dense = 0;                              // what a dense stream would have cost
  const TensorValues& tensor(uint64_t tensor_id) const;  // throws ClusterError
};

struct ClientCounters {
  uint64_t reconnects = 0;
  uint64_t weight_bytes_received = 0;
  uint64_t weight_bytes_dense = 0;
  uint64_t gradient_bytes_sent = 0;  // payload bytes, first sends only
  uint64_t gradient_bytes_dense = 0;
  uint64_t gradient_chunks_resent = 0;
  uint64_t unacked_bytes = 0;
};

class ClusterClient {
 public:
  explicit ClusterClient(ClientOptions options);
  ~ClusterClient();
  ClusterClient(const ClusterClient&) = delete;
  ClusterClient& operator=(const ClusterClient&) = delete;

  // Blocks until the handshake is accepted. Throws ClusterError on refusal or timeout.
  void connect();

  // --- leaves ---
  std::future<LayerWeights> request_weights(uint64_t step, uint32_t layer, uint32_t pass = 0,
                                            const WeightEncoding& encoding = {});
  LayerWeights fetch_weights(uint64_t step, uint32_t layer, uint32_t pass = 0,
                             const WeightEncoding& encoding = {});
  // The whole gradient of one tensor for one step, cut into chunk_elements chunks.
  void send_gradient(uint64_t tensor_id, uint32_t layer, uint64_t step,
                     std::span<const float> gradient, const GradientEncoding& encoding = {});
  // One chunk: elements [offset, offset + values.size()) of a tensor of tensor_elements.
  void send_gradient_chunk(uint64_t tensor_id, uint32_t layer, uint64_t step,
                           uint64_t tensor_elements, uint64_t offset, std::span<const float> values,
                           const GradientEncoding& encoding = {});
  // Waits until every gradient sent so far is acknowledged; false on timeout. Like every call,
  // throws ClusterError once the client has given up on the connection.
  bool wait_acknowledged(std::chrono::milliseconds timeout);

  // --- orchestrator (connected to a MemoryX shard) ---
  pb::InitTensorReply init_tensor(const pb::InitTensor& init);
  std::vector<TensorValues> read_tensors(const std::vector<uint64_t>& tensor_ids = {});
  pb::CheckpointReply checkpoint();
  // --- any node ---
  nlohmann::json status();

  ClientCounters counters() const;
  // The NodeAlerts received since the last call (e.g. MemoryX cannot write its log), oldest
  // first; the client also logs each one.
  std::vector<pb::NodeAlert> take_alerts();
  const ClientOptions& options() const { return options_; }

 private:
  struct State;
  pb::Envelope call(pb::Envelope request);
  ClientOptions options_;
  std::shared_ptr<State> state_;
  std::thread thread_;
};

// The orchestrator's view of a sharded MemoryX: one ClusterClient per shard (addresses in shard
// order); tensor t lives on shard t mod N.
class MemoryXControl {
 public:
  MemoryXControl(const std::vector<std::string>& shard_addresses, const std::string& token,
                 const std::string& name = "orchestrator", const std::string& tls_ca = "");
  void connect();
  pb::InitTensorReply init_tensor(const pb::InitTensor& init);
  std::vector<TensorValues> read_tensors(
      const std::vector<uint64_t>& tensor_ids = {});  // ascending id
  void checkpoint();
  size_t shard_count() const { return shards_.size(); }
  ClusterClient& shard(size_t index) { return *shards_.at(index); }

 private:
  std::vector<std::unique_ptr<ClusterClient>> shards_;
};

}  // namespace wsemu::cluster
