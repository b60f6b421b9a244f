// gemv-01 (one PE): y = A x + b at several sizes, on wse2 and wse3, against the xtensor
// reference; also with the back door, which must give the same y in fewer cycles. The launch
// phase is held to the cycles of the timing model (code_cycles below).
#include <cstdio>

#include "emulator/arch_profile.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::SdkRuntime;

struct Case {
  int M, N;
  std::string arch;
};
std::ostream& operator<<(std::ostream& o, const Case& c) { return o << c.arch << " " << c.M << "x" << c.N; }

// The cycles of compute's code from the timing model (emulator/README.md) and gemv.wsa:
// fmovs y, b (startup + ceil(M / fmovs width)); dsdcopy, li, li (3); per column ld32, fmacs
// (startup + ceil(M / fmacs width)), dsdinc, addi, bne; ret (1).
uint64_t code_cycles(int M, int N, const std::string& arch) {
  const emu::ArchProfile& p = emu::arch_profile(arch);
  auto vector = [&](isa::Timing t, int n) {
    return uint64_t(p.vector_startup_cycles) + uint64_t((n + p.simd_width(t) - 1) / p.simd_width(t));
  };
  return vector(isa::Timing::V_FMOVS, M) + 3 + uint64_t(N) * (4 + vector(isa::Timing::V_FMACS, M)) + 1;
}

// The launch phase with the back door (launch until the wafer settles; no copy before it leaves
// firmware work behind): the firmware's launch path, the same for every size, plus the code.
uint64_t backdoor_launch_cycles(const compiler::Executable& exe, int M, int N) {
  runtime::host::RuntimeOptions o;
  o.backdoor = true;
  LoadedRuntime rt(exe, o);
  rt.memcpy_h2d("A", std::vector<uint32_t>(size_t(M * N), 0), 0, 0, 1, 1, M * N);
  rt.memcpy_h2d("x", std::vector<uint32_t>(size_t(N), 0), 0, 0, 1, 1, N);
  rt.memcpy_h2d("b", std::vector<uint32_t>(size_t(M), 0), 0, 0, 1, 1, M);
  launch_and_settle(rt, "compute");
  return rt.stats().launch_cycles;
}

xt::xarray<float> run_gemv(const compiler::Executable& exe, const xt::xarray<float>& A, const xt::xarray<float>& x,
                           const xt::xarray<float>& b, bool backdoor, uint64_t* cycles, uint64_t* launch = nullptr) {
  runtime::host::RuntimeOptions o;
  o.backdoor = backdoor;
  LoadedRuntime rt(exe, o);
  const int M = int(b.size()), N = int(x.size());
  rt.memcpy_h2d("A", words(A), 0, 0, 1, 1, M * N);
  rt.memcpy_h2d("x", words(x), 0, 0, 1, 1, N);
  rt.memcpy_h2d("b", words(b), 0, 0, 1, 1, M);
  launch_and_settle(rt, "compute");
  std::vector<uint32_t> y = read_back(rt, "y", 0, 0, 1, 1, M);
  if (cycles) *cycles = rt.cycles();
  if (launch) *launch = rt.stats().launch_cycles;
  return floats(y, {size_t(M)});
}

class Gemv01 : public ::testing::TestWithParam<Case> {};

