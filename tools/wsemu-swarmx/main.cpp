// wsemu-swarmx: one SwarmX broadcast/reduce tree node.
// Operator's guide: runtime/cluster/README.md.
#include "runtime/cluster/node_flags.hpp"
#include "runtime/cluster/tsan_spdlog.hpp"  // one TU per program
#include "tools/cli_conventions.hpp"
#include "runtime/cluster/swarmx_node.hpp"

using namespace wsemu::cluster;

int main(int argc, char** argv) {
  CLI::App app{
      "wsemu-swarmx: a SwarmX node of a wsemu cluster. Broadcasts weight streams from its "
      "upstream to its K children and sums their gradients in a fixed child order. See "
      "runtime/cluster/README.md."};
  NodeFlags node(SwarmXOptions{});
  node.add_to(app, "outgoing bytes per connection before it counts as congested");
  std::vector<std::string> upstreams;
  uint32_t fanout = 4;
  uint32_t rank = 0;
  std::string child_buffer = "64M";
  uint32_t resend_flush_ms = 100;
  app.add_option("--upstream", upstreams,
                 "parent address: a swarmx node, or a memoryx shard; repeat once per memoryx "
                 "shard, in shard order")
      ->required();
  app.add_option("--fanout", fanout, "number of children K it waits for")->capture_default_str();
  app.add_option("--rank", rank, "this node's rank among its parent's children")
      ->capture_default_str();
  app.add_option("--child-buffer-bytes", child_buffer,
                 "gradient bytes one child may have waiting in open sums")
      ->capture_default_str();
  uint32_t child_wait_s = 120;
  app.add_option("--child-wait-s", child_wait_s,
                 "seconds a weight request waits for children that never connected before it "
                 "fails naming them (0: forever)")
      ->check(CLI::Range(0u, 86400u))
      ->capture_default_str();
  app.add_option("--resend-flush-ms", resend_flush_ms,
                 "how long a re-sent weight request waits for its group")
      ->capture_default_str();
  wsemu::cli::add_version_flag(app, "wsemu-swarmx");
  WSEMU_CLI_PARSE(app, argc, argv);

  return run_node("wsemu-swarmx", node, [&] {
    SwarmXOptions options;
    node.apply_to(options);
    for (const auto& upstream : upstreams) options.upstreams.push_back(parse_address(upstream));
    options.fanout = fanout;
    options.rank = rank;
    options.child_buffer_bytes = parse_byte_size(child_buffer);
    options.resend_flush = std::chrono::milliseconds(resend_flush_ms);
    options.child_wait = std::chrono::seconds(child_wait_s);
    SwarmXNode node(options);
    return node.run();
  });
}
