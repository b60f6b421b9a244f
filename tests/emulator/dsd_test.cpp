// DSD kinds and vector semantics: mem1d (strides), mem4d, circular buffers, FIFOs, fabric in
// and out, register sources (broadcast) and destinations (reduction), the operation's length
// (src0's, else src1's, else the destination's; a shorter operand is an error), fp16 and 16-bit
// integer operations, and the vector timing model (startup + ceil(length / SIMD width)).
#include <gtest/gtest.h>

#include "isa/fp16.hpp"
#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::Wafer;

TEST(Dsd, Mem1dElementwiseWithStride) {
  // z[i] = x[2i] + y[i]: x read with stride 2.
  SinglePe pe(kMainTask + R"(
.data
x:      .f32 1, 2, 3, 4, 5, 6, 7, 8
y:      .f32 10, 20, 30, 40
z:      .f32 [4]
.dsd    xd = mem1d(x, 4, 2)
.dsd    yd = mem1d(y, 4)
.dsd    zd = mem1d(z, 4)
.code
main:
  fadds zd, xd, yd
  exit
)");
  pe.run_ok();
  EXPECT_EQ(pe.read<float>("z", 4), (std::vector<float>{11, 23, 35, 47}));
}

TEST(Dsd, TheFirstSourceGivesTheLengthAndALongerOperandIsUsedThatFar) {
  // fmacs: src0 is d20, y cut to 2 of its 3 elements; x (src1) keeps 4. y[i] = y[i] + x[i] * 0.5
  // for i < 2: 1 + 10 * 0.5 = 6, 2 + 20 * 0.5 = 12; y[2] is outside the operation and stays 7.
  // fadds: src0 x2 has 2 elements, src1 x and the destination z have 4: z = {1 + 10, 2 + 20},
  // z[2] and z[3] stay 0.
  SinglePe pe(kMainTask + R"(
.data
x:      .f32 10, 20, 30, 40
y:      .f32 1, 2, 7
h:      .f32 1, 2
z:      .f32 [4]
.dsd    xd = mem1d(x, 4)
.dsd    yd = mem1d(y, 3)
.dsd    x2 = mem1d(h, 2)
.dsd    zd = mem1d(z, 4)
.code
main:
  dsdcopy d20, yd
  dsdlen d20, 2
  li r2, 0.5
  fmacs d20, d20, xd, r2
  fadds zd, x2, xd
  exit
)");
  pe.run_ok();
  EXPECT_EQ(pe.read<float>("y", 3), (std::vector<float>{6, 12, 7}));
  EXPECT_EQ(pe.read<float>("z", 4), (std::vector<float>{11, 22, 0, 0}));
}

TEST(Dsd, AnOperandShorterThanTheOperationIsAKernelError) {
  const std::string program = kMainTask + R"(
.data
x:      .f32 1, 2
y:      .f32 1, 2, 3, 4
.dsd    x2 = mem1d(x, 2)
.dsd    y4 = mem1d(y, 4)
.code
main:
)";
  expect_kernel_errors(program,
                       {
                           // src0 y4 gives 4; src1 x2 has no element 2 to read.
                           {"  fadds y4, y4, x2\n  exit\n", "fadds: operand d"},
                           // src0 is a register: src1 y4 gives 4; src2 x2 is short.
                           {"  li r3, 0\n  fmacs r3, r3, y4, x2\n  exit\n", "fmacs: operand d"},
                           // src0 y4 gives 4; the destination x2 has room for 2.
                           {"  fadds x2, y4, y4\n  exit\n", "fadds: operand d"},
                       },
                       1000, [](const emu::Fault& fault) {
                         EXPECT_NE(fault.message.find("has 2 elements, the operation 4"), std::string::npos)
                             << fault.to_string();
                       });
}

