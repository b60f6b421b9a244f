// Counters of one node (or client): named totals plus per-peer traffic, rendered as the JSON
// document of --stats FILE and of StatusReply.
//
// Contract: single-threaded like the node that owns it (the node's io thread). PeerCounters of
// a peer survive its reconnects, so totals never go backwards. write_stats_file() replaces the
// file atomically (temp file + rename): a reader sees the old or the new document, never half.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace wsemu::cluster {

struct PeerCounters {
  std::string label;      // e.g. "leaf-3", "swarmx-0", "memoryx-shard-1", "127.0.0.1:41234"
  std::string role;       // the peer's role
  std::string direction;  // "child", "upstream" or "client"
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  uint64_t frames_in = 0;
  uint64_t frames_out = 0;
  uint64_t connections = 0;  // times this peer (re)connected
  bool connected = false;
  uint64_t queue_bytes = 0;  // outgoing bytes waiting now
  uint64_t queue_frames = 0;
  uint64_t max_queue_bytes = 0;
};

class NodeStats {
 public:
  NodeStats(std::string node_name, std::string role);

  uint64_t& counter(const std::string& name) { return counters_[name]; }
  void add(const std::string& name, uint64_t amount) { counters_[name] += amount; }
  std::shared_ptr<PeerCounters> peer(const std::string& label, const std::string& role,
                                     const std::string& direction);
  void set_info(const std::string& key, nlohmann::json value) { info_[key] = std::move(value); }

  nlohmann::json to_json() const;

 private:
  std::string node_name_;
  std::string role_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::map<std::string, uint64_t> counters_;
  std::map<std::string, std::shared_ptr<PeerCounters>> peers_;
  nlohmann::json info_ = nlohmann::json::object();
};

// Writes `document` to `path` atomically. Returns false (and leaves the old file) on error.
bool write_stats_file(const std::string& path, const nlohmann::json& document);

}  // namespace wsemu::cluster
