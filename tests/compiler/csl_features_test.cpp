// CSL language features run end to end (tests/compiler/programs/*): each program is compiled by
// compile_csl, run on the host runtime through the memcpy firmware, and its outputs compared with
// values worked out here by hand or with the same formula in C++ (never with the emulator's own
// output).
#include <bit>
#include <cstring>

#include "compiler/csl/cslc.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/compiler/csl_test_support.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::SdkRuntime;

compiler::csl::CslResult compile_program(const std::string& name, const std::vector<std::pair<std::string, std::string>>& params,
                                         const std::string& arch) {
  return compile_csl_kernel(source_dir() + "/tests/compiler/programs/" + name + "/layout.csl", params, arch, {3, 3, 1, 1},
                            "wsemu-csl-features-" + name + "-" + arch);
}

// A local task activated at comptime runs when the program loads, before any host call; one
// activated and blocked at comptime waits for its @unblock (tests/compiler/programs/activate).
// (A task left activated and blocked when the wafer goes quiet is a hang, as before.)
TEST(CslActivate, ComptimeActivatedTaskRunsAtLoad) {
  const int N = 9;
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    auto r = compile_program("activate", {{"N", std::to_string(N)}}, arch);
    ASSERT_TRUE(r.ok()) << compiler::layout::format_diagnostics(r.diagnostics);
    const std::string& wsa = r.programs.at("pe_0.wsa");
    EXPECT_NE(wsa.find(", local, 10, activated"), std::string::npos) << wsa;
    EXPECT_NE(wsa.find(", local, 11, blocked, activated"), std::string::npos) << wsa;
    LoadedRuntime rt(*r.executable);
    rt.run_until_quiescent();
    std::vector<uint32_t> table = read_back(rt, "table", 0, 0, 1, 1, N);
    std::vector<uint32_t> gate = read_back(rt, "gate", 0, 0, 1, 1, 1);
    for (int i = 0; i < N; ++i) EXPECT_EQ(table[size_t(i)], uint32_t(3 * i + 1)) << "table[" << i << "]";
    EXPECT_EQ(gate[0], uint32_t(3 * (N - 1) + 1 + 7)) << "the blocked task ran before the table was filled, or never";
    launch_and_settle(rt, "again");
    gate = read_back(rt, "gate", 0, 0, 1, 1, 1);
    EXPECT_EQ(gate[0], uint32_t(2 * (3 * (N - 1) + 1 + 7) + 100));
  }
}

// @map over DSDs, scalars and pointers (tests/compiler/programs/map); the reference applies the
// program's callbacks element by element in C++, in the program's order of operations.
TEST(CslMap, CallbackAppliedPerElement) {
  const int N = 5;
  const xt::xarray<float> m0 = random_array({size_t(N), size_t(N)}, 71), w = random_array({size_t(N)}, 72);
  const std::vector<int32_t> c0 = {3, -8, 12, 40, -5};
  std::vector<float> m(m0.begin(), m0.end()), diag(N);
  std::vector<int32_t> c = c0;
  int32_t sum = 0, squares = 0;
  for (int i = 0; i < N; ++i) diag[size_t(i)] = m[size_t(i * N + i)] / 2.0f + 1.0f;
  for (int i = 0; i < N; ++i) {
    const float k = 3.0f + w(size_t(i));
    m[size_t(i * N + i)] = m[size_t(i * N + i)] * k - 0.5f;
  }
  for (int i = 0; i < N; ++i) sum += c[size_t(i)];
  for (int j = 0; j < N / 2; ++j) c[size_t(2 * j + 1)] *= 10;
  for (int i = 0; i < N; ++i) squares += c[size_t(i)] * c[size_t(i)];
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    LoadedRuntime rt(executable_of(compile_program("map", {{"N", std::to_string(N)}}, arch)));
    rt.memcpy_h2d("m", words(m0), 0, 0, 1, 1, N * N);
    rt.memcpy_h2d("w", words(w), 0, 0, 1, 1, N);
    std::vector<uint32_t> cw(c0.begin(), c0.end());
    rt.memcpy_h2d("c", cw, 0, 0, 1, 1, N);
    rt.launch("run");
    std::vector<uint32_t> got_m = read_back(rt, "m", 0, 0, 1, 1, N * N);
    std::vector<uint32_t> got_diag = read_back(rt, "diag", 0, 0, 1, 1, N);
    std::vector<uint32_t> got_c = read_back(rt, "c", 0, 0, 1, 1, N);
    std::vector<uint32_t> got_sums = read_back(rt, "sums", 0, 0, 1, 1, 2);
    for (int i = 0; i < N * N; ++i) EXPECT_EQ(std::bit_cast<float>(got_m[size_t(i)]), m[size_t(i)]) << "m element " << i;
    for (int i = 0; i < N; ++i) EXPECT_EQ(std::bit_cast<float>(got_diag[size_t(i)]), diag[size_t(i)]) << "diag[" << i << "]";
    for (int i = 0; i < N; ++i) EXPECT_EQ(int32_t(got_c[size_t(i)]), c[size_t(i)]) << "c[" << i << "]";
    EXPECT_EQ(int32_t(got_sums[0]), sum);
    EXPECT_EQ(int32_t(got_sums[1]), squares);
  }
}

