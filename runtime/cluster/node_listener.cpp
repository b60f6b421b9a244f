#include "runtime/cluster/node_listener.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "runtime/cluster/handshake.hpp"
#include "runtime/cluster/stats.hpp"

namespace wsemu::cluster {

NodeListener::NodeListener(asio::io_context& io, ConnectionLimits limits, std::shared_ptr<asio::ssl::context> tls)
    : io_(io),
      limits_(limits),
      tls_(std::move(tls)),
      acceptor_(io),
      accept_retry_(io),
      signals_(io, SIGTERM, SIGINT),
      stats_timer_(io) {}

Address NodeListener::open(const Address& address, const std::string& port_file) {
  const tcp::endpoint endpoint(asio::ip::make_address(address.host), address.port);
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(tcp::acceptor::reuse_address(true));
  boost::system::error_code ec;
  acceptor_.bind(endpoint, ec);
  if (ec)
    throw ConfigError(fmt::format("cannot listen on {}: {}", address.to_string(), ec.message()));
  acceptor_.listen();
  const Address bound{address.host, acceptor_.local_endpoint().port()};
  if (!port_file.empty()) {
    std::ofstream(port_file + ".tmp") << bound.to_string() << '\n';
    std::filesystem::rename(port_file + ".tmp", port_file);
  }
  return bound;
}

void NodeListener::start(Handlers handlers, StatsFile stats_file) {
  handlers_ = std::move(handlers);
  stats_file_ = std::move(stats_file);
  signals_.async_wait([this](const boost::system::error_code& error, int signal) {
    if (error || closed_) return;
    spdlog::info("signal {} received", signal);
    handlers_.on_signal();
  });
  accept_next();
  schedule_stats();
}

void NodeListener::serve(Handlers handlers, StatsFile stats_file) {
  start(std::move(handlers), std::move(stats_file));
  io_.run();
}

void NodeListener::accept_next() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (closed_) return;
    if (ec) {
      if (ec != asio::error::operation_aborted) accept_failed(ec);
      return;
    }
    accept_backoff_ = std::chrono::milliseconds(0);
    if (!over_connection_limit(socket)) {
      auto connection = std::make_shared<Connection>(std::move(socket), limits_, tls_);
      live_.push_back(connection);
      PeerHandlers peer = handlers_.on_accept(connection);
      connection->start(std::move(peer.on_frame), std::move(peer.on_close), kHandshakeDeadline);
      send_challenge(*connection);
    }
    accept_next();
  });
}

void NodeListener::accept_failed(const boost::system::error_code& ec) {
  // Out of descriptors the pending connection stays queued and accept fails again at once: an
  // immediate retry would spin the io thread and flood the log, so wait, longer each time.
  ++accept_failures_;
  ++accept_failures_unreported_;
  const auto now = std::chrono::steady_clock::now();
  accept_backoff_ = std::clamp(accept_backoff_ * 2, std::chrono::milliseconds(10),
                               std::chrono::milliseconds(1000));
  if (now - last_accept_report_ >= std::chrono::seconds(1)) {
    spdlog::warn("accept failed: {} ({} time(s) since the last report); retrying in {} ms",
                 ec.message(), accept_failures_unreported_, accept_backoff_.count());
    last_accept_report_ = now;
    accept_failures_unreported_ = 0;
  }
  accept_retry_.expires_after(accept_backoff_);
  accept_retry_.async_wait([this](const boost::system::error_code& error) {
    if (!error && !closed_) accept_next();
  });
}

bool NodeListener::over_connection_limit(const tcp::socket& socket) {
  size_t open = 0, unauthenticated = 0;
  std::erase_if(live_, [&](const std::weak_ptr<Connection>& weak) {
    const auto connection = weak.lock();
    if (!connection || !connection->is_open()) return true;
    ++open;
    if (!connection->authenticated()) ++unauthenticated;
    return false;
  });
  std::string why;
  if (open >= limits_.max_connections)
    why = fmt::format("{} connections are open (the limit)", open);
  else if (unauthenticated >= limits_.max_unauthenticated)
    why = fmt::format("{} connections are still in their handshake (the limit)", unauthenticated);
  if (why.empty()) return false;
  ++connections_over_limit_;
  ++over_limit_unreported_;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_limit_report_ >= std::chrono::seconds(1)) {
    boost::system::error_code ignored;
    const auto remote = socket.remote_endpoint(ignored);
    spdlog::warn("closed a new connection from {}: {} ({} refused since the last report)",
                 ignored ? std::string("unknown") : remote.address().to_string(), why,
                 over_limit_unreported_);
    last_limit_report_ = now;
    over_limit_unreported_ = 0;
  }
  return true;  // the socket closes as it goes out of scope
}

void NodeListener::write_stats() {
  if (stats_file_.path.empty() || !handlers_.stats) return;
  if (!write_stats_file(stats_file_.path, handlers_.stats()))
    spdlog::warn("cannot write the stats file '{}'", stats_file_.path);
}

void NodeListener::schedule_stats() {
  if (stats_file_.path.empty()) return;
  stats_timer_.expires_after(stats_file_.interval);
  stats_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || closed_) return;
    write_stats();
    schedule_stats();
  });
}

void NodeListener::close() {
  closed_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  accept_retry_.cancel();
  signals_.cancel(ignored);
  stats_timer_.cancel();
}

}  // namespace wsemu::cluster
