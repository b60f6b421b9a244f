// gemv-06: y = A x + b with the columns of A split over two PEs, against the xtensor reference.
#include "tests/e2e/gemv_tiles.hpp"

namespace wsemu::testing {
namespace {

TEST(Gemv06, EvenColumns) {
  expect_tiled_gemv_matches(build_kernel("gemv-06-routes-1", {{"M", 4}, {"N", 6}}), 4, 6, 2, 1, 41);
}

TEST(Gemv06, OddColumns) {
  expect_tiled_gemv_matches(build_kernel("gemv-06-routes-1", {{"M", 10}, {"N", 9}}), 10, 9, 2, 1, 44);
}

}  // namespace
}  // namespace wsemu::testing
