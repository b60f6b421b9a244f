// A typed, framed connection over an asio TCP socket, or over TLS on it (tls.hpp): reads
// Envelopes one frame at a time and writes them from a bounded-by-watermark outgoing queue.
//
// Contract: every method must be called on the io_context thread that runs the socket (each
// node and client runs exactly one). Frames longer than the current limit (kHandshakeMaxFrameBytes
// until set_authenticated(), then max_frame_bytes) close the connection before any allocation;
// malformed frames and ProtocolErrors thrown by the frame handler close it too (an Error message
// is sent first when possible). The close handler runs exactly once, never from inside a call the
// owner made. send() never blocks and never drops: producers check congested() and wait for
// when_drained(), which is how backpressure reaches them. pause_reading() stops taking frames off
// the socket (TCP then slows the sender). With a TLS context, start() runs the TLS handshake
// first (within the handshake deadline) and frames sent before it ends wait in the queue; a
// failed TLS handshake closes the connection with a reason that starts "TLS handshake failed".
#pragma once

// clang-format off
#include <utility>  // before asio: Boost 1.74 asio under C++20 with GCC 12
#include <boost/asio.hpp>
// clang-format on
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cluster/protocol.hpp"
#include "runtime/cluster/stats.hpp"
#include "runtime/cluster/tls.hpp"

namespace wsemu::cluster {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct ConnectionLimits {
  size_t max_frame_bytes = kDefaultMaxFrameBytes;
  size_t queue_high_bytes = 8u << 20;  // congested() from here
  size_t queue_low_bytes = 2u << 20;   // when_drained() handlers run below this
  size_t max_connections = 1024;       // a listener closes new connections past these
  size_t max_unauthenticated = 64;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using FrameHandler = std::function<void(pb::Envelope&)>;
  using CloseHandler = std::function<void(const std::string& reason)>;

  enum class TlsSide { accepting, connecting };
  // tls: null for plain TCP; else this side of a TLS connection over `socket`.
  Connection(tcp::socket socket, ConnectionLimits limits, std::shared_ptr<asio::ssl::context> tls = nullptr,
             TlsSide side = TlsSide::accepting);
  ~Connection();

  // Starts reading. When handshake_deadline > 0, a connection not authenticated by then closes.
  void start(FrameHandler on_frame, CloseHandler on_close,
             std::chrono::milliseconds handshake_deadline = std::chrono::milliseconds(0));
  void set_authenticated();
  bool authenticated() const { return authenticated_; }
  // The handshake's nonces on this connection (handshake.hpp): the acceptor's challenge and the
  // connecting side's own.
  void set_nonces(std::string server_nonce, std::string client_nonce) {
    server_nonce_ = std::move(server_nonce);
    client_nonce_ = std::move(client_nonce);
  }
  const std::string& server_nonce() const { return server_nonce_; }
  const std::string& client_nonce() const { return client_nonce_; }

  void send(const pb::Envelope& envelope);
  void send_frame(std::shared_ptr<const std::string> frame);
  // Closes once everything queued so far is written (used to deliver a refusal).
  void close_after_flush(const std::string& reason);
  void close(const std::string& reason);
  bool is_open() const { return open_; }

  bool congested() const { return queued_bytes_ >= limits_.queue_high_bytes; }
  void when_drained(std::function<void()> handler);
  void pause_reading();
  void resume_reading();

  size_t queued_bytes() const { return queued_bytes_; }
  size_t max_frame_bytes() const { return limits_.max_frame_bytes; }
  const std::string& remote() const { return remote_; }
  void attach_counters(std::shared_ptr<PeerCounters> counters);
  uint64_t id() const { return id_; }

 private:
  void read_header();
  void on_header(const boost::system::error_code& ec);
  void read_body_part();
  void on_body(const boost::system::error_code& ec);
  void write_next();
  void on_written(const boost::system::error_code& ec, size_t bytes);
  void fail(const std::string& reason, bool send_error);
  void run_drain_handlers();
  void update_queue_counters();
  void on_tls_handshake(const boost::system::error_code& ec);
  tcp::socket::lowest_layer_type& lowest() { return tls_ ? tls_->lowest_layer() : socket_.lowest_layer(); }
  // Runs op on the stream frames travel on: the TLS stream, or the socket itself.
  template <class Op>
  void on_stream(Op&& op) {
    if (tls_) op(*tls_);
    else op(socket_);
  }

  tcp::socket socket_;  // moved into tls_ when there is one
  std::unique_ptr<asio::ssl::stream<tcp::socket>> tls_;
  TlsSide tls_side_;
  bool tls_ready_ = true;  // false while the TLS handshake runs
  ConnectionLimits limits_;
  asio::steady_timer deadline_;
  std::string remote_;
  uint64_t id_;
  FrameHandler on_frame_;
  CloseHandler on_close_;
  bool open_ = false;
  bool authenticated_ = false;
  bool reading_ = false;
  bool writing_ = false;
  bool close_when_flushed_ = false;
  std::string close_reason_;
  int paused_ = 0;
  unsigned char header_[kFrameHeaderBytes] = {};
  std::vector<char> body_;
  size_t body_expected_ = 0;
  std::deque<std::shared_ptr<const std::string>> queue_;
  size_t queued_bytes_ = 0;
  std::vector<std::function<void()>> drain_handlers_;
  std::shared_ptr<PeerCounters> counters_;
  std::string server_nonce_, client_nonce_;
};

}  // namespace wsemu::cluster
