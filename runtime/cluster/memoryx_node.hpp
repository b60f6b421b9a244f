// MemoryX: the weight store of the cluster. Holds every tensor of its shard with its optimizer
// state, streams a layer's weights on request, applies each reduced gradient exactly once per
// (tensor, step), and keeps all of it durable in checkpoints plus a write-ahead log.
//
// Contract:
// - A WeightRequest for step s is answered with the weights after the updates of steps < s; it
//   waits while an earlier update is still missing and is answered STALE when a later one was
//   already applied.
// - The reduced gradient of (tensor, step) is applied once, when all of its chunks arrived and
//   step is the tensor's next step (later steps wait, up to max_future_steps ahead). It is
//   appended to the log (and synced) before it is applied and acknowledged, so an acknowledged
//   update survives kill -9. With step_atomic, a step is applied to all tensors at it at once,
//   only when all of their gradients are complete. When the log cannot be written (a full disk), nothing is applied or
//   acknowledged: the update waits, every peer gets a NodeAlert saying why, and the append is
//   retried every log_retry until it succeeds; no connection is closed for it. A repeated delivery (step already applied) is acknowledged with
//   duplicate = true and ignored.
// - Restart from the same --store gives the identical state: the newest intact checkpoint, then
//   the log records after it in order.
// - Weight streams respect backpressure: a stream only produces chunks while its connection's
//   queue is below the high watermark. Memory grows only with tensors, never with a slow peer.
// - Bad frames, wrong tokens or versions close that connection only; the node keeps serving.
// Runs single-threaded on its own io_context (run() blocks); stop() may be called from any thread.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "runtime/cluster/checkpoint.hpp"
#include "runtime/cluster/connection.hpp"
#include "runtime/cluster/node_listener.hpp"
#include "runtime/cluster/tensor_store.hpp"

namespace wsemu::cluster {

struct MemoryXOptions : NodeOptions {
  MemoryXOptions() : NodeOptions("memoryx", {"127.0.0.1", 7100}) {}
  std::filesystem::path store_dir;
  pb::OptimizerConfig optimizer;    // the node default for InitTensor without its own
  uint64_t checkpoint_every = 100;  // steps between automatic checkpoints; 0: never
  uint32_t keep_checkpoints = 2;
  uint64_t memory_budget = 4ull << 30;
  uint32_t shard_index = 0;
  uint32_t shard_count = 1;
  uint32_t default_chunk_elements = kDefaultChunkElements;
  bool sync_log = true;
  uint64_t max_future_steps = 16;
  std::chrono::milliseconds log_retry{250};  // between attempts while the log cannot be written
  // Apply a step's updates to all tensors at that step together (one log record), once every one
  // of their gradients is complete; until then the step's weights can still be streamed. A
  // wafer that dies mid-step can then be restarted at that step (runtime/wstrain).
  bool step_atomic = false;
};

class MemoryXNode {
 public:
  explicit MemoryXNode(MemoryXOptions options);  // recovers the store; throws ConfigError
  ~MemoryXNode();

  // Listens and serves until SIGTERM/SIGINT or stop(); then writes a final checkpoint.
  int run();
  void stop();

 private:
  struct StreamJob {
    uint64_t request_id = 0;
    bool read_current = false;  // ReadTensors: whatever the current step is
    uint64_t step = 0;
    uint32_t layer = 0;
    uint32_t pass = 0;
    pb::DType dtype = pb::FP32;
    pb::Sparsity sparsity;
    uint32_t chunk_elements = kDefaultChunkElements;
    std::vector<uint64_t> tensor_ids;
    size_t tensor_index = 0;
    uint64_t offset = 0;
    std::vector<uint8_t> keep;  // sparsity mask of the current tensor
    uint64_t bytes_sent = 0;
    uint64_t bytes_dense = 0;
  };
  struct Peer {
    std::shared_ptr<Connection> connection;
    pb::Role role = pb::ROLE_UNSPECIFIED;
    uint32_t rank = 0;
    std::string label;
    std::deque<StreamJob> jobs;
    bool waiting_for_drain = false;
  };
  struct PendingRequest {
    uint64_t peer_id;
    pb::WeightRequest request;
  };
  struct Assembly {
    std::vector<float> values;
    std::map<uint64_t, uint32_t> chunks;  // offset -> count
    uint64_t covered = 0;
    uint64_t completed_by = 0;  // peer that delivered the last chunk
  };

  // networking (memoryx_node.cpp)
  friend class NodeListener;  // serve_node: accept() and stats_json()
  NodeListener::PeerHandlers accept(const std::shared_ptr<Connection>& connection);
  void on_frame(uint64_t peer_id, pb::Envelope& envelope);
  void on_closed(uint64_t peer_id, const std::string& reason);
  void handshake(Peer& peer, pb::Envelope& envelope);
  void handle_weight_request(uint64_t peer_id, const pb::WeightRequest& request);
  void start_or_defer(uint64_t peer_id, const pb::WeightRequest& request);
  void handle_read(uint64_t peer_id, const pb::ReadTensors& read);
  void pump(uint64_t peer_id);
  bool emit_chunk(Peer& peer, StreamJob& job);  // false once the job has ended
  void end_stream(Peer& peer, const StreamJob& job, pb::WeightEnd::Status status,
                  const std::string& message);
  void retry_pending_requests();
  nlohmann::json stats_json();

  // state (memoryx_updates.cpp)
  void recover();
  void handle_gradient(uint64_t peer_id, const pb::GradientData& data);
  void apply_ready(uint64_t tensor_id);
  bool apply_step();  // step_atomic: applies the lowest step if complete; true if it did
  void after_updates();
  void handle_init(uint64_t peer_id, const pb::InitTensor& init);
  void maybe_checkpoint();
  std::filesystem::path checkpoint_now();
  void send_ack(uint64_t peer_id, uint64_t tensor_id, uint64_t step, bool duplicate);
  bool append_to_log(const pb::LogRecord& record);  // false (and alerts) when it cannot
  void log_failed(const std::string& message);
  void retry_log();
  void send_alert(Peer& peer);
  const TensorRecord& checked_tensor(uint64_t tensor_id) const;

  MemoryXOptions options_;
  asio::io_context io_;
  NodeListener listener_;
  NodeStats stats_;
  TensorStore store_;
  std::unique_ptr<WriteAheadLog> log_;
  uint64_t sequence_ = 0;           // of the newest checkpoint / the current log
  uint64_t checkpointed_step_ = 0;  // min next step at the newest checkpoint
  bool dirty_ = false;              // changed since the newest checkpoint
  std::map<uint64_t, Peer> peers_;
  std::vector<PendingRequest> pending_requests_;
  std::map<std::pair<uint64_t, uint64_t>, Assembly> assemblies_;  // (tensor, step)
  bool stopping_ = false;
  std::string log_failure_;  // why the log cannot be written now; empty while it can
  asio::steady_timer log_retry_timer_{io_};
  bool log_retry_armed_ = false;
  std::chrono::steady_clock::time_point last_failure_report_{};
  std::chrono::steady_clock::time_point next_checkpoint_attempt_{};
};

}  // namespace wsemu::cluster
