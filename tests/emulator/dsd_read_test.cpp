// Reading a descriptor into scalar registers: dsdaddr (base), dsdgetlen (length), dsdgetstride
// (stride, sign-extended), after run-time changes; values worked out by hand.
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::RunResult;
using emu::Wafer;

TEST(DsdRead, LengthAndStrideFollowRunTimeChanges) {
  // col = mem1d(x, 6, 2), then its length set to 3 and its stride to -1; tile = mem4d with
  // innermost extent 5 and stride 3; fo = fabout of 9 wavelets. out = {6, 2, 3, -1, 5, 3, 9}.
  auto p = assemble(R"(
.task main, local, 10
.data
x:      .f32 [8]
out:    .i32 [7]
.dsd    col = mem1d(x, 6, 2)
.dsd    tile = mem4d(x, [5, 2], [3, 1])
.dsd    fo = fabout(4, 1, 9)
.code
main:
  dsdgetlen r1, col
  st32 [out], r1
  dsdgetstride r1, col
  st32 [out + 4], r1
  dsdlen col, 3
  dsdstride col, -1
  dsdgetlen r1, col
  st32 [out + 8], r1
  dsdgetstride r1, col
  st32 [out + 12], r1
  dsdgetlen r1, tile
  st32 [out + 16], r1
  dsdgetstride r1, tile
  st32 [out + 20], r1
  dsdgetlen r1, fo
  st32 [out + 24], r1
  exit
)");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p);
  w.activate_task(0, 0, 10);
  run_ok(w);
  EXPECT_EQ(read<int32_t>(w, 0, 0, addr(*p, "out"), 7), (std::vector<int32_t>{6, 2, 3, -1, 5, 3, 9}));
}

TEST(DsdRead, StrideOfAFabricDescriptorIsAKernelError) {
  auto p = assemble(".task main, local, 10\n.dsd fo = fabout(4, 1, 9)\n.code\nmain:\n  dsdgetstride r1, fo\n  exit\n");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p);
  w.activate_task(0, 0, 10);
  const RunResult r = w.run(1000);
  ASSERT_EQ(r.status, RunResult::Status::FAULT) << r.to_string();
  EXPECT_NE(r.fault->message.find("dsdgetstride: d0 holds a descriptor of the wrong kind"), std::string::npos)
      << r.fault->to_string();
}

}  // namespace
}  // namespace wsemu::testing
