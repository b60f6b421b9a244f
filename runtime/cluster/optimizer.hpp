// The optimizers MemoryX applies (SGD, momentum, Adam, AdamW) as its wire message names them, and
// the seeded initial-value rules of InitTensor.
//
// Contract: the update formulas are defined once, in runtime/train/optimizer.hpp (the reference
// trainer uses the same function); apply_update() converts the message to that plain struct and
// applies it, so MemoryX and the reference agree bit for bit. Nothing here does I/O.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/cluster/protocol.hpp"
#include "runtime/train/optimizer.hpp"

namespace wsemu::cluster {

// Defaults of unset (zero) hyper-parameters: lr 0.01, momentum 0.9, beta1 0.9, beta2 0.999,
// eps 1e-8, grad_scale 1. weight_decay stays 0 unless given.
pb::OptimizerConfig resolve_optimizer(const pb::OptimizerConfig& requested,
                                      const pb::OptimizerConfig& node_default);

pb::OptimizerKind parse_optimizer_kind(const std::string& name);  // throws ConfigError
std::string optimizer_kind_name(pb::OptimizerKind kind);

// Optimizer slots a kind keeps per element: 0 (SGD), 1 (momentum), 2 (Adam, AdamW).
int optimizer_slot_count(pb::OptimizerKind kind);

// The plain settings of a message (kind OPTIMIZER_DEFAULT as SGD; resolve it first), and the
// message for plain settings with every field set explicitly (no node defaults apply).
train::OptimizerConfig to_train_optimizer(const pb::OptimizerConfig& config);
pb::OptimizerConfig to_optimizer_message(const train::OptimizerConfig& config, float grad_scale);

// Applies one update in place (train::apply_optimizer_step). slot1/slot2 must have the weights' size when the kind uses them.
// `updates_applied` is the number of earlier updates (Adam's t - 1).
void apply_update(const pb::OptimizerConfig& config, uint64_t updates_applied,
                  std::span<float> weights, std::span<float> slot1, std::span<float> slot2,
                  std::span<const float> gradient);

// The initial values of a seeded rule. Element i uses x = the (i+1)-th output of the standard
// SplitMix64 generator seeded with `seed` (= splitmix64(seed + i*0x9E3779B97F4A7C15)) and
// u = (x >> 40) * 2^-24, uniform in [0, 1):
//   ZEROS 0;  CONSTANT a;  UNIFORM float(a + (b - a) * u) computed in double;
//   NORMAL  float(a + b * sqrt(-2 ln(1 - u1)) * cos(2 pi u2)) in double, with u1 from the top 24
//   bits and u2 from the next 24 bits of x.
std::vector<float> fill_initial_values(const pb::InitRule& rule, uint64_t elements);

// SplitMix64: adds 0x9E3779B97F4A7C15 to `state`, then applies the finaliser.
uint64_t splitmix64(uint64_t state);

}  // namespace wsemu::cluster
