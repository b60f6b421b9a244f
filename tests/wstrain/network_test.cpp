// The cluster network in the clock (runtime/wstrain/network.hpp): the profile's keys, the tree
// depth, the step clock worked by hand, and one emulated wafer whose weight link is halved: a
// stream-bound step grows by exactly the sending time the model gives for the step's wavelets
// (W / rate, derived here from the profile's bandwidth), a compute-bound step does not change.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/train/model.hpp"
#include "runtime/wstrain/network.hpp"
#include "runtime/wstrain/wafer_session.hpp"

namespace wsemu::wstrain {
namespace {

TEST(Network, ProfileEntriesRoundTripAndBadOnesAreRefused) {
  NetworkProfile p;
  p.set("down.swarmx-wafer.gbs=75");
  p.set("up.swarmx-memoryx.us=0");
  p.set("memoryx.optimizer-gparams=0.5");
  EXPECT_EQ(p.swarmx_to_wafer.gbytes_per_s, 75.0);
  EXPECT_EQ(p.swarmx_to_memoryx.latency_us, 0.0);
  EXPECT_EQ(p.memoryx_optimizer_gparams_per_s, 0.5);
  NetworkProfile q;
  for (const std::string& e : p.entries()) q.set(e);
  EXPECT_EQ(q.entries(), p.entries());
  EXPECT_EQ(p.entries().size(), NetworkProfile::keys().size());
  for (const char* bad : {"down.swarmx-wafer.gbs", "nope=1", "down.swarmx-wafer.gbs=0", "down.swarmx-wafer.gbs=-1",
                          "down.swarmx-wafer.us=-1", "swarmx.reduce-gbs=nan", "swarmx.reduce-gbs=1x", "=3"})
    EXPECT_THROW(p.set(bad), std::invalid_argument) << bad;
}

TEST(Network, TreeDepthIsTheCeilingOfLogFanoutOfTheWafers) {
  EXPECT_EQ(swarmx_levels(1, 4), 1u);
  EXPECT_EQ(swarmx_levels(4, 4), 1u);
  EXPECT_EQ(swarmx_levels(5, 4), 2u);
  EXPECT_EQ(swarmx_levels(16, 4), 2u);
  EXPECT_EQ(swarmx_levels(64, 4), 3u);
  EXPECT_EQ(swarmx_levels(192, 4), 4u);
  EXPECT_EQ(swarmx_levels(16, 2), 4u);
  EXPECT_EQ(swarmx_levels(16, 16), 1u);
}

TEST(Network, WaferViewAddsTheLatenciesAndTakesTheSlowestLink) {
  NetworkProfile p;  // 150 GB/s everywhere; 2 + 1 + 1 us down at one level
  p.set("down.swarmx-swarmx.gbs=50");
  const WaferNetwork one = WaferNetwork::of(p, 1, 1000.0);  // 1 GHz: 1 cycle = 1 ns
  EXPECT_DOUBLE_EQ(one.down_wavelets_per_cycle, 150e9 / 4 / 1e9);  // no SwarmX-SwarmX hop
  EXPECT_DOUBLE_EQ(one.down_latency_cycles, 3000.0);
  const WaferNetwork three = WaferNetwork::of(p, 3, 1000.0);
  EXPECT_DOUBLE_EQ(three.down_wavelets_per_cycle, 50e9 / 4 / 1e9);
  EXPECT_DOUBLE_EQ(three.down_latency_cycles, 5000.0);
  EXPECT_DOUBLE_EQ(three.up_latency_cycles, 5000.0);
  EXPECT_DOUBLE_EQ(three.optimizer_cycles_per_parameter, 1e9 / 2e9);
}

// By hand: rate 0.5 wavelets/cycle, latency 10 cycles, 4 cycles per parameter.
TEST(Network, StepClockByHand) {
  WaferNetwork n;
  n.down_wavelets_per_cycle = 0.5;
  n.down_latency_cycles = 10;
  n.up_wavelets_per_cycle = 1;
  n.up_latency_cycles = 20;
  n.optimizer_cycles_per_parameter = 4;
  StreamClock clock(n, {5, 3});
  StreamClock::Pass a = clock.begin_pass(0, 6, 0);  // sends cycles 0..12
  EXPECT_EQ(clock.arrival(a, 0), 12u);               // 0 + 10 + 1 / 0.5
  EXPECT_EQ(clock.arrival(a, 5), 22u);
  StreamClock::Pass b = clock.begin_pass(1, 2, 30);  // the link is free at 12
  EXPECT_EQ(clock.arrival(b, 1), 12u + 10u + 4u);
  clock.end_pass(a, 40, 7);
  clock.end_pass(b, 50, 0);
  clock.gradients_left(1, 60, 2);
  clock.gradients_left(0, 100, 6);
  const StepPath first = clock.finish_step(100);
  EXPECT_EQ(first.stream.exposed, 7u);
  EXPECT_EQ(first.compute.total, 93u);
  EXPECT_EQ(first.reduce.exposed, 0u);
  // Layer 1 arrives at MemoryX at 80 and is applied 80..92; layer 0 at 120, applied 120..140.
  StreamClock::Pass c = clock.begin_pass(0, 2, 110);
  EXPECT_TRUE(c.waited_for_update);
  EXPECT_EQ(clock.arrival(c, 0), 140u + 10u + 2u);
  clock.end_pass(c, 160, 42);  // waited 110..152: 10 for the trip up, 20 for the update, 12 stream
  const StepPath second = clock.finish_step(60);
  EXPECT_EQ(second.reduce.exposed, 10u);
  EXPECT_EQ(second.optimizer.exposed, 20u);
  EXPECT_EQ(second.stream.exposed, 12u);
  EXPECT_EQ(second.reduce.total, (2u + 20u) + (6u + 20u));
  EXPECT_EQ(second.optimizer.total, 4u * (5 + 3));
  EXPECT_EQ(second.compute.total, 60u - 42u);
}

// One step of mlp:16,12,4 on 4 x 1 PEs (8 samples) on the wafer itself, with this profile.
struct OneStep {
  uint64_t cycles = 0;
  uint64_t words = 0;
  double clock_mhz = 0;
  StepPath path;
};

OneStep one_step(const std::vector<std::string>& net) {
  const train::ModelSpec spec = train::ModelSpec::parse("mlp:16,12,4");
  SessionOptions options;
  for (const std::string& e : net) options.network.set(e);
  WaferSession session(WaferPlan(spec, 8, WaferShape{4, 1}), options);
  train::ModelParameters params = train::initialize_parameters(spec, 3);
  std::vector<float> inputs(8 * 16);
  std::vector<uint32_t> labels(8);
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = static_cast<float>((i * 7) % 11) / 11.0f - 0.4f;
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<uint32_t>(i % 4);
  const uint64_t start = session.counters().cycles;
  session.load_micro_batch(inputs, labels, 8);
  for (size_t l = 0; l < 2; ++l)
    session.forward_layer(l, {params.layers[l].weight.data(), params.layers[l].weight.size()},
                          {params.layers[l].bias.data(), params.layers[l].bias.size()}, {});
  (void)session.loss();
  train::ModelParameters g = train::ModelParameters::zeros(spec);
  for (size_t l = 2; l-- > 0;)
    session.backward_layer(l, {params.layers[l].weight.data(), params.layers[l].weight.size()},
                           {params.layers[l].bias.data(), params.layers[l].bias.size()}, {},
                           {g.layers[l].weight.data(), g.layers[l].weight.size()},
                           {g.layers[l].bias.data(), g.layers[l].bias.size()});
  OneStep r;
  r.path = session.finish_step();
  r.cycles = session.counters().cycles - start;
  r.words = session.counters().weight_wavelets_in;
  r.clock_mhz = session.clock_mhz();
  return r;
}

TEST(Network, HalfTheBandwidthLengthensAStreamBoundStepByTheSendingTime) {
  // Weights: each layer's n_in * n_out + n_out wavelets, forward and backward.
  const uint64_t words = 2 * ((16 * 12 + 12) + (12 * 4 + 4));
  const double gbs = 0.034;  // far below what 4 columns take (a weight per 17 to 31 cycles each)
  const OneStep full = one_step({"down.swarmx-wafer.gbs=" + std::to_string(gbs)});
  const OneStep half = one_step({"down.swarmx-wafer.gbs=" + std::to_string(gbs / 2)});
  ASSERT_EQ(full.words, words);
  const double rate = gbs * 1e9 / 4.0 / (full.clock_mhz * 1e6);  // wavelets per cycle
  // The link never pauses in a stream-bound step, so the last weight arrives W / rate after the
  // latency, and the wafer's tail after it is the same: the step grows by W / (rate / 2) - W / rate.
  const double predicted = static_cast<double>(words) / rate;
  EXPECT_NEAR(static_cast<double>(half.cycles - full.cycles), predicted, 1.0)
      << "full " << full.cycles << " half " << half.cycles;
  EXPECT_GT(full.path.stream.exposed, full.cycles / 2) << "the step was not stream-bound";
  EXPECT_EQ(full.path.cycles, full.cycles);
}

TEST(Network, HalfTheBandwidthLeavesAComputeBoundStepAsItWas) {
  const OneStep full = one_step({});                          // 150 GB/s: 44 wavelets a cycle
  const OneStep half = one_step({"down.swarmx-wafer.gbs=75"});
  EXPECT_EQ(full.cycles, half.cycles);
  EXPECT_LT(full.path.stream.exposed, full.cycles / 2);
}

}  // namespace
}  // namespace wsemu::wstrain
