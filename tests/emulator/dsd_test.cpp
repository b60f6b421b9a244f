// DSD kinds and vector semantics: mem1d (strides), mem4d, circular buffers, FIFOs, fabric in
// and out, register sources (broadcast) and destinations (reduction), fp16 and 16-bit integer
// operations, and the vector timing model (startup + ceil(length / SIMD width)).
#include <gtest/gtest.h>

#include "isa/fp16.hpp"
#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::Wafer;

// Runs local task 10 of `p` on a 1x1 wafer and returns it.
std::unique_ptr<Wafer> run_task(TestProgram& p, const char* arch = "wse2") {
  p.local_task(10, "main");
  auto w = std::make_unique<Wafer>(emu::arch_profile(arch), 1, 1);
  w->load_program(0, 0, p.build());
  w->activate_task(0, 0, 10);
  run_ok(*w);
  return w;
}

TEST(Dsd, Mem1dElementwiseWithStride) {
  // z[i] = x[2i] + y[i]: x read with stride 2.
  TestProgram p;
  p.data<float>(0x1000, {1, 2, 3, 4, 5, 6, 7, 8}).data<float>(0x1100, {10, 20, 30, 40});
  p.dsd(0, mem1d(0x1000, 4, 2)).dsd(1, mem1d(0x1100, 4)).dsd(2, mem1d(0x1200, 4));
  p.code("main:\n  fadds d2, d0, d1\n  exit\n");
  auto w = run_task(p);
  EXPECT_EQ(read<float>(*w, 0, 0, 0x1200, 4), (std::vector<float>{11, 23, 35, 47}));
}

TEST(Dsd, RegisterSourceBroadcastsAndRegisterDestinationReduces) {
  // y = y + A * 2.0 ; r3 = sum(x) ; r4 = dot(x, x) = 1 + 4 + 9 + 16 = 30.
  TestProgram p;
  p.data<float>(0x1000, {1, 2, 3, 4}).data<float>(0x1100, {1, 1, 1, 1});
  p.dsd(0, mem1d(0x1000, 4)).dsd(1, mem1d(0x1100, 4));
  p.code(R"(
main:
  li r2, f:2.0
  fmacs d1, d1, d0, r2
  li r3, 0
  fadds r3, r3, d0
  li r4, 0
  fmacs r4, r4, d0, d0
  st32 [0x1200], r3
  st32 [0x1204], r4
  exit
)");
  auto w = run_task(p);
  EXPECT_EQ(read<float>(*w, 0, 0, 0x1100, 4), (std::vector<float>{3, 5, 7, 9}));
  EXPECT_EQ(read<float>(*w, 0, 0, 0x1200, 2), (std::vector<float>{10, 30}));
}

TEST(Dsd, Mem4dWalksDimensionZeroFastest) {
  // A 2x3 row-major matrix read column by column (transpose): extents {2, 3}, strides {3, 1}.
  TestProgram p;
  p.data<uint32_t>(0x1000, {0, 1, 2, 10, 11, 12});
  p.dsd(0, mem4d(0x1000, {2, 3, 1, 1}, {3, 1, 0, 0})).dsd(1, mem1d(0x1100, 6));
  p.code("main:\n  mov32 d1, d0\n  exit\n");
  auto w = run_task(p);
  EXPECT_EQ(read<uint32_t>(*w, 0, 0, 0x1100, 6), (std::vector<uint32_t>{0, 10, 1, 11, 2, 12}));
}

TEST(Dsd, CircularBufferWrapsAndContinues) {
  TestProgram p;
  p.data<uint32_t>(0x1000, {1, 2, 3, 4});
  p.dsd(0, circbuf(0x1000, 4)).dsd(1, mem1d(0x1100, 6)).dsd(2, mem1d(0x1200, 6));
  p.code("main:\n  mov32 d1, d0\n  mov32 d2, d0\n  exit\n");
  auto w = run_task(p);
  EXPECT_EQ(read<uint32_t>(*w, 0, 0, 0x1100, 6), (std::vector<uint32_t>{1, 2, 3, 4, 1, 2}));
  EXPECT_EQ(read<uint32_t>(*w, 0, 0, 0x1200, 6), (std::vector<uint32_t>{3, 4, 1, 2, 3, 4}));
}

