#include "runtime/cluster/node_listener.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>

#include "runtime/cluster/stats.hpp"

namespace wsemu::cluster {

NodeListener::NodeListener(asio::io_context& io, ConnectionLimits limits)
    : limits_(limits), acceptor_(io), signals_(io, SIGTERM, SIGINT), stats_timer_(io) {}

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

void NodeListener::accept_next() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (closed_) return;
    if (ec) {
      // A failed accept (out of descriptors, a peer that reset at once) must not stop serving.
      if (ec != asio::error::operation_aborted) {
        spdlog::warn("accept failed: {}", ec.message());
        accept_next();
      }
      return;
    }
    handlers_.on_accept(std::make_shared<Connection>(std::move(socket), limits_));
    accept_next();
  });
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
  signals_.cancel(ignored);
  stats_timer_.cancel();
}

}  // namespace wsemu::cluster
