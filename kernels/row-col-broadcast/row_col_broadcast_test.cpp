// row-col-broadcast: a row broadcast of R[PH][N] into `r` and a column broadcast of C[PW][N] into
// `c`, then `combine` (s = r + c on every PE); s of PE (x, y) must be R[y] + C[x], computed here
// in xtensor from the same seeded inputs, and every PE's r and c must be its row's / column's
// vector. Also: the row broadcast sends each row's data through the channel once, so it moves
// PW times fewer edge wavelets than the plain memcpy of the expanded data. Prints cycles and
// the effective bandwidth (bytes placed on the PEs per second at the profile's clock).
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

class RowColBroadcast : public ::testing::TestWithParam<PeGridCase> {};

TEST_P(RowColBroadcast, EveryPeGetsItsRowAndColumn) {
  const PeGridCase g = GetParam();
  const size_t pw = size_t(g.pw), ph = size_t(g.ph), n = size_t(g.n);
  const xt::xarray<float> rows = random_array({ph, n}, uint32_t(7000 + g.pw * 10 + g.ph));
  const xt::xarray<float> cols = random_array({pw, n}, uint32_t(8000 + g.pw * 10 + g.ph));
  runtime::host::RuntimeOptions options;
  options.channel.channels = g.channels;
  LoadedRuntime rt(
      build_kernel("row-col-broadcast", {{"PW", g.pw}, {"PH", g.ph}, {"N", g.n}}, g.arch), options);

  uint64_t start = rt.cycles();
  rt.memcpy_h2d_rowbcast("r", words(rows), 0, 0, g.pw, g.ph, g.n);
  const uint64_t row_cycles = rt.cycles() - start;
  const uint64_t row_wavelets = rt.stats().edge_wavelets_in;
  start = rt.cycles();
  rt.memcpy_h2d_colbcast("c", words(cols), 0, 0, g.pw, g.ph, g.n);
  const uint64_t col_cycles = rt.cycles() - start;
  launch_and_settle(rt, "combine");

  std::vector<uint32_t> r_out = read_back(rt, "r", 0, 0, g.pw, g.ph, g.n);
  std::vector<uint32_t> c_out = read_back(rt, "c", 0, 0, g.pw, g.ph, g.n);
  std::vector<uint32_t> s_out = read_back(rt, "s", 0, 0, g.pw, g.ph, g.n);
  xt::xarray<double> want_r = xt::zeros<double>({ph, pw, n}), want_c = want_r, want_s = want_r;
  for (size_t y = 0; y < ph; ++y)
    for (size_t x = 0; x < pw; ++x)
      for (size_t e = 0; e < n; ++e) {
        want_r(y, x, e) = rows(y, e);
        want_c(y, x, e) = cols(x, e);
        want_s(y, x, e) = double(float(rows(y, e) + cols(x, e)));  // one fp32 add
      }
  expect_close(floats(r_out, {ph, pw, n}), want_r, 0, 0, "r");
  expect_close(floats(c_out, {ph, pw, n}), want_c, 0, 0, "c");
  expect_close(floats(s_out, {ph, pw, n}), want_s, 0, 0, "s");

  // One copy of each row's data (plus one 3-wavelet command) crossed the channel.
  EXPECT_EQ(row_wavelets, ph * (3 + n));
  const double mhz = rt.clock_mhz();
  const double bytes = double(ph * pw * n * 4);
  std::printf("row-col-broadcast %dx%d N=%d, %d channel(s) (%s): rowbcast %llu cycles (%.0f MB/s placed), "
              "colbcast %llu cycles (%.0f MB/s placed)\n",
              g.pw, g.ph, g.n, g.channels, g.arch.c_str(), (unsigned long long)row_cycles,
              bytes / (double(row_cycles) / mhz), (unsigned long long)col_cycles,
              bytes / (double(col_cycles) / mhz));
}

INSTANTIATE_TEST_SUITE_P(Grids, RowColBroadcast,
                         ::testing::Values(PeGridCase{4, 3, 16, "wse2"},
                                           PeGridCase{5, 5, 8, "wse2", 2},
                                           PeGridCase{1, 1, 4, "wse2"},
                                           PeGridCase{3, 2, 32, "wse3"},
                                           PeGridCase{6, 1, 64, "wse2"}),
                         named_by(&PeGridCase::arch, "_", &PeGridCase::pw, "x", &PeGridCase::ph,
                                  "_n", &PeGridCase::n, "_ch", &PeGridCase::channels));

}  // namespace
}  // namespace wsemu::testing
