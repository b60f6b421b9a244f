// Kernels written in wsemu assembly (isa::assemble) running on the wafer: the GEMV sketch of
// DESIGN.md and the pipeline-01 stall, checked against hand-computed results.
#include <gtest/gtest.h>

#include "isa/assembler.hpp"
#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::RunResult;
using emu::Wafer;

TEST(Assembly, GemvColumnPerWavelet) {
  // y = A x with A (3x4) stored column by column, A[i][j] = i + j, x = (1, 2, 3, 4) arriving
  // as wavelets on color 4: y = (20, 30, 40).
  auto prog = assemble(R"(
.arch   wse2
.param  M, N
.data
y:      .f32 [M]
A:      .f32 0, 1, 2,  1, 2, 3,  2, 3, 4,  3, 4, 5
.export y
.dsd    ydsd = mem1d(y, M)
.dsd    acol = mem1d(A, M)
.code
.task   recv_x, data, color 4          ; runs when a wavelet on color 4 lands; payload in r0
        fmacs   ydsd, ydsd, acol, r0    ; y += A[:,j] * x_j
        dsdinc  acol, M                 ; next column
        exit
)",
                       {{"M", 3}, {"N", 4}});
  ASSERT_TRUE(prog);
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, prog);
  w.set_route(0, 0, 4, route("W", "R"));
  push_all(w, 0, 0, Direction::WEST,
           {data_wavelet(4, fbits(1)), data_wavelet(4, fbits(2)), data_wavelet(4, fbits(3)), data_wavelet(4, fbits(4))});
  run_ok(w);
  const isa::Symbol* y = prog->find_symbol("y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(read<float>(w, 0, 0, y->address, 3), (std::vector<float>{20, 30, 40}));
  EXPECT_EQ(w.core_view(0, 0).stats.tasks_started, 4u);
}

TEST(Assembly, PipelineStallNamesThePeQueueAndColor) {
  auto prog = assemble(R"(
.arch   wse2
.dsd    inq  = fabin.16(1, 0, 20)
.dsd    outq = fabout.16(2, 0, 20)
.iqinit 0, 1
.oqinit 0, 2
.task   main, local, 10
        li      r3, 1
        add16.async outq, inq, r3, ut=0
        exit
)");
  ASSERT_TRUE(prog);
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  start_pe(w, prog, {{1, "W", "R"}, {2, "R", "E"}});
  int accepted = 0;
  for (int c = 0; c < 100; ++c) {
    if (w.push_edge(0, 0, Direction::WEST, data_wavelet(1, uint32_t(accepted)))) ++accepted;
    w.step();
  }
  EXPECT_EQ(accepted, 14);
  const RunResult r = w.run(1000);
  ASSERT_EQ(r.status, RunResult::Status::HANG);
  const std::string text = r.to_string();
  EXPECT_NE(text.find("PE(0,0)"), std::string::npos) << text;
  EXPECT_NE(text.find("microthread 0: `add16.async outq, inq, r3"), std::string::npos) << text;
  EXPECT_NE(text.find("output queue 0 (color 2) is full"), std::string::npos) << text;
}

}  // namespace
}  // namespace wsemu::testing