TEST_P(Gemv01, MatchesReference) {
  const Case c = GetParam();
  const compiler::Executable exe = build_kernel("gemv-01-single-pe", {{"M", c.M}, {"N", c.N}}, c.arch);
  const xt::xarray<float> A = random_array({size_t(c.M), size_t(c.N)}, 1);
  const xt::xarray<float> x = random_array({size_t(c.N)}, 2);
  const xt::xarray<float> b = random_array({size_t(c.M)}, 3);
  uint64_t cycles = 0, launch = 0;
  const xt::xarray<float> y = run_gemv(exe, A, x, b, false, &cycles, &launch);
  expect_close(y, gemv_reference(A, x, b), 1e-5, 1e-5, "y");
  // Every element crosses the host channel at 7 Gbps (0.257 wavelets per cycle).
  EXPECT_GT(cycles, uint64_t(double(c.M * c.N + c.M + c.N) / 0.26));
  // The cycle window: launched with the back door, this size takes exactly the model's code
  // cycles more than a 1 x 1 problem (the launch path is the same), and at least the code plus
  // the launch's last hop (its control wavelet to itself: 1 + ramp up, ramp down, the pick).
  const emu::ArchProfile& p = emu::arch_profile(c.arch);
  const uint64_t code = code_cycles(c.M, c.N, c.arch);
  const uint64_t sized = backdoor_launch_cycles(exe, c.M, c.N);
  const uint64_t unit = backdoor_launch_cycles(build_kernel("gemv-01-single-pe", {{"M", 1}, {"N", 1}}, c.arch), 1, 1);
  EXPECT_EQ(sized - unit, code - code_cycles(1, 1, c.arch)) << c;
  EXPECT_GE(sized, code + 1 + uint64_t(p.ramp_up_latency + p.ramp_down_latency + p.task_start_cycles)) << c;
  EXPECT_GE(launch, sized) << c << ": the copies' firmware can only add to the launch phase";
  std::printf("gemv-01 %s %dx%d: code %llu cycles (model), launch phase %llu (back door %llu, 1x1 %llu)\n",
              c.arch.c_str(), c.M, c.N, static_cast<unsigned long long>(code), static_cast<unsigned long long>(launch),
              static_cast<unsigned long long>(sized), static_cast<unsigned long long>(unit));
}

INSTANTIATE_TEST_SUITE_P(Sizes, Gemv01,
                         ::testing::Values(Case{4, 6, "wse2"}, Case{17, 9, "wse2"}, Case{32, 16, "wse2"},
                                           Case{4, 6, "wse3"}, Case{13, 7, "wse3"}),
                         named_by(&Case::arch, "_", &Case::M, "x", &Case::N));

TEST(Gemv01Backdoor, SameResultWithoutMemcpyCycles) {
  const compiler::Executable exe = build_kernel("gemv-01-single-pe", {{"M", 8}, {"N", 5}});
  const xt::xarray<float> A = random_array({8, 5}, 11), x = random_array({5}, 12), b = random_array({8}, 13);
  uint64_t fabric = 0, backdoor = 0;
  const xt::xarray<float> y1 = run_gemv(exe, A, x, b, false, &fabric);
  const xt::xarray<float> y2 = run_gemv(exe, A, x, b, true, &backdoor);
  EXPECT_EQ(y1, y2);
  expect_close(y2, gemv_reference(A, x, b), 1e-5, 1e-5, "y");
  EXPECT_LT(backdoor * 3, fabric);
}

}  // namespace
}  // namespace wsemu::testing

namespace wsemu::testing {
namespace {

// fp16: the inputs are rounded to fp16 before both the kernel and the reference see them; the
// kernel rounds every multiply-add to fp16, so the tolerance is the SDK's (atol 0.01) scaled
// by the length of the dot products.
TEST(Gemv01Half, MatchesReferenceWithinHalfPrecision) {
  for (const std::string arch : {"wse2", "wse3"}) {
    const int M = 12, N = 10;
    const xt::xarray<float> A = to_half_precision(random_array({size_t(M), size_t(N)}, 71));
    const xt::xarray<float> x = to_half_precision(random_array({size_t(N)}, 72));
    const xt::xarray<float> b = to_half_precision(random_array({size_t(M)}, 73));
    LoadedRuntime rt(build_kernel("gemv-01-single-pe", {{"M", M}, {"N", N}}, arch, "layout_f16.wsl"));
    runtime::host::MemcpyOptions o;
    o.data_type = runtime::host::MemcpyDataType::MEMCPY_16BIT;
    rt.memcpy_h2d("A", half_words(A), 0, 0, 1, 1, M * N, o);
    rt.memcpy_h2d("x", half_words(x), 0, 0, 1, 1, N, o);
    rt.memcpy_h2d("b", half_words(b), 0, 0, 1, 1, M, o);
    rt.launch("compute");
    std::vector<uint32_t> y = read_back(rt, "y", 0, 0, 1, 1, M, o);
    expect_close(halves(y, {size_t(M)}), gemv_reference(A, x, b), 0.01, 0.0, "y (" + arch + ")");
  }
}

}  // namespace
}  // namespace wsemu::testing
