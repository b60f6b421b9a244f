// The PRNG against independently computed values: the published splitmix64 test vector and a
// Python implementation of xoshiro256**, Lemire's bounded integers and Fisher-Yates.
#include "runtime/train/random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace wsemu::train {
namespace {

TEST(SplitMix64, MatchesPublishedVectorForSeed1234567) {
  SplitMix64 rng(1234567);
  const uint64_t expected[] = {6457827717110365317ULL, 3203168211198807973ULL, 9817491932198370423ULL,
                               4593380528125082431ULL, 16408922859458223821ULL};
  for (uint64_t value : expected) EXPECT_EQ(rng.next(), value);
}

TEST(Xoshiro256StarStar, MatchesPythonReferenceSeededBySplitMix) {
  // Python: s = [splitmix64(42) x4]; result = rotl(s1 * 5, 7) * 9; ... (xoshiro256** 1.0)
  Xoshiro256StarStar rng(42);
  const uint64_t expected[] = {1546998764402558742ULL, 6990951692964543102ULL, 12544586762248559009ULL,
                               17057574109182124193ULL};
  for (uint64_t value : expected) EXPECT_EQ(rng.next(), value);
}

TEST(StreamSeed, MatchesPythonReferenceAndSeparatesStreams) {
  EXPECT_EQ(stream_seed(7, RandomPurpose::epoch_shuffle, 3), 0x36db937ff805585cULL);
  EXPECT_NE(stream_seed(7, RandomPurpose::epoch_shuffle, 3), stream_seed(7, RandomPurpose::epoch_shuffle, 4));
  EXPECT_NE(stream_seed(7, RandomPurpose::weight_init, 0), stream_seed(7, RandomPurpose::sparsity_mask, 0));
  EXPECT_NE(stream_seed(7, RandomPurpose::weight_init, 0), stream_seed(8, RandomPurpose::weight_init, 0));
}

TEST(Xoshiro256StarStar, Uniform01UsesTheTop24BitsExactly) {
  Xoshiro256StarStar rng(99);
  // Python: next() >> 40 for the first three draws.
  EXPECT_EQ(rng.uniform01(), 5850279.0f / 16777216.0f);
  EXPECT_EQ(rng.uniform01(), 9462350.0f / 16777216.0f);
  EXPECT_EQ(rng.uniform01(), 6345387.0f / 16777216.0f);
  for (int k = 0; k < 10000; ++k) {
    const float u = rng.uniform01();
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
  }
}

TEST(Xoshiro256StarStar, UniformSymmetricStaysWithinTheLimit) {
  Xoshiro256StarStar rng(5);
  float low = 1.0f, high = -1.0f;
  for (int k = 0; k < 20000; ++k) {
    const float v = rng.uniform_symmetric(0.25f);
    ASSERT_GE(v, -0.25f);
    ASSERT_LT(v, 0.25f);
    low = std::min(low, v);
    high = std::max(high, v);
  }
  EXPECT_LT(low, -0.24f);
  EXPECT_GT(high, 0.24f);
}

TEST(Xoshiro256StarStar, BelowCoversTheRangeAndRejectsZero) {
  Xoshiro256StarStar rng(11);
  std::vector<int> counts(7, 0);
  for (int k = 0; k < 7000; ++k) ++counts.at(rng.below(7));
  for (int c : counts) EXPECT_GT(c, 800);
  EXPECT_EQ(rng.below(1), 0u);
  EXPECT_THROW(rng.below(0), std::invalid_argument);
}

TEST(Shuffle, MatchesPythonFisherYates) {
  Xoshiro256StarStar rng(7, RandomPurpose::epoch_shuffle, 3);
  std::vector<uint32_t> values(10);
  std::iota(values.begin(), values.end(), 0u);
  shuffle(values, rng);
  EXPECT_EQ(values, (std::vector<uint32_t>{5, 9, 2, 1, 6, 0, 7, 4, 3, 8}));
}

TEST(Shuffle, IsAPermutationAndHandlesTinyInputs) {
  Xoshiro256StarStar rng(3);
  std::vector<uint32_t> values(1000);
  std::iota(values.begin(), values.end(), 0u);
  shuffle(values, rng);
  std::vector<uint32_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (uint32_t k = 0; k < 1000; ++k) ASSERT_EQ(sorted[k], k);
  EXPECT_FALSE(std::is_sorted(values.begin(), values.end()));
  std::vector<uint32_t> empty, one{42};
  shuffle(empty, rng);
  shuffle(one, rng);
  EXPECT_EQ(one, std::vector<uint32_t>{42});
}

}  // namespace
}  // namespace wsemu::train
