// The model spec parser (and its errors), initialization and the sparsity mask.
#include "runtime/train/model.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "runtime/train/random.hpp"
#include "tests/test_support.hpp"

namespace wsemu::train {
namespace {

std::string parse_error(std::string_view text) {
  return wsemu::testing::thrown_message<ModelSpecError>([&] { ModelSpec::parse(text); }, "no error");
}

TEST(ModelSpec, ParsesMlpsOfAnyDepth) {
  EXPECT_EQ(ModelSpec::parse("mlp:784,256,10").sizes, (std::vector<size_t>{784, 256, 10}));
  EXPECT_EQ(ModelSpec::parse("mlp:4,2").sizes, (std::vector<size_t>{4, 2}));
  const ModelSpec deep = ModelSpec::parse("mlp:16,32,32,32,4");
  EXPECT_EQ(deep.num_layers(), 4u);
  EXPECT_EQ(deep.to_string(), "mlp:16,32,32,32,4");
  EXPECT_EQ(ModelSpec::parse("mlp:784,256,10").parameter_count(), 784u * 256 + 256 + 256 * 10 + 10);
}

TEST(ModelSpec, ErrorsNameTheColumn) {
  EXPECT_EQ(parse_error("784,256,10"), "model spec '784,256,10': column 1: expected 'mlp:' followed by layer sizes, e.g. mlp:784,256,10");
  EXPECT_EQ(parse_error("cnn:3,4"), "model spec 'cnn:3,4': column 1: unknown model kind 'cnn' (supported: mlp)");
  EXPECT_EQ(parse_error("mlp:784,x,10"), "model spec 'mlp:784,x,10': column 9: expected a layer size (a positive integer), found 'x'");
  EXPECT_EQ(parse_error("mlp:784,,10"), "model spec 'mlp:784,,10': column 9: expected a layer size (a positive integer), found ','");
  EXPECT_EQ(parse_error("mlp:784,256,"), "model spec 'mlp:784,256,': column 13: expected a layer size, found the end of the spec");
  EXPECT_EQ(parse_error("mlp:784,0,10"), "model spec 'mlp:784,0,10': column 9: layer size must be at least 1");
  EXPECT_EQ(parse_error("mlp:784"), "model spec 'mlp:784': column 8: an MLP needs at least an input size and an output size, e.g. mlp:784,10");
  EXPECT_EQ(parse_error("mlp:784;10"), "model spec 'mlp:784;10': column 8: expected ',' between layer sizes, found ';'");
  EXPECT_NE(parse_error("mlp:99999999999999999999,2").find("larger than the supported"), std::string::npos);
  EXPECT_NE(parse_error("mlp:8,1").find("at least 2 classes"), std::string::npos);
  EXPECT_NE(parse_error("mlp:").find("found the end"), std::string::npos);
}

TEST(Initialization, DrawsHeAndGlorotUniformFromOneStreamInOrder) {
  const ModelSpec spec = ModelSpec::parse("mlp:5,4,3");
  const ModelParameters p = initialize_parameters(spec, 17);
  // Independent re-derivation: one stream, layer 0 row-major then layer 1 row-major.
  Xoshiro256StarStar rng(17, RandomPurpose::weight_init, 0);
  const float he = static_cast<float>(std::sqrt(6.0 / 5)), glorot = static_cast<float>(std::sqrt(6.0 / 7));
  EXPECT_EQ(he_uniform_limit(5), he);
  EXPECT_EQ(glorot_uniform_limit(4, 3), glorot);
  for (size_t i = 0; i < 5; ++i)
    for (size_t j = 0; j < 4; ++j) {
      const float u = static_cast<float>(rng.next() >> 40) / 16777216.0f;
      EXPECT_EQ(p.layers[0].weight(i, j), (2.0f * u - 1.0f) * he);
    }
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = 0; j < 3; ++j) {
      const float u = static_cast<float>(rng.next() >> 40) / 16777216.0f;
      EXPECT_EQ(p.layers[1].weight(i, j), (2.0f * u - 1.0f) * glorot);
    }
  for (const DenseLayer& layer : p.layers)
    for (float b : layer.bias) EXPECT_EQ(b, 0.0f);
}

TEST(Initialization, HasTheUniformVarianceAndDependsOnTheSeed) {
  const ModelSpec spec = ModelSpec::parse("mlp:784,256,10");
  const ModelParameters p = initialize_parameters(spec, 1);
  double sum = 0, squares = 0;
  for (float w : p.layers[0].weight) sum += w, squares += double(w) * w;
  const double n = static_cast<double>(p.layers[0].weight.size());
  EXPECT_NEAR(sum / n, 0.0, 0.002);
  EXPECT_NEAR(squares / n, 2.0 / 784.0, 2.0 / 784.0 * 0.02);  // He: variance limit^2 / 3 = 2 / fan_in
  EXPECT_EQ(initialize_parameters(spec, 1).layers[1].weight, p.layers[1].weight);
  EXPECT_NE(initialize_parameters(spec, 2).layers[1].weight, p.layers[1].weight);
}

TEST(SparsityMask, PrunesTheExactCountDeterministically) {
  const ModelSpec spec = ModelSpec::parse("mlp:30,20,5");
  const SparsityMask mask = make_sparsity_mask(spec, 0.9, 4);
  size_t kept0 = 0, kept1 = 0;
  for (uint8_t k : mask[0]) kept0 += k;
  for (uint8_t k : mask[1]) kept1 += k;
  EXPECT_EQ(kept0, 600u - 540u);
  EXPECT_EQ(kept1, 100u - 90u);
  EXPECT_EQ(make_sparsity_mask(spec, 0.9, 4), mask);
  EXPECT_NE(make_sparsity_mask(spec, 0.9, 5), mask);
  const SparsityMask none = make_sparsity_mask(spec, 0.0, 4);
  for (uint8_t k : none[0]) EXPECT_EQ(k, 1);
  EXPECT_THROW(make_sparsity_mask(spec, 1.0, 4), std::invalid_argument);
  EXPECT_THROW(make_sparsity_mask(spec, -0.1, 4), std::invalid_argument);

  ModelParameters p = initialize_parameters(spec, 4);
  apply_sparsity_mask(p, mask);
  size_t zeros = 0;
  for (float w : p.layers[0].weight) zeros += w == 0.0f;
  EXPECT_EQ(zeros, 540u);
}

TEST(SparsityMask, HalfwayRoundsTheCountToNearest) {
  // 5 weights at sparsity 0.5: floor(2.5 + 0.5) = 3 pruned.
  const SparsityMask mask = make_sparsity_mask(ModelSpec::parse("mlp:5,2"), 0.5, 1);
  size_t pruned = 0;
  for (uint8_t k : mask[0]) pruned += k == 0;
  EXPECT_EQ(pruned, 5u);  // 10 weights: floor(5 + 0.5) = 5
  const SparsityMask odd = make_sparsity_mask(ModelSpec::parse("mlp:1,5,2"), 0.5, 1);
  pruned = 0;
  for (uint8_t k : odd[0]) pruned += k == 0;
  EXPECT_EQ(pruned, 3u);
}

}  // namespace
}  // namespace wsemu::train
