#include "tests/cluster/cluster_test_support.hpp"
#include "runtime/cluster/tsan_spdlog.hpp"  // one TU per program

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <future>
#include <mutex>
#include <random>
#include <thread>

namespace wsemu::cluster::testing {

namespace {

uint64_t mix(uint64_t x) {  // the MurmurHash3 finaliser: independent of the code under test
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

float unit(uint64_t h) {
  return static_cast<float>(h >> 40) * 0x1p-24f;
}  // [0, 1)

}  // namespace

uint64_t TensorSpec::elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

SyntheticModel SyntheticModel::small(uint64_t seed, double zero_fraction) {
  SyntheticModel model;
  model.tensors = {{0, "fc0.weight", 0, {24, 40}},
                   {1, "fc0.bias", 0, {40}},
                   {2, "fc1.weight", 1, {40, 30}},
                   {3, "fc1.bias", 1, {30}},
                   {4, "fc2.weight", 2, {30, 20}}};
  model.layers = 3;
  for (const auto& t : model.tensors) {
    std::vector<float> values(t.elements());
    for (uint64_t i = 0; i < values.size(); ++i) {
      const uint64_t h = mix(seed * 0x9E3779B97F4A7C15ull + t.id * 1000003ull + i);
      values[i] = unit(mix(h)) < zero_fraction ? 0.0f : (unit(h) - 0.5f) * 0.4f;
    }
    model.initial.push_back(std::move(values));
  }
  return model;
}

std::vector<float> SyntheticModel::gradient(uint32_t rank, uint64_t step, const TensorSpec& tensor,
                                            const std::vector<float>& weights) const {
  std::vector<float> g(weights.size());
  const float coefficient = 0.05f * static_cast<float>(rank + 1);
  for (size_t i = 0; i < g.size(); ++i) {
    if (multiplicative) {
      g[i] = weights[i] * coefficient;
    } else {
      const uint64_t h =
          mix(rank * 0x100000001b3ull ^ step * 7919ull ^ tensor.id * 104729ull ^ i * 15485863ull);
      g[i] = weights[i] * coefficient + (unit(h) - 0.5f) * 0.02f;
    }
  }
  return g;
}

pb::OptimizerConfig ReferenceOptimizer::to_config() const {
  pb::OptimizerConfig config;
  const std::map<std::string, pb::OptimizerKind> kinds{
      {"sgd", pb::SGD}, {"momentum", pb::MOMENTUM}, {"adam", pb::ADAM}, {"adamw", pb::ADAMW}};
  config.set_kind(kinds.at(kind));
  config.set_lr(lr);
  config.set_momentum(momentum);
  config.set_beta1(beta1);
  config.set_beta2(beta2);
  config.set_eps(eps);
  config.set_weight_decay(weight_decay);
  config.set_grad_scale(grad_scale);
  return config;
}

std::vector<std::string> ReferenceOptimizer::memoryx_args() const {
  return {"--optimizer",    kind,
          "--lr",           fmt::format("{}", lr),
          "--weight-decay", fmt::format("{}", weight_decay)};
}

namespace {

// One tensor's update, as optimizer.hpp documents it, in plain scalar code.
struct ReferenceState {
  std::vector<float> w, a, b;
  uint64_t t = 0;
};

void reference_update(const ReferenceOptimizer& o, ReferenceState& s,
                      const std::vector<float>& summed) {
  ++s.t;
  const float c1 =
      static_cast<float>(1.0 - std::pow(static_cast<double>(o.beta1), static_cast<double>(s.t)));
  const float c2 =
      static_cast<float>(1.0 - std::pow(static_cast<double>(o.beta2), static_cast<double>(s.t)));
  for (size_t i = 0; i < s.w.size(); ++i) {
    float g = summed[i] * o.grad_scale;
    if (o.kind != "adamw" && o.weight_decay != 0.0f) g = g + o.weight_decay * s.w[i];
    if (o.kind == "sgd") {
      s.w[i] = s.w[i] - o.lr * g;
    } else if (o.kind == "momentum") {
      s.a[i] = o.momentum * s.a[i] + g;
      s.w[i] = s.w[i] - o.lr * s.a[i];
    } else {
      s.a[i] = o.beta1 * s.a[i] + (1.0f - o.beta1) * g;
      s.b[i] = o.beta2 * s.b[i] + (1.0f - o.beta2) * (g * g);
      float step = (s.a[i] / c1) / (std::sqrt(s.b[i] / c2) + o.eps);
      if (o.kind == "adamw" && o.weight_decay != 0.0f) step = step + o.weight_decay * s.w[i];
      s.w[i] = s.w[i] - o.lr * step;
    }
  }
}

// Sums the items in groups of `fanout` consecutive items, level by level, each group in order.
std::vector<float> tree_sum(std::vector<std::vector<float>> items, uint32_t fanout) {
  for (;;) {
    std::vector<std::vector<float>> next;
    for (size_t first = 0; first < items.size(); first += fanout) {
      std::vector<float> sum = items[first];
      for (size_t k = first + 1; k < std::min(items.size(), first + fanout); ++k) {
        for (size_t i = 0; i < sum.size(); ++i) sum[i] = sum[i] + items[k][i];
      }
      next.push_back(std::move(sum));
    }
    if (next.size() == 1) return next.front();
    items = std::move(next);
  }
}

}  // namespace

std::vector<std::vector<float>> reference_train(const SyntheticModel& model,
                                                const ReferenceOptimizer& optimizer,
                                                uint32_t leaves, uint32_t fanout, uint64_t steps) {
  std::vector<ReferenceState> states;
  for (size_t k = 0; k < model.tensors.size(); ++k) {
    ReferenceState s;
    s.w = model.initial[k];
    s.a.assign(s.w.size(), 0.0f);
    s.b.assign(s.w.size(), 0.0f);
    states.push_back(std::move(s));
  }
  for (uint64_t step = 0; step < steps; ++step) {
    for (size_t k = 0; k < model.tensors.size(); ++k) {
      std::vector<std::vector<float>> grads;
      for (uint32_t r = 0; r < leaves; ++r)
        grads.push_back(model.gradient(r, step, model.tensors[k], states[k].w));
      reference_update(optimizer, states[k], tree_sum(std::move(grads), fanout));
    }
  }
  std::vector<std::vector<float>> out;
  for (auto& s : states) out.push_back(std::move(s.w));
  return out;
}

LocalClusterOptions cluster_options(uint32_t leaves, uint32_t fanout,
                                    const ReferenceOptimizer& optimizer,
                                    const std::vector<std::string>& memoryx_extra) {
  LocalClusterOptions options;
  options.leaves = leaves;
  options.fanout = fanout;
  options.memoryx_args = optimizer.memoryx_args();
  options.memoryx_args.insert(options.memoryx_args.end(), memoryx_extra.begin(), memoryx_extra.end());
  return options;
}

ClientOptions orchestrator_options(const LocalCluster& cluster, const std::string& address) {
  ClientOptions options;
  options.address = address;
  options.token = cluster.token();
  options.role = pb::ORCHESTRATOR;
  return options;
}

void start_with_model(LocalCluster& cluster, const SyntheticModel& model,
                      const ReferenceOptimizer& optimizer, const std::string& tls_ca) {
  cluster.start();
  init_model(cluster, model, optimizer, tls_ca);
}

void init_model(const LocalCluster& cluster, const SyntheticModel& model,
                const ReferenceOptimizer& optimizer, const std::string& tls_ca) {
  MemoryXControl control(cluster.memoryx_addresses(), cluster.token(), "test-orchestrator", tls_ca);
  control.connect();
  for (size_t k = 0; k < model.tensors.size(); ++k) {
    const TensorSpec& spec = model.tensors[k];
    pb::InitTensor init;
    init.mutable_info()->set_tensor_id(spec.id);
    init.mutable_info()->set_name(spec.name);
    init.mutable_info()->set_layer(spec.layer);
    for (uint64_t d : spec.shape) init.mutable_info()->add_shape(d);
    init.set_values_fp32(std::string(reinterpret_cast<const char*>(model.initial[k].data()),
                                     model.initial[k].size() * 4));
    *init.mutable_optimizer() = optimizer.to_config();
    const auto reply = control.init_tensor(init);
    if (reply.status() != pb::InitTensorReply::CREATED) {
      throw std::runtime_error(fmt::format("InitTensor {} failed: {}", spec.id, reply.message()));
    }
  }
}

std::vector<std::vector<float>> read_model(const LocalCluster& cluster,
                                           const SyntheticModel& model, const std::string& tls_ca) {
  MemoryXControl control(cluster.memoryx_addresses(), cluster.token(), "test-reader", tls_ca);
  control.connect();
  std::vector<uint64_t> ids;
  for (const auto& t : model.tensors) ids.push_back(t.id);
  const auto tensors = control.read_tensors(ids);
  std::vector<std::vector<float>> out;
  for (const auto& spec : model.tensors) {
    for (const auto& t : tensors) {
      if (t.info.tensor_id() == spec.id) out.push_back(t.values);
    }
  }
  return out;
}

::testing::AssertionResult bit_identical(const std::vector<std::vector<float>>& actual,
                                         const std::vector<std::vector<float>>& expected) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << actual.size() << " tensors, expected " << expected.size();
  }
  for (size_t k = 0; k < actual.size(); ++k) {
    if (actual[k].size() != expected[k].size()) {
      return ::testing::AssertionFailure()
             << "tensor " << k << " has " << actual[k].size() << " elements";
    }
    for (size_t i = 0; i < actual[k].size(); ++i) {
      if (std::memcmp(&actual[k][i], &expected[k][i], 4) != 0) {
        return ::testing::AssertionFailure()
               << fmt::format("tensor {} element {}: {:.9g}, expected {:.9g}", k, i, actual[k][i],
                              expected[k][i]);
      }
    }
  }
  return ::testing::AssertionSuccess();
}

