// residual: nrm = ||b - A x||_inf on several grids, against r = b - A x computed here in xtensor
// (double precision) from the same seeded random A, x and b: the residual vector r held by the
// east column within fp32 tolerance, and nrm at PE (PW-1, 0) against max |r_i| of the
// reference. Prints the cycles (memcpy / launch until the wafer settles) for the catalogue.
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

struct Grid {
  int pw, ph, mt, nt;
  std::string arch;
};

class Residual : public ::testing::TestWithParam<Grid> {};

TEST_P(Residual, InfNormOfTheResidual) {
  const Grid g = GetParam();
  const size_t m = size_t(g.ph * g.mt), n = size_t(g.pw * g.nt);
  const uint32_t seed = uint32_t(5000 + 97 * g.pw + 13 * g.ph + g.mt);
  const xt::xarray<float> a = random_array({m, n}, seed);
  const xt::xarray<float> x = random_array({n}, seed + 1);
  const xt::xarray<float> b = random_array({m}, seed + 2);

  // Per-PE pieces: A tiles [PH][PW][MT*NT] column-major, x on the north row [1][PW][NT],
  // b on the east column [PH][1][MT].
  xt::xarray<float> a_tiles = xt::zeros<float>({size_t(g.ph), size_t(g.pw), size_t(g.mt * g.nt)});
  for (int py = 0; py < g.ph; ++py)
    for (int px = 0; px < g.pw; ++px)
      for (int j = 0; j < g.nt; ++j)
        for (int i = 0; i < g.mt; ++i) a_tiles(py, px, j * g.mt + i) = a(py * g.mt + i, px * g.nt + j);
  LoadedRuntime rt(
      build_kernel("residual", {{"PW", g.pw}, {"PH", g.ph}, {"MT", g.mt}, {"NT", g.nt}}, g.arch));
  rt.memcpy_h2d("A", words(a_tiles), 0, 0, g.pw, g.ph, g.mt * g.nt);
  rt.memcpy_h2d("x", words(x), 0, 0, g.pw, 1, g.nt);
  rt.memcpy_h2d("b", words(b), g.pw - 1, 0, 1, g.ph, g.mt);
  const uint64_t compute = settle_cycles(rt, "main");
  std::vector<uint32_t> r_words = read_back(rt, "r", g.pw - 1, 0, 1, g.ph, g.mt);
  std::vector<uint32_t> nrm_word = read_back(rt, "nrm", g.pw - 1, 0, 1, 1, 1);

  const xt::xarray<double> want_r = xt::cast<double>(b) - gemv_reference(a, x, xt::zeros<float>({m}));
  const double want_nrm = xt::amax(xt::abs(want_r))();
  const std::string what = std::to_string(g.pw) + "x" + std::to_string(g.ph) + " MT=" + std::to_string(g.mt) +
                           " NT=" + std::to_string(g.nt) + " (" + g.arch + ")";
  expect_close(floats(r_words, {m}), want_r, 1e-5, 1e-5, "r on " + what);
  expect_close(floats(nrm_word, {1}), xt::xarray<double>({want_nrm}), 1e-5, 1e-5, "nrm on " + what);
  std::printf("residual %s: nrm %.6f (reference %.6f); %llu cycles (memcpy %llu / compute %llu)\n", what.c_str(),
              double(floats(nrm_word, {1})(0)), want_nrm, (unsigned long long)rt.cycles(),
              (unsigned long long)rt.stats().memcpy_cycles, (unsigned long long)compute);
}

INSTANTIATE_TEST_SUITE_P(Grids, Residual,
                         ::testing::Values(Grid{2, 2, 3, 2, "wse2"}, Grid{3, 2, 4, 5, "wse2"}, Grid{4, 3, 2, 3, "wse2"},
                                           Grid{2, 4, 5, 1, "wse2"}, Grid{1, 1, 3, 3, "wse2"}, Grid{3, 3, 4, 4, "wse3"}),
                         named_by(&Grid::arch, "_", &Grid::pw, "x", &Grid::ph, "_", &Grid::mt, "x",
                                  &Grid::nt));

}  // namespace
}  // namespace wsemu::testing
