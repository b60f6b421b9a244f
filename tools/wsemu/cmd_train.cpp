// `wsemu train`: weight-streaming training of an MLP on a virtual cluster (MemoryX, a SwarmX tree
// and one emulated wafer process per wafer), and `wsemu train-worker`, the hidden subcommand each
// wafer process runs. runtime/wstrain/README.md is the user's guide.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "runtime/cluster/protocol.hpp"
#include "runtime/train/data_order.hpp"
#include "runtime/wstrain/network.hpp"
#include "runtime/wstrain/orchestrator.hpp"
#include "runtime/wstrain/scaling_study.hpp"
#include "runtime/wstrain/worker.hpp"
#include "tools/cli_conventions.hpp"
#include "tools/wsemu/subcommand.hpp"

namespace wsemu::cli {
namespace {

// Options both commands share: what the wafers compute.
void add_run_options(CLI::App& app, wstrain::RunConfig& run) {
  app.add_option("--model", run.model, "MLP: mlp:IN,HIDDEN,...,CLASSES")->capture_default_str();
  app.add_option("--dataset", run.dataset, "fashion-mnist or synthetic")->capture_default_str();
  app.add_option("--data-dir", run.data_dir, "Fashion-MNIST IDX folder (default: /usr/share/datasets/fashion-mnist)");
  add_number(app, "--synthetic-samples", run.synthetic_samples,
             "synthetic: training samples (test: a quarter)", 1, 1e9);
  add_number(app, "--synthetic-noise", run.synthetic_noise, "synthetic: noise scale", 0, 1e6);
  app.add_flag("--standardize", run.standardize, "fashion-mnist: standardize the pixels before training");
  add_number(app, "--seed", run.seed, "seed of initialization, shuffling and sparsity mask", 0,
             1.8e19);
  add_number(app, "--batch", run.batch, "global batch (all wafers together)", 1, 1e9);
  add_number(app, "--wafers", run.wafers, "data-parallel wafers, each its own emulator process", 1,
             64);
  add_number(app, "--micro-batch", run.micro_batch,
             "samples per micro-batch on a wafer (0: its whole shard)", 0, 1e9);
  add_number(app, "--sparsity", run.sparsity,
             "fraction of every weight matrix pruned (fixed random mask)", 0, 1);
  add_number(app, "--columns", run.columns, "PE columns of each wafer's rectangle (0: chosen)", 0,
             1e5);
  add_number(app, "--rows", run.rows, "PE rows of each wafer's rectangle (0: chosen to fit SRAM)",
             0, 1e5);
  add_number(app, "--tree-wafers", run.tree_wafers,
             "size the network clock's SwarmX tree for N wafers (0: --wafers): the wafers run "
             "stand for one shard of a larger data-parallel cluster, each wafer's clock as in "
             "that cluster",
             0, 1e6);
  app.add_option("--net", run.net,
                 "KEY=VALUE: override a cluster network profile entry (repeatable; keys and defaults in "
                 "runtime/wstrain/README.md, e.g. down.swarmx-wafer.gbs=75)");
}

const Register kTrain{{"train", [](CLI::App& app) -> std::function<int()> {
  auto o = std::make_shared<wstrain::TrainOptions>();
  auto epochs = std::make_shared<double>(0.0);
  auto steps = std::make_shared<uint64_t>(0);
  auto optimizer = std::make_shared<std::string>("adam");
  auto lr = std::make_shared<float>(0.001f);
  auto out = std::make_shared<std::string>();
  auto stream = std::make_shared<std::string>("auto");
  auto memoryx = std::make_shared<std::string>();
  auto swarmx = std::make_shared<std::string>();
  auto quiet = std::make_shared<bool>(false);
  auto scaling = std::make_shared<bool>(false);
  auto scaling_wafers = std::make_shared<std::vector<size_t>>(std::vector<size_t>{1, 2, 4, 8, 16});
  auto scaling_project = std::make_shared<std::vector<size_t>>(std::vector<size_t>{192});
  app.description(
      "Train an MLP by weight streaming on a virtual cluster: MemoryX holds the weights and the optimizer, a "
      "SwarmX tree broadcasts each layer's weights to N wafers and adds their gradients, and each wafer is its "
      "own emulator process running kernels/weight-streaming (activations stay in SRAM, weights stream in from "
      "the fabric edge, twice per step, gradients stream out). By default MemoryX and SwarmX are started on "
      "loopback. Prints progress, then test accuracy, bytes streamed, wait vs compute, emulated cycles and the "
      "predicted step time; --out writes loss.csv, loss.png and summary.json. See runtime/wstrain/README.md.");
  add_run_options(app, o->run);
  app.add_option("--epochs", *epochs, "epochs to train (fractions allowed; default 1 unless --steps)")
      ->check(in_range(0, 1e6, true));
  app.add_option("--steps", *steps, "steps to train (overrides --epochs)")->check(in_range(1, 1e12));
  app.add_option("--optimizer", *optimizer, "sgd, momentum, adam or adamw")->capture_default_str();
  app.add_option("--lr", *lr, "learning rate")->check(in_range(0, 1e6, true))->capture_default_str();
  add_number(app, "--momentum", o->optimizer.momentum, "momentum (mu)", 0, 1);
  add_number(app, "--weight-decay", o->optimizer.weight_decay, "weight decay", 0, 1e6);
  app.add_option("--sparse-stream", *stream,
                 "auto (with --sparsity > 0), on or off: stream only the kept weights with their indices")
      ->capture_default_str();
  app.add_flag("--verify", o->verify,
               "run the host reference trainer alongside and report the largest loss and weight differences");
  app.add_option("--out", *out, "folder for loss.csv, loss.png, summary.json and the wafers' logs");
  app.add_option("--memoryx", *memoryx, "use running MemoryX shards: HOST:PORT[,HOST:PORT...] in shard order");
  app.add_option("--swarmx", *swarmx, "with --memoryx: the SwarmX node(s) the wafers join, HOST:PORT[,...]");
  app.add_option("--token-file", o->token_file, "with --memoryx: the cluster's token file");
  app.add_option("--tls-ca", o->tls_ca,
                 "with --memoryx: connect to the nodes with TLS, refusing a node whose certificate does not chain "
                 "to this PEM CA");
  add_number(app, "--fanout", o->fanout,
             "SwarmX children per node (the loss is reduced in this tree)", 2, 1024);
  add_number(app, "--memoryx-shards", o->memoryx_shards,
             "MemoryX shards of the local cluster (the model's tensors spread over them by id)", 1,
             64);
  add_number(app, "--checkpoint-every", o->checkpoint_every,
             "MemoryX checkpoints every N steps (local cluster)", 0, 1e12);
  add_number(app, "--threads", o->worker_threads, "emulator threads per wafer process", 1, 1024);
  app.add_flag("--backdoor-inputs", o->backdoor_inputs,
               "copy activations and labels into SRAM through the back door (no host-channel cycles)");
  app.add_option("--kill-memoryx-after-step", o->kill_memoryx_after_step,
                 "fault injection: SIGKILL MemoryX once N steps are done and restart it from its store")
      ->check(in_range(-1, 1e12));
  app.add_option("--kill-swarmx-after-step", o->kill_swarmx_after_step,
                 "fault injection: SIGKILL a SwarmX node once N steps are done and restart it on its port")
      ->check(in_range(-1, 1e12));
  app.add_option("--kill-swarmx-index", o->kill_swarmx_index,
                 "with --kill-swarmx-after-step: which node (0 serves the first wafers; -1: the root)")
      ->check(in_range(-1, 1e6))
      ->capture_default_str();
  app.add_option("--kill-wafer-after-step", o->kill_wafer_after_step,
                 "fault injection: SIGKILL a wafer worker during step N + 1 (which wafer and when: --kill-wafer-seed); "
                 "it is restarted at MemoryX's step")
      ->check(in_range(-1, 1e12));
  add_number(app, "--kill-wafer-seed", o->kill_wafer_seed,
             "with --kill-wafer-after-step: picks the wafer and the moment", 0, 1.8e19);
  app.add_flag("-q,--quiet", *quiet, "no per-step progress");
  app.add_flag("--scaling-study", *scaling,
               "run the model on each of --scaling-wafers with --batch per wafer and as the global batch, dense and "
               "at sparsity 0.5 and 0.9; print throughput, speed-up, efficiency and the critical path; write "
               "scaling.csv and scaling.png into --out");
  app.add_option("--scaling-wafers", *scaling_wafers, "with --scaling-study: the wafer counts")
      ->delimiter(',')
      ->check(in_range(1, 64));
  app.add_option("--scaling-project", *scaling_project,
                 "with --scaling-study: wafer counts projected with the batch per wafer (one wafer run in a SwarmX "
                 "tree sized for N; 0: none)")
      ->delimiter(',')
      ->check(in_range(0, 1e6))
      ->capture_default_str();
  return [=] {
    try {
      wstrain::TrainOptions options = *o;
      options.optimizer.kind = train::parse_optimizer_kind(*optimizer);
      options.optimizer.learning_rate = *lr;
      options.optimizer.validate();
      if (*stream == "auto") options.run.sparse_stream = options.run.sparsity > 0.0;
      else if (*stream == "on") options.run.sparse_stream = true;
      else if (*stream == "off") options.run.sparse_stream = false;
      else throw std::invalid_argument("--sparse-stream: expected auto, on or off");
      auto split = [](const std::string& text) {
        std::vector<std::string> parts;
        size_t start = 0;
        while (start <= text.size() && !text.empty()) {
          const size_t comma = text.find(',', start);
          parts.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
          if (comma == std::string::npos) break;
          start = comma + 1;
        }
        return parts;
      };
      options.memoryx = split(*memoryx);
      options.swarmx = split(*swarmx);
      options.out_dir = *out;
      if (*steps > 0) {
        options.run.steps = *steps;
      } else {
        // Steps per epoch come from the training set size and the batch.
        const train::Dataset data = wstrain::load_run_dataset(options.run, train::DatasetSplit::train);
        const double per_epoch = static_cast<double>(data.num_samples() / std::max<size_t>(1, options.run.batch));
        options.run.steps = static_cast<uint64_t>(std::ceil((*epochs > 0 ? *epochs : 1.0) * per_epoch));
      }
      options.progress_bar = !*quiet && ::isatty(STDERR_FILENO);
      if (*scaling) {
        wstrain::ScalingStudyOptions study;
        study.wafers = *scaling_wafers;
        study.projected.clear();
        for (size_t n : *scaling_project)
          if (n > 0) study.projected.push_back(n);
        wstrain::run_scaling_study(options, study, std::cout);
        return 0;
      }
      std::ostream null_stream(nullptr);
      const wstrain::TrainReport report = wstrain::run_training(options, *quiet ? null_stream : std::cerr);
      wstrain::print_report(options, report, std::cout);
      if (!options.out_dir.empty()) {
        wstrain::write_summary_json(options.out_dir / "summary.json", options, report);
        std::cout << "  wrote " << (options.out_dir / "summary.json").string() << "\n";
      }
      if (options.verify && !report.final_weights_identical) {
        std::fprintf(stderr, "wsemu train: --verify: the final weights differ from the reference trainer's\n");
        return 1;
      }
      return 0;
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "wsemu train: %s\n", e.what());
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "wsemu train: %s\n", e.what());
      return 3;
    }
  };
}}};

