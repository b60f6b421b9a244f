#include "runtime/train/random.hpp"

#include <stdexcept>
#include <utility>

namespace wsemu::train {

namespace {

constexpr uint64_t golden_gamma = 0x9E3779B97F4A7C15ULL;

constexpr uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t SplitMix64::next() {
  state_ += golden_gamma;
  return mix64(state_);
}

uint64_t stream_seed(uint64_t seed, RandomPurpose purpose, uint64_t index) {
  return mix64(mix64(seed ^ static_cast<uint64_t>(purpose)) ^ index);
}

Xoshiro256StarStar::Xoshiro256StarStar(uint64_t seed) {
  SplitMix64 seeder(seed);
  for (uint64_t& word : s_) word = seeder.next();
}

uint64_t Xoshiro256StarStar::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

float Xoshiro256StarStar::uniform01() {
  return static_cast<float>(next() >> 40) * 0x1.0p-24f;
}

float Xoshiro256StarStar::uniform_symmetric(float limit) {
  const float u = uniform01();
  return (2.0f * u - 1.0f) * limit;
}

uint64_t Xoshiro256StarStar::below(uint64_t bound) {
  if (bound == 0) throw std::invalid_argument("Xoshiro256StarStar::below: bound must be >= 1");
  const unsigned __int128 product = static_cast<unsigned __int128>(next()) * bound;
  return static_cast<uint64_t>(product >> 64);
}

void shuffle(std::span<uint32_t> values, Xoshiro256StarStar& rng) {
  for (size_t i = values.size(); i > 1; --i) {
    const size_t j = rng.below(i);
    std::swap(values[i - 1], values[j]);
  }
}

}  // namespace wsemu::train
