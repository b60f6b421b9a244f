#include "runtime/cluster/local_cluster.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <thread>

namespace wsemu::cluster {

namespace {

std::string random_token() {
  std::random_device device;
  std::string token;
  for (int i = 0; i < 4; ++i) token += fmt::format("{:08x}", device());
  return token;
}

std::filesystem::path default_bin_dir() {
  if (const char* env = std::getenv("WSEMU_BIN_DIR"); env && *env) return env;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : self.parent_path();
}

}  // namespace

LocalCluster::LocalCluster(LocalClusterOptions options) : options_(std::move(options)) {
  if (options_.leaves == 0) throw ClusterError("a local cluster needs at least one leaf");
  if (options_.fanout == 0) throw ClusterError("fanout must be at least 1");
  // With one child per node the tree would never narrow to one root.
  if (options_.fanout == 1 && options_.leaves > 1)
    throw ClusterError("fanout 1 cannot join more than one leaf; use at least 2");
  if (options_.shards == 0) throw ClusterError("a local cluster needs at least one memoryx shard");
  if (options_.token.empty()) options_.token = random_token();
  const std::filesystem::path bin =
      options_.bin_dir.empty() ? default_bin_dir() : std::filesystem::path(options_.bin_dir);
  memoryx_bin_ = bin / "wsemu-memoryx";
  swarmx_bin_ = bin / "wsemu-swarmx";
  for (const auto& path : {memoryx_bin_, swarmx_bin_}) {
    if (::access(path.c_str(), X_OK) != 0) {
      throw ClusterError(fmt::format(
          "cannot find the executable '{}' (set WSEMU_BIN_DIR or bin_dir)", path.string()));
    }
  }
}

LocalCluster::~LocalCluster() {
  stop();
  if (owns_work_dir_ && !options_.keep_work_dir) {
    std::error_code ec;
    std::filesystem::remove_all(work_dir_, ec);
  }
}

void LocalCluster::start() {
  if (started_) return;
  if (options_.work_dir.empty()) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "wsemu-cluster-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw ClusterError("cannot create a temporary folder for the cluster");
    work_dir_ = pattern;
    owns_work_dir_ = true;
  } else {
    work_dir_ = options_.work_dir;
    std::filesystem::create_directories(work_dir_);
  }
  {
    std::ofstream out(token_file(), std::ios::trunc);
    out << options_.token << '\n';
  }
  ::chmod(token_file().c_str(), 0600);

  for (uint32_t shard = 0; shard < options_.shards; ++shard) {
    LocalNode node;
    node.kind = "memoryx";
    node.index = shard;
    const std::string name = options_.shards == 1 ? "memoryx" : fmt::format("memoryx-{}", shard);
    set_node_arguments(node, memoryx_bin_, name,
                       {"--store", (work_dir_ / (name + "-store")).string(), "--shard",
                        fmt::format("{}/{}", shard, options_.shards)},
                       options_.memoryx_args);
    memoryx_.push_back(std::move(node));
  }

  // The tree, bottom-up: level 0 serves the leaves.
  leaf_node_.assign(options_.leaves, 0);
  std::vector<uint32_t> below;  // items of the level below (leaf ranks, then node indices)
  for (uint32_t r = 0; r < options_.leaves; ++r) below.push_back(r);
  uint32_t level = 0;
  for (;;) {
    std::vector<uint32_t> this_level;
    for (size_t first = 0; first < below.size(); first += options_.fanout) {
      LocalNode node;
      node.kind = "swarmx";
      node.index = static_cast<uint32_t>(swarmx_.size());
      node.level = level;
      for (size_t i = first; i < std::min(below.size(), first + options_.fanout); ++i) {
        node.children.push_back(below[i]);
        if (level == 0) leaf_node_[below[i]] = node.index;
      }
      this_level.push_back(node.index);
      swarmx_.push_back(std::move(node));
    }
    if (this_level.size() == 1) break;
    below = this_level;
    ++level;
  }

  for (auto& node : memoryx_) launch(node);
  for (auto& node : memoryx_) wait_listening(node);
  // Parents before children, so every upstream address is known: root first.
  std::vector<uint32_t> parent(swarmx_.size(), UINT32_MAX);
  for (const auto& node : swarmx_) {
    if (node.level == 0) continue;
    for (uint32_t child : node.children) parent[child] = node.index;
  }
  for (size_t k = swarmx_.size(); k-- > 0;) {
    LocalNode& node = swarmx_[k];
    std::vector<std::string> role = {"--fanout", std::to_string(node.children.size()), "--rank",
                                     std::to_string(node.index)};
    if (parent[k] == UINT32_MAX) {
      for (const auto& shard : memoryx_) role.insert(role.end(), {"--upstream", shard.address});
    } else {
      role.insert(role.end(), {"--upstream", swarmx_[parent[k]].address});
    }
    set_node_arguments(node, swarmx_bin_, fmt::format("swarmx-{}", node.index), role,
                       options_.swarmx_args);
    launch(node);
    wait_listening(node);
  }
  started_ = true;
}

