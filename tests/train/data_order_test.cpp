// Sharding, micro-batching and the per-epoch sample order against hand-worked tables.
#include "runtime/train/data_order.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "runtime/train/random.hpp"

namespace wsemu::train {
namespace {

TEST(ShardRange, SplitsDivisibleBatchesEvenly) {
  EXPECT_EQ(shard_range(12, 2, 0), (SampleRange{0, 6}));
  EXPECT_EQ(shard_range(12, 2, 1), (SampleRange{6, 12}));
  EXPECT_EQ(shard_range(7, 1, 0), (SampleRange{0, 7}));
}

TEST(ShardRange, GivesTheRemainderToTheFirstWafers) {
  // 10 = 3 * 3 + 1: wafer 0 gets 4, wafers 1 and 2 get 3.
  EXPECT_EQ(shard_range(10, 3, 0), (SampleRange{0, 4}));
  EXPECT_EQ(shard_range(10, 3, 1), (SampleRange{4, 7}));
  EXPECT_EQ(shard_range(10, 3, 2), (SampleRange{7, 10}));
  // 11 = 4 * 2 + 3: sizes 3, 3, 3, 2.
  EXPECT_EQ(shard_range(11, 4, 2), (SampleRange{6, 9}));
  EXPECT_EQ(shard_range(11, 4, 3), (SampleRange{9, 11}));
  EXPECT_EQ(shard_range(4, 4, 3), (SampleRange{3, 4}));
}

TEST(ShardRange, ShardsTileTheBatchForManySizes) {
  for (size_t batch = 1; batch <= 40; ++batch)
    for (size_t wafers = 1; wafers <= batch && wafers <= 9; ++wafers) {
      size_t next = 0, smallest = batch, largest = 0;
      for (size_t w = 0; w < wafers; ++w) {
        const SampleRange shard = shard_range(batch, wafers, w);
        ASSERT_EQ(shard.begin, next);
        next = shard.end;
        smallest = std::min(smallest, shard.size());
        largest = std::max(largest, shard.size());
      }
      ASSERT_EQ(next, batch);
      ASSERT_LE(largest - smallest, 1u);
      ASSERT_GE(smallest, 1u);
    }
}

TEST(ShardRange, RejectsImpossibleSplits) {
  EXPECT_THROW(shard_range(3, 4, 0), std::invalid_argument);
  EXPECT_THROW(shard_range(3, 0, 0), std::invalid_argument);
  EXPECT_THROW(shard_range(3, 2, 2), std::out_of_range);
}

TEST(MicroBatchRanges, SplitsAShardWithAShortLastOne) {
  EXPECT_EQ(micro_batch_ranges({4, 11}, 3),
            (std::vector<SampleRange>{{4, 7}, {7, 10}, {10, 11}}));
  EXPECT_EQ(micro_batch_ranges({4, 10}, 2), (std::vector<SampleRange>{{4, 6}, {6, 8}, {8, 10}}));
  EXPECT_EQ(micro_batch_ranges({4, 10}, 0), (std::vector<SampleRange>{{4, 10}}));
  EXPECT_EQ(micro_batch_ranges({4, 10}, 100), (std::vector<SampleRange>{{4, 10}}));
  EXPECT_TRUE(micro_batch_ranges({4, 4}, 2).empty());
}

TEST(DataOrder, EpochsArePermutationsDrawnFromTheirOwnStream) {
  DataOrder order(10, 3, 7);
  const std::vector<uint32_t> epoch3 = order.epoch_order(3);
  // The same Fisher-Yates as random_test's Python reference on stream (7, epoch_shuffle, 3).
  EXPECT_EQ(epoch3, (std::vector<uint32_t>{5, 9, 2, 1, 6, 0, 7, 4, 3, 8}));
  EXPECT_NE(order.epoch_order(0), order.epoch_order(1));
  EXPECT_EQ(order.epoch_order(1), DataOrder(10, 5, 7).epoch_order(1));  // independent of the batch size
}

TEST(DataOrder, StepsWalkTheEpochOrderAndDropTheRemainder) {
  DataOrder order(10, 3, 7);
  EXPECT_EQ(order.steps_per_epoch(), 3u);  // 10 = 3 * 3 + 1: the 10th sample of each epoch is unused
  const std::vector<uint32_t> epoch0 = order.epoch_order(0), epoch1 = order.epoch_order(1);
  for (uint64_t step = 0; step < 3; ++step)
    EXPECT_EQ(order.batch_indices(step),
              std::vector<uint32_t>(epoch0.begin() + step * 3, epoch0.begin() + step * 3 + 3));
  EXPECT_EQ(order.batch_indices(3), std::vector<uint32_t>(epoch1.begin(), epoch1.begin() + 3));
  EXPECT_EQ(order.batch_indices(1), std::vector<uint32_t>(epoch0.begin() + 3, epoch0.begin() + 6));  // back again
  const std::vector<uint32_t> epoch3 = order.epoch_order(3);
  EXPECT_EQ(order.batch_indices(11), std::vector<uint32_t>(epoch3.begin() + 6, epoch3.begin() + 9));
}

TEST(DataOrder, WithoutShufflingVisitsSamplesInFileOrder) {
  DataOrder order(8, 4, 99, false);
  EXPECT_EQ(order.batch_indices(0), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(order.batch_indices(1), (std::vector<uint32_t>{4, 5, 6, 7}));
  EXPECT_EQ(order.batch_indices(2), (std::vector<uint32_t>{0, 1, 2, 3}));
}

TEST(DataOrder, EveryUsedSampleAppearsOncePerEpoch) {
  DataOrder order(1000, 64, 3);
  std::set<uint32_t> seen;
  for (uint64_t step = 0; step < order.steps_per_epoch(); ++step)
    for (uint32_t index : order.batch_indices(step)) ASSERT_TRUE(seen.insert(index).second) << index;
  EXPECT_EQ(seen.size(), 15u * 64u);
}

TEST(DataOrder, RejectsBatchesLargerThanTheDataset) {
  EXPECT_THROW(DataOrder(10, 11, 1), std::invalid_argument);
  EXPECT_THROW(DataOrder(10, 0, 1), std::invalid_argument);
}

}  // namespace
}  // namespace wsemu::train