namespace {

template <class T>
T wait_for(std::future<T> future, std::chrono::seconds limit, const std::string& what) {
  if (future.wait_for(limit) != std::future_status::ready) {
    throw std::runtime_error(
        fmt::format("timed out after {} s waiting for {}", limit.count(), what));
  }
  return future.get();
}

void leaf_main(const LocalCluster& cluster, const SyntheticModel& model, uint32_t rank,
               const LeafRunOptions& options, std::atomic<uint64_t>* progress,
               LeafRunResult& result, std::mutex& mutex) {
  std::mt19937_64 random(options.seed * 7919 + rank);
  auto maybe_sleep = [&] {
    if (options.random_delays)
      std::this_thread::sleep_for(std::chrono::microseconds(random() % 2000));
  };
  ClientOptions client_options;
  client_options.address = cluster.leaf_address(rank);
  client_options.token = cluster.token();
  client_options.role = pb::LEAF;
  client_options.rank = rank;
  client_options.chunk_elements = options.gradient_chunk;
  client_options.reconnect_timeout = std::chrono::seconds(30);
  client_options.tls_ca = options.tls_ca;
  ClusterClient client(client_options);
  client.connect();
  for (uint64_t step = options.first_step; step < options.steps; ++step) {
    if (progress) {
      uint64_t seen = progress->load();
      while (seen < step && !progress->compare_exchange_weak(seen, step)) {
      }
    }
    std::vector<LayerWeights> forward(model.layers);
    for (uint32_t layer = 0; layer < model.layers; ++layer) {
      maybe_sleep();
      forward[layer] =
          wait_for(client.request_weights(step, layer, 0, options.weights), options.wait_limit,
                   fmt::format("leaf {} step {} layer {} forward weights", rank, step, layer));
    }
    for (uint32_t layer = model.layers; layer-- > 0;) {
      maybe_sleep();
      const LayerWeights backward =
          wait_for(client.request_weights(step, layer, 1, options.weights), options.wait_limit,
                   fmt::format("leaf {} step {} layer {} backward weights", rank, step, layer));
      struct Piece {
        const TensorSpec* spec;
        uint64_t offset;
      };
      std::vector<Piece> pieces;
      std::map<uint64_t, std::vector<float>> gradients;
      for (const auto& spec : model.tensors) {
        if (spec.layer != layer) continue;
        const auto& weights = backward.tensor(spec.id).values;
        if (weights != forward[layer].tensor(spec.id).values) {
          throw std::runtime_error(fmt::format(
              "leaf {}: forward and backward weights of tensor {} differ", rank, spec.id));
        }
        gradients[spec.id] = model.gradient(rank, step, spec, weights);
        for (uint64_t offset = 0; offset < spec.elements(); offset += options.gradient_chunk)
          pieces.push_back({&spec, offset});
      }
      if (options.shuffle_chunks) std::shuffle(pieces.begin(), pieces.end(), random);
      for (const Piece& piece : pieces) {
        const auto& g = gradients[piece.spec->id];
        const uint64_t count = std::min<uint64_t>(options.gradient_chunk, g.size() - piece.offset);
        client.send_gradient_chunk(piece.spec->id, layer, step, g.size(), piece.offset,
                                   std::span<const float>(g.data() + piece.offset, count),
                                   options.gradients);
        if (options.shuffle_chunks) maybe_sleep();
      }
    }
  }
  if (!client.wait_acknowledged(options.wait_limit)) {
    throw std::runtime_error(
        fmt::format("leaf {}: gradients still unacknowledged at the end", rank));
  }
  const ClientCounters counters = client.counters();
  std::lock_guard lock(mutex);
  result.weight_bytes_received += counters.weight_bytes_received;
  result.weight_bytes_dense += counters.weight_bytes_dense;
  result.gradient_bytes_sent += counters.gradient_bytes_sent;
  result.gradient_bytes_dense += counters.gradient_bytes_dense;
  result.reconnects += counters.reconnects;
}

}  // namespace

