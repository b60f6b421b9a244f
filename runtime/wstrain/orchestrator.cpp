#include "runtime/wstrain/orchestrator.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/cluster/cluster_client.hpp"
#include "runtime/cluster/local_cluster.hpp"
#include "runtime/cluster/optimizer.hpp"
#include "runtime/cluster/protocol.hpp"
#include "runtime/cluster/tls.hpp"
#include "runtime/train/data_order.hpp"
#include "runtime/train/reference_trainer.hpp"
#include "runtime/wstrain/child_process.hpp"
#include "runtime/wstrain/tensor_comparison.hpp"
#include "runtime/wstrain/wafer_plan.hpp"
#include "runtime/wstrain/worker.hpp"

namespace wsemu::wstrain {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

std::string this_executable() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this executable (/proc/self/exe) to start the wafer workers");
  return p.string();
}

std::vector<std::span<float>> tensors_of(train::ModelParameters& p) {
  std::vector<std::span<float>> t;
  for (auto& layer : p.layers) {
    t.emplace_back(layer.weight.data(), layer.weight.size());
    t.emplace_back(layer.bias.data(), layer.bias.size());
  }
  return t;
}

// Checks the settings MemoryX would silently replace (it treats 0 as "use the default").
void check_optimizer_for_memoryx(const train::OptimizerConfig& o) {
  auto zero = [](float v) { return v == 0.0f; };
  if (o.kind == train::OptimizerKind::momentum && zero(o.momentum))
    throw std::invalid_argument("--momentum 0: MemoryX reads 0 as 'default' (0.9); use --optimizer sgd instead");
  if ((o.kind == train::OptimizerKind::adam || o.kind == train::OptimizerKind::adamw) &&
      (zero(o.beta1) || zero(o.beta2) || zero(o.epsilon)))
    throw std::invalid_argument("--beta1/--beta2/--eps 0: MemoryX reads 0 as 'default'; give a non-zero value");
  if (zero(o.learning_rate)) throw std::invalid_argument("--lr 0: MemoryX reads 0 as 'default' (0.01)");
}

// The reference trainer and the weights it had after each step, so that MemoryX's tensors
// (each at its own next step while the wafers run ahead) can be compared with the right ones.
class ReferenceRun {
 public:
  ReferenceRun(const train::ModelSpec& spec, const train::TrainConfig& config, const train::Dataset& data)
      : trainer_(spec, config), data_(data), order_(data.num_samples(), config.global_batch, config.seed) {
    history_[0] = trainer_.weights();
  }
  void advance_to(uint64_t steps) {
    while (trainer_.steps_done() < steps) {
      const uint64_t s = trainer_.steps_done();
      const std::vector<uint32_t> indices = order_.batch_indices(s);
      const train::StepResult r = trainer_.step(train::gather_batch(data_, indices));
      losses_[s] = r.loss;
      history_[trainer_.steps_done()] = trainer_.weights();
      while (history_.size() > 16) history_.erase(history_.begin());
    }
  }
  float loss(uint64_t step) {
    advance_to(step + 1);
    return losses_.at(step);
  }
  const train::ModelParameters& weights_after(uint64_t steps) {
    advance_to(steps);
    auto it = history_.find(steps);
    if (it == history_.end()) throw std::runtime_error(fmt::format("verify: no reference weights after {} steps", steps));
    return it->second;
  }
  const train::ReferenceTrainer& trainer() const { return trainer_; }

 private:
  train::ReferenceTrainer trainer_;
  const train::Dataset& data_;
  train::DataOrder order_;
  std::map<uint64_t, train::ModelParameters> history_;
  std::map<uint64_t, float> losses_;
};

