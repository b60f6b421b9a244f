// Streaming throughput of the emulated cluster on loopback, printed next to raw loopback TCP
// measured in the same run: MemoryX -> 1 SwarmX -> 4 leaves (weights down, dense and sparse),
// gradients 4 leaves -> SwarmX sum -> MemoryX, and plain sockets moving the same bytes.
//
// Usage: cluster_stream_bench [--mib N] [--passes P]   (needs wsemu-memoryx and wsemu-swarmx next
// to it, or WSEMU_BIN_DIR). Figures only; nothing is asserted.
#include <fmt/format.h>

// clang-format off
#include <utility>  // before asio (Boost 1.74, C++20, GCC 12)
#include <boost/asio.hpp>
// clang-format on
#include <chrono>
#include <future>
#include <thread>

#include "runtime/cluster/cluster_client.hpp"
#include "runtime/cluster/local_cluster.hpp"
#include "tools/cli_conventions.hpp"

using namespace wsemu::cluster;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One sender thread writes `bytes` to each of `receivers` sockets (round robin, 1 MiB writes);
// one thread per receiver reads. Returns the wall time.
double raw_tcp(uint64_t bytes, int receivers) {
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  std::vector<tcp::socket> senders;
  std::vector<std::thread> readers;
  for (int i = 0; i < receivers; ++i) {
    senders.emplace_back(io);
    senders.back().connect(acceptor.local_endpoint());
    auto socket = std::make_shared<tcp::socket>(acceptor.accept());
    readers.emplace_back([socket, bytes] {
      std::vector<char> buffer(1 << 20);
      uint64_t got = 0;
      boost::system::error_code ec;
      while (got < bytes && !ec) got += socket->read_some(asio::buffer(buffer), ec);
    });
  }
  std::vector<char> block(1 << 20, 'x');
  const auto start = Clock::now();
  for (uint64_t sent = 0; sent < bytes; sent += block.size()) {
    for (auto& s : senders)
      asio::write(s, asio::buffer(block.data(), std::min<uint64_t>(block.size(), bytes - sent)));
  }
  for (auto& r : readers) r.join();
  return seconds_since(start);
}

