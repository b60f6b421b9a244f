#include "runtime/wstrain/network.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace wsemu::wstrain {

namespace {

constexpr double kBytesPerWavelet = 4.0;

struct Entry {
  std::string key;
  double NetworkProfile::*scalar;        // or
  LinkProfile NetworkProfile::*link;
  bool latency;                          // with `link`: the latency, else the bandwidth
};

const std::vector<Entry>& entries_table() {
  static const std::vector<Entry> table = [] {
    std::vector<Entry> t;
    const std::pair<const char*, LinkProfile NetworkProfile::*> links[] = {
        {"down.memoryx-swarmx", &NetworkProfile::memoryx_to_swarmx},
        {"down.swarmx-swarmx", &NetworkProfile::swarmx_to_swarmx},
        {"down.swarmx-wafer", &NetworkProfile::swarmx_to_wafer},
        {"up.wafer-swarmx", &NetworkProfile::wafer_to_swarmx},
        {"up.swarmx-swarmx", &NetworkProfile::swarmx_to_swarmx_up},
        {"up.swarmx-memoryx", &NetworkProfile::swarmx_to_memoryx},
    };
    for (const auto& [name, member] : links) {
      t.push_back({std::string(name) + ".gbs", nullptr, member, false});
      t.push_back({std::string(name) + ".us", nullptr, member, true});
    }
    t.push_back({"swarmx.broadcast-gbs", &NetworkProfile::swarmx_broadcast_gbytes_per_s, nullptr, false});
    t.push_back({"swarmx.reduce-gbs", &NetworkProfile::swarmx_reduce_gbytes_per_s, nullptr, false});
    t.push_back({"memoryx.optimizer-gparams", &NetworkProfile::memoryx_optimizer_gparams_per_s, nullptr, false});
    return t;
  }();
  return table;
}

double& field(NetworkProfile& p, const Entry& e) {
  if (e.scalar != nullptr) return p.*(e.scalar);
  return e.latency ? (p.*(e.link)).latency_us : (p.*(e.link)).gbytes_per_s;
}

double overlap(double a0, double a1, double b0, double b1) { return std::max(0.0, std::min(a1, b1) - std::max(a0, b0)); }

uint64_t cycles_of(double c) { return c <= 0 ? 0 : static_cast<uint64_t>(std::llround(c)); }

}  // namespace

std::optional<double> parse_number(const std::string& text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size()) return std::nullopt;
  return value;
}

std::vector<std::string> NetworkProfile::keys() {
  std::vector<std::string> k;
  for (const Entry& e : entries_table()) k.push_back(e.key);
  return k;
}

void NetworkProfile::set(const std::string& key_value) {
  const size_t eq = key_value.find('=');
  const std::string key = key_value.substr(0, eq);
  const auto& table = entries_table();
  const auto it = std::find_if(table.begin(), table.end(), [&](const Entry& e) { return key == e.key; });
  if (eq == std::string::npos || it == table.end())
    throw std::invalid_argument(fmt::format("--net {}: expected KEY=VALUE with KEY one of {}", key_value,
                                            fmt::join(keys(), ", ")));
  const std::optional<double> parsed = parse_number(key_value.substr(eq + 1));
  const double value = parsed.value_or(0);
  const bool latency = it->link != nullptr && it->latency;
  if (!parsed || !std::isfinite(value) || value < 0 || (!latency && value == 0) || value > 1e9)
    throw std::invalid_argument(fmt::format("--net {}: the value must be a number {} 1e9", key_value,
                                            latency ? "from 0 to" : "above 0, at most"));
  field(*this, *it) = value;
}

std::vector<std::string> NetworkProfile::entries() const {
  std::vector<std::string> out;
  NetworkProfile copy = *this;
  for (const Entry& e : entries_table()) out.push_back(fmt::format("{}={:.17g}", e.key, field(copy, e)));
  return out;
}

uint32_t swarmx_levels(size_t wafers, uint32_t fanout) {
  uint32_t levels = 1;
  size_t nodes = (wafers + std::max<uint32_t>(fanout, 1) - 1) / std::max<uint32_t>(fanout, 1);
  while (nodes > 1) {
    nodes = (nodes + fanout - 1) / fanout;
    ++levels;
  }
  return levels;
}

