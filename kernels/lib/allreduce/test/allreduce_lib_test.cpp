// The allreduce module (kernels/lib/allreduce): sum, max and nrm2 on grids of several shapes
// (a single PE, a single row, a single column, odd and even sides), wse2 and wse3, against the
// xtensor reduction over the grid (double precision); the sum is run twice in a row to check
// that the module leaves its queues ready for the next call. Prints the cycles of one timed
// allreduce (TSC stamps after a first allreduce has aligned the PEs, max(end) - min(start)).
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

struct Grid {
  int pw, ph, n;
  std::string arch;
};

class AllreduceLib : public ::testing::TestWithParam<Grid> {};

xt::xarray<double> everywhere(const xt::xarray<double>& v, size_t ph, size_t pw) {
  xt::xarray<double> want = xt::zeros<double>({ph, pw, v.size()});
  for (size_t y = 0; y < ph; ++y)
    for (size_t x = 0; x < pw; ++x) xt::view(want, y, x, xt::all()) = v;
  return want;
}

// Cycles of the timed allreduce: max(end) - min(start) over the PEs.
uint64_t timed(runtime::host::SdkRuntime& rt, const Grid& g) {
  launch_and_settle(rt, "timed_sum");
  std::vector<uint32_t> t = read_back(rt, "t", 0, 0, g.pw, g.ph, 4);
  uint64_t lo = ~0ull, hi = 0;
  for (size_t p = 0; p < size_t(g.pw * g.ph); ++p) {
    lo = std::min(lo, uint64_t(t[p * 4]) | uint64_t(t[p * 4 + 1]) << 32);
    hi = std::max(hi, uint64_t(t[p * 4 + 2]) | uint64_t(t[p * 4 + 3]) << 32);
  }
  return hi - lo;
}

TEST_P(AllreduceLib, SumMaxNrm2MatchTheGridReduction) {
  const Grid g = GetParam();
  const size_t pw = size_t(g.pw), ph = size_t(g.ph), n = size_t(g.n);
  LoadedRuntime rt(build_kernel("lib/allreduce/test", {{"PW", g.pw}, {"PH", g.ph}, {"N", g.n}}, g.arch));
  const std::string where = g.arch + " " + std::to_string(g.pw) + "x" + std::to_string(g.ph);
  std::vector<uint32_t> out(pw * ph * n);
  for (uint32_t seed : {3001u, 3002u}) {  // twice: the second call finds the queues as it left them
    const xt::xarray<float> v = random_array({ph, pw, n}, seed);
    rt.memcpy_h2d("buf", words(v), 0, 0, g.pw, g.ph, g.n);
    launch_and_settle(rt, "sum");
    out = read_back(rt, "buf", 0, 0, g.pw, g.ph, g.n);
    expect_close(floats(out, {ph, pw, n}), everywhere(xt::sum(xt::cast<double>(v), {0, 1}), ph, pw), 1e-5, 1e-5,
                 "sum on " + where);
  }
  {
    const xt::xarray<float> v = random_array({ph, pw, n}, 3003);
    rt.memcpy_h2d("buf", words(v), 0, 0, g.pw, g.ph, g.n);
    launch_and_settle(rt, "max");
    out = read_back(rt, "buf", 0, 0, g.pw, g.ph, g.n);
    expect_close(floats(out, {ph, pw, n}), everywhere(xt::amax(xt::cast<double>(v), {0, 1}), ph, pw), 0, 0,
                 "max on " + where);
  }
  {
    // Local norms of either sign and of very different sizes (the scaling by max |x| keeps the
    // squares in range).
    xt::xarray<float> v = random_array({ph, pw, n}, 3004);
    double sq = 0;
    for (size_t y = 0; y < ph; ++y)
      for (size_t x = 0; x < pw; ++x) {
        v(y, x, 0) *= float(std::pow(10.0, double((x + 2 * y) % 5) - 2));
        sq += double(v(y, x, 0)) * double(v(y, x, 0));
      }
    rt.memcpy_h2d("buf", words(v), 0, 0, g.pw, g.ph, g.n);
    launch_and_settle(rt, "nrm2");
    out = read_back(rt, "buf", 0, 0, g.pw, g.ph, g.n);
    const xt::xarray<float> got = xt::view(floats(out, {ph, pw, n}), xt::all(), xt::all(), 0);
    expect_close(got, xt::xarray<double>(xt::ones<double>({ph, pw}) * std::sqrt(sq)), 0, 1e-5, "nrm2 on " + where);
  }
  const uint64_t cycles = timed(rt, g);
  std::printf("allreduce %dx%d n=%d (%s): %llu cycles = %.3f us at %.0f MHz (TSC, after a sync)\n", g.pw, g.ph, g.n,
              g.arch.c_str(), (unsigned long long)cycles, double(cycles) / rt.clock_mhz(), rt.clock_mhz());
  EXPECT_GE(cycles, uint64_t(g.pw + g.ph - 2)) << "at least one cycle per hop to the south-east PE and back";
}

INSTANTIATE_TEST_SUITE_P(Grids, AllreduceLib,
                         ::testing::Values(Grid{4, 3, 3, "wse2"}, Grid{1, 1, 2, "wse2"}, Grid{1, 5, 4, "wse2"},
                                           Grid{6, 1, 1, "wse2"}, Grid{5, 4, 1, "wse2"}, Grid{3, 4, 5, "wse3"},
                                           Grid{2, 1, 3, "wse3"}, Grid{1, 2, 1, "wse3"}),
                         named_by(&Grid::arch, "_", &Grid::pw, "x", &Grid::ph, "_n", &Grid::n));

// Timing on request (WSEMU_KERNEL_LARGE=1): one scalar allreduce on square grids up to 64 x 64,
// the figures of the calibration table (kernels/lib/allreduce/README.md).
TEST(AllreduceLibLarge, ScalarAllreduceCycles) {
  if (!std::getenv("WSEMU_KERNEL_LARGE")) GTEST_SKIP() << "set WSEMU_KERNEL_LARGE=1 to run";
  for (int p : {8, 16, 32, 64}) {
    for (int n : {1, 64}) {
      const Grid g{p, p, n, "wse2"};
      runtime::host::RuntimeOptions options;
      options.backdoor = true;
      LoadedRuntime rt(build_kernel("lib/allreduce/test", {{"PW", p}, {"PH", p}, {"N", n}}), options);
      const xt::xarray<float> v = random_array({size_t(p), size_t(p), size_t(n)}, 3010);
      rt.memcpy_h2d("buf", words(v), 0, 0, p, p, n);
      const uint64_t cycles = timed(rt, g);
      std::vector<uint32_t> out = read_back(rt, "buf", 0, 0, p, p, n);
      expect_close(floats(out, {size_t(p), size_t(p), size_t(n)}),
                   everywhere(xt::sum(xt::cast<double>(v), {0, 1}), size_t(p), size_t(p)), 1e-4, 1e-4, "sum");
      std::printf("allreduce %dx%d n=%d: %llu cycles = %.3f us\n", p, p, n, (unsigned long long)cycles,
                  double(cycles) / rt.clock_mhz());
    }
  }
}

}  // namespace
}  // namespace wsemu::testing