// A fabric descriptor has no element width or length of its own that bounds an operation: the
// operation's width is the wavelets' (low 16 bits for a 16-bit one) and its length (the first
// memory source's here) is how many move, as the SDK's spmv-hypersparse reads one fabin DSR
// with @mov16 and @mov32 and sends a run-time number of u16 through a fabout of extent 1.
// Task 10: mov16 of 3 halfwords {7, 8, 9} into a 32-bit fabout of extent 1 (color 2, out east),
// then mov16 of 2 wavelets {0x10004, 0x10005} from a 32-bit fabin of extent 2 into halfwords.
TEST(Dsd, FabricDescriptorsTakeTheOperationsWidthAndLength) {
  const auto p = assemble(R"(.task main, local, 10
.data
h:      .u16 7, 8, 9
g:      .u16 0, 0
.dsd    h3 = mem1d(h, 3)
.dsd    g2 = mem1d(g, 2)
.dsd    outq = fabout(2, 2, 1)
.dsd    inq = fabin(1, 1, 2)
.iqinit 1, 1
.code
main:
  mov16 outq, h3
  mov16 g2, inq
  exit
)");
  emu::Wafer w(emu::arch_profile("wse2"), 1, 1);
  start_pe(w, p, {{1, "W", "R"}, {2, "R", "E"}});
  push_all(w, 0, 0, Direction::WEST, {data_wavelet(1, 0x10004), data_wavelet(1, 0x10005)});
  run_ok(w);
  EXPECT_EQ(drain(w, 0, 0, Direction::EAST), (std::vector<uint32_t>{7, 8, 9}));
  EXPECT_EQ(read<uint16_t>(w, 0, 0, addr(*p, "g"), 2), (std::vector<uint16_t>{4, 5}));
}

TEST(Dsd, AMemoryOpPastTheStoredBytesRunsElementByElementInOrder) {
  // SRAM stores bytes only as far as the highest byte written (emulator/README.md): `rest` and
  // `far` lie past that when the op starts, and read as zeros until written. The destination
  // is the source shifted by one element, so element i reads what element i - 1 wrote:
  // x[k] = 3 + k all along, where reading every source before writing would give 3, 4, 1, 1, ...
  // A source past every store (far) reads zeros: z = far + 2.
  SinglePe pe(kMainTask + R"(
.data
x:      .f32 3
rest:   .f32 [300]
far:    .f32 [300]
z:      .f32 [4]
.dsd    xd = mem1d(x, 300)
.dsd    restd = mem1d(rest, 300)
.dsd    fard = mem1d(far, 4)
.dsd    zd = mem1d(z, 4)
.code
main:
  li r2, 1.0
  fadds restd, xd, r2
  li r3, 2.0
  fadds zd, fard, r3
  exit
)");
  pe.run_ok();
  std::vector<float> expected(300);
  for (int k = 0; k < 300; ++k) expected[size_t(k)] = 4.0f + float(k);
  EXPECT_EQ(pe.read<float>("rest", 300), expected);
  EXPECT_EQ(pe.read<float>("z", 4), (std::vector<float>{2, 2, 2, 2}));
}

TEST(Dsd, RegisterSourceBroadcastsAndRegisterDestinationReduces) {
  // y = y + A * 2.0 ; r3 = sum(x) ; r4 = dot(x, x) = 1 + 4 + 9 + 16 = 30.
  SinglePe pe(kMainTask + R"(
.data
x:      .f32 1, 2, 3, 4
y:      .f32 1, 1, 1, 1
sums:   .f32 [2]
.dsd    xd = mem1d(x, 4)
.dsd    yd = mem1d(y, 4)
.code
main:
  li r2, 2.0
  fmacs yd, yd, xd, r2
  li r3, 0
  fadds r3, r3, xd
  li r4, 0
  fmacs r4, r4, xd, xd
  st32 [sums], r3
  st32 [sums + 4], r4
  exit
)");
  pe.run_ok();
  EXPECT_EQ(pe.read<float>("y", 4), (std::vector<float>{3, 5, 7, 9}));
  EXPECT_EQ(pe.read<float>("sums", 2), (std::vector<float>{10, 30}));
}

TEST(Dsd, Mem4dWalksDimensionZeroFastest) {
  // A 2x3 row-major matrix read column by column (transpose): extents {2, 3}, strides {3, 1}.
  SinglePe pe(kMainTask + R"(
.data
m:      .u32 0, 1, 2, 10, 11, 12
t:      .u32 [6]
.dsd    md = mem4d(m, [2, 3, 1, 1], [3, 1, 0, 0])
.dsd    td = mem1d(t, 6)
.code
main:
  mov32 td, md
  exit
)");
  pe.run_ok();
  EXPECT_EQ(pe.read<uint32_t>("t", 6), (std::vector<uint32_t>{0, 10, 1, 11, 2, 12}));
}