// Scalar f16 arithmetic (tests/compiler/programs/half): the reference is the compiler's own
// _Float16, each operation rounded to f16 as CSL does.
TEST(CslHalf, ScalarArithmeticRoundsEachOperationToF16) {
  const std::vector<float> av = {1.5f, -2.25f, 0.1f, 100.0f, 3.0f, 65504.0f, 0.000061f, 7.0f};
  const std::vector<float> bv = {0.5f, 3.0f, 0.3f, -0.07f, 3.0f, 2.0f, 3.0f, -1.5f};
  const int N = int(av.size());
  auto bits16 = [](_Float16 h) { return uint32_t(std::bit_cast<uint16_t>(h)); };
  std::vector<uint32_t> a, b, want_h, want_s;
  for (int i = 0; i < N; ++i) {
    const _Float16 x = _Float16(av[size_t(i)]), y = _Float16(bv[size_t(i)]);
    a.push_back(bits16(x));
    b.push_back(bits16(y));
    want_h.push_back(bits16(_Float16(x + y)));
    want_h.push_back(bits16(_Float16(_Float16(x * y) - _Float16(0.25f))));
    want_h.push_back(bits16(_Float16(x / y)));
    want_h.push_back(bits16(_Float16(-x)));
    want_s.push_back(std::bit_cast<uint32_t>(float(_Float16(x / _Float16(2.0f))) + 1.0f));
    want_s.push_back(std::bit_cast<uint32_t>(float(x) < float(y) ? 1.0f : 0.0f));
  }
  runtime::host::MemcpyOptions half;
  half.data_type = runtime::host::MemcpyDataType::MEMCPY_16BIT;
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    LoadedRuntime rt(executable_of(compile_program("half", {{"N", std::to_string(N)}}, arch)));
    rt.memcpy_h2d("a", a, 0, 0, 1, 1, N, half);
    rt.memcpy_h2d("b", b, 0, 0, 1, 1, N, half);
    rt.launch("run");
    std::vector<uint32_t> h = read_back(rt, "h", 0, 0, 1, 1, 4 * N, half);
    std::vector<uint32_t> s = read_back(rt, "s", 0, 0, 1, 1, 2 * N);
    for (auto& v : h) v &= 0xFFFFu;
    EXPECT_EQ(h, want_h);
    EXPECT_EQ(s, want_s);
  }
}

// Comptime assignment to array elements and struct fields (tests/compiler/programs/
// comptime_assign): the arrays the comptime functions fill, worked out by hand; the address of a
// const comptime array; comptime `for` over an array (element and index), a tuple and @zeros.
TEST(CslComptimeAssign, ElementsAndFieldsOfComptimeLocals) {
  std::vector<int32_t> tab;
  for (int k = 0; k < 8; ++k) tab.push_back(k * k - 3);
  tab[7] += 100;
  const std::vector<float> grid = {1.5f, 4.5f, 1.5f, 1.5f, 1.5f, -4.0f};
  const std::vector<int32_t> fields = {5, 10, 11};
  const std::vector<int32_t> each = {3 * 0 - 1 * 1 + 7 * 2 + 2 * 3, 1, 10 + 20 + 5, 5};
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    LoadedRuntime rt(executable_of(compile_program("comptime_assign", {}, arch)));
    std::vector<uint32_t> got_tab = read_back(rt, "tab", 0, 0, 1, 1, 8);
    std::vector<uint32_t> got_grid = read_back(rt, "grid", 0, 0, 1, 1, 6);
    std::vector<uint32_t> got_fields = read_back(rt, "fields", 0, 0, 1, 1, 3);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(int32_t(got_tab[size_t(i)]), tab[size_t(i)]) << "tab[" << i << "]";
    for (int i = 0; i < 6; ++i) EXPECT_EQ(std::bit_cast<float>(got_grid[size_t(i)]), grid[size_t(i)]) << "grid element " << i;
    for (int i = 0; i < 3; ++i) EXPECT_EQ(int32_t(got_fields[size_t(i)]), fields[size_t(i)]) << "fields[" << i << "]";
    std::vector<uint32_t> got_each = read_back(rt, "each", 0, 0, 1, 1, 4);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(int32_t(got_each[size_t(i)]), each[size_t(i)]) << "each[" << i << "]";
    rt.launch("run");
    std::vector<uint32_t> copied = read_back(rt, "copied", 0, 0, 1, 1, 8);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(int32_t(copied[size_t(i)]), tab[size_t(i)]) << "copied[" << i << "] (through &squares_c)";
  }
}

