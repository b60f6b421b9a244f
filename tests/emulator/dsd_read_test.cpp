// Reading a descriptor into scalar registers: dsdaddr (base), dsdgetlen (length), dsdgetstride
// (stride, sign-extended), after run-time changes; the save-address flag (dsdsave) moving a
// base past each operation; values worked out by hand.
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::RunResult;
using emu::Wafer;

TEST(DsdRead, LengthAndStrideFollowRunTimeChanges) {
  // col = mem1d(x, 6, 2), then its length set to 3 and its stride to -1; tile = mem4d with
  // innermost extent 5 and stride 3; fo = fabout of 9 wavelets. out = {6, 2, 3, -1, 5, 3, 9}.
  SinglePe pe(R"(
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
  pe.run_ok();
  EXPECT_EQ(pe.read<int32_t>("out", 7), (std::vector<int32_t>{6, 2, 3, -1, 5, 3, 9}));
}

TEST(DsdRead, SaveAddressMovesTheBasePastEachOperation) {
  // s = mem1d(x, 2, 2) with the save-address flag: fadds z, z, s three times reads x[0], x[2],
  // then x[4], x[6], then x[8], x[10]: z = (0 + 2 + 4 + ... ) = (0+4+8, 2+6+10) = (12, 18); the
  // base then stands 12 elements on (48 bytes).
  SinglePe pe(R"(
.task main, local, 10
.data
x:      .f32 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
z:      .f32 [2]
base:   .u32 [2]
.dsd    s = mem1d(x, 2, 2)
.dsd    zd = mem1d(z, 2)
.code
main:
  dsdaddr r1, s
  st32 [base], r1
  dsdsave s, 1
  fadds zd, zd, s
  fadds zd, zd, s
  fadds zd, zd, s
  dsdaddr r1, s
  st32 [base + 4], r1
  exit
)");
  pe.run_ok();
  EXPECT_EQ(pe.read<float>("z", 2), (std::vector<float>{12, 18}));
  const auto b = pe.read<uint32_t>("base", 2);
  EXPECT_EQ(b[1], b[0] + 48);
}

TEST(DsdRead, StrideOfAFabricDescriptorIsAKernelError) {
  auto p = assemble(".task main, local, 10\n.dsd fo = fabout(4, 1, 9)\n.code\nmain:\n  dsdgetstride r1, fo\n  exit\n");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  start_pe(w, p);
  const RunResult r = w.run(1000);
  ASSERT_EQ(r.status, RunResult::Status::FAULT) << r.to_string();
  EXPECT_NE(r.fault->message.find("dsdgetstride: d0 holds a descriptor of the wrong kind"), std::string::npos)
      << r.fault->to_string();
}

}  // namespace
}  // namespace wsemu::testing
