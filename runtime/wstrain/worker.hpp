// The wafer worker: one emulated wafer as a leaf of the cluster (`wsemu train-worker`, one
// process per wafer, started by the orchestrator). Each step it takes its shard of the global
// batch (the same DataOrder the orchestrator uses), asks its SwarmX node for every layer's
// weights twice (pass 0 forward, pass 1 backward; the requests go out together, so the next
// layer's stream arrives while the wafer computes), runs each micro-batch on the wafer
// (WaferSession), adds the micro-batches' gradients in order and sends each layer's sum up the
// tree as soon as its last backward is done.
//
// Contract: it reports one JSON line per step on `progress` (the loss sum as its fp32 bits, so
// the orchestrator can reduce it exactly) and a final {"done": true} line; it never prints
// anything else there. Errors are thrown (std::exception) with what failed; cluster outages are
// ridden out by ClusterClient's reconnects.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "runtime/wstrain/run_config.hpp"
#include "runtime/wstrain/wafer_session.hpp"

namespace wsemu::wstrain {

struct WorkerOptions {
  RunConfig run;
  uint32_t rank = 0;
  std::string swarmx_address;  // the SwarmX node this leaf connects to
  std::string token;
  std::string tls_ca;          // connect with TLS (cluster::ClientOptions::tls_ca)
  SessionOptions session;
};

void run_worker(const WorkerOptions& options, std::ostream& progress);

// Tensor ids in MemoryX: layer l's weight is 2l, its bias 2l + 1 (the optimizer order of
// ReferenceTrainer::optimizer_slots).
inline uint64_t weight_tensor_id(size_t layer) { return 2 * layer; }
inline uint64_t bias_tensor_id(size_t layer) { return 2 * layer + 1; }

}  // namespace wsemu::wstrain
