// gemv-08: y = A x + b on kx x ky PEs against the xtensor reference, at sizes that divide
// evenly and sizes that do not, on wse2 and wse3.
#include "tests/e2e/gemv_tiles.hpp"

namespace wsemu::testing {
namespace {

struct Case {
  size_t M, N, kx, ky;
  std::string arch;
};
std::ostream& operator<<(std::ostream& o, const Case& c) { return o << c.arch << " " << c.M << "x" << c.N << " on " << c.kx << "x" << c.ky; }

class Gemv08 : public ::testing::TestWithParam<Case> {};

TEST_P(Gemv08, MatchesReference) {
  const Case c = GetParam();
  const compiler::Executable exe =
      build_kernel("gemv-08-routes-3",
                   {{"M", int64_t(c.M)}, {"N", int64_t(c.N)}, {"kx", int64_t(c.kx)}, {"ky", int64_t(c.ky)}}, c.arch);
  expect_tiled_gemv_matches(exe, c.M, c.N, c.kx, c.ky, 21);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Gemv08,
                         ::testing::Values(Case{6, 8, 4, 3, "wse2"},     // the SDK's example
                                           Case{32, 16, 4, 4, "wse2"},   // even blocks
                                           Case{13, 11, 3, 4, "wse2"},   // uneven both ways
                                           Case{9, 7, 5, 2, "wse3"},     // uneven, odd width
                                           Case{5, 20, 1, 3, "wse2"},    // one column
                                           Case{10, 9, 4, 1, "wse3"}),   // one row
                         named_by(&Case::arch, "_", &Case::M, "x", &Case::N, "_on_", &Case::kx, "x",
                                  &Case::ky));

}  // namespace
}  // namespace wsemu::testing