LeafRunResult run_leaves(const LocalCluster& cluster, const SyntheticModel& model, uint32_t leaves,
                         const LeafRunOptions& options, std::atomic<uint64_t>* progress) {
  LeafRunResult result;
  std::mutex mutex;
  std::vector<std::thread> threads;
  for (uint32_t rank = 0; rank < leaves; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        leaf_main(cluster, model, rank, options, progress, result, mutex);
      } catch (const std::exception& error) {
        std::lock_guard lock(mutex);
        result.errors.push_back(fmt::format("leaf {}: {}", rank, error.what()));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return result;
}

struct Watchdog::State {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
};

Watchdog::Watchdog(std::chrono::seconds limit, std::string what)
    : state_(std::make_shared<State>()) {
  std::thread([state = state_, limit, what] {
    std::unique_lock lock(state->mutex);
    if (!state->cv.wait_for(lock, limit, [&] { return state->done; })) {
      std::fprintf(stderr, "watchdog: '%s' still running after %lld s; ending the test process\n",
                   what.c_str(), static_cast<long long>(limit.count()));
      std::fflush(stderr);
      std::_Exit(3);
    }
  }).detach();
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(state_->mutex);
    state_->done = true;
  }
  state_->cv.notify_all();
}

}  // namespace wsemu::cluster::testing
