// gemv-09: y = A x + b with x and b streamed in and y streamed out (gemv_09_run.hpp), against
// the xtensor reference; block sizes differ per PE when M or N do not divide.
#include "kernels/gemv-09-streaming/gemv_09_run.hpp"

namespace wsemu::testing {
namespace {

class Gemv09 : public ::testing::TestWithParam<TiledGemvCase> {};

TEST_P(Gemv09, StreamsMatchReference) {
  const TiledGemvCase c = GetParam();
  const compiler::Executable exe = build_tiled_gemv("gemv-09-streaming", c);
  const xt::xarray<float> A = random_array({c.M, c.N}, 61), x = random_array({c.N}, 62), b = random_array({c.M}, 63);
  const StreamingRun r = run_streaming_gemv(exe, A, x, b, c.kx, c.ky, "gemv");
  const xt::xarray<float>& y = r.y;
  expect_close(y, gemv_reference(A, x, b), 1e-5, 1e-5, "y");
  const xt::xarray<double> ref = gemv_reference(A, x, b);
  double err = 0;
  for (size_t i = 0; i < c.M; ++i) err = std::max(err, std::abs(double(y(i)) - ref(i)));
  std::printf("gemv-09 %zux%zu on %zux%zu (%s): %llu cycles = %.3f us at %.0f MHz (memcpy %llu, launch %llu); max "
              "error %.3g\n",
              c.M, c.N, c.kx, c.ky, c.arch.c_str(), (unsigned long long)r.cycles, double(r.cycles) / r.clock_mhz, r.clock_mhz,
              (unsigned long long)r.memcpy_cycles, (unsigned long long)r.launch_cycles, err);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Gemv09,
                         ::testing::Values(TiledGemvCase{6, 8, 4, 3, "wse2"}, TiledGemvCase{13, 10, 3, 4, "wse2"},
                                           TiledGemvCase{8, 8, 2, 2, "wse3"}, TiledGemvCase{7, 5, 1, 2, "wse2"}),
                         tiled_gemv_name());

}  // namespace
}  // namespace wsemu::testing
