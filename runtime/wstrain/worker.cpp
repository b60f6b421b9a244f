#include "runtime/wstrain/worker.hpp"

#include <bit>
#include <chrono>
#include <future>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/cluster/cluster_client.hpp"
#include "runtime/train/data_order.hpp"

namespace wsemu::wstrain {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::span<const uint8_t> mask_span(const train::SparsityMask& mask, size_t layer, bool sparse) {
  if (!sparse) return {};
  return {mask[layer].data(), mask[layer].size()};
}

}  // namespace

void run_worker(const WorkerOptions& options, std::ostream& progress) {
  const RunConfig& run = options.run;
  run.validate();
  const train::ModelSpec spec = run.spec();
  const size_t layers = spec.num_layers();
  const train::Dataset data = load_run_dataset(run, train::DatasetSplit::train);
  if (data.num_samples() < run.batch)
    throw std::invalid_argument(fmt::format("the data set has {} samples, fewer than --batch {}", data.num_samples(),
                                            run.batch));
  train::DataOrder order(data.num_samples(), run.batch, run.seed);
  const size_t largest = run.largest_micro_batch();
  const WaferPlan plan(spec, largest, WaferPlan::choose_shape(spec, largest, run.columns, run.rows));
  SessionOptions session = options.session;
  session.network = run.network();
  session.swarmx_levels = swarmx_levels(run.network_wafers(), run.fanout);
  WaferSession wafer(plan, session);
  train::SparsityMask mask;
  if (run.sparsity > 0.0) mask = train::make_sparsity_mask(spec, run.sparsity, run.seed);

  cluster::ClientOptions client_options;
  client_options.address = options.swarmx_address;
  client_options.token = options.token;
  client_options.tls_ca = options.tls_ca;
  client_options.rank = options.rank;
  client_options.name = fmt::format("wafer-{}", options.rank);
  cluster::ClusterClient client(client_options);
  client.connect();

  cluster::WeightEncoding encoding;
  if (run.sparse_stream) {
    encoding.sparsity.set_mode(cluster::pb::Sparsity::THRESHOLD);
    encoding.sparsity.set_threshold(0.0f);
  }
  cluster::GradientEncoding gradient_encoding;
  gradient_encoding.drop_zeros = run.sparse_stream;

  const train::SampleRange shard = train::shard_range(run.batch, run.wafers, options.rank);
  const std::vector<train::SampleRange> micro_batches = train::micro_batch_ranges({0, shard.size()}, run.micro_batch);
  const size_t dim = spec.input_dim();

  for (uint64_t step = run.first_step; step < run.steps; ++step) {
    const Clock::time_point step_start = Clock::now();
    const WaferCounters before = wafer.counters();
    const cluster::ClientCounters net_before = client.counters();
    std::vector<std::future<cluster::LayerWeights>> forward, backward;
    for (size_t l = 0; l < layers; ++l)
      forward.push_back(client.request_weights(step, static_cast<uint32_t>(l), 0, encoding));
    for (size_t l = 0; l < layers; ++l)
      backward.push_back(client.request_weights(step, static_cast<uint32_t>(l), 1, encoding));
    std::vector<cluster::LayerWeights> forward_weights(layers), backward_weights(layers);
    std::vector<bool> have_forward(layers, false), have_backward(layers, false);
    double wait_s = 0;
    auto get = [&](std::vector<std::future<cluster::LayerWeights>>& futures, std::vector<cluster::LayerWeights>& got,
                   std::vector<bool>& have, size_t l) -> const cluster::LayerWeights& {
      if (!have[l]) {
        const Clock::time_point t = Clock::now();
        got[l] = futures[l].get();
        wait_s += seconds_since(t);
        have[l] = true;
      }
      return got[l];
    };

    const std::vector<uint32_t> indices = order.batch_indices(step);
    const train::Batch batch = train::gather_batch(data, indices);
    train::ModelParameters sums = train::ModelParameters::zeros(spec);
    train::ModelParameters micro = train::ModelParameters::zeros(spec);
    float loss_sum = 0.0f;
    size_t correct = 0;
    for (size_t m = 0; m < micro_batches.size(); ++m) {
      const train::SampleRange mb = micro_batches[m];
      const size_t first = shard.begin + mb.begin;
      wafer.load_micro_batch({batch.inputs.data() + first * dim, mb.size() * dim},
                             {batch.labels.data() + first, mb.size()}, mb.size());
      for (size_t l = 0; l < layers; ++l) {
        const cluster::LayerWeights& w = get(forward, forward_weights, have_forward, l);
        wafer.forward_layer(l, w.tensor(weight_tensor_id(l)).values, w.tensor(bias_tensor_id(l)).values,
                            mask_span(mask, l, run.sparse_stream));
      }
      const MicroBatchResult result = wafer.loss();
      loss_sum = loss_sum + result.loss_sum;
      correct += result.correct;
      const bool last_micro_batch = m + 1 == micro_batches.size();
      for (size_t l = layers; l-- > 0;) {
        const cluster::LayerWeights& w = get(backward, backward_weights, have_backward, l);
        train::DenseLayer& g = micro.layers[l];
        std::fill(g.weight.begin(), g.weight.end(), 0.0f);
        std::fill(g.bias.begin(), g.bias.end(), 0.0f);
        wafer.backward_layer(l, w.tensor(weight_tensor_id(l)).values, w.tensor(bias_tensor_id(l)).values,
                             mask_span(mask, l, run.sparse_stream), {g.weight.data(), g.weight.size()},
                             {g.bias.data(), g.bias.size()});
        // The wafer's sum S_w = ((mb_0 + mb_1) + mb_2) ..., elementwise, as the reference adds.
        train::DenseLayer& s = sums.layers[l];
        for (size_t k = 0; k < s.weight.size(); ++k) s.weight.data()[k] = s.weight.data()[k] + g.weight.data()[k];
        for (size_t k = 0; k < s.bias.size(); ++k) s.bias.data()[k] = s.bias.data()[k] + g.bias.data()[k];
        if (last_micro_batch) {
          // Pruned weights keep a +0 gradient (runtime/train/README.md, "Sparsity"); a dense
          // stream computed one for them on the wafer.
          if (!mask.empty())
            for (size_t k = 0; k < s.weight.size(); ++k)
              if (mask[l].data()[k] == 0) s.weight.data()[k] = 0.0f;
          client.send_gradient(weight_tensor_id(l), static_cast<uint32_t>(l), step, {s.weight.data(), s.weight.size()},
                               gradient_encoding);
          client.send_gradient(bias_tensor_id(l), static_cast<uint32_t>(l), step, {s.bias.data(), s.bias.size()},
                               gradient_encoding);
        }
      }
    }
    const StepPath path = wafer.finish_step();
    const WaferCounters after = wafer.counters();
    const cluster::ClientCounters net_after = client.counters();
    nlohmann::json line = {
        {"step", step},
        {"rank", options.rank},
        {"loss_sum_bits", std::bit_cast<uint32_t>(loss_sum)},
        {"correct", correct},
        {"samples", shard.size()},
        {"cycles", after.cycles - before.cycles},
        {"input_cycles", after.input_cycles - before.input_cycles},
        {"forward_cycles", after.forward_cycles - before.forward_cycles},
        {"loss_cycles", after.loss_cycles - before.loss_cycles},
        {"backward_cycles", after.backward_cycles - before.backward_cycles},
        {"launch_cycles", after.launch_cycles - before.launch_cycles},
        {"weight_wavelets_in", after.weight_wavelets_in - before.weight_wavelets_in},
        {"gradient_wavelets_out", after.gradient_wavelets_out - before.gradient_wavelets_out},
        {"pe_busy_cycles", after.pe_busy_cycles - before.pe_busy_cycles},
        {"pe_wait_cycles", after.pe_wait_cycles - before.pe_wait_cycles},
        {"net_weight_bytes", net_after.weight_bytes_received - net_before.weight_bytes_received},
        {"net_weight_bytes_dense", net_after.weight_bytes_dense - net_before.weight_bytes_dense},
        {"net_gradient_bytes", net_after.gradient_bytes_sent - net_before.gradient_bytes_sent},
        {"net_gradient_bytes_dense", net_after.gradient_bytes_dense - net_before.gradient_bytes_dense},
        {"weight_wait_s", wait_s},
        {"step_s", seconds_since(step_start)},
        {"clock_mhz", wafer.clock_mhz()},
        {"steps_per_epoch", order.steps_per_epoch()},
        {"shape", {plan.columns(), plan.rows()}},
        {"path", path.to_json()},
    };
    progress << line.dump() << '\n' << std::flush;
  }
  if (!client.wait_acknowledged(std::chrono::minutes(5)))
    throw std::runtime_error("the last gradients were not acknowledged within 5 minutes");
  progress << nlohmann::json{{"done", true}, {"rank", options.rank}, {"plan", plan.describe()}}.dump() << '\n'
           << std::flush;
}

}  // namespace wsemu::wstrain
