// The serving half that MemoryX and SwarmX nodes share: bind and listen, publish the bound
// address to a port file, accept connections until closed, turn SIGTERM/SIGINT into the node's
// stop, and rewrite the node's stats file on a timer.
//
// Contract: lives on the node's io_context and calls its handlers only on that thread. open()
// throws ConfigError when the address cannot be bound; the port file is replaced atomically
// (temp file + rename), so a launcher polling it never reads half an address. close() stops
// accepting, the signal wait and the stats timer; no handler runs after it.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "runtime/cluster/connection.hpp"

namespace wsemu::cluster {

// What every node is configured with, whatever its role (MemoryXOptions, SwarmXOptions).
struct NodeOptions {
  Address listen;
  std::string token;
  std::string name;
  std::string stats_file;  // JSON counters, rewritten every stats_interval; empty: none
  std::chrono::milliseconds stats_interval{1000};
  std::string port_file;  // "HOST:PORT" written once listening
  ConnectionLimits limits;
};

class NodeListener {
 public:
  struct Handlers {
    std::function<void(std::shared_ptr<Connection>)> on_accept;  // a new, not yet started peer
    std::function<void()> on_signal;                             // SIGTERM or SIGINT arrived
    std::function<nlohmann::json()> stats;                       // the stats file's document
  };
  struct StatsFile {
    std::string path;  // empty: no stats file
    std::chrono::milliseconds interval{1000};
  };

  NodeListener(asio::io_context& io, ConnectionLimits limits);

  // Binds `address` (port 0: any free port) and returns the address actually bound.
  Address open(const Address& address, const std::string& port_file);
  void start(Handlers handlers, StatsFile stats_file);
  void write_stats();  // now, if a stats file is set; a failure is logged, not thrown
  void close();

 private:
  void accept_next();
  void schedule_stats();

  ConnectionLimits limits_;
  tcp::acceptor acceptor_;
  asio::signal_set signals_;
  asio::steady_timer stats_timer_;
  Handlers handlers_;
  StatsFile stats_file_;
  bool closed_ = false;
};

}  // namespace wsemu::cluster
