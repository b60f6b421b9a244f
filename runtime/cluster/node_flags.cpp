#include "runtime/cluster/node_flags.hpp"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>

namespace wsemu::cluster {

void NodeFlags::add_to(CLI::App& app, const std::string& queue_bytes_meaning) {
  app.add_option("--listen", listen, "address to listen on, HOST:PORT (port 0: any free port)")
      ->capture_default_str();
  app.add_option("--token-file", token_file,
                 "file whose first line is the shared token (else $WSEMU_TOKEN)");
  app.add_option("--stats", stats_file, "JSON counters file, rewritten periodically");
  app.add_option("--stats-interval-ms", stats_interval_ms, "period of --stats")
      ->capture_default_str();
  app.add_option("--port-file", port_file, "write the bound HOST:PORT here once listening");
  app.add_option("--max-frame-bytes", max_frame, "largest frame accepted or sent")
      ->capture_default_str();
  app.add_option("--queue-bytes", queue_bytes, queue_bytes_meaning)->capture_default_str();
  app.add_option("--max-connections", max_connections,
                 "open connections before new ones are closed at once")
      ->check(CLI::Range(1u, 1000000u))
      ->capture_default_str();
  app.add_option("--max-handshakes", max_unauthenticated,
                 "connections still in their handshake before new ones are closed at once")
      ->check(CLI::Range(1u, 1000000u))
      ->capture_default_str();
  app.add_option("--name", name, "label in logs and stats")->capture_default_str();
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->capture_default_str();
  app.add_option("--log-file", log_file, "also log to this file");
  app.add_option("--tls-cert", tls.cert,
                 "serve TLS only, presenting this PEM certificate (chain); needs --tls-key");
  app.add_option("--tls-key", tls.key, "the PEM private key of --tls-cert");
  app.add_option("--tls-ca", tls.ca,
                 "connect upstream with TLS only, refusing a node whose certificate does not chain to this PEM CA");
}

void NodeFlags::apply_to(NodeOptions& options) const {
  options.listen = parse_address(listen);
  options.token = load_token(token_file);
  options.name = name;
  options.stats_file = stats_file;
  // A period under 10 ms would spend the node's io thread rewriting the file.
  options.stats_interval = std::chrono::milliseconds(std::max<uint32_t>(stats_interval_ms, 10));
  options.port_file = port_file;
  options.limits.max_frame_bytes = parse_byte_size(max_frame);
  options.limits.queue_high_bytes = parse_byte_size(queue_bytes);
  options.limits.queue_low_bytes = options.limits.queue_high_bytes / 4;
  options.limits.max_connections = max_connections;
  options.limits.max_unauthenticated = max_unauthenticated;
  options.tls = tls;
  (void)server_tls_context(tls);  // a bad TLS file is a usage error now, not when the node starts
  (void)client_tls_context(tls);
  if (options.limits.max_frame_bytes < kHandshakeMaxFrameBytes ||
      options.limits.max_frame_bytes > (1ull << 31))
    throw ConfigError("--max-frame-bytes must be between 64K and 2G");
}

int run_node(const std::string& program, const NodeFlags& flags, const std::function<int()>& body) {
  try {
    auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    std::vector<spdlog::sink_ptr> sinks{console};
    if (!flags.log_file.empty())
      sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(flags.log_file));
    auto logger = std::make_shared<spdlog::logger>(flags.name, sinks.begin(), sinks.end());
    logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%n] [%l] %v");
    logger->set_level(spdlog::level::from_str(flags.log_level));
    logger->flush_on(spdlog::level::info);
    spdlog::set_default_logger(logger);
    return body();
  } catch (const ConfigError& error) {
    std::cerr << program << ": error: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << program << ": fatal: " << error.what() << "\n";
    return 1;
  }
}

}  // namespace wsemu::cluster