WaferNetwork WaferNetwork::of(const NetworkProfile& p, uint32_t levels, double clock_mhz) {
  const double hz = clock_mhz * 1e6;
  auto wavelets = [&](double gbytes_per_s) { return gbytes_per_s * 1e9 / kBytesPerWavelet / hz; };
  auto cycles = [&](double us) { return us * 1e-6 * hz; };
  const uint32_t inner = levels > 0 ? levels - 1 : 0;  // SwarmX-to-SwarmX hops
  WaferNetwork n;
  double down = std::min({p.memoryx_to_swarmx.gbytes_per_s, p.swarmx_to_wafer.gbytes_per_s,
                          p.swarmx_broadcast_gbytes_per_s});
  double up = std::min({p.wafer_to_swarmx.gbytes_per_s, p.swarmx_to_memoryx.gbytes_per_s,
                        p.swarmx_reduce_gbytes_per_s});
  if (inner > 0) {
    down = std::min(down, p.swarmx_to_swarmx.gbytes_per_s);
    up = std::min(up, p.swarmx_to_swarmx_up.gbytes_per_s);
  }
  n.down_wavelets_per_cycle = wavelets(down);
  n.up_wavelets_per_cycle = wavelets(up);
  n.down_latency_cycles = cycles(p.memoryx_to_swarmx.latency_us + inner * p.swarmx_to_swarmx.latency_us +
                                 p.swarmx_to_wafer.latency_us);
  n.up_latency_cycles = cycles(p.wafer_to_swarmx.latency_us + inner * p.swarmx_to_swarmx_up.latency_us +
                               p.swarmx_to_memoryx.latency_us);
  n.optimizer_cycles_per_parameter = hz / (p.memoryx_optimizer_gparams_per_s * 1e9);
  return n;
}

// --- the step's figures as JSON (the worker's progress line, summary.json) ---

namespace {

nlohmann::json part_json(const PathPart& p) { return nlohmann::json::array({p.total, p.exposed}); }
PathPart part_of(const nlohmann::json& j, const char* key) {
  PathPart p;
  if (j.contains(key) && j[key].is_array() && j[key].size() == 2) {
    p.total = j[key][0].get<uint64_t>();
    p.exposed = j[key][1].get<uint64_t>();
  }
  return p;
}

}  // namespace

nlohmann::json StepPath::to_json() const {
  nlohmann::json layer_list = nlohmann::json::array();
  for (const LayerPath& l : layers)
    layer_list.push_back({{"compute", part_json(l.compute)},
                          {"stream", part_json(l.stream)},
                          {"reduce", part_json(l.reduce)},
                          {"optimizer", part_json(l.optimizer)}});
  return {{"cycles", cycles},
          {"compute", part_json(compute)},
          {"stream", part_json(stream)},
          {"reduce", part_json(reduce)},
          {"optimizer", part_json(optimizer)},
          {"layers", layer_list}};
}

StepPath StepPath::from_json(const nlohmann::json& j) {
  StepPath p;
  if (!j.is_object()) return p;
  p.cycles = j.value("cycles", uint64_t{0});
  p.compute = part_of(j, "compute");
  p.stream = part_of(j, "stream");
  p.reduce = part_of(j, "reduce");
  p.optimizer = part_of(j, "optimizer");
  if (j.contains("layers"))
    for (const nlohmann::json& l : j["layers"])
      p.layers.push_back({part_of(l, "compute"), part_of(l, "stream"), part_of(l, "reduce"), part_of(l, "optimizer")});
  return p;
}

// --- the clock ---

StreamClock::StreamClock(WaferNetwork network, std::vector<uint64_t> layer_parameters)
    : network_(network), parameters_(std::move(layer_parameters)) {
  chain_.assign(parameters_.size(), LayerChain{});
  pending_left_.assign(parameters_.size(), -1.0);
  pending_words_.assign(parameters_.size(), 0);
  current_.layers.assign(parameters_.size(), LayerPath{});
}

