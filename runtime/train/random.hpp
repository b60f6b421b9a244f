// Deterministic pseudo-random numbers for training: weight initialization, per-epoch shuffling,
// sparsity masks and the synthetic data set.
//
// Contract: every value is a pure function of the 64-bit seed and the documented algorithm
// (splitmix64 to seed, xoshiro256** to generate), so the host reference trainer, the wafer
// orchestrator and any re-implementation draw the same numbers on any machine and compiler.
// The float and integer helpers use only integer arithmetic and exact float conversions. This
// file must never use std:: distributions or std::random_device: their output differs between
// standard library versions. The exact algorithms are written out in runtime/train/README.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace wsemu::train {

// splitmix64 (Steele, Lea, Flood 2014): the state advances by the golden-ratio increment and
// each output is the state passed through the finalizer mix64().
uint64_t mix64(uint64_t z);

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();

 private:
  uint64_t state_;
};

// What a random stream is used for. Each (seed, purpose, index) names an independent stream.
enum class RandomPurpose : uint64_t {
  weight_init = 1,     // index: unused (0); layers draw in order from one stream
  epoch_shuffle = 2,   // index: epoch number (0-based)
  sparsity_mask = 3,   // index: unused (0); layers draw in order from one stream
  synthetic_data = 4,  // index: 0 = class centres, 1 = training samples, 2 = test samples
};

// The seed of one stream: mix64(mix64(seed ^ purpose) ^ index).
uint64_t stream_seed(uint64_t seed, RandomPurpose purpose, uint64_t index);

// xoshiro256** 1.0 (Blackman, Vigna 2018), its four state words filled from SplitMix64(seed).
class Xoshiro256StarStar {
 public:
  explicit Xoshiro256StarStar(uint64_t seed);
  Xoshiro256StarStar(uint64_t seed, RandomPurpose purpose, uint64_t index)
      : Xoshiro256StarStar(stream_seed(seed, purpose, index)) {}

  uint64_t next();

  // A float in [0, 1): the top 24 bits of next() times 2^-24 (exact, one draw).
  float uniform01();

  // A float in [-limit, limit): (2 * uniform01() - 1) * limit, each operation rounded in fp32
  // (the first two are exact). One draw.
  float uniform_symmetric(float limit);

  // An integer in [0, bound), bound >= 1: the high 64 bits of next() * bound (Lemire's
  // multiply-shift without rejection; its bias is below bound / 2^64). One draw.
  uint64_t below(uint64_t bound);

 private:
  uint64_t s_[4];
};

// Fisher-Yates: for i = n-1 down to 1, swap values[i] with values[rng.below(i + 1)].
void shuffle(std::span<uint32_t> values, Xoshiro256StarStar& rng);

}  // namespace wsemu::train
