// gemv-01 (one PE): y = A x + b at several sizes, on wse2 and wse3, against the xtensor
// reference; also with the back door, which must give the same y in fewer cycles.
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::SdkRuntime;

struct Case {
  int M, N;
  std::string arch;
};
std::ostream& operator<<(std::ostream& o, const Case& c) { return o << c.arch << " " << c.M << "x" << c.N; }

xt::xarray<float> run_gemv(const compiler::Executable& exe, const xt::xarray<float>& A, const xt::xarray<float>& x,
                           const xt::xarray<float>& b, bool backdoor, uint64_t* cycles) {
  runtime::host::RuntimeOptions o;
  o.backdoor = backdoor;
  SdkRuntime rt(exe, o);
  rt.load();
  const int M = int(b.size()), N = int(x.size());
  rt.memcpy_h2d("A", words(A), 0, 0, 1, 1, M * N);
  rt.memcpy_h2d("x", words(x), 0, 0, 1, 1, N);
  rt.memcpy_h2d("b", words(b), 0, 0, 1, 1, M);
  rt.launch("compute");
  rt.run_until_quiescent();
  std::vector<uint32_t> y(size_t(M), 0);
  rt.memcpy_d2h(y, "y", 0, 0, 1, 1, M);
  if (cycles) *cycles = rt.cycles();
  return floats(y, {size_t(M)});
}

class Gemv01 : public ::testing::TestWithParam<Case> {};

TEST_P(Gemv01, MatchesReference) {
  const Case c = GetParam();
  const compiler::Executable exe = build_kernel("gemv-01-single-pe", {{"M", c.M}, {"N", c.N}}, c.arch);
  const xt::xarray<float> A = random_array({size_t(c.M), size_t(c.N)}, 1);
  const xt::xarray<float> x = random_array({size_t(c.N)}, 2);
  const xt::xarray<float> b = random_array({size_t(c.M)}, 3);
  uint64_t cycles = 0;
  const xt::xarray<float> y = run_gemv(exe, A, x, b, false, &cycles);
  expect_close(y, gemv_reference(A, x, b), 1e-5, 1e-5, "y");
  // Every element crosses the host channel at 7 Gbps (0.257 wavelets per cycle).
  EXPECT_GT(cycles, uint64_t(double(c.M * c.N + c.M + c.N) / 0.26));
}

INSTANTIATE_TEST_SUITE_P(Sizes, Gemv01,
                         ::testing::Values(Case{4, 6, "wse2"}, Case{17, 9, "wse2"}, Case{32, 16, "wse2"},
                                           Case{4, 6, "wse3"}, Case{13, 7, "wse3"}),
                         [](const auto& info) {
                           return info.param.arch + "_" + std::to_string(info.param.M) + "x" +
                                  std::to_string(info.param.N);
                         });

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
    const compiler::Executable exe = build_kernel("gemv-01-single-pe", {{"M", M}, {"N", N}}, arch, "layout_f16.wsl");
    const xt::xarray<float> A = to_half_precision(random_array({size_t(M), size_t(N)}, 71));
    const xt::xarray<float> x = to_half_precision(random_array({size_t(N)}, 72));
    const xt::xarray<float> b = to_half_precision(random_array({size_t(M)}, 73));
    runtime::host::SdkRuntime rt(exe);
    rt.load();
    runtime::host::MemcpyOptions o;
    o.data_type = runtime::host::MemcpyDataType::MEMCPY_16BIT;
    rt.memcpy_h2d("A", half_words(A), 0, 0, 1, 1, M * N, o);
    rt.memcpy_h2d("x", half_words(x), 0, 0, 1, 1, N, o);
    rt.memcpy_h2d("b", half_words(b), 0, 0, 1, 1, M, o);
    rt.launch("compute");
    std::vector<uint32_t> y(static_cast<size_t>(M), 0u);
    rt.memcpy_d2h(y, "y", 0, 0, 1, 1, M, o);
    expect_close(halves(y, {size_t(M)}), gemv_reference(A, x, b), 0.01, 0.0, "y (" + arch + ")");
  }
}

}  // namespace
}  // namespace wsemu::testing