StreamClock::Pass StreamClock::begin_pass(size_t layer, uint64_t words, uint64_t now) {
  Pass p;
  p.layer = layer;
  p.words = words;
  p.begin_cycle = now;
  const double ready = chain_.at(layer).applied;
  p.send_start = std::max(ready, link_free_);
  p.waited_for_update = ready > link_free_ && ready > static_cast<double>(now);
  const double sending = static_cast<double>(words) / network_.down_wavelets_per_cycle;
  link_free_ = p.send_start + sending;
  const bool first_of_step = current_.stream.total == 0;
  const uint64_t busy = cycles_of(sending + (first_of_step ? network_.down_latency_cycles : 0.0));
  current_.stream.total += busy;
  current_.layers[layer].stream.total += busy;
  return p;
}

uint64_t StreamClock::arrival(const Pass& pass, uint64_t n) const {
  const double t = pass.send_start + network_.down_latency_cycles +
                   static_cast<double>(n + 1) / network_.down_wavelets_per_cycle;
  return static_cast<uint64_t>(std::ceil(t));
}

void StreamClock::end_pass(const Pass& pass, uint64_t end, uint64_t waited) {
  LayerPath& l = current_.layers[pass.layer];
  uint64_t for_update = 0;
  if (pass.waited_for_update) {
    const double before_send = std::ceil(pass.send_start) - static_cast<double>(pass.begin_cycle);
    for_update = std::min<uint64_t>(waited, cycles_of(before_send));
    // Split the wait along the chain that held it: the gradients' trip up, then the update.
    const LayerChain& c = chain_[pass.layer];
    const double w0 = static_cast<double>(pass.begin_cycle), w1 = w0 + static_cast<double>(for_update);
    const uint64_t reduce = std::min(for_update, cycles_of(overlap(w0, w1, c.left, c.reduced)));
    l.reduce.exposed += reduce;
    current_.reduce.exposed += reduce;
    l.optimizer.exposed += for_update - reduce;
    current_.optimizer.exposed += for_update - reduce;
  }
  l.stream.exposed += waited - for_update;
  current_.stream.exposed += waited - for_update;
  const uint64_t spent = end - pass.begin_cycle;
  l.compute.total += spent - std::min(spent, waited);
}

void StreamClock::gradients_left(size_t layer, uint64_t cycle, uint64_t words) {
  pending_left_.at(layer) = static_cast<double>(cycle);
  pending_words_.at(layer) = words;
}

StepPath StreamClock::finish_step(uint64_t step_cycles) {
  StepPath done = std::move(current_);
  done.cycles = step_cycles;
  const uint64_t waits = done.stream.exposed + done.reduce.exposed + done.optimizer.exposed;
  done.compute.total = done.compute.exposed = step_cycles - std::min(step_cycles, waits);
  for (LayerPath& l : done.layers) l.compute.exposed = l.compute.total;

  // The gradients that left this step travel up and are applied in the order they left.
  current_ = StepPath{};
  current_.layers.assign(parameters_.size(), LayerPath{});
  std::vector<size_t> order;
  for (size_t l = 0; l < parameters_.size(); ++l)
    if (pending_left_[l] >= 0) order.push_back(l);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return pending_left_[a] < pending_left_[b]; });
  for (size_t l : order) {
    LayerChain& c = chain_[l];
    c.left = pending_left_[l];
    c.reduced = c.left + network_.up_latency_cycles;
    const double updating = static_cast<double>(parameters_[l]) * network_.optimizer_cycles_per_parameter;
    c.applied = std::max(c.reduced, optimizer_free_) + updating;
    optimizer_free_ = c.applied;
    // Reported with the next step, whose passes wait for them.
    const uint64_t trip =
        cycles_of(static_cast<double>(pending_words_[l]) / network_.up_wavelets_per_cycle + network_.up_latency_cycles);
    current_.layers[l].reduce.total = trip;
    current_.layers[l].optimizer.total = cycles_of(updating);
    current_.reduce.total += trip;
    current_.optimizer.total += cycles_of(updating);
    pending_left_[l] = -1.0;
  }
  return done;
}

}  // namespace wsemu::wstrain
