// allreduce: after the launch every PE holds the sum over the grid of all PEs' vectors, against
// the xtensor sum (double precision, within fp32 tolerance), on several grid shapes; prints the
// cycles of the allreduce itself (the launch until quiescent) for the catalogue.
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

// Runs the allreduce on the grid of `g` from inputs of `seed` and checks that every PE holds the
// total within `tol` (absolute and relative); prints the cycles from the launch until quiescent.
void expect_every_pe_holds_the_total(const PeGridCase& g, uint32_t seed, double tol,
                                     runtime::host::RuntimeOptions options = {}) {
  const size_t pw = size_t(g.pw), ph = size_t(g.ph), n = size_t(g.n);
  const xt::xarray<float> v = random_array({ph, pw, n}, seed);
  LoadedRuntime rt(build_kernel("allreduce", {{"PW", g.pw}, {"PH", g.ph}, {"N", g.n}}, g.arch), std::move(options));
  rt.memcpy_h2d("v", words(v), 0, 0, g.pw, g.ph, g.n);
  const uint64_t cycles = settle_cycles(rt, "allreduce");
  std::vector<uint32_t> out = read_back(rt, "v", 0, 0, g.pw, g.ph, g.n);
  const xt::xarray<double> total = xt::sum(xt::cast<double>(v), {0, 1});
  xt::xarray<double> want = xt::zeros<double>({ph, pw, n});
  for (size_t y = 0; y < ph; ++y)
    for (size_t x = 0; x < pw; ++x) xt::view(want, y, x, xt::all()) = total;
  expect_close(floats(out, {ph, pw, n}), want, tol, tol, "v");
  std::printf("allreduce %dx%d N=%d (%s): %llu cycles = %.3f us at %.0f MHz (launch included)\n", g.pw, g.ph, g.n,
              g.arch.c_str(), (unsigned long long)cycles, double(cycles) / rt.clock_mhz(), rt.clock_mhz());
}

class Allreduce : public ::testing::TestWithParam<PeGridCase> {};

TEST_P(Allreduce, EveryPeHoldsTheTotal) { expect_every_pe_holds_the_total(GetParam(), 2001, 1e-5); }

INSTANTIATE_TEST_SUITE_P(Grids, Allreduce,
                         ::testing::Values(PeGridCase{4, 4, 16, "wse2"},
                                           PeGridCase{1, 1, 4, "wse2"}, PeGridCase{6, 2, 5, "wse2"},
                                           PeGridCase{2, 5, 8, "wse3"}),
                         named_by(&PeGridCase::arch, "_", &PeGridCase::pw, "x", &PeGridCase::ph,
                                  "_n", &PeGridCase::n));

// A larger grid on request (WSEMU_KERNEL_LARGE=1): 32 x 32 PEs, 256 values each, the copies by
// the backdoor (they are not what is measured), checked within 1e-4.
TEST(AllreduceLarge, ThirtyTwoByThirtyTwo) {
  if (!std::getenv("WSEMU_KERNEL_LARGE")) GTEST_SKIP() << "set WSEMU_KERNEL_LARGE=1 to run";
  runtime::host::RuntimeOptions options;
  options.backdoor = true;
  expect_every_pe_holds_the_total(PeGridCase{32, 32, 256, "wse2"}, 2002, 1e-4, options);
}

}  // namespace
}  // namespace wsemu::testing