const Register kWorker{{"train-worker", [](CLI::App& app) -> std::function<int()> {
  auto o = std::make_shared<wstrain::WorkerOptions>();
  auto token_file = std::make_shared<std::string>();
  app.description("One wafer of `wsemu train` (started by it; not for direct use).");
  app.group("");  // hidden from `wsemu --help`
  add_run_options(app, o->run);
  app.add_option("--first-step", o->run.first_step, "first step to run");
  app.add_option("--steps", o->run.steps, "run steps up to this one (exclusive)")->required();
  app.add_flag("--sparse-stream", o->run.sparse_stream, "stream only kept weights");
  app.add_option("--rank", o->rank, "this wafer's rank")->required();
  app.add_option("--swarmx", o->swarmx_address, "SwarmX node to join")->required();
  app.add_option("--token-file", *token_file, "the cluster's token file")->required();
  app.add_option("--tls-ca", o->tls_ca, "connect with TLS (the CA of the nodes' certificates)");
  app.add_option("--threads", o->session.threads, "emulator threads");
  app.add_flag("--backdoor-inputs", o->session.backdoor_inputs, "inputs through the SRAM back door");
  app.add_option("--kernel-dir", o->session.kernel_dir, "folder of kernels/weight-streaming");
  app.add_option("--fanout", o->run.fanout, "SwarmX children per node");
  return [=] {
    try {
      wstrain::WorkerOptions options = *o;
      options.token = cluster::load_token(*token_file);
      wstrain::run_worker(options, std::cout);
      return 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "wsemu train-worker %u: %s\n", o->rank, e.what());
      return 3;
    }
  };
}}};

}  // namespace
}  // namespace wsemu::cli
