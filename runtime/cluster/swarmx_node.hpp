// SwarmX: one node of the broadcast/reduce tree between MemoryX and the leaves. Weights flow
// down (one upstream request per group of identical child requests, the answer broadcast to the
// whole group); gradients flow up (chunks of the same (tensor, step, offset) from all K children
// summed in ascending child rank order, the fp32 sum sent upstream).
//
// Contract:
// - Children are the first K distinct ranks that connect (K = --fanout); a reconnecting rank
//   replaces its old connection; a (K+1)-th rank is refused.
// - A weight request is forwarded once every child either asked for the same (step, layer, pass,
//   encoding) or was already served it; a request marked resend (sent again after a reconnect)
//   is served within resend_flush even if the others never ask. While fewer than K children
//   have ever connected, a waiting request logs who is missing every 10 s, and after
//   child_wait (0: forever) it is answered with an ERROR naming the missing ranks, so a tree
//   whose children never come says so instead of hanging.
// - Sums are bit-identical whatever the arrival order: every part is kept until all K are there,
//   then added in rank order. A sum is kept until MemoryX acknowledges (tensor, step) and sent
//   again after an upstream reconnect; acknowledgements are broadcast to all children.
// - With several upstreams (one per MemoryX shard, in shard order), tensor t goes to upstream
//   t mod N and weight requests go to all of them, their ends merged into one.
// - Backpressure: a congested child pauses reading from the upstream that feeds it; a congested
//   upstream pauses reading from all children; a child with more than child_buffer_bytes waiting
//   in incomplete sums is paused until the others catch up.
// Runs single-threaded on its own io_context (run() blocks); stop() may be called from any thread.
#pragma once

#include <deque>
#include <map>
#include <set>
#include <tuple>

#include "runtime/cluster/connection.hpp"
#include "runtime/cluster/node_listener.hpp"
#include "runtime/cluster/upstream_link.hpp"

namespace wsemu::cluster {

struct SwarmXOptions : NodeOptions {
  SwarmXOptions() : NodeOptions("swarmx", {"127.0.0.1", 7200}) {}
  std::vector<Address> upstreams;
  uint32_t fanout = 4;
  uint32_t rank = 0;  // this node's rank under its parent
  std::chrono::milliseconds resend_flush{100};
  std::chrono::milliseconds child_wait{120000};  // for children that never connect; 0: forever
  uint64_t child_buffer_bytes = 64ull << 20;
  size_t history = 16384;  // remembered served weight keys and acknowledged (tensor, step)s
};

class SwarmXNode {
 public:
  explicit SwarmXNode(SwarmXOptions options);
  ~SwarmXNode();
  int run();
  void stop();

 private:
  using WeightKey = std::tuple<uint64_t, uint32_t, uint32_t, int, int, float, float, uint32_t>;
  using StepKey = std::pair<uint64_t, uint64_t>;             // (tensor, step)
  using SlotKey = std::tuple<uint64_t, uint64_t, uint64_t>;  // (tensor, step, offset)

  struct Child {
    std::shared_ptr<Connection> connection;  // null while disconnected
    uint64_t buffered_bytes = 0;
    bool paused_for_buffer = false;
  };
  struct Member {
    uint64_t connection_id;
    uint64_t request_id;
  };
  struct Group {
    WeightKey key;
    pb::WeightRequest request;
    std::map<uint32_t, Member> members;  // by child rank
    bool forwarded = false;
    bool resend = false;
    std::set<size_t> upstreams_ended;
    pb::WeightEnd end;  // merged
    std::shared_ptr<asio::steady_timer> flush_timer;
    std::shared_ptr<asio::steady_timer> wait_timer;  // while children are missing
    std::chrono::steady_clock::time_point created = std::chrono::steady_clock::now();
  };
  struct Slot {
    uint32_t count = 0;
    uint32_t layer = 0;
    uint64_t tensor_elements = 0;
    std::map<uint32_t, std::vector<float>> parts;  // by child rank
  };
  struct Upstream {
    std::shared_ptr<UpstreamLink> link;
    bool paused_for_children = false;
  };

  // swarmx_node.cpp: connections and weights
  friend class NodeListener;  // serve_node: accept() and stats_json()
  NodeListener::PeerHandlers accept(const std::shared_ptr<Connection>& connection);
  void on_child_frame(uint64_t connection_id, pb::Envelope& envelope);
  void on_child_closed(uint64_t connection_id, const std::string& reason);
  void child_handshake(uint64_t connection_id, const std::shared_ptr<Connection>& connection,
                       pb::Envelope& envelope);
  void on_upstream_connected(size_t index, const std::shared_ptr<Connection>& connection,
                             const pb::HelloReply& reply);
  void on_upstream_frame(size_t index, pb::Envelope& envelope);
  void handle_weight_request(uint32_t rank, uint64_t connection_id,
                             const pb::WeightRequest& request);
  void maybe_forward(uint64_t group_id);
  void watch_missing_children(uint64_t group_id);
  std::string missing_children() const;
  void forward(uint64_t group_id);
  void on_weight_data(size_t index, pb::WeightData& data);
  void on_weight_end(size_t index, const pb::WeightEnd& end);
  void apply_child_backpressure(size_t upstream_index);
  std::shared_ptr<Connection> member_connection(uint32_t rank, const Member& member) const;
  void remember_served(const WeightKey& key, uint32_t rank);
  std::optional<uint32_t> rank_of(uint64_t connection_id) const;
  nlohmann::json stats_json();

  // swarmx_reduce.cpp: gradients
  void handle_gradient(uint32_t rank, const pb::GradientData& data);
  void complete_slot(const SlotKey& key, Slot& slot);
  void handle_ack(const pb::GradientAck& ack);
  void handle_child_query(uint32_t rank, const pb::GradientQuery& query);
  void send_upstream(uint64_t tensor_id, const pb::Envelope& envelope);
  void send_upstream_frame(uint64_t tensor_id, const std::shared_ptr<const std::string>& frame);
  void query_upstream(uint64_t tensor_id, uint64_t step);
  void resend_to_upstream(size_t index);
  void release_buffer(uint32_t rank, uint64_t bytes);
  void pause_children_for_upstream(size_t index);
  void remember_acked(const StepKey& key);
  size_t upstream_of(uint64_t tensor_id) const { return tensor_id % upstreams_.size(); }

  SwarmXOptions options_;
  asio::io_context io_;
  NodeListener listener_;
  NodeStats stats_;
  std::map<uint64_t, std::shared_ptr<Connection>> connections_;  // every accepted connection by id
  std::map<uint64_t, uint32_t> connection_rank_;                 // authenticated children
  std::map<uint32_t, Child> children_;                           // registered ranks
  std::map<uint64_t, uint64_t> tensor_elements_;  // tensor id -> elements, from weight streams
  std::vector<Upstream> upstreams_;
  uint64_t next_group_id_ = 1;
  std::map<uint64_t, Group> groups_;
  std::map<WeightKey, uint64_t> gathering_;
  std::map<WeightKey, std::set<uint32_t>> served_;
  std::deque<WeightKey> served_order_;
  std::map<SlotKey, Slot> slots_;
  std::map<StepKey, std::map<uint64_t, std::shared_ptr<const std::string>>>
      retained_;  // sums awaiting ack
  std::set<StepKey> acked_;
  std::deque<StepKey> acked_order_;
  std::set<StepKey> queried_;
  std::set<uint64_t> children_paused_for_upstream_;  // connection ids
  bool stopping_ = false;
};

}  // namespace wsemu::cluster
