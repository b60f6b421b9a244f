// WaferPlan: column chunks, row chunks, buffer sizes and the stream format, against
// hand-worked cases.
#include <gtest/gtest.h>

#include <bit>

#include "runtime/wstrain/wafer_plan.hpp"

namespace wsemu::wstrain {
namespace {

using train::ModelSpec;

TEST(WaferPlan, ChunksFeaturesAlongColumnsAndSamplesAlongRows) {
  const WaferPlan plan(ModelSpec::parse("mlp:10,7,3"), 5, {3, 2});
  EXPECT_EQ(plan.samples_per_row(), 3u);
  EXPECT_EQ(plan.chunk_length(10), 4u);
  EXPECT_EQ(plan.chunk(10, 0).first, 0u);
  EXPECT_EQ(plan.chunk(10, 2).first, 8u);
  EXPECT_EQ(plan.chunk(10, 2).count, 2u);
  EXPECT_EQ(plan.chunk(7, 2).count, 1u);
  EXPECT_EQ(plan.row_samples(5, 0), (train::SampleRange{0, 3}));
  EXPECT_EQ(plan.row_samples(5, 1), (train::SampleRange{3, 5}));
  EXPECT_EQ(plan.row_samples(2, 1), (train::SampleRange{1, 2}));
  // acts: layer 0 chunk 4 x 3 samples, layer 1 chunk 3 x 3; rowbuf: 7 outputs x 3.
  EXPECT_EQ(plan.act_offset_words(1), 12u);
  EXPECT_EQ(plan.act_words(), 21u);
  EXPECT_EQ(plan.row_words(), 21u);
  EXPECT_EQ(plan.g_words(), 9u);
}

TEST(WaferPlan, RefusesColumnsThatLeaveAColumnEmpty) {
  // 10 inputs over 6 columns: chunks of 2, the sixth column gets nothing.
  try {
    WaferPlan(ModelSpec::parse("mlp:10,4"), 4, {6, 1});
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--columns 5"), std::string::npos) << e.what();
  }
  EXPECT_EQ(WaferPlan::choose_shape(ModelSpec::parse("mlp:784,256,10"), 32, 0, 0).columns, 8);
}

TEST(WaferPlan, DenseAndSparseStreamsAndTheGradientOrder) {
  const WaferPlan plan(ModelSpec::parse("mlp:3,2"), 1, {2, 1});  // chunks {0,1} and {2}
  const std::vector<float> w = {1, 2, 3, 4, 5, 6};                // W[i][j] = w[i*2 + j]
  const std::vector<float> b = {7, 8};
  auto f = [](float v) { return std::bit_cast<uint32_t>(v); };
  const ColumnStreams dense = plan.layer_stream(0, w, b, {});
  EXPECT_EQ(dense.words[0], (std::vector<uint32_t>{f(1), f(3), f(2), f(4)}));
  EXPECT_EQ(dense.words[1], (std::vector<uint32_t>{f(5), f(7), f(6), f(8)}));
  EXPECT_EQ(dense.gradients_expected, (std::vector<size_t>{4, 4}));
  const std::vector<uint8_t> mask = {1, 0, 0, 1, 1, 1};
  const ColumnStreams sparse = plan.layer_stream(0, w, b, mask);
  EXPECT_EQ(sparse.words[0], (std::vector<uint32_t>{1, 0, f(1), 1, 1, f(4)}));
  EXPECT_EQ(sparse.words[1], (std::vector<uint32_t>{1, 0, f(5), f(7), 1, 0, f(6), f(8)}));
  std::vector<float> dw(6, -1.0f), db(2, -1.0f);
  plan.scatter_gradients(0, {{f(10), f(40)}, {f(50), f(70), f(60), f(80)}}, mask, dw, db);
  EXPECT_EQ(dw, (std::vector<float>{10, -1, -1, 40, 50, 60}));
  EXPECT_EQ(db, (std::vector<float>{70, 80}));
}

}  // namespace
}  // namespace wsemu::wstrain
