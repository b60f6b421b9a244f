// The connecting side of a cluster connection: dials an address, sends Hello, waits for the
// HelloReply, and redials with exponential backoff whenever the connection is lost.
//
// Contract: runs on one io_context thread, like Connection. on_connected runs once per accepted
// handshake, before any other frame of that connection reaches on_frame; on_disconnected runs
// once per lost accepted connection. A refused handshake calls on_refused (with the acceptor's
// reason) and is retried at the maximum backoff, since the far side may be reconfigured.
// stop() ends all redialling; no handler runs after it. With options.tls, a failed TLS handshake
// (the far side's certificate does not chain to the CA, or it does not speak TLS) is a refusal.
#pragma once

#include "runtime/cluster/connection.hpp"

namespace wsemu::cluster {

class UpstreamLink : public std::enable_shared_from_this<UpstreamLink> {
 public:
  struct Options {
    Address address;
    pb::Hello hello;  // token, role, rank, name; protocol_version is filled in
    ConnectionLimits limits;
    std::chrono::milliseconds backoff_initial{20};
    std::chrono::milliseconds backoff_max{1000};
    std::chrono::milliseconds handshake_timeout{5000};
    std::shared_ptr<asio::ssl::context> tls;  // null: plain TCP (client_tls_context)
  };
  struct Handlers {
    std::function<void(const std::shared_ptr<Connection>&, const pb::HelloReply&)> on_connected;
    std::function<void(pb::Envelope&)> on_frame;
    std::function<void(const std::string& reason)> on_disconnected;
    std::function<void(const std::string& reason)> on_refused;
  };

  UpstreamLink(asio::io_context& io, Options options, Handlers handlers);

  void start();
  void stop();
  // The connection once its handshake was accepted; null otherwise.
  std::shared_ptr<Connection> connection() const { return accepted_ ? connection_ : nullptr; }
  uint64_t reconnects() const { return reconnects_; }
  const Address& address() const { return options_.address; }
  void attach_counters(std::shared_ptr<PeerCounters> counters) { counters_ = std::move(counters); }

 private:
  void dial();
  void schedule_redial(bool after_refusal);
  void on_frame(pb::Envelope& envelope);
  void on_closed(const std::string& reason);

  asio::io_context& io_;
  Options options_;
  Handlers handlers_;
  asio::steady_timer timer_;
  tcp::resolver resolver_;
  std::shared_ptr<Connection> connection_;
  std::shared_ptr<PeerCounters> counters_;
  std::chrono::milliseconds backoff_;
  bool stopped_ = true;
  bool accepted_ = false;
  bool ever_connected_ = false;
  uint64_t reconnects_ = 0;
  uint64_t generation_ = 0;
};

}  // namespace wsemu::cluster
