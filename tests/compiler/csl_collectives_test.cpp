// <collectives_2d/params> and <collectives_2d/pe> (compiler/csl/lib/collectives_2d) end to end:
// tests/compiler/programs/collectives compiled by compile_csl and run on the host runtime. Each
// launch runs broadcast, scatter, gather and reduce_fadds along the rows (or columns) with a
// given root; the outputs of every PE are checked against what the operations mean, computed
// here from the inputs (copies and chunk slices; the sum in double precision), for every root,
// on several rectangle shapes, wse2 and wse3.
#include <bit>
#include <cmath>
#include <random>

#include "compiler/csl/cslc.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/compiler/csl_test_support.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::SdkRuntime;

constexpr int kChunk = 3;  // C: elements a chunk (scatter, gather)
constexpr int kLen = 5;    // N: elements of broadcast and reduce

class CslCollectives : public ::testing::TestWithParam<CslGrid> {};

TEST_P(CslCollectives, EveryOperationEveryRootBothDimensions) {
  const CslGrid s = GetParam();
  const int W = s.w, H = s.h, PM = std::max(W, H);
  LoadedRuntime rt(executable_of(compile_csl_kernel(
      source_dir() + "/tests/compiler/programs/collectives/layout.csl",
      {{"W", std::to_string(W)},
       {"H", std::to_string(H)},
       {"C", std::to_string(kChunk)},
       {"N", std::to_string(kLen)}},
      s.arch, {W + 2, H + 2, 1, 1},
      "wsemu-csl-collectives-" + s.arch + "-" + std::to_string(W) + "x" + std::to_string(H))));
  std::mt19937 rng(7);
  auto words = [&](int per_pe) {
    std::vector<uint32_t> v(size_t(W * H * per_pe));
    for (auto& x : v) x = rng();
    return v;
  };
  // Element e of PE (x, y) in a [y][x][e] host array of per_pe elements a PE.
  auto at = [&](const std::vector<uint32_t>& a, int per_pe, int x, int y, int e) { return a[size_t((y * W + x) * per_pe + e)]; };
  for (const bool rows : {true, false}) {
    const int P = rows ? W : H;
    for (int root = 0; root < P; ++root) {
      SCOPED_TRACE((rows ? "rows, root " : "columns, root ") + std::to_string(root));
      const auto bcast = words(kLen), scat_send = words(PM * kChunk), gath_send = words(kChunk);
      std::vector<uint32_t> red_send(size_t(W * H * kLen));
      std::uniform_real_distribution<float> value(-2.0f, 2.0f);
      for (auto& x : red_send) x = std::bit_cast<uint32_t>(value(rng));
      rt.memcpy_h2d("bcast", bcast, 0, 0, W, H, kLen);
      rt.memcpy_h2d("scat_send", scat_send, 0, 0, W, H, PM * kChunk);
      rt.memcpy_h2d("gath_send", gath_send, 0, 0, W, H, kChunk);
      rt.memcpy_h2d("red_send", red_send, 0, 0, W, H, kLen);
      rt.memcpy_h2d("done", std::vector<uint32_t>(size_t(W * H * 4), 0), 0, 0, W, H, 4);
      const uint32_t arg = uint32_t(root);
      rt.launch(rows ? "row_ops" : "col_ops", std::span<const uint32_t>(&arg, 1));
      std::vector<uint32_t> b = read_back(rt, "bcast", 0, 0, W, H, kLen);
      std::vector<uint32_t> sr = read_back(rt, "scat_recv", 0, 0, W, H, kChunk);
      std::vector<uint32_t> gr = read_back(rt, "gath_recv", 0, 0, W, H, PM * kChunk);
      std::vector<uint32_t> rr = read_back(rt, "red_recv", 0, 0, W, H, kLen);
      std::vector<uint32_t> done = read_back(rt, "done", 0, 0, W, H, 4);
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          SCOPED_TRACE("PE (" + std::to_string(x) + ", " + std::to_string(y) + ")");
          const int k = rows ? x : y;                      // position on the line
          const int rx = rows ? root : x, ry = rows ? y : root;  // the line's root PE
          auto line_pe = [&](int j) { return rows ? std::pair{j, y} : std::pair{x, j}; };
          for (int e = 0; e < kLen; ++e) EXPECT_EQ(at(b, kLen, x, y, e), at(bcast, kLen, rx, ry, e)) << "broadcast " << e;
          for (int e = 0; e < kChunk; ++e)
            EXPECT_EQ(at(sr, kChunk, x, y, e), at(scat_send, PM * kChunk, rx, ry, k * kChunk + e)) << "scatter " << e;
          if (k == root) {
            for (int j = 0; j < P; ++j)
              for (int e = 0; e < kChunk; ++e) {
                auto [jx, jy] = line_pe(j);
                EXPECT_EQ(at(gr, PM * kChunk, x, y, j * kChunk + e), at(gath_send, kChunk, jx, jy, e)) << "gather " << j << "," << e;
              }
            for (int e = 0; e < kLen; ++e) {
              double want = 0, scale = 0;
              for (int j = 0; j < P; ++j) {
                auto [jx, jy] = line_pe(j);
                const double v = std::bit_cast<float>(at(red_send, kLen, jx, jy, e));
                want += v;
                scale += std::fabs(v);
              }
              EXPECT_NEAR(std::bit_cast<float>(at(rr, kLen, x, y, e)), want, 1e-6 * scale + 1e-30) << "reduce " << e;
            }
          }
          for (int op = 0; op < 4; ++op) EXPECT_EQ(at(done, 4, x, y, op), 1u) << "callback of operation " << op;
        }
    }
  }
  std::printf("collectives %s %dx%d: cycles %llu\n", s.arch.c_str(), W, H, (unsigned long long)rt.cycles());
}

INSTANTIATE_TEST_SUITE_P(Shapes, CslCollectives,
                         ::testing::Values(CslGrid{"wse2", 4, 3}, CslGrid{"wse3", 4, 3}, CslGrid{"wse2", 1, 3}, CslGrid{"wse3", 5, 1},
                                           CslGrid{"wse3", 2, 2}),
                         named_by(&CslGrid::arch, "_", &CslGrid::w, "x", &CslGrid::h));

}  // namespace
}  // namespace wsemu::testing
