// LocalCluster: starts MemoryX (one process per shard) and a SwarmX tree sized for N leaves as
// child processes on loopback, with free ports, a fresh token and store, and tears them down.
// This is how `wsemu train` runs a whole virtual cluster on one machine, and how the cluster
// tests get real processes to kill and restart.
//
// Contract: start() returns once every node listens (or throws ClusterError naming the node and
// its log file). The tree: leaves are grouped K at a time (K = fanout) under level-0 nodes, those
// K at a time under level-1 nodes, and so on up to one root, which connects to every MemoryX
// shard. Leaf r connects to leaf_address(r) with rank r. Nodes bind 127.0.0.1 only. Child
// processes die with the thread that started them (PR_SET_PDEATHSIG), so call start() and
// restart_*() from a thread that outlives the cluster. stop() (also run by the destructor) sends
// SIGTERM, waits, then SIGKILLs what is left. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/cluster/cluster_client.hpp"

namespace wsemu::cluster {

struct LocalClusterOptions {
  uint32_t leaves = 1;
  uint32_t fanout = 4;
  uint32_t shards = 1;
  std::string bin_dir;             // default: $WSEMU_BIN_DIR, else this executable's folder
  std::filesystem::path work_dir;  // default: a new folder under the temp dir, removed at the end
  bool keep_work_dir = false;
  std::string token;                      // default: 128 random bits in hex
  std::vector<std::string> memoryx_args;  // e.g. {"--optimizer", "adam", "--lr", "0.001"}
  std::vector<std::string> swarmx_args;
  std::chrono::milliseconds start_timeout{20000};
  bool quiet = true;  // nodes log at warn level (their logs are in work_dir)
};

struct LocalNode {
  std::string kind;    // "memoryx" or "swarmx"
  uint32_t index = 0;  // shard, or swarmx node index
  uint32_t level = 0;  // swarmx: 0 = serves leaves
  std::vector<std::string> args;
  size_t listen_arg = 0;  // position of the --listen value in args
  pid_t pid = -1;
  std::string address;  // "127.0.0.1:PORT" once started
  std::filesystem::path port_file;
  std::filesystem::path log_file;
  std::filesystem::path stats_file;
  std::vector<uint32_t> children;  // swarmx: leaf ranks (level 0) or swarmx indices
};

class LocalCluster {
 public:
  explicit LocalCluster(LocalClusterOptions options);
  ~LocalCluster();
  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;

  void start();
  void stop();

  const std::string& token() const { return options_.token; }
  std::filesystem::path token_file() const { return work_dir_ / "token"; }
  const std::filesystem::path& work_dir() const { return work_dir_; }
  std::string leaf_address(uint32_t rank) const;
  std::vector<std::string> memoryx_addresses() const;
  std::string root_address() const;

  size_t swarmx_count() const { return swarmx_.size(); }
  const LocalNode& memoryx(uint32_t shard) const { return memoryx_.at(shard); }
  const LocalNode& swarmx(size_t index) const { return swarmx_.at(index); }
  size_t root_index() const { return swarmx_.size() - 1; }

  // Fault injection: signal a node and wait for it to exit; restart it with the same arguments
  // on the same port (its peers reconnect by themselves).
  void kill_memoryx(uint32_t shard, int signal = SIGKILL);
  void restart_memoryx(uint32_t shard);
  void kill_swarmx(size_t index, int signal = SIGKILL);
  void restart_swarmx(size_t index);

  std::string describe() const;  // one line per node

 private:
  // The arguments every node is started with (its files in the work folder, the token, the
  // log level), then `role_args`, then the operator's `extra_args`.
  void set_node_arguments(LocalNode& node, const std::filesystem::path& binary,
                          const std::string& name, const std::vector<std::string>& role_args,
                          const std::vector<std::string>& extra_args) const;
  void launch(LocalNode& node);
  void wait_listening(LocalNode& node);
  void restart(LocalNode& node, const char* what);  // `what` names it when it still runs
  void terminate(LocalNode& node, int signal, std::chrono::milliseconds grace);

  LocalClusterOptions options_;
  std::filesystem::path work_dir_;
  bool owns_work_dir_ = false;
  std::filesystem::path memoryx_bin_;
  std::filesystem::path swarmx_bin_;
  std::vector<LocalNode> memoryx_;
  std::vector<LocalNode> swarmx_;    // level 0 first, root last
  std::vector<uint32_t> leaf_node_;  // leaf rank -> swarmx index
  bool started_ = false;
};

}  // namespace wsemu::cluster
