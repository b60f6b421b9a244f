// gemv-07: y = A x + b on 2 x 2 PEs against the xtensor reference, even and odd sizes.
#include "tests/e2e/gemv_tiles.hpp"

namespace wsemu::testing {
namespace {

TEST(Gemv07, EvenSizes) {
  const compiler::Executable exe = build_kernel("gemv-07-routes-2", {{"M", 8}, {"N", 6}});
  const xt::xarray<float> A = random_array({8, 6}, 31), x = random_array({6}, 32), b = random_array({8}, 33);
  expect_close(run_tiled_gemv(exe, A, x, b, 2, 2).y, gemv_reference(A, x, b), 1e-5, 1e-5, "y");
}

TEST(Gemv07, OddSizesOnWse3) {
  const compiler::Executable exe = build_kernel("gemv-07-routes-2", {{"M", 11}, {"N", 7}}, "wse3");
  const xt::xarray<float> A = random_array({11, 7}, 34), x = random_array({7}, 35), b = random_array({11}, 36);
  expect_close(run_tiled_gemv(exe, A, x, b, 2, 2).y, gemv_reference(A, x, b), 1e-5, 1e-5, "y");
}

}  // namespace
}  // namespace wsemu::testing
