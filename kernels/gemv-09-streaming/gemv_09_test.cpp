// gemv-09: y = A x + b with x and b streamed in and y streamed out, against the xtensor
// reference; block sizes differ per PE when M or N do not divide, so the streams are sent one
// PE (x) or one row (b, y) at a time.
#include "tests/e2e/gemv_tiles.hpp"
#include "tests/e2e/host_calls.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::MemcpyOptions;

struct Case {
  size_t M, N, kx, ky;
  std::string arch;
};
std::ostream& operator<<(std::ostream& o, const Case& c) { return o << c.arch << " " << c.M << "x" << c.N << " on " << c.kx << "x" << c.ky; }

class Gemv09 : public ::testing::TestWithParam<Case> {};

TEST_P(Gemv09, StreamsMatchReference) {
  const Case c = GetParam();
  const compiler::Executable exe =
      build_kernel("gemv-09-streaming",
                   {{"M", int64_t(c.M)}, {"N", int64_t(c.N)}, {"kx", int64_t(c.kx)}, {"ky", int64_t(c.ky)}}, c.arch);
  const xt::xarray<float> A = random_array({c.M, c.N}, 61), x = random_array({c.N}, 62), b = random_array({c.M}, 63);
  const Blocks rows = split(c.M, c.ky), cols = split(c.N, c.kx);
  const size_t MT = rows.max, NT = cols.max;
  const std::vector<uint32_t> tiles = a_tiles(A, rows, cols, fp32_word);

  runtime::host::SdkRuntime rt(exe);
  rt.load();
  rt.memcpy_h2d("A", tiles, 0, 0, int(c.kx), int(c.ky), int(MT * NT));
  rt.launch("init");
  MemcpyOptions stream;
  stream.streaming = true;
  for (size_t px = 0; px < c.kx; ++px) {
    const xt::xarray<float> block = xt::view(x, xt::range(cols.start[px], cols.start[px] + cols.size[px]));
    rt.memcpy_h2d("gemv", words(block), int(px), 0, 1, 1, int(cols.size[px]), stream);
  }
  for (size_t py = 0; py < c.ky; ++py) {
    const xt::xarray<float> block = xt::view(b, xt::range(rows.start[py], rows.start[py] + rows.size[py]));
    rt.memcpy_h2d("gemv", words(block), int(c.kx) - 1, int(py), 1, 1, int(rows.size[py]), stream);
  }
  xt::xarray<float> y = xt::zeros<float>({c.M});
  for (size_t py = 0; py < c.ky; ++py) {
    std::vector<uint32_t> out = read_back(rt, "gemv", int(c.kx) - 1, int(py), 1, 1, int(rows.size[py]), stream);
    for (size_t i = 0; i < out.size(); ++i) y(rows.start[py] + i) = std::bit_cast<float>(out[i]);
  }
  rt.run_until_quiescent();
  expect_close(y, gemv_reference(A, x, b), 1e-5, 1e-5, "y");
  const xt::xarray<double> ref = gemv_reference(A, x, b);
  double err = 0;
  for (size_t i = 0; i < c.M; ++i) err = std::max(err, std::abs(double(y(i)) - ref(i)));
  std::printf("gemv-09 %zux%zu on %zux%zu (%s): %llu cycles = %.3f us at %.0f MHz (memcpy %llu, launch %llu); max "
              "error %.3g\n",
              c.M, c.N, c.kx, c.ky, c.arch.c_str(), (unsigned long long)rt.cycles(), double(rt.cycles()) / rt.clock_mhz(),
              rt.clock_mhz(), (unsigned long long)rt.stats().memcpy_cycles,
              (unsigned long long)rt.stats().launch_cycles, err);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Gemv09,
                         ::testing::Values(Case{6, 8, 4, 3, "wse2"}, Case{13, 10, 3, 4, "wse2"},
                                           Case{8, 8, 2, 2, "wse3"}, Case{7, 5, 1, 2, "wse2"}),
                         named_by(&Case::arch, "_", &Case::M, "x", &Case::N, "_on_", &Case::kx, "x",
                                  &Case::ky));

}  // namespace
}  // namespace wsemu::testing
