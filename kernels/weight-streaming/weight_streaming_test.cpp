// kernels/weight-streaming: the wafer kernels on an emulated wafer against the host reference's
// micro_batch_gradients (runtime/train/mlp_pass.hpp) with the order the wafer promises:
// feature_chunks = 1 (the running sum passes along the row), sample_chunks = rows, fused
// multiply-add (fmacs rounds once). The gradients and the loss must be bit-identical.
#include <gtest/gtest.h>

#include "runtime/train/mlp_pass.hpp"
#include "runtime/train/synthetic_dataset.hpp"
#include "runtime/wstrain/wafer_session.hpp"

namespace wsemu::wstrain {
namespace {

using train::ModelParameters;
using train::ModelSpec;

struct Case {
  std::string model;
  size_t samples;
  WaferShape shape;
  double sparsity;
};

class WeightStreamingKernel : public ::testing::TestWithParam<Case> {};

TEST_P(WeightStreamingKernel, GradientsAndLossMatchTheReferenceBitForBit) {
  const Case c = GetParam();
  const ModelSpec spec = ModelSpec::parse(c.model);
  train::SyntheticSpec data_spec;
  data_spec.input_dim = spec.input_dim();
  data_spec.num_classes = spec.num_classes();
  data_spec.num_samples = c.samples;
  data_spec.seed = 5;
  const train::Dataset data = train::make_synthetic_dataset(data_spec, train::DatasetSplit::train);
  ModelParameters params = train::initialize_parameters(spec, 3);
  train::SparsityMask mask;
  if (c.sparsity > 0) {
    mask = train::make_sparsity_mask(spec, c.sparsity, 3);
    train::apply_sparsity_mask(params, mask);
  }
  // Non-zero biases so that their path is exercised.
  for (auto& layer : params.layers)
    for (size_t j = 0; j < layer.bias.size(); ++j) layer.bias(j) = 0.01f * static_cast<float>(j % 7) - 0.02f;

  train::ComputeOrder order;
  order.feature_chunks = 1;
  order.sample_chunks = static_cast<size_t>(c.shape.rows);
  order.fused_multiply_add = true;
  const train::MicroBatchView view{data.inputs.data(), data.labels.data(), c.samples};
  train::GradientSums expected = train::micro_batch_gradients(params, view, order);
  if (!mask.empty()) train::apply_sparsity_mask(expected.gradient, mask);

  WaferSession session(WaferPlan(spec, c.samples, c.shape), {});
  session.load_micro_batch({data.inputs.data(), c.samples * spec.input_dim()}, {data.labels.data(), c.samples},
                           c.samples);
  auto mask_of = [&](size_t l) {
    return mask.empty() ? std::span<const uint8_t>() : std::span<const uint8_t>(mask[l].data(), mask[l].size());
  };
  const size_t layers = spec.num_layers();
  for (size_t l = 0; l < layers; ++l)
    session.forward_layer(l, {params.layers[l].weight.data(), params.layers[l].weight.size()},
                          {params.layers[l].bias.data(), params.layers[l].bias.size()}, mask_of(l));
  const MicroBatchResult loss = session.loss();
  EXPECT_EQ(loss.loss_sum, expected.loss_sum);
  EXPECT_EQ(loss.correct, expected.correct);
  ModelParameters got = ModelParameters::zeros(spec);
  for (size_t l = layers; l-- > 0;)
    session.backward_layer(l, {params.layers[l].weight.data(), params.layers[l].weight.size()},
                           {params.layers[l].bias.data(), params.layers[l].bias.size()}, mask_of(l),
                           {got.layers[l].weight.data(), got.layers[l].weight.size()},
                           {got.layers[l].bias.data(), got.layers[l].bias.size()});
  size_t nonzero = 0;
  for (size_t l = 0; l < layers; ++l) {
    for (float v : expected.gradient.layers[l].weight) nonzero += v != 0.0f ? 1 : 0;
    size_t mismatches = 0;
    for (size_t k = 0; k < got.layers[l].weight.size(); ++k)
      if (!(got.layers[l].weight.data()[k] == expected.gradient.layers[l].weight.data()[k])) {
        if (mismatches++ < 5)
          ADD_FAILURE() << "layer " << l << " dW[" << k << "]: wafer " << got.layers[l].weight.data()[k]
                        << ", reference " << expected.gradient.layers[l].weight.data()[k];
      }
    for (size_t j = 0; j < got.layers[l].bias.size(); ++j)
      EXPECT_EQ(got.layers[l].bias(j), expected.gradient.layers[l].bias(j)) << "layer " << l << " db[" << j << "]";
    EXPECT_EQ(mismatches, 0u) << "layer " << l;
  }
  EXPECT_GT(nonzero, 0u) << "the reference gradient is all zeros: nothing was compared";
  EXPECT_GT(session.counters().weight_wavelets_in, 0u);
  EXPECT_GT(session.counters().gradient_wavelets_out, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, WeightStreamingKernel,
    ::testing::Values(Case{"mlp:12,8,4", 6, {2, 2}, 0.0}, Case{"mlp:10,7,5,3", 5, {3, 2}, 0.0},
                      Case{"mlp:9,6", 4, {1, 1}, 0.0}, Case{"mlp:16,12,4", 7, {4, 3}, 0.5},
                      Case{"mlp:12,8,4", 3, {2, 4}, 0.0}),
    [](const auto& info) { return "case" + std::to_string(info.index); });

}  // namespace
}  // namespace wsemu::wstrain
