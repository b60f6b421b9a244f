// wsemu-memoryx: the MemoryX node process (weights + optimizer state of one shard).
// Operator's guide: runtime/cluster/README.md.
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "runtime/cluster/memoryx_node.hpp"
#include "runtime/cluster/optimizer.hpp"

using namespace wsemu::cluster;

int main(int argc, char** argv) {
  CLI::App app{
      "wsemu-memoryx: the MemoryX weight store of a wsemu cluster. Holds the weights and "
      "optimizer state of its shard, streams a layer's weights on request, applies each "
      "reduced gradient exactly once per step, checkpoints atomically. See "
      "runtime/cluster/README.md."};
  std::string listen = "127.0.0.1:7100";
  std::string store;
  std::string token_file;
  std::string optimizer = "sgd";
  float lr = 0.01f, momentum = 0.9f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.0f,
        grad_scale = 1.0f;
  uint64_t checkpoint_every = 100;
  uint32_t keep_checkpoints = 2;
  std::string memory_budget = "4G";
  std::string shard = "0/1";
  std::string stats_file;
  uint32_t stats_interval_ms = 1000;
  std::string port_file;
  std::string max_frame = "64M";
  std::string queue_bytes = "8M";
  uint32_t chunk_elements = kDefaultChunkElements;
  bool sync_log = true;
  std::string name = "memoryx";
  std::string log_level = "info";
  std::string log_file;
  app.add_option("--listen", listen, "address to listen on, HOST:PORT (port 0: any free port)")
      ->capture_default_str();
  app.add_option("--store", store, "folder for checkpoints, the write-ahead log and spill files")
      ->required();
  app.add_option("--token-file", token_file,
                 "file whose first line is the shared token (else $WSEMU_TOKEN)");
  app.add_option("--optimizer", optimizer, "default optimizer: sgd, momentum, adam, adamw")
      ->capture_default_str();
  app.add_option("--lr", lr, "learning rate")->capture_default_str();
  app.add_option("--momentum", momentum, "momentum coefficient (momentum)")->capture_default_str();
  app.add_option("--beta1", beta1, "Adam beta1")->capture_default_str();
  app.add_option("--beta2", beta2, "Adam beta2")->capture_default_str();
  app.add_option("--eps", eps, "Adam epsilon")->capture_default_str();
  app.add_option("--weight-decay", weight_decay,
                 "L2 (sgd, momentum, adam) or decoupled (adamw) weight decay")
      ->capture_default_str();
  app.add_option("--grad-scale", grad_scale, "factor applied to each summed gradient first")
      ->capture_default_str();
  app.add_option("--checkpoint-every", checkpoint_every,
                 "steps between checkpoints (0: only on SIGTERM/request)")
      ->capture_default_str();
  app.add_option("--keep-checkpoints", keep_checkpoints, "checkpoints kept on disk")
      ->capture_default_str();
  app.add_option("--memory-budget", memory_budget,
                 "resident bytes before tensors spill to disk (e.g. 512M)")
      ->capture_default_str();
  app.add_option("--shard", shard, "this node's shard I/N: it holds tensors with id mod N == I")
      ->capture_default_str();
  app.add_option("--stats", stats_file, "JSON counters file, rewritten periodically");
  app.add_option("--stats-interval-ms", stats_interval_ms, "period of --stats")
      ->capture_default_str();
  app.add_option("--port-file", port_file, "write the bound HOST:PORT here once listening");
  app.add_option("--max-frame-bytes", max_frame, "largest frame accepted or sent")
      ->capture_default_str();
  app.add_option("--queue-bytes", queue_bytes,
                 "outgoing bytes per connection before a stream waits")
      ->capture_default_str();
  app.add_option("--chunk-elements", chunk_elements, "default elements per weight chunk")
      ->capture_default_str();
  app.add_flag("--sync-log,!--no-sync-log", sync_log,
               "fdatasync each log record before acknowledging (default on)");
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

    MemoryXOptions options;
    options.listen = parse_address(listen);
    options.store_dir = store;
    options.token = load_token(token_file);
    options.optimizer.set_kind(parse_optimizer_kind(optimizer));
    options.optimizer.set_lr(lr);
    options.optimizer.set_momentum(momentum);
    options.optimizer.set_beta1(beta1);
    options.optimizer.set_beta2(beta2);
    options.optimizer.set_eps(eps);
    options.optimizer.set_weight_decay(weight_decay);
    options.optimizer.set_grad_scale(grad_scale);
    options.checkpoint_every = checkpoint_every;
    options.keep_checkpoints = keep_checkpoints;
    options.memory_budget = parse_byte_size(memory_budget);
    const auto slash = shard.find('/');
    if (slash == std::string::npos) throw ConfigError("--shard takes I/N, e.g. 0/2");
    try {
      options.shard_index = static_cast<uint32_t>(std::stoul(shard.substr(0, slash)));
      options.shard_count = static_cast<uint32_t>(std::stoul(shard.substr(slash + 1)));
    } catch (const std::exception&) {
      throw ConfigError("--shard takes I/N, e.g. 0/2");
    }
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
    if (chunk_elements == 0 ||
        uint64_t{chunk_elements} * 8 + 4096 > options.limits.max_frame_bytes) {
      throw ConfigError("--chunk-elements must be at least 1 and fit in --max-frame-bytes");
    }
    options.default_chunk_elements = chunk_elements;
    options.sync_log = sync_log;
    options.name = name;
    MemoryXNode node(options);
    return node.run();
  } catch (const ConfigError& error) {
    std::cerr << "wsemu-memoryx: error: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "wsemu-memoryx: fatal: " << error.what() << "\n";
    return 1;
  }
}
