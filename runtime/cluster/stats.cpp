#include "runtime/cluster/stats.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace wsemu::cluster {

NodeStats::NodeStats(std::string node_name, std::string role)
    : node_name_(std::move(node_name)), role_(std::move(role)) {}

std::shared_ptr<PeerCounters> NodeStats::peer(const std::string& label, const std::string& role,
                                              const std::string& direction) {
  auto& slot = peers_[label];
  if (!slot) {
    slot = std::make_shared<PeerCounters>();
    slot->label = label;
  }
  slot->role = role;
  slot->direction = direction;
  return slot;
}

nlohmann::json NodeStats::to_json() const {
  nlohmann::json doc;
  doc["node"] = node_name_;
  doc["role"] = role_;
  doc["pid"] = static_cast<int64_t>(::getpid());
  doc["uptime_s"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  doc["written_unix_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  doc["info"] = info_;
  nlohmann::json counters = nlohmann::json::object();
  for (const auto& [name, value] : counters_) counters[name] = value;
  doc["counters"] = counters;
  nlohmann::json peers = nlohmann::json::array();
  for (const auto& [label, p] : peers_) {
    peers.push_back({{"peer", p->label},
                     {"role", p->role},
                     {"direction", p->direction},
                     {"connected", p->connected},
                     {"connections", p->connections},
                     {"bytes_in", p->bytes_in},
                     {"bytes_out", p->bytes_out},
                     {"frames_in", p->frames_in},
                     {"frames_out", p->frames_out},
                     {"queue_bytes", p->queue_bytes},
                     {"queue_frames", p->queue_frames},
                     {"max_queue_bytes", p->max_queue_bytes}});
  }
  doc["peers"] = peers;
  return doc;
}

bool write_stats_file(const std::string& path, const nlohmann::json& document) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::trunc);
    if (!out) return false;
    out << document.dump(2) << '\n';
    if (!out) return false;
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  return !ec;
}

}  // namespace wsemu::cluster
