// gemv-05: every PE of a row computes its own y = A x + b; each is checked against the xtensor
// reference for its own inputs (the SDK tiles one problem; distinct problems catch mix-ups).
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

void run_row(size_t M, size_t N, size_t width, runtime::host::MemcpyOrder order) {
  const xt::xarray<float> A = random_array({width, M, N}, 51), x = random_array({width, N}, 52),
                          b = random_array({width, M}, 53);
  // COL_MAJOR: element e of PE p sits at p + width * e (h = 1).
  auto host_order = [&](const xt::xarray<float>& a, size_t elems) {
    if (order == runtime::host::MemcpyOrder::ROW_MAJOR) return words(a);
    std::vector<uint32_t> w(width * elems);
    for (size_t p = 0; p < width; ++p)
      for (size_t e = 0; e < elems; ++e) w[p + width * e] = std::bit_cast<uint32_t>(a.flat(p * elems + e));
    return w;
  };
  runtime::host::MemcpyOptions o;
  o.order = order;
  LoadedRuntime rt(build_kernel("gemv-05-multiple-pes",
                                {{"M", int64_t(M)}, {"N", int64_t(N)}, {"pes", int64_t(width)}}));
  rt.memcpy_h2d("A", host_order(A, M * N), 0, 0, int(width), 1, int(M * N), o);
  rt.memcpy_h2d("x", host_order(x, N), 0, 0, int(width), 1, int(N), o);
  rt.memcpy_h2d("b", host_order(b, M), 0, 0, int(width), 1, int(M), o);
  launch_and_settle(rt, "compute");
  std::vector<uint32_t> y = read_back(rt, "y", 0, 0, int(width), 1, int(M), o);
  for (size_t p = 0; p < width; ++p) {
    xt::xarray<float> yp = xt::zeros<float>({M});
    for (size_t i = 0; i < M; ++i)
      yp(i) = std::bit_cast<float>(order == runtime::host::MemcpyOrder::ROW_MAJOR ? y[p * M + i] : y[p + width * i]);
    const xt::xarray<float> Ap = xt::view(A, p), xp = xt::view(x, p), bp = xt::view(b, p);
    expect_close(yp, gemv_reference(Ap, xp, bp), 1e-5, 1e-5, "y of PE " + std::to_string(p));
  }
}

TEST(Gemv05, FourPesRowMajor) { run_row(4, 6, 4, runtime::host::MemcpyOrder::ROW_MAJOR); }
TEST(Gemv05, ThreePesColumnMajor) { run_row(7, 5, 3, runtime::host::MemcpyOrder::COL_MAJOR); }

}  // namespace
}  // namespace wsemu::testing
