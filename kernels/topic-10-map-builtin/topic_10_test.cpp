// topic-10: d = sqrt(diag(A)), y = d * x and total = sum(y) against the same fp32 operations
// done on the host (sqrtf, one multiply, a left-to-right sum), which must agree exactly, and
// against double precision within tolerance.
#include <cmath>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

class Topic10 : public ::testing::TestWithParam<int> {};

TEST_P(Topic10, MapsMatchReference) {
  const int n = GetParam();
  const xt::xarray<float> A = xt::abs(random_array({size_t(n), size_t(n)}, uint32_t(1000 + n)));
  const xt::xarray<float> x = random_array({size_t(n)}, uint32_t(1100 + n));
  LoadedRuntime rt(build_kernel("topic-10-map-builtin", {{"N", n}}));
  rt.memcpy_h2d("A", words(A), 1, 0, 1, 1, n * n);
  rt.memcpy_h2d("x", words(x), 0, 0, 1, 1, n);
  rt.launch("compute");
  std::vector<uint32_t> d = read_back(rt, "d", 1, 0, 1, 1, n);
  std::vector<uint32_t> y = read_back(rt, "y", 1, 0, 1, 1, n);
  std::vector<uint32_t> total = read_back(rt, "total", 1, 0, 1, 1, 1);
  float sum = 0;
  double exact = 0;
  for (int i = 0; i < n; ++i) {
    const float di = std::sqrt(A(i, i)), yi = di * x(i);
    EXPECT_EQ(std::bit_cast<float>(d[size_t(i)]), di) << "d[" << i << "]";
    EXPECT_EQ(std::bit_cast<float>(y[size_t(i)]), yi) << "y[" << i << "]";
    sum += yi;
    exact += std::sqrt(double(A(i, i))) * double(x(i));
  }
  EXPECT_EQ(std::bit_cast<float>(total[0]), sum);
  EXPECT_NEAR(std::bit_cast<float>(total[0]), exact, 1e-5 * n);
  std::printf("topic-10 N=%d: %llu cycles (launch %llu)\n", n, (unsigned long long)rt.cycles(),
              (unsigned long long)rt.stats().launch_cycles);
}

INSTANTIATE_TEST_SUITE_P(Sizes, Topic10, ::testing::Values(5, 1, 17));

}  // namespace
}  // namespace wsemu::testing
