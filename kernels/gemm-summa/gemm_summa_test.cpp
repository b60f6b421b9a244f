// gemm-summa: C = A B by SUMMA on a P x P grid, against the product computed here in xtensor
// (double precision) from the same seeded random A and B, allclose with the SDK's tolerances
// (rtol 1e-5, atol 1e-6). Tiles are cut from the global matrices on the host (column-major per
// PE, as the kernel stores them) and C is reassembled from the PEs' tiles. Prints the cycles
// (memcpy / launch until the wafer settles) for the catalogue.
#include <cstdlib>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

struct Shape {
  int p, mt, kt, nt;
  std::string arch;
};

// The per-PE tiles of a (P*rows) x (P*cols) matrix: [P][P][rows*cols], tile (y, x) column-major.
xt::xarray<float> to_tiles(const xt::xarray<float>& m, int p, int rows, int cols) {
  xt::xarray<float> t = xt::zeros<float>({size_t(p), size_t(p), size_t(rows * cols)});
  for (int y = 0; y < p; ++y)
    for (int x = 0; x < p; ++x)
      for (int c = 0; c < cols; ++c)
        for (int r = 0; r < rows; ++r) t(y, x, c * rows + r) = m(y * rows + r, x * cols + c);
  return t;
}

xt::xarray<float> from_tiles(const xt::xarray<float>& t, int p, int rows, int cols) {
  xt::xarray<float> m = xt::zeros<float>({size_t(p * rows), size_t(p * cols)});
  for (int y = 0; y < p; ++y)
    for (int x = 0; x < p; ++x)
      for (int c = 0; c < cols; ++c)
        for (int r = 0; r < rows; ++r) m(y * rows + r, x * cols + c) = t(y, x, c * rows + r);
  return m;
}

// A @ B in double precision.
xt::xarray<double> matmul(const xt::xarray<float>& a, const xt::xarray<float>& b) {
  const xt::xarray<double> ad = xt::cast<double>(a), bd = xt::cast<double>(b);
  return xt::sum(xt::view(ad, xt::all(), xt::all(), xt::newaxis()) * xt::view(bd, xt::newaxis(), xt::all(), xt::all()),
                 {1});
}

void run_case(const Shape& s, bool backdoor, double atol = 1e-6) {
  const size_t m = size_t(s.p * s.mt), k = size_t(s.p * s.kt), n = size_t(s.p * s.nt);
  const xt::xarray<float> a = random_array({m, k}, uint32_t(3000 + s.p * 100 + s.mt * 10 + s.kt));
  const xt::xarray<float> b = random_array({k, n}, uint32_t(4000 + s.p * 100 + s.kt * 10 + s.nt));
  runtime::host::RuntimeOptions options;
  options.backdoor = backdoor;
  LoadedRuntime rt(
      build_kernel("gemm-summa", {{"P", s.p}, {"Mt", s.mt}, {"Kt", s.kt}, {"Nt", s.nt}}, s.arch),
      options);
  rt.memcpy_h2d("A", words(to_tiles(a, s.p, s.mt, s.kt)), 0, 0, s.p, s.p, s.mt * s.kt);
  rt.memcpy_h2d("B", words(to_tiles(b, s.p, s.kt, s.nt)), 0, 0, s.p, s.p, s.kt * s.nt);
  const uint64_t compute = settle_cycles(rt, "main");
  std::vector<uint32_t> out = read_back(rt, "C", 0, 0, s.p, s.p, s.mt * s.nt);
  const xt::xarray<float> c =
      from_tiles(floats(out, {size_t(s.p), size_t(s.p), size_t(s.mt * s.nt)}), s.p, s.mt, s.nt);
  const std::string what = "C of P=" + std::to_string(s.p) + " Mt=" + std::to_string(s.mt) +
                           " Kt=" + std::to_string(s.kt) + " Nt=" + std::to_string(s.nt) + " (" + s.arch + ")";
  expect_close(c, matmul(a, b), atol, 1e-5, what);
  std::printf("gemm-summa %s: %llu cycles (memcpy %llu / compute %llu) = %.3f us at %.0f MHz\n", what.c_str(),
              (unsigned long long)rt.cycles(), (unsigned long long)rt.stats().memcpy_cycles,
              (unsigned long long)compute, double(rt.cycles()) / rt.clock_mhz(), rt.clock_mhz());
}

class GemmSumma : public ::testing::TestWithParam<Shape> {};

TEST_P(GemmSumma, MatchesTheProduct) { run_case(GetParam(), false); }

INSTANTIATE_TEST_SUITE_P(Shapes, GemmSumma,
                         ::testing::Values(Shape{2, 3, 4, 5, "wse2"}, Shape{3, 4, 3, 2, "wse2"},
                                           Shape{4, 6, 5, 3, "wse2"}, Shape{4, 3, 3, 3, "wse3"},
                                           Shape{1, 3, 2, 4, "wse2"}, Shape{4, 14, 14, 14, "wse2"}),
                         named_by(&Shape::arch, "_P", &Shape::p, "_", &Shape::mt, "x", &Shape::kt, "x",
                                  &Shape::nt));

// A larger case on request (WSEMU_KERNEL_LARGE=1): 8 x 8 PEs with 32 x 32 tiles (256 x 256).
TEST(GemmSummaLarge, EightByEightOf32) {
  if (!std::getenv("WSEMU_KERNEL_LARGE")) GTEST_SKIP() << "set WSEMU_KERNEL_LARGE=1 to run";
  // The back door: the copies are not what is measured. K = 256 fp32 products per element: the
  // SDK's atol 1e-6 is for K = 56; rounding grows with K (worst case K * 2^-24 * sum |a b|,
  // about 1e-3 here; typically sqrt(K) times less), so elements near 0 need a wider atol.
  run_case(Shape{8, 32, 32, 32, "wse2"}, true, 1e-4);
}

}  // namespace
}  // namespace wsemu::testing
