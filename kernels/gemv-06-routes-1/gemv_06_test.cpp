// gemv-06: y = A x + b with the columns of A split over two PEs, against the xtensor reference.
#include "tests/e2e/gemv_tiles.hpp"

namespace wsemu::testing {
namespace {

TEST(Gemv06, EvenColumns) {
  const compiler::Executable exe = build_kernel("gemv-06-routes-1", {{"M", 4}, {"N", 6}});
  const xt::xarray<float> A = random_array({4, 6}, 41), x = random_array({6}, 42), b = random_array({4}, 43);
  expect_close(run_tiled_gemv(exe, A, x, b, 2, 1).y, gemv_reference(A, x, b), 1e-5, 1e-5, "y");
}

TEST(Gemv06, OddColumns) {
  const compiler::Executable exe = build_kernel("gemv-06-routes-1", {{"M", 10}, {"N", 9}});
  const xt::xarray<float> A = random_array({10, 9}, 44), x = random_array({9}, 45), b = random_array({10}, 46);
  expect_close(run_tiled_gemv(exe, A, x, b, 2, 1).y, gemv_reference(A, x, b), 1e-5, 1e-5, "y");
}

}  // namespace
}  // namespace wsemu::testing
