// wsemu-memoryx: the MemoryX node process (weights + optimizer state of one shard).
// Operator's guide: runtime/cluster/README.md.
#include "runtime/cluster/memoryx_node.hpp"
#include "runtime/cluster/tsan_spdlog.hpp"  // one TU per program
#include "runtime/cluster/node_flags.hpp"
#include "tools/cli_conventions.hpp"
#include "runtime/cluster/optimizer.hpp"

using namespace wsemu::cluster;

int main(int argc, char** argv) {
  CLI::App app{
      "wsemu-memoryx: the MemoryX weight store of a wsemu cluster. Holds the weights and "
      "optimizer state of its shard, streams a layer's weights on request, applies each "
      "reduced gradient exactly once per step, checkpoints atomically. See "
      "runtime/cluster/README.md."};
  NodeFlags node(MemoryXOptions{});
  node.add_to(app, "outgoing bytes per connection before a stream waits");
  std::string store;
  std::string optimizer = "sgd";
  float lr = 0.01f, momentum = 0.9f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.0f,
        grad_scale = 1.0f;
  uint64_t checkpoint_every = 100;
  uint32_t keep_checkpoints = 2;
  std::string memory_budget = "4G";
  std::string shard = "0/1";
  uint32_t chunk_elements = kDefaultChunkElements;
  bool sync_log = true;
  app.add_option("--store", store, "folder for checkpoints, the write-ahead log and spill files")
      ->required();
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
  app.add_option("--chunk-elements", chunk_elements, "default elements per weight chunk")
      ->capture_default_str();
  bool step_atomic = false;
  app.add_flag("--step-atomic", step_atomic,
               "apply a step to all tensors at once, when all of its gradients are in (a wafer "
               "that dies mid-step can then be restarted at that step)");
  app.add_flag("--sync-log,!--no-sync-log", sync_log,
               "fdatasync each log record before acknowledging (default on)");
  wsemu::cli::add_version_flag(app, "wsemu-memoryx");
  WSEMU_CLI_PARSE(app, argc, argv);

  return run_node("wsemu-memoryx", node, [&] {
    MemoryXOptions options;
    node.apply_to(options);
    options.store_dir = store;
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
    if (chunk_elements == 0 ||
        uint64_t{chunk_elements} * 8 + 4096 > options.limits.max_frame_bytes) {
      throw ConfigError("--chunk-elements must be at least 1 and fit in --max-frame-bytes");
    }
    options.default_chunk_elements = chunk_elements;
    options.sync_log = sync_log;
    options.step_atomic = step_atomic;
    MemoryXNode node(options);
    return node.run();
  });
}
