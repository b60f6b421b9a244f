// Run-time indexing through pointers (tests/compiler/programs/pointers): comptime pointers handed
// to a module as params (*[N]T and [*]T at &array and &array[k]), consts &array[k] and &scalar
// read and written through .*, run-time [*]T and *[N]T parameters indexed as p[i] and (p.*)[i],
// and a [*]T variable, 16- and 32-bit, signed and unsigned, read and written. Every expected
// value is worked by hand from pe.csl's initial arrays, in the order run() changes them.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/compiler/csl_test_support.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

// a16 = {10, 20, 30, 40, 50, 60}, s16 = {-1, -2, -3, -4}, a32 = {100000, 200000, 300000, 400000},
// f3 = {1.5, 2.5, 3.5}, one32 = 7; k = 1, j = 2.
const std::vector<uint32_t> kWant = {
    210,          // sum of a16 through *[6]u16
    1040,         // a16[3] = 40 + 1000 through [*]u16 = &a16[2], element k
    800000,       // a32 doubled through *[4]u32: a32[3] = 2 * 400000
    4294967286u,  // -1 - 2 - 3 - 4 = -10 through a run-time [*]i16 (sign-extending loads), as u32
    15,           // f3 doubled through a run-time *[3]f32: 3 + 5 + 7
    12345,        // a32[k] written through a run-time *[4]u32 indexed directly
    154,          // 77 written to a16[5] through a run-time [*]u16, read back there (77) and directly (77)
    600005,       // gp[j] += 5 through the [*]u32 variable: a32[2] = 2 * 300000 + 5
    11,           // a16[0] written through const *u16 = &a16[0]
    10,           // one32 += 3 through const &one32
    800000,       // (mid32.*)[k] with mid32 = &a32[2]: a32[3]
    9,            // (mid32.*)[0] = 9 wrote a32[2]
    50,           // at4.* with const at4: *u16 = &a16[4]
};

TEST(CslPointers, IndexingThroughPointersMatchesHandWorkedValues) {
  expect_words_after_launch("pointers", {3, 3, 1, 1}, "run", {"out", 1, 1, int(kWant.size())}, kWant);
}

// Element addresses through pointers (tests/compiler/programs/element_address): &p[i] of a
// run-time [*]u32 parameter (run-time and comptime index), of a [*]u32 variable and of a comptime
// [*]u16, and memory DSDs based at &p[k] of two [*]f32 variables swapped at run time. Worked by
// hand from pe.csl's arrays: a32 = {1, 2, 3, 4, 5, 6}, a16 = {10, 20, 30, 40, 50},
// x = {0, 1, ..., 7}, y = {10, 11, ..., 17}.
TEST(CslPointers, ElementAddressesThroughPointersMatchHandWorkedValues) {
  const std::vector<uint32_t> want = {
      1,     // bump_at returns p[0] = a32[0]: p itself is unchanged by &p[i] and &p[1]
      104,   // a32[3] = 4 + 100 through &p[i], i = 3
      1002,  // a32[1] = 2 + 1000 through &p[1]
      77,    // a32[2] written through &p32[2]
      99,    // a16[3] written through &q[2], q = &a16[1]
      21,    // x[1], x[3], x[5] += 0.5 through a DSD at &xp[1], stride 2: 2 * (1.5 + 3.5 + 5.5)
      27,    // moved back one element: x[0], x[2], x[4] += 0.25: 4 * (0.25 + 2.25 + 4.25)
      12,    // after the swap, x[6..7] (at &yp[k], k = 6) = y[2..3] (at &xp[2])
      13,
  };
  expect_words_after_launch("element_address", {3, 3, 1, 1}, "run", {"out", 1, 1, int(want.size())}, want);
}

