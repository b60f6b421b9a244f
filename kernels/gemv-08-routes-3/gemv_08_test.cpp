// gemv-08: y = A x + b on kx x ky PEs against the xtensor reference, at sizes that divide
// evenly and sizes that do not, on wse2 and wse3.
#include "tests/e2e/gemv_tiles.hpp"

namespace wsemu::testing {
namespace {

class Gemv08 : public ::testing::TestWithParam<TiledGemvCase> {};

TEST_P(Gemv08, MatchesReference) { expect_tiled_gemv_matches("gemv-08-routes-3", GetParam(), 21); }

INSTANTIATE_TEST_SUITE_P(Shapes, Gemv08,
                         ::testing::Values(TiledGemvCase{6, 8, 4, 3, "wse2"},     // the SDK's example
                                           TiledGemvCase{32, 16, 4, 4, "wse2"},   // even blocks
                                           TiledGemvCase{13, 11, 3, 4, "wse2"},   // uneven both ways
                                           TiledGemvCase{9, 7, 5, 2, "wse3"},     // uneven, odd width
                                           TiledGemvCase{5, 20, 1, 3, "wse2"},    // one column
                                           TiledGemvCase{10, 9, 4, 1, "wse3"}),   // one row
                         tiled_gemv_name());

}  // namespace
}  // namespace wsemu::testing
