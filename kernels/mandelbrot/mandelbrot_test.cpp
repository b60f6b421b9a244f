// mandelbrot: escape counts of every pixel against a host loop that repeats the kernel's fp32
// operations in the same order (so the counts must be equal, as the SDK's assert_equal
// demands): the SDK's 16 x 16 image on 4 x 4 PEs with 32 iterations, and other shapes.
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

struct Case {
  int kx, ky, w, h, max_iter;
  std::string arch;
};

// Readable (and stable) CTest names.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.arch << " " << c.w << "x" << c.h << " on " << c.kx << "x" << c.ky << ", " << c.max_iter << " iterations";
}

// The region [-2, 1] x [-1.5, 1.5] sampled at w x h points.
std::vector<float> region(const Case& c) { return {-2.0f, -1.5f, 3.0f / float(c.w), 3.0f / float(c.h)}; }

uint32_t escape_count(float cr, float ci, int max_iter) {
  float zr = 0.0f, zi = 0.0f;
  int n = 0;
  while (n < max_iter) {
    const float a = zr * zr, b = zi * zi;
    if (a + b > 4.0f) break;
    const float t = (a - b) + cr;
    zi = (zr + zr) * zi + ci;
    zr = t;
    ++n;
  }
  return uint32_t(n);
}

class Mandelbrot : public ::testing::TestWithParam<Case> {};

TEST_P(Mandelbrot, CountsEqualTheHostLoop) {
  const Case c = GetParam();
  const std::vector<float> r = region(c);
  std::vector<uint32_t> reg;
  for (int p = 0; p < c.kx * c.ky; ++p)
    for (float v : r) reg.push_back(std::bit_cast<uint32_t>(v));
  LoadedRuntime rt(build_kernel(
      "mandelbrot",
      {{"kx", c.kx}, {"ky", c.ky}, {"W_IMG", c.w}, {"H_IMG", c.h}, {"MAX_ITER", c.max_iter}},
      c.arch));
  rt.memcpy_h2d("region", reg, 0, 0, c.kx, c.ky, 4);
  launch_and_settle(rt, "compute");
  const int rb = c.h / c.ky, per_pe = rb * c.w;
  std::vector<uint32_t> counts = read_back(rt, "counts", c.kx - 1, 0, 1, c.ky, per_pe);  // the east column holds them
  size_t bad = 0, inside = 0;
  for (int row = 0; row < c.h; ++row)
    for (int j = 0; j < c.w; ++j) {
      const float cr = r[0] + float(j) * r[2], ci = r[1] + float(row) * r[3];
      const uint32_t want = escape_count(cr, ci, c.max_iter);
      inside += want == uint32_t(c.max_iter);
      if (counts[size_t(row * c.w + j)] != want && ++bad <= 5)
        ADD_FAILURE() << "pixel (" << row << ", " << j << "): got " << counts[size_t(row * c.w + j)] << ", expected "
                      << want;
    }
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(inside, 0u);  // the image reaches into the set
}

INSTANTIATE_TEST_SUITE_P(Images, Mandelbrot,
                         ::testing::Values(Case{4, 4, 16, 16, 32, "wse2"}, Case{1, 1, 8, 8, 10, "wse2"},
                                           Case{3, 2, 10, 6, 30, "wse2"}, Case{2, 4, 12, 8, 16, "wse3"}),
                         named_by(&Case::arch, "_", &Case::kx, "x", &Case::ky, "_pes_", &Case::w, "x",
                                  &Case::h, "_iter", &Case::max_iter));

}  // namespace
}  // namespace wsemu::testing
