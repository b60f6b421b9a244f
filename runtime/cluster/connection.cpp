#include "runtime/cluster/connection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

namespace wsemu::cluster {

static std::atomic<uint64_t> next_connection_id{1};

Connection::Connection(tcp::socket socket, ConnectionLimits limits, std::shared_ptr<asio::ssl::context> tls,
                       TlsSide side)
    : socket_(std::move(socket)),
      tls_side_(side),
      limits_(limits),
      deadline_(socket_.get_executor()),
      id_(next_connection_id++) {
  boost::system::error_code ec;
  const auto endpoint = socket_.remote_endpoint(ec);
  remote_ = ec ? std::string("unknown")
               : fmt::format("{}:{}", endpoint.address().to_string(), endpoint.port());
  socket_.set_option(tcp::no_delay(true), ec);
  if (tls) {
    // The moved-from socket_ keeps its executor: the timers and posts below still use it.
    tls_ = std::make_unique<asio::ssl::stream<tcp::socket>>(std::move(socket_), *tls);
    tls_ready_ = false;
  }
}

Connection::~Connection() = default;

void Connection::start(FrameHandler on_frame, CloseHandler on_close,
                       std::chrono::milliseconds handshake_deadline) {
  on_frame_ = std::move(on_frame);
  on_close_ = std::move(on_close);
  open_ = true;
  if (handshake_deadline.count() > 0) {
    deadline_.expires_after(handshake_deadline);
    deadline_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec && !self->authenticated_)
        self->fail("no accepted handshake before the deadline", false);
    });
  }
  if (tls_) {
    tls_->async_handshake(tls_side_ == TlsSide::accepting ? asio::ssl::stream_base::server
                                                          : asio::ssl::stream_base::client,
                          [self = shared_from_this()](const boost::system::error_code& ec) {
                            self->on_tls_handshake(ec);
                          });
    return;
  }
  read_header();
}

void Connection::on_tls_handshake(const boost::system::error_code& ec) {
  if (!open_) return;
  if (ec) {
    fail(fmt::format("TLS handshake failed: {}", ec.message()), false);
    return;
  }
  tls_ready_ = true;
  read_header();
  if (!writing_) write_next();
}

void Connection::set_authenticated() {
  authenticated_ = true;
  deadline_.cancel();
}

void Connection::attach_counters(std::shared_ptr<PeerCounters> counters) {
  counters_ = std::move(counters);
  if (counters_) {
    counters_->connected = open_;
    ++counters_->connections;
  }
}

void Connection::read_header() {
  if (!open_ || reading_ || paused_ > 0 || !tls_ready_) return;
  reading_ = true;
  on_stream([&](auto& stream) {
    asio::async_read(stream, asio::buffer(header_, kFrameHeaderBytes),
                     [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                       self->on_header(ec);
                     });
  });
}

void Connection::on_header(const boost::system::error_code& ec) {
  if (!open_) return;
  if (ec) {
    fail(ec == asio::error::eof ? "peer closed the connection" : ec.message(), false);
    return;
  }
  const uint32_t length = decode_frame_length(header_);
  const size_t limit = authenticated_ ? limits_.max_frame_bytes : kHandshakeMaxFrameBytes;
  if (auto problem = check_frame_length(length, limit)) {
    fail(*problem, true);
    return;
  }
  body_expected_ = length;
  body_.clear();
  read_body_part();
}

// The body arrives in parts of at most kBodyPartBytes and the buffer grows only with what has
// arrived: a length header alone (a peer that never sends the body) costs no memory.
void Connection::read_body_part() {
  constexpr size_t kBodyPartBytes = 1u << 20;
  const size_t have = body_.size();
  const size_t part = std::min(kBodyPartBytes, body_expected_ - have);
  body_.resize(have + part);
  on_stream([&](auto& stream) {
    asio::async_read(stream, asio::buffer(body_.data() + have, part),
                     [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                       self->on_body(ec);
                     });
  });
}

void Connection::on_body(const boost::system::error_code& ec) {
  if (!open_) return;
  if (ec) {
    fail(ec == asio::error::eof ? "peer closed the connection inside a frame (truncated frame)"
                                : ec.message(),
         false);
    return;
  }
  if (body_.size() < body_expected_) {
    read_body_part();
    return;
  }
  reading_ = false;
  if (counters_) {
    counters_->bytes_in += body_.size() + kFrameHeaderBytes;
    ++counters_->frames_in;
  }
  try {
    pb::Envelope envelope = parse_envelope(body_.data(), body_.size());
    // Large buffers go back at once; so does the handshake's, for a connection that idles.
    if (body_.capacity() > (1u << 20) || !authenticated_) std::vector<char>().swap(body_);
    on_frame_(envelope);
  } catch (const ProtocolError& error) {
    fail(fmt::format("protocol error: {}", error.what()), true);
    return;
  } catch (const std::exception& error) {
    fail(fmt::format("error handling a frame: {}", error.what()), true);
    return;
  }
  read_header();
}