void row(const std::string& what, uint64_t bytes_per_receiver, int receivers, double seconds) {
  const double total = static_cast<double>(bytes_per_receiver) * receivers;
  fmt::print("{:<58} {:>9.1f} MiB/s per receiver {:>9.1f} MiB/s total  ({:.3f} s)\n", what,
             bytes_per_receiver / seconds / (1 << 20), total / seconds / (1 << 20), seconds);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t mib = 64;
  int passes = 3;
  CLI::App app{
      "cluster_stream_bench: streaming throughput of the emulated cluster on loopback, next "
      "to raw loopback TCP"};
  wsemu::cli::add_number(app, "--mib", mib, "MiB of fp32 weights in the layer", 1, 1e6);
  wsemu::cli::add_number(app, "--passes", passes, "passes", 1, 1e6);
  wsemu::cli::add_version_flag(app, "cluster_stream_bench");
  WSEMU_CLI_PARSE(app, argc, argv);
  const uint64_t bytes = mib << 20;
  const uint32_t tensors = 4;
  const uint64_t elements = bytes / 4 / tensors;
  fmt::print(
      "cluster streaming benchmark: a layer of {} tensors, {} MiB of fp32 weights; {} passes; {} "
      "cores\n\n",
      tensors, mib, passes, std::thread::hardware_concurrency());

  row("raw loopback TCP, 1 sender -> 1 receiver", bytes, 1, raw_tcp(bytes, 1));
  row("raw loopback TCP, 1 sender -> 4 receivers", bytes, 4, raw_tcp(bytes, 4));

  LocalClusterOptions options;
  options.leaves = 4;
  options.fanout = 4;
  options.memoryx_args = {"--no-sync-log", "--checkpoint-every", "0", "--memory-budget", "8G"};
  LocalCluster cluster(options);
  cluster.start();
  MemoryXControl control(cluster.memoryx_addresses(), cluster.token());
  control.connect();
  for (uint32_t t = 0; t < tensors; ++t) {
    pb::InitTensor init;
    init.mutable_info()->set_tensor_id(t);
    init.mutable_info()->set_name(fmt::format("w{}", t));
    init.mutable_info()->add_shape(elements);
    init.mutable_rule()->set_kind(pb::InitRule::UNIFORM);
    init.mutable_rule()->set_seed(t);
    init.mutable_rule()->set_a(-1.0f);
    init.mutable_rule()->set_b(1.0f);
    init.mutable_optimizer()->set_kind(pb::SGD);
    control.init_tensor(init);
  }
  std::vector<std::unique_ptr<ClusterClient>> leaves;
  for (uint32_t r = 0; r < 4; ++r) {
    ClientOptions client;
    client.address = cluster.leaf_address(r);
    client.token = cluster.token();
    client.rank = r;
    client.chunk_elements = 16384;
    leaves.push_back(std::make_unique<ClusterClient>(client));
    leaves.back()->connect();
  }
  auto stream = [&](uint32_t pass, const WeightEncoding& encoding) {
    const auto start = Clock::now();
    std::vector<std::future<LayerWeights>> futures;
    for (auto& leaf : leaves) futures.push_back(leaf->request_weights(0, 0, pass, encoding));
    uint64_t received = 0;
    for (auto& f : futures) received = f.get().bytes_received;
    return std::make_pair(seconds_since(start), received);
  };
  stream(100, {});  // warm up: connections, page faults
  double dense_time = 0;
  for (int p = 0; p < passes; ++p) dense_time += stream(p, {}).first;
  row("cluster weights, memoryx -> swarmx -> 4 leaves, dense fp32", bytes, 4, dense_time / passes);
  WeightEncoding half;
  half.dtype = pb::BF16;
  double half_time = 0;
  for (int p = 0; p < passes; ++p) half_time += stream(200 + p, half).first;
  row("cluster weights, bf16 (half the bytes; per fp32-equivalent)", bytes, 4, half_time / passes);
  WeightEncoding sparse;
  sparse.sparsity.set_mode(pb::Sparsity::TOP_K);
  sparse.sparsity.set_keep_fraction(0.1f);
  double sparse_time = 0;
  uint64_t sparse_bytes = 0;
  for (int p = 0; p < passes; ++p) {
    auto [t, b] = stream(300 + p, sparse);
    sparse_time += t;
    sparse_bytes = b;
  }
  row("cluster weights, top-10% sparse (per dense-equivalent byte)", bytes, 4,
      sparse_time / passes);
  fmt::print("{:<58} {:>9.1f} MiB on the wire per leaf for {} MiB dense ({:.1f}%)\n", "",
             sparse_bytes / 1048576.0, mib, 100.0 * sparse_bytes / bytes);

  // Gradients: every leaf sends the whole layer; the swarmx sums 4 -> 1; memoryx applies SGD.
  std::vector<float> gradient(elements, 1e-6f);
  double grad_time = 0;
  for (int p = 0; p < passes; ++p) {
    const auto start = Clock::now();
    std::vector<std::thread> senders;
    for (auto& leaf : leaves) {
      senders.emplace_back([&, p] {
        for (uint32_t t = 0; t < tensors; ++t)
          leaf->send_gradient(t, 0, static_cast<uint64_t>(p), gradient);
        leaf->wait_acknowledged(std::chrono::seconds(600));
      });
    }
    for (auto& s : senders) s.join();
    grad_time += seconds_since(start);
  }
  row("cluster gradients, 4 leaves -> swarmx sum -> memoryx apply", bytes, 4, grad_time / passes);
  const auto status = leaves[0]->status();
  fmt::print("\nswarmx counters: {}\n", status["counters"].dump());
  return 0;
}
