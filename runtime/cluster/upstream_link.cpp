#include "runtime/cluster/upstream_link.hpp"

#include <fmt/format.h>

#include "runtime/cluster/handshake.hpp"

namespace wsemu::cluster {

UpstreamLink::UpstreamLink(asio::io_context& io, Options options, Handlers handlers)
    : io_(io),
      options_(std::move(options)),
      handlers_(std::move(handlers)),
      timer_(io),
      resolver_(io),
      backoff_(options_.backoff_initial) {
  options_.hello.set_protocol_version(kProtocolVersion);
}

void UpstreamLink::start() {
  stopped_ = false;
  dial();
}

void UpstreamLink::stop() {
  stopped_ = true;
  ++generation_;
  timer_.cancel();
  resolver_.cancel();
  if (connection_) connection_->close("link stopped");
  connection_.reset();
  accepted_ = false;
}

void UpstreamLink::dial() {
  if (stopped_) return;
  const uint64_t generation = ++generation_;
  resolver_.async_resolve(
      options_.address.host, std::to_string(options_.address.port),
      [self = shared_from_this(), generation](const boost::system::error_code& ec,
                                              tcp::resolver::results_type results) {
        if (self->stopped_ || generation != self->generation_) return;
        if (ec) {
          self->schedule_redial(false);
          return;
        }
        auto socket = std::make_shared<tcp::socket>(self->io_);
        asio::async_connect(
            *socket, results,
            [self, socket, generation](const boost::system::error_code& ec2, const tcp::endpoint&) {
              if (self->stopped_ || generation != self->generation_) return;
              if (ec2) {
                self->schedule_redial(false);
                return;
              }
              auto connection =
                  std::make_shared<Connection>(std::move(*socket), self->options_.limits, self->options_.tls,
                                               Connection::TlsSide::connecting);
              self->connection_ = connection;
              self->accepted_ = false;
              std::weak_ptr<UpstreamLink> weak = self;
              connection->start(
                  [weak](pb::Envelope& envelope) {
                    if (auto link = weak.lock()) link->on_frame(envelope);
                  },
                  [weak, connection](const std::string& reason) {
                    auto link = weak.lock();
                    if (link && link->connection_ == connection) link->on_closed(reason);
                  },
                  self->options_.handshake_timeout);
              // The Hello waits for the acceptor's challenge (on_frame).
            });
      });
}

void UpstreamLink::schedule_redial(bool after_refusal) {
  if (stopped_) return;
  const auto delay = after_refusal ? options_.backoff_max : backoff_;
  backoff_ = std::min(backoff_ * 2, options_.backoff_max);
  const uint64_t generation = ++generation_;
  timer_.expires_after(delay);
  timer_.async_wait([self = shared_from_this(), generation](const boost::system::error_code& ec) {
    if (!ec && generation == self->generation_) self->dial();
  });
}

void UpstreamLink::on_frame(pb::Envelope& envelope) {
  if (accepted_) {
    if (handlers_.on_frame) handlers_.on_frame(envelope);
    return;
  }
  if (envelope.body_case() == pb::Envelope::kError) {
    throw ProtocolError(
        fmt::format("{} answered: {}", options_.address.to_string(), envelope.error().message()));
  }
  if (envelope.body_case() == pb::Envelope::kHelloChallenge) {
    if (!connection_->server_nonce().empty()) throw ProtocolError("a second HelloChallenge");
    const pb::HelloChallenge& challenge = envelope.hello_challenge();
    if (challenge.nonce().size() != kNonceBytes) throw ProtocolError("a malformed HelloChallenge");
    // The token itself never travels: the Hello proves it over both nonces.
    pb::Envelope hello;
    pb::Hello& h = *hello.mutable_hello();
    h = options_.hello;
    h.clear_token();
    h.set_client_nonce(random_nonce());
    connection_->set_nonces(challenge.nonce(), h.client_nonce());
    h.set_proof(hello_proof(options_.hello.token(), challenge.nonce(), h));
    connection_->send(hello);
    return;
  }
  if (envelope.body_case() != pb::Envelope::kHelloReply || connection_->server_nonce().empty()) {
    throw ProtocolError(fmt::format(
        "{} did not start with HelloChallenge (a node older than protocol version {}?)",
        options_.address.to_string(), kProtocolVersion));
  }
  const pb::HelloReply& reply = envelope.hello_reply();
  if (!reply.accepted()) {
    const std::string reason = reply.reason();
    connection_->close("handshake refused: " + reason);
    if (handlers_.on_refused) handlers_.on_refused(reason);
    return;
  }
  if (!tokens_equal(reply.proof(), accept_proof(options_.hello.token(), connection_->server_nonce(),
                                                connection_->client_nonce()))) {
    // Whoever answered does not hold the token: not our cluster's node.
    const std::string reason = "the node accepted without proving it holds the token";
    connection_->close("handshake refused: " + reason);
    if (handlers_.on_refused) handlers_.on_refused(reason);
    return;
  }
  accepted_ = true;
  connection_->set_authenticated();
  if (counters_) connection_->attach_counters(counters_);
  if (ever_connected_) ++reconnects_;
  ever_connected_ = true;
  backoff_ = options_.backoff_initial;
  if (handlers_.on_connected) handlers_.on_connected(connection_, reply);
}

void UpstreamLink::on_closed(const std::string& reason) {
  const bool was_accepted = accepted_;
  const bool tls_failed = reason.rfind("TLS handshake failed", 0) == 0;
  const bool refused = tls_failed || reason.rfind("handshake refused", 0) == 0;
  accepted_ = false;
  connection_.reset();
  if (was_accepted && handlers_.on_disconnected) handlers_.on_disconnected(reason);
  if (tls_failed && handlers_.on_refused)
    handlers_.on_refused(fmt::format("{} (is {} serving TLS with a certificate of the --tls-ca CA?)", reason,
                                     options_.address.to_string()));
  schedule_redial(refused);
}

}  // namespace wsemu::cluster