TEST(Dsd, FifoPushThenPopKeepsOrder) {
  TestProgram p;
  p.data<uint32_t>(0x1000, {5, 6, 7});
  p.dsd(0, mem1d(0x1000, 3)).dsd(1, fifo(0x1100, 4)).dsd(2, mem1d(0x1200, 3));
  p.code(R"(
main:
  mov32 d1, d0
  fifocount r1, d1
  mov32 d2, d1
  fifocount r2, d1
  st32 [0x1300], r1
  st32 [0x1304], r2
  exit
)");
  auto w = run_task(p);
  EXPECT_EQ(read<uint32_t>(*w, 0, 0, 0x1200, 3), (std::vector<uint32_t>{5, 6, 7}));
  EXPECT_EQ(read<uint32_t>(*w, 0, 0, 0x1300, 2), (std::vector<uint32_t>{3, 0}));
}

TEST(Dsd, FabricInToMemoryAndMemoryToFabricOut) {
  TestProgram p("wse2");
  p.data<uint32_t>(0x1100, {7, 8});
  p.dsd(0, fabin(1, 2, 3)).dsd(1, mem1d(0x1000, 3)).dsd(2, mem1d(0x1100, 2, 1, 16)).dsd(3, fabout(2, 3, 2, 16));
  p.code(R"(
main:
  mov32 d1, d0
  dsdindex d3, 0x55
  mov16 d3, d2
  exit
)");
  p.local_task(10, "main");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p.build());
  w.set_route(0, 0, 1, route("W", "R"));
  w.set_route(0, 0, 2, route("R", "E"));
  for (uint32_t v : {100u, 200u, 300u}) ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(1, v)));
  w.activate_task(0, 0, 10);
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1000, 3), (std::vector<uint32_t>{100, 200, 300}));
  // 16-bit values 7 and 8 (the low halves of the two u32 words) with index 0x55 on top.
  std::vector<uint32_t> out;
  while (auto wl = w.pop_edge(0, 0, Direction::EAST)) out.push_back(wl->payload);
  EXPECT_EQ(out, (std::vector<uint32_t>{0x55 << 16 | 7, 0x55 << 16 | 0}));
}

TEST(Dsd, HalfPrecisionAndSixteenBitInteger) {
  using isa::fp32_to_fp16;
  TestProgram p;
  std::vector<uint16_t> a = {fp32_to_fp16(1.5f), fp32_to_fp16(-2.0f), fp32_to_fp16(0.25f), fp32_to_fp16(65504.0f)};
  std::vector<uint16_t> b = {fp32_to_fp16(0.5f), fp32_to_fp16(3.0f), fp32_to_fp16(0.25f), fp32_to_fp16(65504.0f)};
  p.data<uint16_t>(0x1000, a).data<uint16_t>(0x1010, b);
  p.data<uint16_t>(0x1030, {0xFFFF, 0x0001, 0x7FFF}).data<uint16_t>(0x1040, {0x0001, 0x0000, 0x0001});
  p.dsd(0, mem1d(0x1000, 4, 1, 16)).dsd(1, mem1d(0x1010, 4, 1, 16)).dsd(2, mem1d(0x1020, 4, 1, 16));
  p.dsd(3, mem1d(0x1100, 4)).dsd(4, mem1d(0x1030, 3, 1, 16)).dsd(5, mem1d(0x1040, 3, 1, 16));
  p.dsd(6, mem1d(0x1050, 3, 1, 16)).dsd(7, mem1d(0x1060, 4, 1, 16));
  p.code(R"(
main:
  faddh d2, d0, d1
  fh2s d3, d2
  addc16 d6, d4, d5
  fmach d7, d0, d0, d1
  exit
)");
  auto w = run_task(p);
  // 1.5+0.5 = 2, -2+3 = 1, 0.25+0.25 = 0.5, 65504+65504 overflows to +inf.
  const auto sum = read<float>(*w, 0, 0, 0x1100, 4);
  EXPECT_EQ(sum[0], 2.0f);
  EXPECT_EQ(sum[1], 1.0f);
  EXPECT_EQ(sum[2], 0.5f);
  EXPECT_TRUE(std::isinf(sum[3]));
  // 0xFFFF + 1 = 0 carry 1; 1 + 0 + 1 = 2; 0x7FFF + 1 = 0x8000.
  EXPECT_EQ(read<uint16_t>(*w, 0, 0, 0x1050, 3), (std::vector<uint16_t>{0, 2, 0x8000}));
  // fmach: a + a*b = 1.5 + 0.75 = 2.25; -2 - 6 = -8; 0.25 + 0.0625 = 0.3125.
  const auto mac = read<uint16_t>(*w, 0, 0, 0x1060, 3);
  EXPECT_EQ(isa::fp16_to_fp32(mac[0]), 2.25f);
  EXPECT_EQ(isa::fp16_to_fp32(mac[1]), -8.0f);
  EXPECT_EQ(isa::fp16_to_fp32(mac[2]), 0.3125f);
}

