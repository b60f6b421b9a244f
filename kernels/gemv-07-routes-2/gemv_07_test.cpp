// gemv-07: y = A x + b on 2 x 2 PEs against the xtensor reference, even and odd sizes.
#include "tests/e2e/gemv_tiles.hpp"

namespace wsemu::testing {
namespace {

TEST(Gemv07, EvenSizes) {
  expect_tiled_gemv_matches(build_kernel("gemv-07-routes-2", {{"M", 8}, {"N", 6}}), 8, 6, 2, 2, 31);
}

TEST(Gemv07, OddSizesOnWse3) {
  expect_tiled_gemv_matches(build_kernel("gemv-07-routes-2", {{"M", 11}, {"N", 7}}, "wse3"), 11, 7, 2, 2, 34);
}

}  // namespace
}  // namespace wsemu::testing
