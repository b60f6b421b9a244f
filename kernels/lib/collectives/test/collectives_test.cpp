// The collectives module (kernels/lib/collectives): each operation (broadcast, scatter, gather,
// reduce-add, reduce-max on rows and columns), with the root at the first PE (the plain names)
// and at every position of the line (the *_root names), on grids of several shapes (a single
// PE, a single row, a single column, odd and even lengths), wse2 and wse3, against the
// host-side definition of the operation in xtensor: `before` is what the host wrote into every
// PE's buffer, the expected buffers are derived from it index by index.
#include <algorithm>
#include <limits>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

struct Grid {
  int pw, ph, n;
  std::string arch;
};

// Buffers of every PE: [PH][PW][L], L = n * max(PW, PH).
using Buffers = xt::xarray<float>;

enum class Axis { ROW, COL };

Buffers expected(const std::string& op, Axis axis, const Buffers& before, int n, int root) {
  Buffers want = before;
  const int ph = int(before.shape()[0]), pw = int(before.shape()[1]);
  const int len = axis == Axis::ROW ? pw : ph;
  for (int y = 0; y < ph; ++y)
    for (int x = 0; x < pw; ++x) {
      const int k = axis == Axis::ROW ? x : y;                   // position on the line
      auto at = [&](int pos) { return axis == Axis::ROW ? std::pair{pos, y} : std::pair{x, pos}; };
      const auto [rx, ry] = at(root);                            // the line's root
      for (int i = 0; i < n; ++i) {
        if (op == "bcast") {
          want(y, x, i) = before(ry, rx, i);
        } else if (op == "scatter") {
          if (k != root) want(y, x, i) = before(ry, rx, k * n + i);
        } else if (op == "gather") {
          if (k == root)
            for (int j = 0; j < len; ++j) {
              if (j == root) continue;
              const auto [jx, jy] = at(j);
              want(y, x, j * n + i) = before(jy, jx, i);
            }
        } else if (op == "reduce") {
          if (k == root) {
            double sum = 0;
            for (int j = 0; j < len; ++j) {
              const auto [jx, jy] = at(j);
              sum += before(jy, jx, i);
            }
            want(y, x, i) = float(sum);
          }
        } else if (op == "reducemax") {
          if (k == root) {
            float m = -std::numeric_limits<float>::infinity();
            for (int j = 0; j < len; ++j) {
              const auto [jx, jy] = at(j);
              m = std::max(m, float(before(jy, jx, i)));
            }
            want(y, x, i) = m;
          }
        }
      }
    }
  return want;
}

class Collectives : public ::testing::TestWithParam<Grid> {};

TEST_P(Collectives, EveryOperationMatchesItsDefinition) {
  const Grid g = GetParam();
  const size_t len = size_t(g.n) * size_t(std::max(g.pw, g.ph));
  LoadedRuntime rt(build_kernel("lib/collectives/test", {{"PW", g.pw}, {"PH", g.ph}, {"N", g.n}}, g.arch));
  uint32_t seed = 1100;
  for (const std::string op : {"bcast", "scatter", "gather", "reduce", "reducemax"})
    for (Axis axis : {Axis::ROW, Axis::COL}) {
      // The plain function (root 0), then the *_root one at every position of the line.
      const int line = axis == Axis::ROW ? g.pw : g.ph;
      for (int root = -1; root < line; ++root) {
        const Buffers before = random_array({size_t(g.ph), size_t(g.pw), len}, ++seed);
        rt.memcpy_h2d("buf", words(before), 0, 0, g.pw, g.ph, int(len));
        const std::string fn = (axis == Axis::ROW ? "row_" : "col_") + op + (root < 0 ? "" : "_root");
        const uint64_t start = rt.cycles();
        const std::vector<uint32_t> args{uint32_t(std::max(root, 0))};
        launch_and_settle(rt, fn, args);
        const uint64_t launch_cycles = rt.cycles() - start;
        std::vector<uint32_t> out = read_back(rt, "buf", 0, 0, g.pw, g.ph, int(len));
        const Buffers want = expected(op, axis, before, g.n, std::max(root, 0));
        expect_close(floats(out, {size_t(g.ph), size_t(g.pw), len}), xt::cast<double>(want), 1e-6, 1e-6,
                     fn + " root " + std::to_string(std::max(root, 0)) + " on " + std::to_string(g.pw) + "x" +
                         std::to_string(g.ph));
        if (root <= 0 || root == line - 1)
          std::printf("collectives %s root %d %dx%d n=%d (%s): %llu cycles\n", fn.c_str(), std::max(root, 0), g.pw,
                      g.ph, g.n, g.arch.c_str(), (unsigned long long)launch_cycles);
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Grids, Collectives,
                         ::testing::Values(Grid{4, 3, 3, "wse2"}, Grid{1, 1, 2, "wse2"}, Grid{5, 1, 2, "wse2"},
                                           Grid{1, 4, 2, "wse2"}, Grid{3, 3, 4, "wse3"}),
                         named_by(&Grid::arch, "_", &Grid::pw, "x", &Grid::ph, "_n", &Grid::n));

}  // namespace
}  // namespace wsemu::testing
