// 7pt-stencil-spmv: y = A x for the 7-point stencil matrix with per-point coefficients on a
// kx x ky x Z grid (one z column per PE), against a reference that indexes the whole 3-D grid
// directly (zero outside), in double precision (stencil7_reference.hpp, shared with the solvers).
#include "kernels/7pt-stencil-spmv/stencil7_reference.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

struct Case {
  int kx, ky, z;
  std::string arch;
};

// Readable (and stable) CTest names.
void PrintTo(const Case& c, std::ostream* os) { *os << c.arch << " " << c.kx << "x" << c.ky << "x" << c.z; }

class Spmv7pt : public ::testing::TestWithParam<Case> {};

TEST_P(Spmv7pt, MatchesGridReference) {
  const Case c = GetParam();
  const compiler::Executable exe = build_kernel("7pt-stencil-spmv", {{"kx", c.kx}, {"ky", c.ky}, {"Z", c.z}}, c.arch);
  const size_t kx = size_t(c.kx), ky = size_t(c.ky), z = size_t(c.z);
  const xt::xarray<float> x = random_array({ky, kx, z}, 501);
  const xt::xarray<float> coeff = random_array({ky, kx, 7, z}, 502);
  runtime::host::SdkRuntime rt(exe);
  rt.load();
  rt.memcpy_h2d("x", words(x), 0, 0, c.kx, c.ky, c.z);
  rt.memcpy_h2d("coeff", words(coeff), 0, 0, c.kx, c.ky, 7 * c.z);
  rt.launch("compute");
  rt.run_until_quiescent();
  std::vector<uint32_t> y(kx * ky * z), t(kx * ky * 4);
  rt.memcpy_d2h(y, "y", 0, 0, c.kx, c.ky, c.z);
  rt.memcpy_d2h(t, "maxmin_time", 0, 0, c.kx, c.ky, 4);
  expect_close(floats(y, {ky, kx, z}), stencil7::apply(coeff, xt::cast<double>(x)), 1e-5, 1e-5, "y");
  uint32_t lo = ~0u, hi = 0;
  for (size_t p = 0; p < kx * ky; ++p) {
    // At least the seven passes over the column at one element per cycle.
    EXPECT_GE(t[p * 4 + 2] - t[p * 4], uint32_t(7 * c.z - 2)) << "PE " << p;
    lo = std::min(lo, t[p * 4 + 2] - t[p * 4]);
    hi = std::max(hi, t[p * 4 + 2] - t[p * 4]);
  }
  std::printf("spmv7 %dx%dx%d (%s): %u..%u cycles per PE\n", c.kx, c.ky, c.z, c.arch.c_str(), lo, hi);
}

INSTANTIATE_TEST_SUITE_P(Grids, Spmv7pt,
                         ::testing::Values(Case{5, 5, 5, "wse2"}, Case{1, 1, 1, "wse2"}, Case{1, 1, 6, "wse2"},
                                           Case{3, 2, 7, "wse3"}, Case{4, 4, 32, "wse2"}, Case{2, 5, 3, "wse3"},
                                           Case{7, 4, 9, "wse2"}, Case{4, 7, 5, "wse3"}),
                         [](const auto& info) {
                           const Case& c = info.param;
                           return c.arch + "_" + std::to_string(c.kx) + "x" + std::to_string(c.ky) + "x" +
                                  std::to_string(c.z);
                         });

}  // namespace
}  // namespace wsemu::testing
