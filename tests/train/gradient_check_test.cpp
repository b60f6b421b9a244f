// The backward pass against central finite differences of an independent double-precision
// forward pass written here (plain loops, libm exp/log), for a tiny 3-layer MLP.
#include "runtime/train/mlp_pass.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runtime/train/random.hpp"

namespace wsemu::train {
namespace {

struct DoubleLayer {
  std::vector<std::vector<double>> w;  // [in][out]
  std::vector<double> b;
};

// Sum over samples of softmax cross-entropy, everything in double.
double reference_loss_sum(const std::vector<DoubleLayer>& layers, const std::vector<std::vector<double>>& inputs,
                          const std::vector<uint32_t>& labels) {
  double total = 0;
  for (size_t n = 0; n < inputs.size(); ++n) {
    std::vector<double> a = inputs[n];
    for (size_t l = 0; l < layers.size(); ++l) {
      std::vector<double> z(layers[l].b);
      for (size_t i = 0; i < a.size(); ++i)
        for (size_t j = 0; j < z.size(); ++j) z[j] += a[i] * layers[l].w[i][j];
      if (l + 1 < layers.size())
        for (double& v : z) v = std::max(v, 0.0);
      a = z;
    }
    double m = a[0];
    for (double v : a) m = std::max(m, v);
    double s = 0;
    for (double v : a) s += std::exp(v - m);
    total += std::log(s) + m - a[labels[n]];
  }
  return total;
}

class GradientCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = ModelSpec::parse("mlp:6,5,4,3");
    params_ = initialize_parameters(spec_, 3);
    Xoshiro256StarStar rng(1234);
    for (DenseLayer& layer : params_.layers)
      for (float& b : layer.bias) b = rng.uniform_symmetric(0.3f);
    inputs_ = xt::xtensor<float, 2>::from_shape({4, 6});
    for (float& x : inputs_) x = rng.uniform_symmetric(1.5f);
    labels_ = {0, 2, 1, 2};
  }

  std::vector<DoubleLayer> as_double(const ModelParameters& p) const {
    std::vector<DoubleLayer> layers;
    for (const DenseLayer& layer : p.layers) {
      DoubleLayer d;
      d.w.assign(layer.weight.shape()[0], std::vector<double>(layer.weight.shape()[1]));
      for (size_t i = 0; i < d.w.size(); ++i)
        for (size_t j = 0; j < d.w[i].size(); ++j) d.w[i][j] = layer.weight(i, j);
      d.b.assign(layer.bias.begin(), layer.bias.end());
      layers.push_back(d);
    }
    return layers;
  }

  std::vector<std::vector<double>> double_inputs() const {
    std::vector<std::vector<double>> rows(4, std::vector<double>(6));
    for (size_t n = 0; n < 4; ++n)
      for (size_t d = 0; d < 6; ++d) rows[n][d] = inputs_(n, d);
    return rows;
  }

  void check(const ComputeOrder& order) {
    const GradientSums sums = micro_batch_gradients(params_, {inputs_.data(), labels_.data(), 4}, order);
    const auto x = double_inputs();
    std::vector<DoubleLayer> layers = as_double(params_);
    EXPECT_NEAR(sums.loss_sum, reference_loss_sum(layers, x, labels_), 1e-5);
    const double h = 1e-6;
    auto numeric = [&](double& parameter) {
      const double saved = parameter;
      parameter = saved + h;
      const double up = reference_loss_sum(layers, x, labels_);
      parameter = saved - h;
      const double down = reference_loss_sum(layers, x, labels_);
      parameter = saved;
      return (up - down) / (2 * h);
    };
    for (size_t l = 0; l < layers.size(); ++l) {
      for (size_t i = 0; i < layers[l].w.size(); ++i)
        for (size_t j = 0; j < layers[l].w[i].size(); ++j) {
          const double expected = numeric(layers[l].w[i][j]);
          EXPECT_NEAR(sums.gradient.layers[l].weight(i, j), expected, 2e-5 + 1e-4 * std::abs(expected))
              << "layer " << l << " weight " << i << "," << j;
        }
      for (size_t j = 0; j < layers[l].b.size(); ++j) {
        const double expected = numeric(layers[l].b[j]);
        EXPECT_NEAR(sums.gradient.layers[l].bias(j), expected, 2e-5 + 1e-4 * std::abs(expected))
            << "layer " << l << " bias " << j;
      }
    }
  }

  ModelSpec spec_;
  ModelParameters params_;
  xt::xtensor<float, 2> inputs_;
  std::vector<uint32_t> labels_;
};

TEST_F(GradientCheck, BackwardMatchesFiniteDifferences) { check({}); }

TEST_F(GradientCheck, ChunkedAndFusedOrdersComputeTheSameGradient) {
  check({.feature_chunks = 3, .sample_chunks = 2, .fused_multiply_add = false});
  check({.feature_chunks = 2, .sample_chunks = 4, .fused_multiply_add = true});
}

TEST_F(GradientCheck, SomeHiddenUnitsAreInactiveSoTheReluPathIsExercised) {
  const ForwardPass pass = forward(params_, {inputs_.data(), labels_.data(), 4}, {});
  size_t inactive = 0, active = 0;
  for (const auto& a : pass.hidden_activations)
    for (float v : a) (v == 0.0f ? inactive : active) += 1;
  EXPECT_GT(inactive, 0u);
  EXPECT_GT(active, 0u);
}

}  // namespace
}  // namespace wsemu::train
