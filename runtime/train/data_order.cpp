#include "runtime/train/data_order.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "runtime/train/random.hpp"

namespace wsemu::train {

SampleRange shard_range(size_t global_batch, size_t wafers, size_t wafer) {
  if (wafers == 0) throw std::invalid_argument("shard_range: the number of wafers must be at least 1");
  if (global_batch < wafers)
    throw std::invalid_argument(fmt::format(
        "global batch {} is smaller than the number of wafers {}: every wafer needs at least one sample",
        global_batch, wafers));
  if (wafer >= wafers) throw std::out_of_range(fmt::format("shard_range: wafer {} of {}", wafer, wafers));
  const size_t quotient = global_batch / wafers, remainder = global_batch % wafers;
  const size_t begin = wafer * quotient + std::min(wafer, remainder);
  return {begin, begin + quotient + (wafer < remainder ? 1 : 0)};
}

std::vector<SampleRange> micro_batch_ranges(SampleRange shard, size_t micro_batch) {
  std::vector<SampleRange> ranges;
  const size_t step = micro_batch == 0 ? std::max<size_t>(shard.size(), 1) : micro_batch;
  for (size_t begin = shard.begin; begin < shard.end; begin += step)
    ranges.push_back({begin, std::min(begin + step, shard.end)});
  return ranges;
}

DataOrder::DataOrder(size_t num_samples, size_t global_batch, uint64_t seed, bool shuffle)
    : num_samples_(num_samples), global_batch_(global_batch), seed_(seed), shuffle_(shuffle) {
  if (global_batch == 0) throw std::invalid_argument("the global batch size must be at least 1");
  if (num_samples > UINT32_MAX) throw std::invalid_argument("data sets over 2^32 samples are not supported");
  if (num_samples < global_batch)
    throw std::invalid_argument(fmt::format("the data set has {} samples, fewer than one global batch of {}",
                                            num_samples, global_batch));
  steps_per_epoch_ = num_samples / global_batch;
}

std::vector<uint32_t> DataOrder::epoch_order(uint64_t epoch) const {
  std::vector<uint32_t> order(num_samples_);
  std::iota(order.begin(), order.end(), 0u);
  if (shuffle_) {
    Xoshiro256StarStar rng(seed_, RandomPurpose::epoch_shuffle, epoch);
    shuffle(order, rng);
  }
  return order;
}

std::vector<uint32_t> DataOrder::batch_indices(uint64_t step) {
  const uint64_t epoch = step / steps_per_epoch_;
  if (epoch != cached_epoch_) {
    cached_order_ = epoch_order(epoch);
    cached_epoch_ = epoch;
  }
  const size_t begin = (step % steps_per_epoch_) * global_batch_;
  return {cached_order_.begin() + static_cast<ptrdiff_t>(begin),
          cached_order_.begin() + static_cast<ptrdiff_t>(begin + global_batch_)};
}

}  // namespace wsemu::train
