// The geometry of one wafer's training rectangle and the weight streams that feed it: how a
// model's layers are cut into column chunks, how a micro-batch is cut into row chunks, the SRAM
// buffers of kernels/weight-streaming/ws_pe.wsa, and the per-column wavelet streams (dense, or
// sparse with a header and index/value pairs) plus the order in which gradients come back.
//
// Contract: pure geometry and data shuffling, no wafer and no I/O. Column x holds features
// [first, first + count) of a layer with n inputs, first = x * ceil(n / K); every column must
// hold at least one feature of every layer (the constructor throws std::invalid_argument
// otherwise, naming the layer and a column count that works). A micro-batch of c samples puts
// samples [y * ceil(c / R), ...) on row y, which is ComputeOrder::sample_chunks = R. The forward
// and the backward stream of a layer are the same wavelets: for each output j in order, the
// column's weights W[i][j] in increasing i (sparse: a header with their number, then
// (i - first, value) pairs of the kept ones), and on the east column the bias b[j] after them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "runtime/train/data_order.hpp"
#include "runtime/train/model.hpp"

namespace wsemu::wstrain {

struct WaferShape {
  int columns = 0;  // K: chunks of each layer's inputs along x
  int rows = 0;     // R: chunks of the micro-batch along y
};

struct FeatureChunk {
  size_t first = 0;
  size_t count = 0;
};

// One wavelet stream per column, pushed into the north edge of the column.
struct ColumnStreams {
  std::vector<std::vector<uint32_t>> words;      // [column]
  std::vector<size_t> gradients_expected;         // [column]: values the backward sends south
  size_t total_words() const;
};

class WaferPlan {
 public:
  // max_micro_batch: the largest micro-batch any wafer runs (S = ceil(max_micro_batch / R)).
  WaferPlan(train::ModelSpec spec, size_t max_micro_batch, WaferShape shape);

  // Columns: `columns` if given, else the largest of 8, 4, 2, 1 that every layer allows; rows:
  // `rows` if given, else the fewest (1, 2, 4, ...) whose buffers fit a PE's SRAM.
  static WaferShape choose_shape(const train::ModelSpec& spec, size_t max_micro_batch, int columns, int rows);

  const train::ModelSpec& spec() const { return spec_; }
  int columns() const { return shape_.columns; }
  int rows() const { return shape_.rows; }
  size_t samples_per_row() const { return samples_per_row_; }

  size_t chunk_length(size_t n) const;  // ceil(n / K)
  FeatureChunk chunk(size_t n, int column) const;
  train::SampleRange row_samples(size_t micro_batch_count, int row) const;

  // Words of the kernel's buffers per PE (ACTS_WORDS, G_WORDS, ROW_WORDS) and where layer l's
  // input activations start inside acts.
  size_t act_words() const { return act_words_; }
  size_t g_words() const { return g_words_; }
  size_t row_words() const { return row_words_; }
  size_t act_offset_words(size_t layer) const { return act_offsets_.at(layer); }
  size_t data_bytes() const;  // the kernel's data (code not included)

  // The layout's parameters (kernels/weight-streaming/layout.wsl).
  std::map<std::string, int64_t> build_params() const;
  std::string describe() const;  // "4 x 2 PEs (K x R), 16 samples per row, ..."

  // The stream of layer `layer` (weights [in][out] row-major, biases [out]); `mask` (same shape
  // as the weights, 1 = kept) selects the sparse form when not empty.
  ColumnStreams layer_stream(size_t layer, std::span<const float> weights, std::span<const float> biases,
                             std::span<const uint8_t> mask) const;
  // Puts what the columns sent south during a backward pass into the layer's gradient tensors
  // (entries not streamed, i.e. pruned, are left as they are).
  void scatter_gradients(size_t layer, const std::vector<std::vector<uint32_t>>& column_words,
                         std::span<const uint8_t> mask, std::span<float> weight_gradient,
                         std::span<float> bias_gradient) const;

 private:
  train::ModelSpec spec_;
  WaferShape shape_;
  size_t samples_per_row_ = 0;
  size_t act_words_ = 0, g_words_ = 0, row_words_ = 0;
  std::vector<size_t> act_offsets_;
};

}  // namespace wsemu::wstrain
