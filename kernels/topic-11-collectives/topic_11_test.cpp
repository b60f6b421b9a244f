// topic-11: the four collectives of `main` in sequence on grids of several shapes, against the
// host-side definition: x broadcast along rows, s scattered down columns and gathered along
// rows (a chunk transpose at the west column), the broadcast x summed down columns.
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

class Topic11 : public ::testing::TestWithParam<PeGridCase> {};

TEST_P(Topic11, BroadcastScatterGatherReduce) {
  const PeGridCase g = GetParam();
  const size_t pw = size_t(g.pw), ph = size_t(g.ph), c = size_t(g.n), len = c * std::max(pw, ph);
  const xt::xarray<float> x = random_array({ph, pw, c}, 1101), s = random_array({ph, pw, len}, 1102);
  LoadedRuntime rt(
      build_kernel("topic-11-collectives", {{"PW", g.pw}, {"PH", g.ph}, {"C", g.n}}, g.arch));
  rt.memcpy_h2d("x", words(x), 0, 0, g.pw, g.ph, g.n);
  rt.memcpy_h2d("s", words(s), 0, 0, g.pw, g.ph, int(len));
  const uint64_t main_cycles = settle_cycles(rt, "main");
  std::vector<uint32_t> x_out = read_back(rt, "x", 0, 0, g.pw, g.ph, g.n);
  std::vector<uint32_t> s_out = read_back(rt, "s", 0, 0, g.pw, g.ph, int(len));

  xt::xarray<double> x_want = xt::zeros<double>({ph, pw, c}), s_want = xt::cast<double>(s);
  for (size_t yy = 0; yy < ph; ++yy)
    for (size_t xx = 0; xx < pw; ++xx)
      for (size_t i = 0; i < c; ++i) {
        // 1. broadcast, then 4. the north PE of each column holds the column's sum.
        x_want(yy, xx, i) = x(yy, 0, i);
        if (yy == 0) {
          double sum = 0;
          for (size_t k = 0; k < ph; ++k) sum += x(k, 0, i);
          x_want(yy, xx, i) = sum;
        }
        // 2. scatter: chunk yy of the column's north PE (the north PE keeps its own).
        const double scattered = s(0, xx, yy * c + i);
        if (yy > 0) s_want(yy, xx, i) = scattered;
        // 3. gather at the west PE of the row: chunk xx = what PE (xx, yy) got in 2.
        if (xx > 0) s_want(yy, 0, xx * c + i) = scattered;
      }
  expect_close(floats(x_out, {ph, pw, c}), x_want, 1e-6, 1e-6, "x");
  expect_close(floats(s_out, {ph, pw, len}), s_want, 0, 0, "s");
  std::printf("topic-11 %dx%d chunk %d (%s): main %llu cycles\n", g.pw, g.ph, g.n, g.arch.c_str(),
              (unsigned long long)main_cycles);
}

INSTANTIATE_TEST_SUITE_P(Grids, Topic11,
                         ::testing::Values(PeGridCase{4, 4, 3, "wse2"}, PeGridCase{5, 3, 2, "wse2"},
                                           PeGridCase{3, 4, 3, "wse3"}),
                         named_by(&PeGridCase::arch, "_", &PeGridCase::pw, "x", &PeGridCase::ph));

}  // namespace
}  // namespace wsemu::testing
