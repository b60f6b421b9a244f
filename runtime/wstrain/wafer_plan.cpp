#include "runtime/wstrain/wafer_plan.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include <fmt/format.h>

namespace wsemu::wstrain {

namespace {

// Code of ws_pe.wsa plus the memcpy firmware, with room to spare; the build checks exactly.
constexpr size_t kCodeAllowanceBytes = 8 * 1024;
constexpr size_t kProgramLimitBytes = 44 * 1024;

size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

bool columns_fit(const train::ModelSpec& spec, size_t k) {
  for (size_t l = 0; l + 1 < spec.sizes.size(); ++l) {
    const size_t n = spec.sizes[l];
    if (k > n || (k - 1) * ceil_div(n, k) >= n) return false;
  }
  return true;
}

uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
float float_of(uint32_t u) { return std::bit_cast<float>(u); }

}  // namespace

size_t ColumnStreams::total_words() const {
  size_t total = 0;
  for (const auto& w : words) total += w.size();
  return total;
}

WaferPlan::WaferPlan(train::ModelSpec spec, size_t max_micro_batch, WaferShape shape)
    : spec_(std::move(spec)), shape_(shape) {
  if (spec_.sizes.size() < 2) throw std::invalid_argument("the model needs at least one layer");
  if (shape_.columns < 1 || shape_.rows < 1)
    throw std::invalid_argument(fmt::format("wafer shape {} x {}: columns and rows must be at least 1",
                                            shape_.columns, shape_.rows));
  if (shape_.columns > 64 || shape_.rows > 64)
    throw std::invalid_argument(fmt::format("wafer shape {} x {}: at most 64 columns and 64 rows",
                                            shape_.columns, shape_.rows));
  if (max_micro_batch == 0) throw std::invalid_argument("the micro-batch must hold at least one sample");
  const size_t k = static_cast<size_t>(shape_.columns);
  for (size_t l = 0; l + 1 < spec_.sizes.size(); ++l) {
    const size_t n = spec_.sizes[l];
    if (k > n || (k - 1) * ceil_div(n, k) >= n) {
      size_t fits = k;
      while (fits > 1 && !columns_fit(spec_, fits)) --fits;
      throw std::invalid_argument(fmt::format(
          "{} columns leave a column of layer {} ({} inputs) without features; use --columns {} or fewer",
          k, l, n, fits));
    }
  }
  samples_per_row_ = ceil_div(max_micro_batch, static_cast<size_t>(shape_.rows));
  const size_t s = samples_per_row_;
  size_t offset = 0;
  for (size_t l = 0; l + 1 < spec_.sizes.size(); ++l) {
    act_offsets_.push_back(offset);
    offset += chunk_length(spec_.sizes[l]) * s;
  }
  act_words_ = offset;
  g_words_ = s;
  row_words_ = s;
  for (size_t l = 1; l + 1 < spec_.sizes.size(); ++l) g_words_ = std::max(g_words_, chunk_length(spec_.sizes[l]) * s);
  for (size_t l = 1; l < spec_.sizes.size(); ++l) row_words_ = std::max(row_words_, spec_.sizes[l] * s);
  if (s > 4096) throw std::invalid_argument(fmt::format("{} samples per row is too many; use more rows", s));
}

WaferShape WaferPlan::choose_shape(const train::ModelSpec& spec, size_t max_micro_batch, int columns, int rows) {
  WaferShape shape;
  if (columns > 0) {
    shape.columns = columns;
  } else {
    for (int k : {8, 4, 2, 1})
      if (columns_fit(spec, static_cast<size_t>(k))) {
        shape.columns = k;
        break;
      }
  }
  if (rows > 0) {
    shape.rows = rows;
    return shape;
  }
  for (int r = 1; r <= 64; r *= 2) {
    shape.rows = r;
    try {
      const WaferPlan plan(spec, max_micro_batch, shape);
      if (plan.data_bytes() + kCodeAllowanceBytes <= kProgramLimitBytes) return shape;
    } catch (const std::invalid_argument&) {
      return shape;  // the constructor's message is the better one; let the caller hit it
    }
  }
  return shape;
}

size_t WaferPlan::chunk_length(size_t n) const { return ceil_div(n, static_cast<size_t>(shape_.columns)); }

FeatureChunk WaferPlan::chunk(size_t n, int column) const {
  const size_t length = chunk_length(n);
  FeatureChunk c;
  c.first = static_cast<size_t>(column) * length;
  c.count = c.first >= n ? 0 : std::min(length, n - c.first);
  return c;
}

train::SampleRange WaferPlan::row_samples(size_t micro_batch_count, int row) const {
  const size_t length = ceil_div(micro_batch_count, static_cast<size_t>(shape_.rows));
  const size_t begin = std::min(micro_batch_count, static_cast<size_t>(row) * length);
  const size_t end = std::min(micro_batch_count, begin + length);
  return {begin, end};
}

size_t WaferPlan::data_bytes() const { return 4 * (act_words_ + g_words_ + row_words_ + 4 * samples_per_row_); }

std::map<std::string, int64_t> WaferPlan::build_params() const {
  return {{"K", shape_.columns},
          {"R", shape_.rows},
          {"S", static_cast<int64_t>(samples_per_row_)},
          {"ACTS_WORDS", static_cast<int64_t>(act_words_)},
          {"G_WORDS", static_cast<int64_t>(g_words_)},
          {"ROW_WORDS", static_cast<int64_t>(row_words_)}};
}

std::string WaferPlan::describe() const {
  return fmt::format("{} x {} PEs (columns x rows), {} samples per row, {} KiB of data per PE", shape_.columns,
                     shape_.rows, samples_per_row_, (data_bytes() + 1023) / 1024);
}

ColumnStreams WaferPlan::layer_stream(size_t layer, std::span<const float> weights, std::span<const float> biases,
                                      std::span<const uint8_t> mask) const {
  const size_t n_in = spec_.sizes.at(layer), n_out = spec_.sizes.at(layer + 1);
  if (weights.size() != n_in * n_out || biases.size() != n_out || (!mask.empty() && mask.size() != weights.size()))
    throw std::invalid_argument(fmt::format("layer {}: {} weights, {} biases and {} mask entries for a {}x{} layer",
                                            layer, weights.size(), biases.size(), mask.size(), n_in, n_out));
  const bool sparse = !mask.empty();
  const int k = shape_.columns;
  ColumnStreams streams;
  streams.words.resize(static_cast<size_t>(k));
  streams.gradients_expected.assign(static_cast<size_t>(k), 0);
  for (int x = 0; x < k; ++x) {
    const FeatureChunk c = chunk(n_in, x);
    std::vector<uint32_t>& out = streams.words[static_cast<size_t>(x)];
    out.reserve(sparse ? n_out * (1 + c.count / 2) : n_out * (c.count + 1));
    size_t& expected = streams.gradients_expected[static_cast<size_t>(x)];
    for (size_t j = 0; j < n_out; ++j) {
      if (sparse) {
        const size_t header = out.size();
        out.push_back(0);
        uint32_t kept = 0;
        for (size_t i = c.first; i < c.first + c.count; ++i) {
          if (!mask[i * n_out + j]) continue;
          out.push_back(static_cast<uint32_t>(i - c.first));
          out.push_back(bits_of(weights[i * n_out + j]));
          ++kept;
        }
        out[header] = kept;
        expected += kept;
      } else {
        for (size_t i = c.first; i < c.first + c.count; ++i) out.push_back(bits_of(weights[i * n_out + j]));
        expected += c.count;
      }
      if (x == k - 1) {
        out.push_back(bits_of(biases[j]));
        ++expected;
      }
    }
  }
  return streams;
}

void WaferPlan::scatter_gradients(size_t layer, const std::vector<std::vector<uint32_t>>& column_words,
                                  std::span<const uint8_t> mask, std::span<float> weight_gradient,
                                  std::span<float> bias_gradient) const {
  const size_t n_in = spec_.sizes.at(layer), n_out = spec_.sizes.at(layer + 1);
  const bool sparse = !mask.empty();
  const int k = shape_.columns;
  for (int x = 0; x < k; ++x) {
    const FeatureChunk c = chunk(n_in, x);
    const std::vector<uint32_t>& in = column_words.at(static_cast<size_t>(x));
    size_t p = 0;
    auto next = [&]() {
      if (p >= in.size())
        throw std::runtime_error(fmt::format("layer {}: column {} sent {} gradient values, fewer than expected",
                                             layer, x, in.size()));
      return float_of(in[p++]);
    };
    for (size_t j = 0; j < n_out; ++j) {
      for (size_t i = c.first; i < c.first + c.count; ++i) {
        if (sparse && !mask[i * n_out + j]) continue;
        weight_gradient[i * n_out + j] = next();
      }
      if (x == k - 1) bias_gradient[j] = next();
    }
    if (p != in.size())
      throw std::runtime_error(fmt::format("layer {}: column {} sent {} gradient values, {} expected", layer, x,
                                           in.size(), p));
  }
}

}  // namespace wsemu::wstrain
