#include "runtime/train/mlp_pass.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "runtime/train/float_functions.hpp"

namespace wsemu::train {

namespace {

// row[j] += x * w[j] for j < n, in the rounding the ComputeOrder asks for.
template <bool Fused>
inline void multiply_accumulate_row(float* __restrict row, float x, const float* __restrict w, size_t n) {
  if constexpr (Fused) {
    for (size_t j = 0; j < n; ++j) row[j] = std::fma(x, w[j], row[j]);
  } else {
    for (size_t j = 0; j < n; ++j) row[j] = row[j] + x * w[j];
  }
}

inline void add_row(float* __restrict into, const float* __restrict term, size_t n) {
  for (size_t j = 0; j < n; ++j) into[j] = into[j] + term[j];
}

size_t chunk_length(size_t n, size_t chunks) {
  if (chunks == 0) throw std::invalid_argument("ComputeOrder: chunk counts must be >= 1");
  return (n + chunks - 1) / chunks;
}

// The fixed summation order of every reduction here: out[0, size) = the sum over i < n, taken in
// chunks of `length` i's; the first chunk accumulates straight into out, each later one into
// zeroed `scratch` that is then added to out. accumulate(target, lo, hi) adds the terms of
// i in [lo, hi) into target.
template <typename Accumulate>
void chunked_sum(size_t n, size_t length, float* out, size_t size, std::vector<float>& scratch,
                 Accumulate accumulate) {
  std::fill(out, out + size, 0.0f);
  for (size_t lo = 0, c = 0; lo < n; lo += length, ++c) {
    float* target = out;
    if (c > 0) {
      scratch.assign(size, 0.0f);
      target = scratch.data();
    }
    accumulate(target, lo, std::min(lo + length, n));
    if (c > 0) add_row(out, scratch.data(), size);
  }
}

// out[b][j] = sum over k < n_sum of lhs[b][k] * rhs[k][j], chunked over k (feature_chunks).
// lhs is [count][n_sum], rhs is [n_sum][n_out], out is [count][n_out].
template <bool Fused>
void chunked_product(const float* lhs, size_t count, size_t n_sum, const float* rhs, size_t n_out,
                     size_t chunks, float* out) {
  std::vector<float> partial;
  chunked_sum(n_sum, chunk_length(n_sum, chunks), out, count * n_out, partial, [&](float* target, size_t lo, size_t hi) {
    for (size_t k = lo; k < hi; ++k) {
      const float* rhs_row = rhs + k * n_out;
      for (size_t b = 0; b < count; ++b) {
        const float x = lhs[b * n_sum + k];
        if (x == 0.0f) continue;
        multiply_accumulate_row<Fused>(target + b * n_out, x, rhs_row, n_out);
      }
    }
  });
}

// sum over samples b of lhs[b][i] * rhs[b][j] into out[i][j], chunked over b (sample_chunks).
template <bool Fused>
void chunked_outer_product_sum(const float* lhs, size_t count, size_t n_lhs, const float* rhs, size_t n_rhs,
                               size_t chunks, float* out) {
  const size_t length = chunk_length(count, chunks);
  std::vector<float> partial;
  for (size_t i = 0; i < n_lhs; ++i) {
    chunked_sum(count, length, out + i * n_rhs, n_rhs, partial, [&](float* target, size_t lo, size_t hi) {
      for (size_t b = lo; b < hi; ++b) {
        const float x = lhs[b * n_lhs + i];
        if (x == 0.0f) continue;
        multiply_accumulate_row<Fused>(target, x, rhs + b * n_rhs, n_rhs);
      }
    });
  }
}

// out[j] = sum over samples b of rows[b][j], chunked over b (sample_chunks).
void chunked_row_sum(const float* rows, size_t count, size_t n, size_t chunks, float* out) {
  std::vector<float> partial;
  chunked_sum(count, chunk_length(count, chunks), out, n, partial, [&](float* target, size_t lo, size_t hi) {
    for (size_t b = lo; b < hi; ++b) add_row(target, rows + b * n, n);
  });
}

template <bool Fused>
ForwardPass forward_impl(const ModelParameters& parameters, MicroBatchView batch, const ComputeOrder& order) {
  ForwardPass pass;
  const float* input = batch.inputs;
  for (size_t l = 0; l < parameters.layers.size(); ++l) {
    const DenseLayer& layer = parameters.layers[l];
    const size_t n_in = layer.weight.shape()[0], n_out = layer.weight.shape()[1];
    xt::xtensor<float, 2> z = xt::xtensor<float, 2>::from_shape({batch.count, n_out});
    chunked_product<Fused>(input, batch.count, n_in, layer.weight.data(), n_out, order.feature_chunks, z.data());
    for (size_t b = 0; b < batch.count; ++b) add_row(z.data() + b * n_out, layer.bias.data(), n_out);
    pass.pre_activations.push_back(std::move(z));
    if (l + 1 < parameters.layers.size()) {
      const xt::xtensor<float, 2>& pre = pass.pre_activations.back();
      xt::xtensor<float, 2> a = xt::xtensor<float, 2>::from_shape(pre.shape());
      for (size_t k = 0; k < pre.size(); ++k) a.data()[k] = pre.data()[k] > 0.0f ? pre.data()[k] : 0.0f;
      pass.hidden_activations.push_back(std::move(a));
      input = pass.hidden_activations.back().data();
    }
  }
  return pass;
}

template <bool Fused>
GradientSums gradients_impl(const ModelParameters& parameters, MicroBatchView batch, const ComputeOrder& order) {
  const size_t layers = parameters.layers.size();
  const ForwardPass pass = forward_impl<Fused>(parameters, batch, order);
  GradientSums sums;
  sums.gradient = ModelParameters::zeros(parameters.spec());
  sums.samples = batch.count;

  const size_t classes = parameters.layers.back().weight.shape()[1];
  const xt::xtensor<float, 2>& logits = pass.pre_activations.back();
  std::vector<float> delta(batch.count * classes);
  for (size_t b = 0; b < batch.count; ++b) {
    const uint32_t label = batch.labels[b];
    if (label >= classes)
      throw std::invalid_argument(fmt::format("label {} of micro-batch sample {} is out of range for {} classes",
                                              label, b, classes));
    const float* sample_logits = logits.data() + b * classes;
    sums.loss_sum = sums.loss_sum + softmax_cross_entropy(sample_logits, classes, label, delta.data() + b * classes);
    if (predicted_class(sample_logits, classes) == label) ++sums.correct;
  }

  std::vector<float> transposed, upstream;
  for (size_t l = layers; l-- > 0;) {
    const DenseLayer& layer = parameters.layers[l];
    const size_t n_in = layer.weight.shape()[0], n_out = layer.weight.shape()[1];
    const float* layer_input = l == 0 ? batch.inputs : pass.hidden_activations[l - 1].data();
    DenseLayer& grad = sums.gradient.layers[l];
    chunked_outer_product_sum<Fused>(layer_input, batch.count, n_in, delta.data(), n_out, order.sample_chunks,
                                     grad.weight.data());
    chunked_row_sum(delta.data(), batch.count, n_out, order.sample_chunks, grad.bias.data());
    if (l == 0) break;
    // Activation gradient: g[b][i] = sum_j delta[b][j] * W[i][j], summed over j; W^T makes the
    // rows contiguous so the same chunked_product serves.
    transposed.resize(n_in * n_out);
    for (size_t i = 0; i < n_in; ++i)
      for (size_t j = 0; j < n_out; ++j) transposed[j * n_in + i] = layer.weight(i, j);
    upstream.resize(batch.count * n_in);
    chunked_product<Fused>(delta.data(), batch.count, n_out, transposed.data(), n_in, order.feature_chunks,
                           upstream.data());
    const float* z_prev = pass.pre_activations[l - 1].data();
    for (size_t k = 0; k < upstream.size(); ++k) upstream[k] = z_prev[k] > 0.0f ? upstream[k] : 0.0f;
    delta.swap(upstream);
  }
  return sums;
}

}  // namespace

ForwardPass forward(const ModelParameters& parameters, MicroBatchView batch, const ComputeOrder& order) {
  if (parameters.layers.empty()) throw std::invalid_argument("forward: the model has no layers");
  return order.fused_multiply_add ? forward_impl<true>(parameters, batch, order)
                                  : forward_impl<false>(parameters, batch, order);
}

float softmax_cross_entropy(const float* logits, size_t classes, uint32_t label, float* delta) {
  float max_logit = logits[0];
  for (size_t j = 1; j < classes; ++j) max_logit = logits[j] > max_logit ? logits[j] : max_logit;
  float total = 0.0f;
  for (size_t j = 0; j < classes; ++j) {
    delta[j] = float_exp(logits[j] - max_logit);
    total = total + delta[j];
  }
  for (size_t j = 0; j < classes; ++j) {
    const float probability = delta[j] / total;
    delta[j] = j == label ? probability - 1.0f : probability;
  }
  return float_log(total) - (logits[label] - max_logit);
}

size_t predicted_class(const float* logits, size_t classes) {
  size_t best = 0;
  for (size_t j = 1; j < classes; ++j)
    if (logits[j] > logits[best]) best = j;
  return best;
}

GradientSums micro_batch_gradients(const ModelParameters& parameters, MicroBatchView batch,
                                   const ComputeOrder& order) {
  if (parameters.layers.empty()) throw std::invalid_argument("micro_batch_gradients: the model has no layers");
  if (batch.count > 0 && batch.labels == nullptr)
    throw std::invalid_argument("micro_batch_gradients: labels are required");
  return order.fused_multiply_add ? gradients_impl<true>(parameters, batch, order)
                                  : gradients_impl<false>(parameters, batch, order);
}

void add_gradient_sums(GradientSums& accumulator, const GradientSums& term) {
  if (accumulator.gradient.layers.size() != term.gradient.layers.size())
    throw std::invalid_argument("add_gradient_sums: different layer counts");
  for (size_t l = 0; l < term.gradient.layers.size(); ++l) {
    DenseLayer& into = accumulator.gradient.layers[l];
    const DenseLayer& add = term.gradient.layers[l];
    if (into.weight.shape() != add.weight.shape() || into.bias.shape() != add.bias.shape())
      throw std::invalid_argument(fmt::format("add_gradient_sums: layer {} shapes differ", l));
    add_row(into.weight.data(), add.weight.data(), add.weight.size());
    add_row(into.bias.data(), add.bias.data(), add.bias.size());
  }
  accumulator.loss_sum = accumulator.loss_sum + term.loss_sum;
  accumulator.correct += term.correct;
  accumulator.samples += term.samples;
}

GradientSums zero_gradient_sums(const ModelSpec& spec) {
  GradientSums sums;
  sums.gradient = ModelParameters::zeros(spec);
  return sums;
}

}  // namespace wsemu::train