TEST(Dsd, CircularBufferWrapsAndContinues) {
  SinglePe pe(kMainTask + R"(
.data
ring:   .u32 1, 2, 3, 4
a:      .u32 [6]
b:      .u32 [6]
.dsd    ringd = circbuf(ring, 4)
.dsd    ad = mem1d(a, 6)
.dsd    bd = mem1d(b, 6)
.code
main:
  mov32 ad, ringd
  mov32 bd, ringd
  exit
)");
  pe.run_ok();
  EXPECT_EQ(pe.read<uint32_t>("a", 6), (std::vector<uint32_t>{1, 2, 3, 4, 1, 2}));
  EXPECT_EQ(pe.read<uint32_t>("b", 6), (std::vector<uint32_t>{3, 4, 1, 2, 3, 4}));
}

TEST(Dsd, FifoPushThenPopKeepsOrder) {
  SinglePe pe(kMainTask + R"(
.data
in:     .u32 5, 6, 7
buf:    .u32 [4]
popped: .u32 [3]
counts: .u32 [2]
.dsd    ind = mem1d(in, 3)
.dsd    fifod = fifo(buf, 4)
.dsd    outd = mem1d(popped, 3)
.code
main:
  mov32 fifod, ind
  fifocount r1, fifod
  mov32 outd, fifod
  fifocount r2, fifod
  st32 [counts], r1
  st32 [counts + 4], r2
  exit
)");
  pe.run_ok();
  EXPECT_EQ(pe.read<uint32_t>("popped", 3), (std::vector<uint32_t>{5, 6, 7}));
  EXPECT_EQ(pe.read<uint32_t>("counts", 2), (std::vector<uint32_t>{3, 0}));
}

TEST(Dsd, FabricInToMemoryAndMemoryToFabricOut) {
  auto p = assemble(R"(
.arch wse2
.task main, local, 10
.data
got:    .u32 [3]
src:    .u32 7, 8
.dsd    inq = fabin(1, 2, 3)
.dsd    gotd = mem1d(got, 3)
.dsd    src16 = mem1d.16(src, 2)        ; the two u32 words read as 16-bit elements
.dsd    outq = fabout.16(2, 3, 2)
.code
main:
  mov32 gotd, inq
  dsdindex outq, 0x55
  mov16 outq, src16
  exit
)");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p);
  w.set_route(0, 0, 1, route("W", "R"));
  w.set_route(0, 0, 2, route("R", "E"));
  for (uint32_t v : {100u, 200u, 300u}) ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(1, v)));
  w.activate_task(0, 0, 10);
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, addr(*p, "got"), 3), (std::vector<uint32_t>{100, 200, 300}));
  // 16-bit values 7 and 8 (the low halves of the two u32 words) with index 0x55 on top.
  std::vector<uint32_t> out;
  while (auto wl = w.pop_edge(0, 0, Direction::EAST)) out.push_back(wl->payload);
  EXPECT_EQ(out, (std::vector<uint32_t>{0x55 << 16 | 7, 0x55 << 16 | 0}));
}