// A pointer made from an address with @bitcast(*u16, a) reaches the router's configuration
// registers of WSE-2 (tests/compiler/programs/fabric_registers, emulator/fabric_registers.hpp),
// as the SDK's spmv-hypersparse reconfigures its reduction color. Color 5 as the layout sets it:
// tx RAMP (0x10) | rx W (0x20) | pop on advance (2 << 12) | teardown in progress (0x4000); position
// 1 rx RAMP (0xC), positions 2, 3 invalid (0x5 each), ring mode (0x1000). Rewritten: position 0
// rx N (0x100), tx RAMP (0x10); position 1 invalid with its select bit kept (0xD).
TEST(CslPointers, ABitcastAddressReachesTheRouterConfigurationRegisters) {
  LoadedRuntime rt(executable_of(compile_csl_kernel(
      source_dir() + "/tests/compiler/programs/fabric_registers/layout.csl", {}, "wse2", {3, 3, 1, 1}, "wsemu-csl-fabric-registers")));
  launch_and_settle(rt, "run");
  runtime::host::MemcpyOptions halves;
  halves.data_type = runtime::host::MemcpyDataType::MEMCPY_16BIT;
  EXPECT_EQ(read_back(rt, "words", 0, 0, 1, 1, 4, halves),
            (std::vector<uint32_t>{0x6030, 0x155C, 0x6110, 0x155D}));
}

// An exported run-time pointer variable that a launched function swaps (tests/compiler/programs/
// exported_pointer, three PEs in a row, so commands for the east PEs are relayed): the host's
// copies of "v" follow the pointer at the time of each copy, as the SDK's do, through the
// firmware and through the back door alike; "fixed" (a const pointer) always names `second`.
// Values worked by hand from pe.csl: first = {1, 2, 3, 4}, second = {10, 20, 30, 40}.
TEST(CslPointers, CopiesOfAnExportedPointerVariableFollowThePointer) {
  auto words = [](std::vector<float> f) {
    std::vector<uint32_t> w;
    for (float x : f) w.push_back(std::bit_cast<uint32_t>(x));
    return w;
  };
  const std::vector<uint32_t> second = words({10, 20, 30, 40, 10, 20, 30, 40, 10, 20, 30, 40});
  const std::vector<uint32_t> written = words({1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5});
  const std::vector<uint32_t> again = words({-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12});
  for (const std::string arch : {"wse2", "wse3"})
    for (const bool backdoor : {false, true}) {
      SCOPED_TRACE(arch + (backdoor ? " back door" : " firmware"));
      runtime::host::RuntimeOptions options;
      options.backdoor = backdoor;
      const compiler::csl::CslResult r = compile_test_program("exported_pointer", {}, arch, {5, 3, 1, 1});
      LoadedRuntime rt(executable_of(r), options);
      ASSERT_TRUE(rt.executable().find_symbol("v")->indirect);
      EXPECT_FALSE(rt.executable().find_symbol("fixed")->indirect);
      rt.memcpy_h2d("v", written, 0, 0, 3, 1, 4);        // into first
      launch_and_settle(rt, "swap");                      // v -> second
      EXPECT_EQ(read_back(rt, "v", 0, 0, 3, 1, 4), second);
      EXPECT_EQ(rt.read_symbol(1, 0, "v"), words({10, 20, 30, 40}));
      rt.memcpy_h2d("v", again, 0, 0, 3, 1, 4);          // into second
      EXPECT_EQ(read_back(rt, "fixed", 0, 0, 3, 1, 4), again);
      launch_and_settle(rt, "swap");                      // v -> first
      EXPECT_EQ(read_back(rt, "v", 0, 0, 3, 1, 4), written);
      EXPECT_EQ(rt.read_symbol(2, 0, "v"), words({9.5, 10.5, 11.5, 12.5}));
      // A row broadcast goes to each PE's own pointer.
      rt.memcpy_h2d_rowbcast("v", words({7, 8, 9, 6}), 0, 0, 3, 1, 4);
      EXPECT_EQ(read_back(rt, "v", 0, 0, 3, 1, 4), words({7, 8, 9, 6, 7, 8, 9, 6, 7, 8, 9, 6}));
      EXPECT_EQ(read_back(rt, "fixed", 0, 0, 3, 1, 4), again);
    }
}

}  // namespace
}  // namespace wsemu::testing
