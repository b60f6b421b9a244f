// wsemu-swarmx: one SwarmX broadcast/reduce tree node.
// Operator's guide: runtime/cluster/README.md.
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "runtime/cluster/swarmx_node.hpp"

using namespace wsemu::cluster;

int main(int argc, char** argv) {
  CLI::App app{
      "wsemu-swarmx: a SwarmX node of a wsemu cluster. Broadcasts weight streams from its "
      "upstream to its K children and sums their gradients in a fixed child order. See "
      "runtime/cluster/README.md."};
  std::string listen = "127.0.0.1:7200";
  std::vector<std::string> upstreams;
  std::string token_file;
  uint32_t fanout = 4;
  uint32_t rank = 0;
  std::string stats_file;
  uint32_t stats_interval_ms = 1000;
  std::string port_file;
  std::string max_frame = "64M";
  std::string queue_bytes = "8M";
  std::string child_buffer = "64M";
  uint32_t resend_flush_ms = 100;
  std::string name = "swarmx";
  std::string log_level = "info";
  std::string log_file;
  app.add_option("--listen", listen, "address to listen on, HOST:PORT (port 0: any free port)")
      ->capture_default_str();
  app.add_option("--upstream", upstreams,
                 "parent address: a swarmx node, or a memoryx shard; repeat once per memoryx "
                 "shard, in shard order")
      ->required();
  app.add_option("--token-file", token_file,
                 "file whose first line is the shared token (else $WSEMU_TOKEN)");
  app.add_option("--fanout", fanout, "number of children K it waits for")->capture_default_str();
  app.add_option("--rank", rank, "this node's rank among its parent's children")
      ->capture_default_str();
  app.add_option("--stats", stats_file, "JSON counters file, rewritten periodically");
  app.add_option("--stats-interval-ms", stats_interval_ms, "period of --stats")
      ->capture_default_str();
  app.add_option("--port-file", port_file, "write the bound HOST:PORT here once listening");
  app.add_option("--max-frame-bytes", max_frame, "largest frame accepted or sent")
      ->capture_default_str();
  app.add_option("--queue-bytes", queue_bytes,
                 "outgoing bytes per connection before it counts as congested")
      ->capture_default_str();
  app.add_option("--child-buffer-bytes", child_buffer,
                 "gradient bytes one child may have waiting in open sums")
      ->capture_default_str();
  app.add_option("--resend-flush-ms", resend_flush_ms,
                 "how long a re-sent weight request waits for its group")
      ->capture_default_str();
  app.add_option("--name", name, "label in logs and stats")->capture_default_str();
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->capture_default_str();
  app.add_option("--log-file", log_file, "also log to this file");
  CLI11_PARSE(app, argc, argv);

  try {
    auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    std::vector<spdlog::sink_ptr> sinks{console};
    if (!log_file.empty())
      sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_file));
    auto logger = std::make_shared<spdlog::logger>(name, sinks.begin(), sinks.end());
    logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%n] [%l] %v");
    logger->set_level(spdlog::level::from_str(log_level));
    logger->flush_on(spdlog::level::info);
    spdlog::set_default_logger(logger);

    SwarmXOptions options;
    options.listen = parse_address(listen);
    for (const auto& upstream : upstreams) options.upstreams.push_back(parse_address(upstream));
    options.token = load_token(token_file);
    options.fanout = fanout;
    options.rank = rank;
    options.stats_file = stats_file;
    options.stats_interval = std::chrono::milliseconds(std::max<uint32_t>(stats_interval_ms, 10));
    options.port_file = port_file;
    options.limits.max_frame_bytes = parse_byte_size(max_frame);
    options.limits.queue_high_bytes = parse_byte_size(queue_bytes);
    options.limits.queue_low_bytes = options.limits.queue_high_bytes / 4;
    if (options.limits.max_frame_bytes < kHandshakeMaxFrameBytes ||
        options.limits.max_frame_bytes > (1ull << 31)) {
      throw ConfigError("--max-frame-bytes must be between 64K and 2G");
    }
    options.child_buffer_bytes = parse_byte_size(child_buffer);
    options.resend_flush = std::chrono::milliseconds(resend_flush_ms);
    options.name = name;
    SwarmXNode node(options);
    return node.run();
  } catch (const ConfigError& error) {
    std::cerr << "wsemu-swarmx: error: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "wsemu-swarmx: fatal: " << error.what() << "\n";
    return 1;
  }
}
