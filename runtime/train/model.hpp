// The trained model: an MLP spec ("mlp:784,256,10"), its parameters, their deterministic
// initialization and the unstructured sparsity mask.
//
// Contract: layer l (0-based) maps sizes[l] inputs to sizes[l+1] outputs with weight[i][j]
// (input i, output j; row-major [in][out], so one row is everything input i feeds) and bias[j].
// Hidden layers are followed by ReLU, the last layer by softmax cross-entropy. Initialization and
// masks are pure functions of the seed (random.hpp streams) and are written out exactly in
// runtime/train/README.md. Parsing never throws anything but ModelSpecError with the column of
// the problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <xtensor/xtensor.hpp>

namespace wsemu::train {

class ModelSpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct ModelSpec {
  std::vector<size_t> sizes;  // sizes[0] = inputs, sizes.back() = classes; at least 2 entries

  // "mlp:784,256,10". Errors name the column (1-based) of the offending character.
  static ModelSpec parse(std::string_view text);
  std::string to_string() const;

  size_t num_layers() const { return sizes.size() - 1; }
  size_t input_dim() const { return sizes.front(); }
  size_t num_classes() const { return sizes.back(); }
  size_t parameter_count() const;  // weights and biases
};

// Largest layer size parse() accepts; keeps a typo like 7840000 from allocating gigabytes.
inline constexpr size_t max_layer_size = 1u << 20;

struct DenseLayer {
  xt::xtensor<float, 2> weight;  // [in][out]
  xt::xtensor<float, 1> bias;    // [out]
};

// Parameters, or anything shaped like them (gradients, optimizer moments).
struct ModelParameters {
  std::vector<DenseLayer> layers;

  static ModelParameters zeros(const ModelSpec& spec);
  size_t parameter_count() const;
  ModelSpec spec() const;  // the layer sizes these tensors are shaped for
};

// He-uniform weights (limit sqrt(6 / fan_in)) for layers followed by ReLU, Glorot-uniform
// (limit sqrt(6 / (fan_in + fan_out))) for the output layer, zero biases. One xoshiro256**
// stream (RandomPurpose::weight_init) is drawn layer by layer, each weight matrix in row-major
// [in][out] order, one uniform_symmetric(limit) per weight. The limit is computed in double and
// rounded to float once.
ModelParameters initialize_parameters(const ModelSpec& spec, uint64_t seed);

float he_uniform_limit(size_t fan_in);
float glorot_uniform_limit(size_t fan_in, size_t fan_out);

// 1 where a weight is kept, 0 where it is pruned; one matrix per layer, shaped like its weight.
// Biases are never pruned.
using SparsityMask = std::vector<xt::xtensor<uint8_t, 2>>;

// Prunes exactly floor(sparsity * n + 0.5) of the n weights of every layer (computed in
// double): a partial Fisher-Yates over the row-major weight indices with one xoshiro256** stream
// (RandomPurpose::sparsity_mask) drawn layer by layer; for k = 0 .. pruned-1,
// swap(index[k], index[k + below(n - k)]) and prune index[k]. sparsity must be in [0, 1).
SparsityMask make_sparsity_mask(const ModelSpec& spec, double sparsity, uint64_t seed);

// Sets pruned weights to +0.0f. Also used on gradients.
void apply_sparsity_mask(ModelParameters& parameters, const SparsityMask& mask);

}  // namespace wsemu::train
