// gemv-checkerboard-fp16: y = A x + b in fp16 with x and b streamed in, against a double-precision
// xtensor reference on the fp16-rounded inputs. The kernel rounds every multiply-add and every
// add of the row sum to fp16, so the check is the SDK's (allclose, atol 0.01) at its size, and a
// rounding-error bound (one half-ulp per rounding, summed over the roundings) at every size.
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tests/e2e/gemv_tiles.hpp"
#include "tests/e2e/host_calls.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::MemcpyDataType;
using runtime::host::MemcpyOptions;

void run_case(const TiledGemvCase& c) {
  const compiler::Executable exe = build_tiled_gemv("gemv-checkerboard-fp16", c);
  const xt::xarray<float> A = to_half_precision(random_array({c.M, c.N}, 81));
  const xt::xarray<float> x = to_half_precision(random_array({c.N}, 82));
  const xt::xarray<float> b = to_half_precision(random_array({c.M}, 83));
  const Blocks rows = split(c.M, c.ky), cols = split(c.N, c.kx);
  const size_t MT = rows.max, NT = cols.max;
  const std::vector<uint32_t> tiles = a_tiles(A, rows, cols, [](float v) { return uint32_t(isa::fp32_to_fp16(v)); });

  LoadedRuntime rt(exe);
  MemcpyOptions copy16;
  copy16.data_type = MemcpyDataType::MEMCPY_16BIT;
  MemcpyOptions stream16 = copy16;
  stream16.streaming = true;
  rt.memcpy_h2d("A", tiles, 0, 0, int(c.kx), int(c.ky), int(MT * NT), copy16);
  rt.launch("init");
  for (size_t px = 0; px < c.kx; ++px) {
    const xt::xarray<float> block = xt::view(x, xt::range(cols.start[px], cols.start[px] + cols.size[px]));
    rt.memcpy_h2d("gemv", half_words(block), int(px), 0, 1, 1, int(cols.size[px]), stream16);
  }
  for (size_t py = 0; py < c.ky; ++py) {
    const xt::xarray<float> block = xt::view(b, xt::range(rows.start[py], rows.start[py] + rows.size[py]));
    rt.memcpy_h2d("gemv", half_words(block), 0, int(py), 1, 1, int(rows.size[py]), stream16);
  }
  rt.run_until_quiescent();
  std::vector<uint32_t> y_tiles = read_back(rt, "y", int(c.kx) - 1, 0, 1, int(c.ky), int(MT), copy16);
  xt::xarray<float> y = xt::zeros<float>({c.M});
  for (size_t py = 0; py < c.ky; ++py)
    for (size_t i = 0; i < rows.size[py]; ++i) y(rows.start[py] + i) = isa::fp16_to_fp32(uint16_t(y_tiles[py * MT + i]));

  const xt::xarray<double> ref = gemv_reference(A, x, b);
  // Each of the N multiply-adds rounds twice, each of the kx - 1 row additions and the add of b
  // once: at most (2N + kx + 1) roundings, each off by at most half an ulp of a value no larger
  // than sum_j |A_ij x_j| + |b_i|.
  const double half_ulp = std::ldexp(1.0, -11);
  const double roundings = double(2 * c.N + c.kx + 1);
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < c.M; ++i) {
    double magnitude = std::abs(double(b(i)));
    for (size_t j = 0; j < c.N; ++j) magnitude += std::abs(double(A(i, j)) * double(x(j)));
    const double err = std::abs(double(y(i)) - ref(i));
    worst = std::max(worst, err);
    if (err > roundings * half_ulp * magnitude + 1e-6 && ++bad <= 5)
      ADD_FAILURE() << "y[" << i << "]: got " << y(i) << ", expected " << ref(i) << " (error " << err
                    << " beyond the fp16 rounding bound)";
  }
  EXPECT_EQ(bad, 0u);
  if (c.N <= 16) expect_close(y, ref, 0.01, 0.0, "y (SDK check, atol 0.01)");
  std::printf("gemv-checkerboard-fp16 %zux%zu on %zux%zu (%s): %llu cycles = %.3f us at %.0f MHz (memcpy %llu, "
              "launch %llu); max error %.3g\n",
              c.M, c.N, c.kx, c.ky, c.arch.c_str(), (unsigned long long)rt.cycles(),
              double(rt.cycles()) / rt.clock_mhz(), rt.clock_mhz(), (unsigned long long)rt.stats().memcpy_cycles,
              (unsigned long long)rt.stats().launch_cycles, worst);
}

class GemvCheckerboardFp16 : public ::testing::TestWithParam<TiledGemvCase> {};

TEST_P(GemvCheckerboardFp16, MatchesReference) { run_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Shapes, GemvCheckerboardFp16,
                         ::testing::Values(TiledGemvCase{32, 16, 4, 4, "wse2"},   // the SDK's example
                                           TiledGemvCase{32, 16, 4, 4, "wse3"},
                                           TiledGemvCase{13, 11, 3, 4, "wse2"},   // uneven blocks both ways
                                           TiledGemvCase{7, 5, 1, 2, "wse2"},     // one column: west and east
                                           TiledGemvCase{9, 10, 5, 1, "wse3"}),   // one row
                         tiled_gemv_name());

// The larger size, on request: --gtest_also_run_disabled_tests --gtest_filter='*Large*'.
TEST(GemvCheckerboardFp16Large, DISABLED_Matrix256x128On16x16) { run_case(TiledGemvCase{256, 128, 16, 16, "wse2"}); }

}  // namespace
}  // namespace wsemu::testing
