// Which samples each training step uses, which wafer gets which of them, and how a wafer splits
// its shard into micro-batches.
//
// Contract: everything is a pure function of (number of samples, global batch, seed, step), so
// the host reference trainer and the wafer orchestrator agree on every sample's place. Epoch e
// visits the samples in the order of a Fisher-Yates shuffle of 0..n-1 drawn from the xoshiro256**
// stream (seed, epoch_shuffle, e) (or in 0..n-1 order when shuffling is off); step s of the run
// is batch s % steps_per_epoch of epoch s / steps_per_epoch, with steps_per_epoch =
// floor(n / global_batch): the last n % global_batch samples of each epoch's order are not used
// (drop-last), so every step has exactly global_batch samples.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace wsemu::train {

// A half-open range [begin, end) of positions within a global batch.
struct SampleRange {
  size_t begin = 0;
  size_t end = 0;
  size_t size() const { return end - begin; }
  bool operator==(const SampleRange&) const = default;
};

// Contiguous shards: with B = q * N + r (0 <= r < N), wafers 0 .. r-1 get q + 1 samples and
// wafers r .. N-1 get q, in wafer order: wafer w starts at w * q + min(w, r). Requires N >= 1
// and B >= N (every wafer gets at least one sample).
SampleRange shard_range(size_t global_batch, size_t wafers, size_t wafer);

// Contiguous micro-batches of `micro_batch` samples covering a shard in order; the last may be
// shorter. micro_batch == 0 means the whole shard in one micro-batch.
std::vector<SampleRange> micro_batch_ranges(SampleRange shard, size_t micro_batch);

class DataOrder {
 public:
  DataOrder(size_t num_samples, size_t global_batch, uint64_t seed, bool shuffle = true);

  size_t steps_per_epoch() const { return steps_per_epoch_; }
  size_t global_batch() const { return global_batch_; }

  // The order in which epoch `epoch` visits the samples (a permutation of 0..n-1).
  std::vector<uint32_t> epoch_order(uint64_t epoch) const;

  // The global batch of step `step` (0-based over the whole run), in batch order.
  std::vector<uint32_t> batch_indices(uint64_t step);

 private:
  size_t num_samples_;
  size_t global_batch_;
  uint64_t seed_;
  bool shuffle_;
  size_t steps_per_epoch_;
  uint64_t cached_epoch_ = UINT64_MAX;
  std::vector<uint32_t> cached_order_;
};

}  // namespace wsemu::train