std::string progress_line(const StepFigures& f, uint64_t total_steps, double samples_per_s, bool bar) {
  const std::string verified =
      f.verified ? fmt::format("  |dloss| {:.1e} |dw| {:.1e}", f.loss_difference, f.max_weight_difference) : "";
  const std::string text =
      fmt::format("step {:>5}/{}  loss {:.4f}  acc {:5.1f}%  {:>7.1f} samples/s  {:>9} cycles/step{}", f.step + 1,
                  total_steps, f.loss, 100.0 * f.train_accuracy, samples_per_s, f.max_cycles, verified);
  if (!bar) return text;
  constexpr size_t width = 24;
  const size_t done = std::min(width, static_cast<size_t>(double(width) * double(f.step + 1) / double(total_steps)));
  return fmt::format("[{:#<{}}{:.<{}}] {}", "", done, "", width - done, text);
}

}  // namespace

TrainReport run_training(const TrainOptions& options, std::ostream& out) {
  RunConfig run = options.run;
  run.fanout = options.fanout;
  run.validate();
  check_optimizer_for_memoryx(options.optimizer);
  const train::ModelSpec spec = run.spec();
  const size_t wafers = run.wafers;
  const Clock::time_point started = Clock::now();
  TrainReport report;

  const size_t largest = run.largest_micro_batch();
  const WaferShape shape = WaferPlan::choose_shape(spec, largest, run.columns, run.rows);
  const WaferPlan plan(spec, largest, shape);  // refuses a bad shape before anything starts
  run.columns = shape.columns;
  run.rows = shape.rows;
  report.wafer_plan = plan.describe();
  report.columns = shape.columns;
  report.rows = shape.rows;

  const train::Dataset test = load_run_dataset(run, train::DatasetSplit::test);
  std::optional<train::Dataset> train_data;
  if (options.verify) train_data = load_run_dataset(run, train::DatasetSplit::train);

  // --- the cluster ---
  std::unique_ptr<cluster::LocalCluster> local;
  std::vector<std::string> memoryx = options.memoryx, leaves(wafers);
  std::string token;
  std::filesystem::path token_file;
  std::filesystem::path log_dir = options.out_dir;
  if (memoryx.empty()) {
    if (!options.tls_ca.empty())
      throw std::invalid_argument("--tls-ca is for a cluster started elsewhere (--memoryx); the local cluster is "
                                  "on loopback");
    cluster::LocalClusterOptions lo;
    lo.leaves = static_cast<uint32_t>(wafers);
    lo.fanout = options.fanout;
    lo.shards = options.memoryx_shards;
    // Step-atomic: a wafer that dies mid-step can be restarted at that step (its weights stay).
    lo.memoryx_args = {"--checkpoint-every", std::to_string(options.checkpoint_every), "--step-atomic"};
    local = std::make_unique<cluster::LocalCluster>(lo);
    local->start();
    if (options.kill_swarmx_after_step >= 0 && options.kill_swarmx_index >= int64_t(local->swarmx_count()))
      throw std::invalid_argument(fmt::format("--kill-swarmx-index {}: the tree has {} SwarmX nodes (0 to {})",
                                              options.kill_swarmx_index, local->swarmx_count(),
                                              local->swarmx_count() - 1));
    token = local->token();
    token_file = local->token_file();
    memoryx = local->memoryx_addresses();
    for (size_t r = 0; r < wafers; ++r) leaves[r] = local->leaf_address(static_cast<uint32_t>(r));
    report.cluster_description = local->describe();
    if (log_dir.empty()) log_dir = local->work_dir();
  } else {
    if (options.swarmx.empty()) throw std::invalid_argument("--memoryx needs --swarmx too (the nodes the wafers join)");
    if (options.memoryx_shards != 1)
      throw std::invalid_argument("--memoryx-shards starts local shards; with --memoryx give every shard's address");
    if (options.token_file.empty()) throw std::invalid_argument("--memoryx needs --token-file (the cluster's token)");
    try {
      (void)cluster::client_tls_context(cluster::TlsFiles{"", "", options.tls_ca});
    } catch (const cluster::ConfigError& e) {
      throw std::invalid_argument(e.what());
    }
    token_file = options.token_file;
    token = cluster::load_token(options.token_file);
    const size_t groups = options.swarmx.size();
    for (size_t r = 0; r < wafers; ++r) leaves[r] = options.swarmx[std::min(groups - 1, r * groups / wafers)];
    report.cluster_description = fmt::format("external: MemoryX {}, SwarmX {}", fmt::join(memoryx, ","),
                                             fmt::join(options.swarmx, ","));
    if (log_dir.empty()) log_dir = std::filesystem::temp_directory_path();
  }
  std::filesystem::create_directories(log_dir);

  // --- the model's tensors in MemoryX ---
  cluster::MemoryXControl control(memoryx, token, "wsemu-train", options.tls_ca);
  control.connect();
  train::ModelParameters initial = train::initialize_parameters(spec, run.seed);
  if (run.sparsity > 0.0) train::apply_sparsity_mask(initial, train::make_sparsity_mask(spec, run.sparsity, run.seed));
  const float grad_scale = 1.0f / static_cast<float>(run.batch);
  const cluster::pb::OptimizerConfig optimizer = cluster::to_optimizer_message(options.optimizer, grad_scale);
  std::vector<uint64_t> next_steps;
  {
    const auto tensors = tensors_of(initial);
    for (size_t t = 0; t < tensors.size(); ++t) {
      const size_t l = t / 2;
      cluster::pb::InitTensor init;
      init.mutable_info()->set_tensor_id(t);
      init.mutable_info()->set_name(fmt::format("layer{}.{}", l, t % 2 == 0 ? "weight" : "bias"));
      init.mutable_info()->set_layer(static_cast<uint32_t>(l));
      if (t % 2 == 0) {
        init.mutable_info()->add_shape(spec.sizes[l]);
        init.mutable_info()->add_shape(spec.sizes[l + 1]);
      } else {
        init.mutable_info()->add_shape(spec.sizes[l + 1]);
      }
      init.set_values_fp32(std::string(reinterpret_cast<const char*>(tensors[t].data()), tensors[t].size() * 4));
      *init.mutable_optimizer() = optimizer;
      const cluster::pb::InitTensorReply reply = control.init_tensor(init);
      if (reply.status() == cluster::pb::InitTensorReply::ERROR)
        throw std::runtime_error(fmt::format("MemoryX refused tensor {}: {}", t, reply.message()));
      next_steps.push_back(reply.status() == cluster::pb::InitTensorReply::EXISTS ? reply.next_step() : 0);
    }
  }
  run.first_step = *std::min_element(next_steps.begin(), next_steps.end());
  if (*std::max_element(next_steps.begin(), next_steps.end()) != run.first_step)
    throw std::runtime_error("MemoryX holds the model's tensors at different steps; cannot resume");
  if (run.first_step >= run.steps)
    throw std::runtime_error(fmt::format("MemoryX is already at step {} of {}: nothing to train", run.first_step,
                                         run.steps));
  report.parameters = spec.parameter_count();

  std::optional<ReferenceRun> reference;
  if (options.verify) {
    train::TrainConfig rc;
    rc.seed = run.seed;
    rc.global_batch = run.batch;
    rc.wafers = wafers;
    rc.micro_batch = run.micro_batch;
    rc.optimizer = options.optimizer;
    rc.order.feature_chunks = 1;
    rc.order.sample_chunks = static_cast<size_t>(shape.rows);
    rc.order.fused_multiply_add = true;
    rc.reduction = train::ReductionTree::fan_in_tree(wafers, options.fanout);
    rc.sparsity = run.sparsity;
    reference.emplace(spec, rc, *train_data);
  }

  // --- the wafers ---
  const std::string program = options.wsemu_binary.empty() ? this_executable() : options.wsemu_binary;
  std::vector<std::unique_ptr<ChildProcess>> workers(wafers);
  std::vector<uint32_t> restarts(wafers, 0);
  std::vector<uint32_t> starts(wafers, 0);
  // Where each worker was (re)started and whether it has reported since: a restart races with
  // the step the dead wafer had fully sent (see below).
  std::vector<uint64_t> started_at(wafers, run.first_step);
  std::vector<bool> reported_since_start(wafers, false);
  // A worker killed after MemoryX had finished every step has nothing left to do; one killed by
  // --kill-wafer-after-step may have said it was done just before: neither exit is a failure.
  std::vector<bool> finished_without_saying(wafers, false), killed_on_purpose(wafers, false);
  auto start_worker = [&](size_t r, uint64_t first_step) {
    RunConfig from = run;
    from.first_step = first_step;
    std::vector<std::string> args = {"train-worker", "--rank", std::to_string(r), "--swarmx", leaves[r],
                                     "--token-file", token_file.string(), "--threads",
                                     std::to_string(options.worker_threads)};
    for (const std::string& a : from.worker_arguments()) args.push_back(a);
    if (options.backdoor_inputs) args.push_back("--backdoor-inputs");
    if (!options.tls_ca.empty()) args.insert(args.end(), {"--tls-ca", options.tls_ca});
    if (!options.kernel_dir.empty()) args.insert(args.end(), {"--kernel-dir", options.kernel_dir});
    const std::string log_name =
        starts[r] == 0 ? fmt::format("wafer-{}.log", r) : fmt::format("wafer-{}.restart-{}.log", r, starts[r]);
    ++starts[r];
    started_at[r] = first_step;
    reported_since_start[r] = false;
    killed_on_purpose[r] = false;
    workers[r] = std::make_unique<ChildProcess>(program, args, log_dir / log_name);
    workers[r]->start();
  };
  for (size_t r = 0; r < wafers; ++r) start_worker(r, run.first_step);
  auto fail = [&](const std::string& message) -> std::runtime_error {
    for (auto& w : workers) w->kill_now();
    return std::runtime_error(message);
  };

  const train::ReductionTree tree = train::ReductionTree::fan_in_tree(wafers, options.fanout);
  const uint64_t total = run.steps;
  std::map<uint64_t, std::vector<json>> pending;
  std::set<std::pair<uint64_t, size_t>> reported;  // (step, rank)
  std::vector<bool> done(wafers, false);
  uint64_t samples_done = 0;
  const Clock::time_point training_started = Clock::now();
  while (!std::all_of(done.begin(), done.end(), [](bool d) { return d; })) {
    std::vector<int> fds;
    for (size_t r = 0; r < wafers; ++r)
      if (!workers[r]->eof()) fds.push_back(workers[r]->stdout_fd());
    wait_readable(fds, std::chrono::milliseconds(500));
    // A stalled MemoryX (it cannot write its log) says why; the operator must hear it here.
    for (size_t s = 0; s < control.shard_count(); ++s) {
      for (const cluster::pb::NodeAlert& alert : control.shard(s).take_alerts()) {
        out << (options.progress_bar ? "\n" : "")
            << fmt::format("{}: {}{}\n", alert.node(), alert.message(),
                           alert.resolved() ? "" : " (training is paused until it can)")
            << std::flush;
      }
    }
    for (size_t r = 0; r < wafers; ++r) {
      ChildProcess& w = *workers[r];
      if (w.eof()) continue;
      for (const std::string& text : w.read_available_lines()) {
        json line;
        try {
          line = json::parse(text);
        } catch (const std::exception&) {
          throw fail(fmt::format("wafer {} printed something that is not a progress line: {}", r, text));
        }
        if (line.value("done", false)) {
          done[r] = true;
          continue;
        }
        reported_since_start[r] = true;
        // A restarted wafer may report a step again that it had reported before it died.
        if (!reported.insert({line.at("step").get<uint64_t>(), r}).second) continue;
        pending[line.at("step").get<uint64_t>()].push_back(std::move(line));
      }
      if (w.eof() && !done[r]) {
        const int code = w.wait();
        if (local == nullptr)
          throw fail(fmt::format("wafer {} stopped (exit {}) before finishing; its log {}:\n{}", r, code,
                                 w.stderr_log().string(), w.stderr_tail()));
        // MemoryX applies a step to every tensor at once, so its step is where the dead wafer
        // stands: the weights of that step are still there, and what the wafer had already sent
        // of it is summed once (SwarmX keeps one part per child rank).
        uint64_t at = UINT64_MAX;
        for (const cluster::TensorValues& t : control.read_tensors()) at = std::min(at, t.next_step);
        const char* newline = options.progress_bar ? "\n" : "";
        if (at >= total) {
          // It died after sending the last step's gradients: the run is complete without it.
          out << newline
              << fmt::format("wafer {} stopped (exit {}) after MemoryX had applied every step; nothing to redo\n", r,
                             code)
              << std::flush;
          done[r] = true;
          finished_without_saying[r] = true;
        } else if (!reported_since_start[r] && at > started_at[r]) {
          // Restarted at step s while what the dead wafer had sent of s was still on its way:
          // MemoryX finished s with it after the restart read its step, and the new worker
          // asked for weights that are gone (STALE). Not a second failure: start it at s + 1.
          out << newline
              << fmt::format("wafer {}: MemoryX completed step {} with what the dead wafer had sent; starting it "
                             "again at step {}/{}\n",
                             r, started_at[r] + 1, at + 1, total)
              << std::flush;
          start_worker(r, at);
        } else {
          if (restarts[r] >= options.max_wafer_restarts)
            throw fail(fmt::format("wafer {} stopped (exit {}) before finishing; its log {}:\n{}", r, code,
                                   w.stderr_log().string(), w.stderr_tail()));
          ++restarts[r];
          ++report.wafer_restarts;
          out << newline
              << fmt::format("wafer {} stopped (exit {}); restarting it at step {}/{}, where MemoryX is (restart {} "
                             "of at most {})\n",
                             r, code, at + 1, total, restarts[r], options.max_wafer_restarts)
              << std::flush;
          start_worker(r, at);
        }
        // A step the dead wafer finished without reporting it is done in MemoryX, but its
        // figures died with the wafer: it is left out of the report rather than waited for.
        for (auto it = pending.begin(); it != pending.end() && it->first < at;) {
          if (reported.count({it->first, r})) {
            ++it;
            continue;
          }
          out << fmt::format("step {}: the figures of wafer {} were lost with it\n", it->first + 1, r);
          it = pending.erase(it);
        }
      }
    }
    // Steps every wafer has reported, in order.
    while (!pending.empty() && pending.begin()->second.size() == wafers) {
      const uint64_t step = pending.begin()->first;
      std::vector<json> lines = std::move(pending.begin()->second);
      pending.erase(pending.begin());
      std::sort(lines.begin(), lines.end(),
                [](const json& a, const json& b) { return a.at("rank").get<int>() < b.at("rank").get<int>(); });
      StepFigures f;
      f.step = step;
      std::vector<float> loss_sums;
      size_t correct = 0;
      for (const json& l : lines) {
        loss_sums.push_back(std::bit_cast<float>(l.at("loss_sum_bits").get<uint32_t>()));
        correct += l.at("correct").get<size_t>();
        const uint64_t cycles = l.at("cycles").get<uint64_t>();
        if (f.wafer_cycles.empty() || cycles > f.max_cycles) f.path = StepPath::from_json(l.value("path", json()));
        f.wafer_cycles.push_back(cycles);
        f.max_cycles = std::max(f.max_cycles, cycles);
        f.wall_s = std::max(f.wall_s, l.at("step_s").get<double>());
        f.weight_wait_s += l.at("weight_wait_s").get<double>();
        f.wafer_wall_s.push_back(l.at("step_s").get<double>());
        f.wafer_weight_wait_s.push_back(l.at("weight_wait_s").get<double>());
        f.wafer_busy_cycles.push_back(l.at("pe_busy_cycles").get<uint64_t>());
        f.wafer_wait_cycles.push_back(l.at("pe_wait_cycles").get<uint64_t>());
        f.weight_wavelets_in += l.at("weight_wavelets_in").get<uint64_t>();
        f.gradient_wavelets_out += l.at("gradient_wavelets_out").get<uint64_t>();
        f.net_weight_bytes += l.at("net_weight_bytes").get<uint64_t>();
        f.net_weight_bytes_dense += l.at("net_weight_bytes_dense").get<uint64_t>();
        f.net_gradient_bytes += l.at("net_gradient_bytes").get<uint64_t>();
        f.net_gradient_bytes_dense += l.at("net_gradient_bytes_dense").get<uint64_t>();
        f.pe_busy_cycles += l.at("pe_busy_cycles").get<uint64_t>();
        f.pe_wait_cycles += l.at("pe_wait_cycles").get<uint64_t>();
        f.forward_cycles = std::max(f.forward_cycles, l.at("forward_cycles").get<uint64_t>());
        f.backward_cycles = std::max(f.backward_cycles, l.at("backward_cycles").get<uint64_t>());
        f.input_cycles = std::max(f.input_cycles, l.at("input_cycles").get<uint64_t>());
        f.loss_cycles = std::max(f.loss_cycles, l.at("loss_cycles").get<uint64_t>());
        f.launch_cycles = std::max(f.launch_cycles, l.at("launch_cycles").get<uint64_t>());
        report.clock_mhz = l.at("clock_mhz").get<double>();
      }
      f.loss = tree.reduce_scalar(loss_sums) * grad_scale;
      f.train_accuracy = static_cast<double>(correct) / static_cast<double>(run.batch);
      if (reference) {
        f.verified = true;
        f.reference_loss = reference->loss(step);
        f.loss_difference = std::fabs(static_cast<double>(f.loss) - static_cast<double>(f.reference_loss));
        const std::vector<cluster::TensorValues> now = control.read_tensors();
        TensorComparison c;
        uint64_t at = UINT64_MAX;
        for (const cluster::TensorValues& t : now) {
          const uint64_t id = t.info.tensor_id();
          const train::ModelParameters& expected = reference->weights_after(t.next_step);
          const train::DenseLayer& layer = expected.layers.at(id / 2);
          const std::span<const float> e = id % 2 == 0 ? std::span<const float>(layer.weight.data(), layer.weight.size())
                                                       : std::span<const float>(layer.bias.data(), layer.bias.size());
          compare_into(c, t.values, e);
          at = std::min(at, t.next_step);
        }
        f.max_weight_difference = c.max_abs;
        f.max_weight_relative = c.max_rel;
        f.weights_compared_at = at;
      }
      samples_done += run.batch;
      const double elapsed = std::chrono::duration<double>(Clock::now() - training_started).count();
      const double rate = elapsed > 0 ? static_cast<double>(samples_done) / elapsed : 0.0;
      if (options.progress_bar)
        out << '\r' << progress_line(f, total, rate, true) << std::flush;
      else
        out << progress_line(f, total, rate, false) << '\n' << std::flush;
      train::LossRecord record;
      record.step = step;
      record.loss = f.loss;
      record.train_accuracy = f.train_accuracy;
      const size_t per_epoch = std::max<size_t>(1, lines.front().value("steps_per_epoch", size_t{1}));
      record.epoch = static_cast<double>(step + 1) / static_cast<double>(per_epoch);
      report.curve.push_back(record);
      report.steps.push_back(std::move(f));
      if (options.kill_wafer_after_step >= 0 && step + 1 == static_cast<uint64_t>(options.kill_wafer_after_step)) {
        std::mt19937_64 random(options.kill_wafer_seed);
        const size_t victim = options.kill_wafer_seed % wafers;
        // Within one step's time: the median step, not the last one, whose time a loaded
        // machine can stretch several times (then the victim could finish before the kill).
        std::vector<double> step_times;
        for (const StepFigures& s : report.steps) step_times.push_back(s.wall_s);
        std::nth_element(step_times.begin(), step_times.begin() + step_times.size() / 2, step_times.end());
        const double typical_step_s = step_times[step_times.size() / 2];
        const auto delay = std::chrono::microseconds(
            static_cast<int64_t>(1e6 * typical_step_s * std::uniform_real_distribution<double>(0, 1)(random)));
        std::this_thread::sleep_for(delay);
        if (!done[victim]) {  // else it finished while we waited: nothing left to kill
          out << (options.progress_bar ? "\n" : "")
              << fmt::format("killing wafer {} (SIGKILL) {:.0f} ms after step {} ...\n", victim,
                             delay.count() / 1e3, step + 1)
              << std::flush;
          workers[victim]->kill_now();
          killed_on_purpose[victim] = true;
        }
      }
      if (local && options.kill_memoryx_after_step >= 0 && step + 1 == static_cast<uint64_t>(options.kill_memoryx_after_step)) {
        out << (options.progress_bar ? "\n" : "") << fmt::format("killing MemoryX (SIGKILL) after step {} ...\n", step + 1)
            << std::flush;
        local->kill_memoryx(0, SIGKILL);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        local->restart_memoryx(0);
        ++report.memoryx_restarts;
        out << "MemoryX restarted from its store; training continues\n" << std::flush;
      }
      if (local && options.kill_swarmx_after_step >= 0 && step + 1 == static_cast<uint64_t>(options.kill_swarmx_after_step)) {
        const size_t node = options.kill_swarmx_index < 0 ? local->root_index()
                                                           : static_cast<size_t>(options.kill_swarmx_index);
        out << (options.progress_bar ? "\n" : "")
            << fmt::format("killing SwarmX node {} (SIGKILL) after step {} ...\n", node, step + 1) << std::flush;
        local->kill_swarmx(node, SIGKILL);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        local->restart_swarmx(node);
        ++report.swarmx_restarts;
        out << fmt::format("SwarmX node {} restarted; its children and its upstream reconnect\n", node) << std::flush;
      }
    }
  }
  if (options.progress_bar) out << '\n';
  for (size_t r = 0; r < wafers; ++r) {
    const int code = workers[r]->wait();
    if (code != 0 && !finished_without_saying[r] && !killed_on_purpose[r])
      throw fail(fmt::format("wafer {} exited with {}; its log {}:\n{}", r, code, workers[r]->stderr_log().string(),
                             workers[r]->stderr_tail()));
  }
  report.samples = samples_done;

  // --- final weights, evaluation ---
  train::ModelParameters final_weights = train::ModelParameters::zeros(spec);
  for (int attempt = 0;; ++attempt) {
    const std::vector<cluster::TensorValues> now = control.read_tensors();
    bool complete = now.size() == 2 * spec.num_layers();
    for (const auto& t : now) complete = complete && t.next_step == run.steps;
    if (complete) {
      auto tensors = tensors_of(final_weights);
      for (const auto& t : now) std::copy(t.values.begin(), t.values.end(), tensors.at(t.info.tensor_id()).begin());
      break;
    }
    if (attempt > 600) throw std::runtime_error("MemoryX did not reach the last step within a minute");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const train::Evaluation evaluation = train::evaluate(final_weights, test);
  report.test_accuracy = evaluation.accuracy;
  report.test_loss = evaluation.loss;
  if (reference) {
    const train::ModelParameters& expected = reference->weights_after(run.steps);
    TensorComparison c;
    auto got = tensors_of(final_weights);
    train::ModelParameters expected_copy = expected;
    auto want = tensors_of(expected_copy);
    for (size_t t = 0; t < got.size(); ++t) compare_into(c, got[t], want[t]);
    report.final_weights_identical = c.identical;
    report.final_max_weight_difference = c.max_abs;
    report.reference_test_accuracy = train::evaluate(expected, test).accuracy;
  }
  report.wall_s = std::chrono::duration<double>(Clock::now() - started).count();

  if (!options.out_dir.empty()) {
    std::filesystem::create_directories(options.out_dir);
    const auto csv = options.out_dir / "loss.csv";
    const auto png = options.out_dir / "loss.png";
    train::write_loss_curve_csv(csv, report.curve);
    train::plot_loss_curve(png, report.curve, fmt::format("wsemu train {} on {} wafers", run.model, wafers));
    report.files = {csv, png};
  }
  if (local) local->stop();
  return report;
}

}  // namespace wsemu::wstrain