// A counter filter and 32-bit operations over a 16-bit array (tests/compiler/programs/
// counter_filter): of six words sent east, the receiver's router counts 1, 2, 0, 1, 2, 0 and lets
// the wavelets counted <= 1 reach its core: words 0, 2, 3 and 5, stored as u16 halves, low first.
TEST(CslCounterFilter, CountedWaveletsReachTheCoreWhileTheCounterIsAtMostItsMax) {
  const std::vector<uint32_t> x = {0x00020001, 0x00040003, 0x00060005, 0x00080007, 0x000A0009, 0x000C000B};
  std::vector<uint32_t> want;
  for (int k : {0, 2, 3, 5}) {
    want.push_back(x[size_t(k)] & 0xFFFF);
    want.push_back(x[size_t(k)] >> 16);
  }
  runtime::host::MemcpyOptions half;
  half.data_type = runtime::host::MemcpyDataType::MEMCPY_16BIT;
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    auto r = compile_program("counter_filter", {}, arch);
    ASSERT_TRUE(r.ok()) << compiler::layout::format_diagnostics(r.diagnostics);
    EXPECT_NE(r.layout_wsl.find("counter_filter [1, 1, 2] counts data"), std::string::npos) << r.layout_wsl;
    LoadedRuntime rt(*r.executable);
    rt.memcpy_h2d("x", x, 0, 0, 1, 1, 6);
    launch_and_settle(rt, "run");
    std::vector<uint32_t> y = read_back(rt, "y", 1, 0, 1, 1, 8, half);
    for (auto& v : y) v &= 0xFFFFu;
    EXPECT_EQ(y, want);
  }
}

// Vector-op options in a named const, a module param of type `task () void`, and the address
// of a 2-D array's element, p.*[i] of a run-time pointer to an array, a DSD based at a run-time
// pointer with nested changes, a run-time enum compared and stored, an untyped param, a DSD
// based at an array, @assert(false) in a branch not taken, a pointer variable indexed, one color
// named with two input queues by unused DSDs (tests/compiler/programs/options), worked by hand.
TEST(CslOptions, NamedOptionsTaskParamAndElementAddress) {
  const std::vector<float> src = {1.0f, -2.5f, 3.25f, 8.0f};
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    auto r = compile_program("options", {}, arch);
    ASSERT_TRUE(r.ok()) << compiler::layout::format_diagnostics(r.diagnostics);
    EXPECT_NE(r.programs.at("pe_0.wsa").find("activate=12"), std::string::npos) << r.programs.at("pe_0.wsa");
    EXPECT_NE(r.programs.at("pe_0.wsa").find("; input queue 6 not bound: color 15 is bound to queue 5"), std::string::npos);
    LoadedRuntime rt(*r.executable);
    std::vector<uint32_t> sw;
    for (float v : src) sw.push_back(std::bit_cast<uint32_t>(v));
    rt.memcpy_h2d("src", sw, 0, 0, 1, 1, 4);
    launch_and_settle(rt, "run");
    std::vector<uint32_t> dst = read_back(rt, "dst", 0, 0, 1, 1, 4);
    std::vector<uint32_t> grid = read_back(rt, "grid", 0, 0, 1, 1, 6);
    EXPECT_EQ(dst, sw);
    const std::vector<float> want = {1.0f, 3.25f, 8.0f, 6.0f, 8.0f, 16.0f};
    for (int i = 0; i < 6; ++i) EXPECT_EQ(std::bit_cast<float>(grid[size_t(i)]), want[size_t(i)]) << "grid element " << i;
    std::vector<uint32_t> win = read_back(rt, "win", 0, 0, 1, 1, 2);
    EXPECT_EQ(win, (std::vector<uint32_t>{sw[1], sw[2]}));
    std::vector<uint32_t> head = read_back(rt, "head", 0, 0, 1, 1, 2);
    EXPECT_EQ(head[0], sw[0]);
    EXPECT_EQ(head[1], sw[0]) << "a placeholder over an i16 array based at an f32 array";
  }
}

