#include "runtime/train/model.hpp"

#include <cmath>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/train/random.hpp"

namespace wsemu::train {

namespace {

[[noreturn]] void spec_error(std::string_view text, size_t column, std::string_view what) {
  throw ModelSpecError(fmt::format("model spec '{}': column {}: {}", text, column, what));
}

}  // namespace

ModelSpec ModelSpec::parse(std::string_view text) {
  constexpr std::string_view prefix = "mlp:";
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos)
    spec_error(text, 1, "expected 'mlp:' followed by layer sizes, e.g. mlp:784,256,10");
  if (text.substr(0, colon + 1) != prefix)
    spec_error(text, 1, fmt::format("unknown model kind '{}' (supported: mlp)", text.substr(0, colon)));
  ModelSpec spec;
  size_t pos = prefix.size();
  for (;;) {
    const size_t start = pos;
    size_t value = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      value = value * 10 + static_cast<size_t>(text[pos] - '0');
      if (value > max_layer_size)
        spec_error(text, start + 1, fmt::format("layer size is larger than the supported {}", max_layer_size));
      ++pos;
    }
    if (pos == start) {
      if (pos == text.size()) spec_error(text, pos + 1, "expected a layer size, found the end of the spec");
      spec_error(text, pos + 1, fmt::format("expected a layer size (a positive integer), found '{}'", text[pos]));
    }
    if (value == 0) spec_error(text, start + 1, "layer size must be at least 1");
    spec.sizes.push_back(value);
    if (pos == text.size()) break;
    if (text[pos] != ',') spec_error(text, pos + 1, fmt::format("expected ',' between layer sizes, found '{}'", text[pos]));
    ++pos;
  }
  if (spec.sizes.size() < 2)
    spec_error(text, text.size() + 1, "an MLP needs at least an input size and an output size, e.g. mlp:784,10");
  if (spec.sizes.back() < 2)
    spec_error(text, text.size(), "the output layer needs at least 2 classes for softmax cross-entropy");
  return spec;
}

std::string ModelSpec::to_string() const { return fmt::format("mlp:{}", fmt::join(sizes, ",")); }

size_t ModelSpec::parameter_count() const {
  size_t count = 0;
  for (size_t l = 0; l + 1 < sizes.size(); ++l) count += sizes[l] * sizes[l + 1] + sizes[l + 1];
  return count;
}

ModelParameters ModelParameters::zeros(const ModelSpec& spec) {
  ModelParameters parameters;
  for (size_t l = 0; l < spec.num_layers(); ++l) {
    DenseLayer layer;
    layer.weight = xt::zeros<float>({spec.sizes[l], spec.sizes[l + 1]});
    layer.bias = xt::zeros<float>({spec.sizes[l + 1]});
    parameters.layers.push_back(std::move(layer));
  }
  return parameters;
}

size_t ModelParameters::parameter_count() const {
  size_t count = 0;
  for (const DenseLayer& layer : layers) count += layer.weight.size() + layer.bias.size();
  return count;
}

ModelSpec ModelParameters::spec() const {
  ModelSpec spec;
  if (layers.empty()) return spec;
  spec.sizes.push_back(layers.front().weight.shape()[0]);
  for (const DenseLayer& layer : layers) spec.sizes.push_back(layer.weight.shape()[1]);
  return spec;
}

float he_uniform_limit(size_t fan_in) {
  return static_cast<float>(std::sqrt(6.0 / static_cast<double>(fan_in)));
}

float glorot_uniform_limit(size_t fan_in, size_t fan_out) {
  return static_cast<float>(std::sqrt(6.0 / static_cast<double>(fan_in + fan_out)));
}

ModelParameters initialize_parameters(const ModelSpec& spec, uint64_t seed) {
  ModelParameters parameters = ModelParameters::zeros(spec);
  Xoshiro256StarStar rng(seed, RandomPurpose::weight_init, 0);
  for (size_t l = 0; l < spec.num_layers(); ++l) {
    const bool output_layer = l + 1 == spec.num_layers();
    const float limit = output_layer ? glorot_uniform_limit(spec.sizes[l], spec.sizes[l + 1])
                                     : he_uniform_limit(spec.sizes[l]);
    for (float& w : parameters.layers[l].weight) w = rng.uniform_symmetric(limit);
  }
  return parameters;
}

SparsityMask make_sparsity_mask(const ModelSpec& spec, double sparsity, uint64_t seed) {
  if (!(sparsity >= 0.0 && sparsity < 1.0))
    throw std::invalid_argument(fmt::format("sparsity {} is out of range: expected 0 <= sparsity < 1", sparsity));
  Xoshiro256StarStar rng(seed, RandomPurpose::sparsity_mask, 0);
  SparsityMask mask;
  for (size_t l = 0; l < spec.num_layers(); ++l) {
    xt::xtensor<uint8_t, 2> keep = xt::ones<uint8_t>({spec.sizes[l], spec.sizes[l + 1]});
    const size_t n = keep.size();
    const auto pruned = static_cast<size_t>(std::floor(sparsity * static_cast<double>(n) + 0.5));
    std::vector<size_t> index(n);
    std::iota(index.begin(), index.end(), size_t{0});
    for (size_t k = 0; k < pruned; ++k) {
      std::swap(index[k], index[k + rng.below(n - k)]);
      keep.data()[index[k]] = 0;
    }
    mask.push_back(std::move(keep));
  }
  return mask;
}

void apply_sparsity_mask(ModelParameters& parameters, const SparsityMask& mask) {
  if (mask.size() != parameters.layers.size())
    throw std::invalid_argument("apply_sparsity_mask: mask and parameters have different layer counts");
  for (size_t l = 0; l < mask.size(); ++l) {
    auto& weight = parameters.layers[l].weight;
    if (weight.size() != mask[l].size())
      throw std::invalid_argument(fmt::format("apply_sparsity_mask: layer {} mask has the wrong shape", l));
    for (size_t i = 0; i < weight.size(); ++i)
      if (mask[l].data()[i] == 0) weight.data()[i] = 0.0f;
  }
}

}  // namespace wsemu::train
