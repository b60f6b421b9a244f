// game-of-life: one cell per PE, every generation's state (the kernel's `history`) against a
// plain reference stepper on the host grid with dead cells beyond the edge: a glider and a
// seeded random board on the SDK's 12 x 12 for 20 generations, plus odd shapes.
#include <random>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using Board = std::vector<std::vector<uint32_t>>;  // [row][column]

Board step(const Board& b) {
  const long rows = long(b.size()), cols = long(b[0].size());
  Board next = b;
  for (long i = 0; i < rows; ++i)
    for (long j = 0; j < cols; ++j) {
      int n = 0;
      for (long di = -1; di <= 1; ++di)
        for (long dj = -1; dj <= 1; ++dj)
          if ((di || dj) && i + di >= 0 && j + dj >= 0 && i + di < rows && j + dj < cols)
            n += int(b[size_t(i + di)][size_t(j + dj)]);
      next[size_t(i)][size_t(j)] = (n == 3 || (n == 2 && b[size_t(i)][size_t(j)])) ? 1 : 0;
    }
  return next;
}

void run_and_check(int kx, int ky, int iters, Board board, const std::string& arch = "") {
  std::vector<uint32_t> cells;
  for (const auto& row : board) cells.insert(cells.end(), row.begin(), row.end());
  LoadedRuntime rt(build_kernel("game-of-life", {{"kx", kx}, {"ky", ky}, {"ITERS", iters}}, arch));
  rt.memcpy_h2d("cell", cells, 0, 0, kx, ky, 1);
  launch_and_settle(rt, "compute");
  const size_t h = size_t(iters) + 1;
  std::vector<uint32_t> history = read_back(rt, "history", 0, 0, kx, ky, int(h));
  for (size_t t = 0; t < h; ++t) {
    size_t bad = 0;
    for (size_t i = 0; i < size_t(ky); ++i)
      for (size_t j = 0; j < size_t(kx); ++j)
        if (history[(i * size_t(kx) + j) * h + t] != board[i][j]) ++bad;
    EXPECT_EQ(bad, 0u) << "generation " << t;
    board = step(board);
  }
}

Board empty(int kx, int ky) { return Board(size_t(ky), std::vector<uint32_t>(size_t(kx), 0)); }

Board random_board(int kx, int ky, uint32_t seed) {
  std::mt19937 gen(seed);
  Board b = empty(kx, ky);
  for (auto& row : b)
    for (auto& c : row) c = gen() & 1u;
  return b;
}

TEST(GameOfLife, GliderTwentyGenerations) {
  Board b = empty(12, 12);
  for (auto [i, j] : {std::pair{0, 1}, {1, 2}, {2, 0}, {2, 1}, {2, 2}}) b[size_t(i)][size_t(j)] = 1;
  run_and_check(12, 12, 20, b);
}

TEST(GameOfLife, RandomTwentyGenerations) { run_and_check(12, 12, 20, random_board(12, 12, 9)); }

TEST(GameOfLife, OddShapes) {
  run_and_check(5, 3, 7, random_board(5, 3, 10));
  run_and_check(1, 4, 3, random_board(1, 4, 11));
  run_and_check(1, 1, 2, Board{{1}});
}

TEST(GameOfLife, Wse3) { run_and_check(6, 5, 6, random_board(6, 5, 12), "wse3"); }

}  // namespace
}  // namespace wsemu::testing
