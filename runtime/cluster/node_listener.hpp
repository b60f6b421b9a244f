// The serving half that MemoryX and SwarmX nodes share: bind and listen, publish the bound
// address to a port file, accept connections and open their handshake (a 5 s deadline and the
// HelloChallenge), turn SIGTERM/SIGINT into the node's stop, rewrite the node's stats file on a
// timer, and run the node's io_context until the node stops it (serve()).
//
// Contract: lives on the node's io_context and calls its handlers only on that thread. open()
// throws ConfigError when the address cannot be bound; the port file is replaced atomically
// (temp file + rename), so a launcher polling it never reads half an address. close() stops
// accepting, the signal wait and the stats timer; no handler runs after it. A failed accept
// (out of descriptors) is retried after a growing pause (10 ms doubling to 1 s) and logged at
// most once per second, so it can never spin. Past limits.max_connections open connections, or
// limits.max_unauthenticated ones still in their handshake, a new connection is closed at once
// (logged at most once per second, counted in connections_over_limit). With a TLS context the
// TLS handshake counts as part of the handshake (its deadline and the max_unauthenticated limit).
// Each node's NodeOptions::tls gives the TLS files (tls.hpp).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cluster/connection.hpp"

namespace wsemu::cluster {

// What every node is configured with, whatever its role (MemoryXOptions, SwarmXOptions).
struct NodeOptions {
  NodeOptions() = default;
  // A role's name and the address it listens on unless told otherwise.
  NodeOptions(std::string role_name, Address default_listen)
      : listen(std::move(default_listen)), name(std::move(role_name)) {}

  Address listen;
  std::string token;
  std::string name;
  std::string stats_file;  // JSON counters, rewritten every stats_interval; empty: none
  std::chrono::milliseconds stats_interval{1000};
  std::string port_file;  // "HOST:PORT" written once listening
  ConnectionLimits limits;
  TlsFiles tls;  // --tls-cert/--tls-key: serve TLS; --tls-ca: connect upstream with TLS
};

class NodeListener {
 public:
  // How the node handles one peer's frames and its close.
  struct PeerHandlers {
    Connection::FrameHandler on_frame;
    Connection::CloseHandler on_close;
  };
  struct Handlers {
    // A new peer, not yet started: the node files it and says how to handle it; the listener
    // then starts it and sends the HelloChallenge.
    std::function<PeerHandlers(const std::shared_ptr<Connection>&)> on_accept;
    std::function<void()> on_signal;                             // SIGTERM or SIGINT arrived
    std::function<nlohmann::json()> stats;                       // the stats file's document
  };
  struct StatsFile {
    std::string path;  // empty: no stats file
    std::chrono::milliseconds interval{1000};
  };

  // A peer that has not finished its handshake by then is closed.
  static constexpr std::chrono::milliseconds kHandshakeDeadline{5000};

  // tls: null for plain TCP; else every accepted connection is TLS with this context.
  NodeListener(asio::io_context& io, ConnectionLimits limits, std::shared_ptr<asio::ssl::context> tls = nullptr);

  // Binds `address` (port 0: any free port) and returns the address actually bound.
  Address open(const Address& address, const std::string& port_file);
  void start(Handlers handlers, StatsFile stats_file);
  // start(), then runs the io_context until the node stops it.
  void serve(Handlers handlers, StatsFile stats_file);
  // serve() for a node (MemoryXNode, SwarmXNode, which befriend the listener): its accept() files
  // each new peer, a signal calls its stop(), its stats_json() fills the stats file its options name.
  template <class Node>
  void serve_node(Node& node, const NodeOptions& options) {
    serve({[&node](const std::shared_ptr<Connection>& c) { return node.accept(c); }, [&node] { node.stop(); },
           [&node] { return node.stats_json(); }},
          {options.stats_file, options.stats_interval});
  }
  void write_stats();  // now, if a stats file is set; a failure is logged, not thrown
  void close();
  uint64_t accept_failures() const { return accept_failures_; }
  uint64_t connections_over_limit() const { return connections_over_limit_; }

 private:
  void accept_next();
  void accept_failed(const boost::system::error_code& ec);
  bool over_connection_limit(const tcp::socket& socket);
  void schedule_stats();

  asio::io_context& io_;
  ConnectionLimits limits_;
  std::shared_ptr<asio::ssl::context> tls_;
  tcp::acceptor acceptor_;
  asio::steady_timer accept_retry_;
  std::chrono::milliseconds accept_backoff_{0};
  std::chrono::steady_clock::time_point last_accept_report_{};
  uint64_t accept_failures_unreported_ = 0;
  std::chrono::steady_clock::time_point last_limit_report_{};
  uint64_t over_limit_unreported_ = 0;
  std::vector<std::weak_ptr<Connection>> live_;
  asio::signal_set signals_;
  asio::steady_timer stats_timer_;
  Handlers handlers_;
  StatsFile stats_file_;
  bool closed_ = false;
  uint64_t accept_failures_ = 0;
  uint64_t connections_over_limit_ = 0;
};

}  // namespace wsemu::cluster