void LocalCluster::set_node_arguments(LocalNode& node, const std::filesystem::path& binary,
                                      const std::string& name,
                                      const std::vector<std::string>& role_args,
                                      const std::vector<std::string>& extra_args) const {
  node.port_file = work_dir_ / (name + ".port");
  node.log_file = work_dir_ / (name + ".log");
  node.stats_file = work_dir_ / (name + ".stats.json");
  node.args = {binary.string(),
               "--listen",
               "127.0.0.1:0",
               "--token-file",
               token_file().string(),
               "--port-file",
               node.port_file.string(),
               "--stats",
               node.stats_file.string(),
               "--name",
               name,
               "--log-level",
               options_.quiet ? "warn" : "info"};
  node.listen_arg = 2;
  node.args.insert(node.args.end(), role_args.begin(), role_args.end());
  node.args.insert(node.args.end(), extra_args.begin(), extra_args.end());
}

void LocalCluster::launch(LocalNode& node) {
  std::error_code ec;
  std::filesystem::remove(node.port_file, ec);
  std::vector<char*> argv;
  for (auto& arg : node.args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string log = node.log_file.string();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw ClusterError(fmt::format("cannot start {}: fork failed", node.args[0]));
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  node.pid = pid;
}

void LocalCluster::wait_listening(LocalNode& node) {
  const auto deadline = std::chrono::steady_clock::now() + options_.start_timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(node.port_file);
    std::string address;
    if (in && std::getline(in, address) && !address.empty()) {
      // A restart listens on the same address; not writing it again keeps readers on other
      // threads (leaves that looked it up earlier) free of a data race.
      if (node.address != address) node.address = address;
      if (node.args[node.listen_arg] == "127.0.0.1:0")
        node.args[node.listen_arg] = address;  // restarts reuse the port
      return;
    }
    int status = 0;
    if (::waitpid(node.pid, &status, WNOHANG) == node.pid) {
      node.pid = -1;
      throw ClusterError(fmt::format("{} {} exited while starting (status {}); see {}", node.kind,
                                     node.index, status, node.log_file.string()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw ClusterError(fmt::format("{} {} did not start listening within {} ms; see {}", node.kind,
                                 node.index, options_.start_timeout.count(),
                                 node.log_file.string()));
}

void LocalCluster::terminate(LocalNode& node, int signal, std::chrono::milliseconds grace) {
  if (node.pid <= 0) return;
  ::kill(node.pid, signal);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(node.pid, &status, WNOHANG);
    if (done == node.pid || done < 0) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(node.pid, SIGKILL);
      ::waitpid(node.pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  node.pid = -1;
}

void LocalCluster::stop() {
  // Leaves' side first, MemoryX last, so its final checkpoint sees a quiet cluster.
  for (auto& node : swarmx_) terminate(node, SIGTERM, std::chrono::milliseconds(5000));
  for (auto& node : memoryx_) terminate(node, SIGTERM, std::chrono::milliseconds(20000));
  started_ = false;
}

std::string LocalCluster::leaf_address(uint32_t rank) const {
  return swarmx_.at(leaf_node_.at(rank)).address;
}

std::vector<std::string> LocalCluster::memoryx_addresses() const {
  std::vector<std::string> out;
  for (const auto& node : memoryx_) out.push_back(node.address);
  return out;
}

std::string LocalCluster::root_address() const {
  return swarmx_.back().address;
}

void LocalCluster::kill_memoryx(uint32_t shard, int signal) {
  terminate(memoryx_.at(shard), signal, std::chrono::milliseconds(20000));
}

void LocalCluster::restart_memoryx(uint32_t shard) { restart(memoryx_.at(shard), "memoryx shard"); }

void LocalCluster::kill_swarmx(size_t index, int signal) {
  terminate(swarmx_.at(index), signal, std::chrono::milliseconds(5000));
}

void LocalCluster::restart_swarmx(size_t index) { restart(swarmx_.at(index), "swarmx node"); }

void LocalCluster::restart(LocalNode& node, const char* what) {
  if (node.pid > 0) throw ClusterError(std::string(what) + " is still running");
  launch(node);
  wait_listening(node);
}

std::string LocalCluster::describe() const {
  std::string out;
  for (const auto& node : memoryx_) {
    out += fmt::format("memoryx shard {}/{} at {} (pid {})\n", node.index, memoryx_.size(),
                       node.address, node.pid);
  }
  for (const auto& node : swarmx_) {
    out += fmt::format("swarmx {} level {} at {} (pid {}), children {} {}\n", node.index,
                       node.level, node.address, node.pid, node.level == 0 ? "leaves" : "nodes",
                       fmt::join(node.children, ","));
  }
  return out;
}

}  // namespace wsemu::cluster