TEST(Dsd, HalfPrecisionAndSixteenBitInteger) {
  SinglePe pe(kMainTask + R"(
.data
a:      .f16 1.5, -2.0, 0.25, 65504
b:      .f16 0.5, 3.0, 0.25, 65504
hsum:   .f16 [4]
sum:    .f32 [4]
u:      .u16 0xFFFF, 0x0001, 0x7FFF
v:      .u16 0x0001, 0x0000, 0x0001
carry:  .u16 [3]
mac:    .f16 [4]
.dsd    ad = mem1d(a, 4)
.dsd    bd = mem1d(b, 4)
.dsd    hsumd = mem1d(hsum, 4)
.dsd    sumd = mem1d(sum, 4)
.dsd    ud = mem1d(u, 3)
.dsd    vd = mem1d(v, 3)
.dsd    carryd = mem1d(carry, 3)
.dsd    macd = mem1d(mac, 4)
.code
main:
  faddh hsumd, ad, bd
  fh2s sumd, hsumd
  addc16 carryd, ud, vd
  fmach macd, ad, ad, bd
  exit
)");
  pe.run_ok();
  // 1.5+0.5 = 2, -2+3 = 1, 0.25+0.25 = 0.5, 65504+65504 overflows to +inf.
  const auto sum = pe.read<float>("sum", 4);
  EXPECT_EQ(sum[0], 2.0f);
  EXPECT_EQ(sum[1], 1.0f);
  EXPECT_EQ(sum[2], 0.5f);
  EXPECT_TRUE(std::isinf(sum[3]));
  // 0xFFFF + 1 = 0 carry 1; 1 + 0 + 1 = 2; 0x7FFF + 1 = 0x8000.
  EXPECT_EQ(pe.read<uint16_t>("carry", 3), (std::vector<uint16_t>{0, 2, 0x8000}));
  // fmach: a + a*b = 1.5 + 0.75 = 2.25; -2 - 6 = -8; 0.25 + 0.0625 = 0.3125.
  const auto mac = pe.read<uint16_t>("mac", 3);
  EXPECT_EQ(isa::fp16_to_fp32(mac[0]), 2.25f);
  EXPECT_EQ(isa::fp16_to_fp32(mac[1]), -8.0f);
  EXPECT_EQ(isa::fp16_to_fp32(mac[2]), 0.3125f);
}

// Cycles from the `tsc` before an op to the one after it: 1 (tsc) + startup + ceil(len/width).
// `op` works on `x` (xd) and `y` (yd), LEN elements each.
uint32_t measure(const char* arch, const std::string& op, int length) {
  const std::string source = std::string(".arch ") + arch + "\n.data\n" + xy_vectors("LEN") + R"(cycles: .u32 [1]
.code
main:
  tsc r1
  )" + op + R"(
  tsc r2
  sub r3, r2, r1
  st32 [cycles], r3
  exit
)";
  SinglePe pe(kMainTask + ".equ LEN, " + std::to_string(length) + "\n" + source);
  pe.run_ok();
  return pe.word("cycles");
}

TEST(Dsd, VectorTimingFollowsTheSimdWidthTable) {
  // startup 2; fadds is 2 wide on wse2, 4 on wse3; fmacs is 1 wide on both.
  EXPECT_EQ(measure("wse2", "fadds yd, yd, xd", 10), 1u + 2 + 5);
  EXPECT_EQ(measure("wse3", "fadds yd, yd, xd", 10), 1u + 2 + 3);
  EXPECT_EQ(measure("wse2", "fmacs yd, yd, xd, xd", 10), 1u + 2 + 10);
  EXPECT_EQ(measure("wse3", "fmacs yd, yd, xd, xd", 10), 1u + 2 + 10);
  EXPECT_EQ(measure("wse2", "fadds yd, yd, xd", 0), 1u + 2);
}

TEST(Dsd, DescriptorMutators) {
  // dsdbase / dsdlen / dsdstride / dsdinc / dsdaddr on a copy of a template.
  SinglePe pe(kMainTask + R"(
.data
v:      .u32 1, 2, 3, 4, 5, 6, 7, 8
picked: .u32 [2]
base:   .u32 [1]
.dsd    tmpl = mem1d(v, 8)
.dsd    pickd = mem1d(picked, 2)
.code
main:
  dsdcopy d20, tmpl     ; d20 has no initial contents: all of it comes from the template
  dsdlen d20, 2
  dsdstride d20, 3
  dsdinc d20, 1         ; base += 4 bytes: starts at element 1
  mov32 pickd, d20      ; elements 1 and 4: {2, 5}
  dsdaddr r1, d20
  st32 [base], r1
  exit
)");
  pe.run_ok();
  EXPECT_EQ(pe.read<uint32_t>("picked", 2), (std::vector<uint32_t>{2, 5}));
  // Element 1 of v: the address differs from the old fixed layout, the offset does not.
  EXPECT_EQ(pe.word("base"), addr(*pe.program, "v") + 4);
}

}  // namespace
}  // namespace wsemu::testing