// 16-bit integers wrap where their upper bits would show (tests/compiler/programs/wrap16); the
// reference is the same arithmetic on uint16_t / int16_t in C++.
TEST(CslWrap16, SumsProductsAndShiftsWrapToTheirType) {
  const uint16_t a = 0xFFF0, b = 0x0020;
  const int16_t c = 0x7FFF, d = 1;
  const auto u16 = [](int v) { return uint16_t(v); };
  const std::vector<uint32_t> want = {
      uint32_t(u16(a + b) < a),
      u16(a + b),
      uint32_t(u16(a + b) >> 1),
      uint32_t(u16(a * 2) / 16),
      uint32_t(int16_t(c + d) < 0),
      uint32_t(int32_t(int16_t(c + d))),
      uint32_t(u16(a + b) == 0x10),
      uint32_t(u16(a + b) < 0x100),
      u16(a + b),
      uint32_t(u16(a << 4) >> 4),
      uint32_t(u16(a + b) < a),
      uint32_t(int16_t(c + d) > 0),
      uint32_t(int16_t(1) << 11),
      uint32_t(int32_t(int16_t(c >> (b >> 4)))),
      uint32_t(int32_t(int16_t((d - 3) * (1 << (b >> 4))))),
      20};  // chosen = 3 is mode.second
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    LoadedRuntime rt(executable_of(compile_program("wrap16", {}, arch)));
    runtime::host::MemcpyOptions half;
    half.data_type = runtime::host::MemcpyDataType::MEMCPY_16BIT;
    rt.memcpy_h2d("u", std::vector<uint32_t>{a, b}, 0, 0, 1, 1, 2, half);
    rt.memcpy_h2d("s", std::vector<uint32_t>{uint16_t(c), uint16_t(d)}, 0, 0, 1, 1, 2, half);
    launch_and_settle(rt, "run");
    std::vector<uint32_t> out = read_back(rt, "out", 0, 0, 1, 1, int(want.size()));
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(out[i], want[i]) << "out[" << i << "]";
  }
}

// i8 and u8 wrap to 8 bits at run time (tests/compiler/programs/wrap8); the reference is the same
// arithmetic on int8_t / uint8_t in C++, the loop's counts worked by hand (120 counts up to 127,
// then wraps to -128 on the 8th step).
TEST(CslWrap8, EightBitIntegersWrapToTheirType) {
  const int16_t h = 200, minus_one = -1, five = 5;
  const auto i8 = [](int v) { return uint32_t(int32_t(int8_t(v))); };
  const auto u8 = [](int v) { return uint32_t(uint8_t(v)); };
  const std::vector<uint32_t> want = {
      i8(127 + 1),                // top += 1
      u8(255 + 1),                // full += 1
      i8(-128 - 1),               // bottom -= 1
      i8(h),                      // @as(i8, 200)
      u8(h),                      // @as(u8, 200)
      u8(int8_t(127 + 1)),        // @as(u8, top)
      i8(uint8_t(minus_one)),     // @as(i8, @as(u8, -1))
      i8(int8_t(five * 3) * 9),   // p = 5 * 3; p *= 9
      u8(uint8_t(u8(h) + 43) << 4) >> 4,
      i8(-int8_t(127 + 1)),       // -top
      u8(~uint8_t(255 + 1)),      // ~full
      i8(int8_t(127 + 1) / int8_t(minus_one)),
      uint32_t(int8_t(int8_t(h) + int8_t(127 + 1)) > 0),
      i8(int8_t(five + 122) + 1),  // next(127)
      uint32_t(int32_t(int8_t(127 + 1)) + 1000),
      3,    // count up to sides
      8,    // steps of c from 120 while c > 0
      i8(-128)};
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    LoadedRuntime rt(executable_of(compile_program("wrap8", {}, arch)));
    runtime::host::MemcpyOptions half;
    half.data_type = runtime::host::MemcpyDataType::MEMCPY_16BIT;
    rt.memcpy_h2d("s", std::vector<uint32_t>{uint16_t(h), uint16_t(minus_one), uint16_t(five)}, 0, 0, 1, 1, 3, half);
    launch_and_settle(rt, "run");
    std::vector<uint32_t> out = read_back(rt, "out", 0, 0, 1, 1, int(want.size()));
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(out[i], want[i]) << "out[" << i << "]";
  }
}

// Registers kept across a call in a program whose data passes a memory operand's 32 KiB reach
// (tests/compiler/programs/far_spill): the save words' address goes through a register too.
// Worked by hand: { 3 + 2 * 10, 3 * 7 }.
TEST(CslFarSpill, CallWithLiveLocalsPastTheOperandReach) {
  expect_words_after_launch("far_spill", {3, 3, 1, 1}, "run", {"out", 1, 1, 2}, {23, 21});
}

}  // namespace
}  // namespace wsemu::testing