// Cycles from the `tsc` before an op to the one after it: 1 (tsc) + startup + ceil(len/width).
uint32_t measure(const char* arch, const std::string& op, int length) {
  TestProgram p(arch);
  p.dsd(0, mem1d(0x1000, uint32_t(length))).dsd(1, mem1d(0x1400, uint32_t(length)));
  std::string text = "main:\n  tsc r1\n  ";
  text += op;
  text += "\n  tsc r2\n  sub r3, r2, r1\n  st32 [0x1800], r3\n  exit\n";
  p.code(text);
  auto w = run_task(p, arch);
  return read<uint32_t>(*w, 0, 0, 0x1800, 1)[0];
}

TEST(Dsd, VectorTimingFollowsTheSimdWidthTable) {
  // startup 2; fadds is 2 wide on wse2, 4 on wse3; fmacs is 1 wide on both.
  EXPECT_EQ(measure("wse2", "fadds d1, d1, d0", 10), 1u + 2 + 5);
  EXPECT_EQ(measure("wse3", "fadds d1, d1, d0", 10), 1u + 2 + 3);
  EXPECT_EQ(measure("wse2", "fmacs d1, d1, d0, d0", 10), 1u + 2 + 10);
  EXPECT_EQ(measure("wse3", "fmacs d1, d1, d0, d0", 10), 1u + 2 + 10);
  EXPECT_EQ(measure("wse2", "fadds d1, d1, d0", 0), 1u + 2);
}

TEST(Dsd, DescriptorMutators) {
  // dsdbase / dsdlen / dsdstride / dsdinc / dsdaddr on a copy of a template.
  TestProgram p;
  p.data<uint32_t>(0x1000, {1, 2, 3, 4, 5, 6, 7, 8});
  p.dsd(0, mem1d(0x1000, 8)).dsd(2, mem1d(0x1100, 2));
  p.code(R"(
main:
  dsdcopy d1, d0
  dsdlen d1, 2
  dsdstride d1, 3
  dsdinc d1, 1        ; base += 4 bytes: starts at element 1
  mov32 d2, d1        ; elements 1 and 4: {2, 5}
  dsdaddr r1, d1
  st32 [0x1200], r1
  exit
)");
  auto w = run_task(p);
  EXPECT_EQ(read<uint32_t>(*w, 0, 0, 0x1100, 2), (std::vector<uint32_t>{2, 5}));
  EXPECT_EQ(read<uint32_t>(*w, 0, 0, 0x1200, 1)[0], 0x1004u);
}

}  // namespace
}  // namespace wsemu::testing