void Connection::send(const pb::Envelope& envelope) {
  if (!open_) return;
  send_frame(std::make_shared<const std::string>(encode_frame(envelope, limits_.max_frame_bytes)));
}

void Connection::send_frame(std::shared_ptr<const std::string> frame) {
  if (!open_ || close_when_flushed_) return;
  queued_bytes_ += frame->size();
  queue_.push_back(std::move(frame));
  update_queue_counters();
  if (!writing_ && tls_ready_) write_next();
}

void Connection::write_next() {
  if (queue_.empty() || !open_) {
    writing_ = false;
    return;
  }
  writing_ = true;
  auto frame = queue_.front();
  on_stream([&](auto& stream) {
    asio::async_write(stream, asio::buffer(*frame),
                      [self = shared_from_this(), frame](const boost::system::error_code& ec,
                                                         size_t n) { self->on_written(ec, n); });
  });
}

void Connection::on_written(const boost::system::error_code& ec, size_t bytes) {
  if (!open_) return;
  if (ec) {
    fail(ec.message(), false);
    return;
  }
  queued_bytes_ -= queue_.front()->size();
  queue_.pop_front();
  if (counters_) {
    counters_->bytes_out += bytes;
    ++counters_->frames_out;
  }
  update_queue_counters();
  if (queued_bytes_ <= limits_.queue_low_bytes) run_drain_handlers();
  if (queue_.empty() && close_when_flushed_) {
    writing_ = false;
    fail(close_reason_, false);
    return;
  }
  write_next();
}

void Connection::update_queue_counters() {
  if (!counters_) return;
  counters_->queue_bytes = queued_bytes_;
  counters_->queue_frames = queue_.size();
  counters_->max_queue_bytes = std::max<uint64_t>(counters_->max_queue_bytes, queued_bytes_);
}

void Connection::when_drained(std::function<void()> handler) {
  if (!open_ || !congested()) {
    asio::post(socket_.get_executor(), std::move(handler));
    return;
  }
  drain_handlers_.push_back(std::move(handler));
}

void Connection::run_drain_handlers() {
  if (drain_handlers_.empty()) return;
  auto handlers = std::move(drain_handlers_);
  drain_handlers_.clear();
  for (auto& handler : handlers) asio::post(socket_.get_executor(), std::move(handler));
}

void Connection::pause_reading() {
  ++paused_;
}

void Connection::resume_reading() {
  if (paused_ > 0) --paused_;
  if (paused_ == 0) read_header();
}

void Connection::close_after_flush(const std::string& reason) {
  if (!open_) return;
  if (queue_.empty() && !writing_) {
    fail(reason, false);
    return;
  }
  close_when_flushed_ = true;
  close_reason_ = reason;
}

void Connection::close(const std::string& reason) {
  fail(reason, false);
}

void Connection::fail(const std::string& reason, bool send_error) {
  if (!open_) return;
  if (send_error && !writing_ && tls_ready_) {
    // Best effort: tell the peer why before closing, without ever waiting for it.
    pb::Envelope envelope;
    envelope.mutable_error()->set_message(reason.substr(0, 1000));
    boost::system::error_code ignored;
    const std::string frame = encode_frame(envelope);
    lowest().non_blocking(true, ignored);
    on_stream([&](auto& stream) { stream.write_some(asio::buffer(frame), ignored); });
  }
  open_ = false;
  boost::system::error_code ignored;
  deadline_.cancel();
  lowest().shutdown(tcp::socket::shutdown_both, ignored);
  lowest().close(ignored);
  queue_.clear();
  queued_bytes_ = 0;
  if (counters_) {
    counters_->connected = false;
    update_queue_counters();
  }
  run_drain_handlers();
  // on_frame_ stays: this may run from inside it.
  auto handler = std::move(on_close_);
  on_close_ = nullptr;
  if (handler) {
    asio::post(socket_.get_executor(), [self = shared_from_this(), handler = std::move(handler),
                                        reason]() { handler(reason); });
  }
}

}  // namespace wsemu::cluster
