// The CSL standard libraries written for wsemu (compiler/csl/lib: <math>, <random>, <control>,
// <memcpy/memcpy_switches>, <directions>, <simprint>, <debug>) run end to end: tests/compiler/programs/stdlib compiled by compile_csl, run on
// the host runtime, and its outputs checked against references of the test's own: <cmath>,
// the SDK's documented @random16 generator stepped one LFSR step at a time, control payloads and
// log lines worked by hand from isa/README.md, and control tasks that must run with the data the
// payloads carry.
#include <bit>
#include <cmath>
#include <filesystem>

#include "compiler/csl/cslc.hpp"
#include "tests/compiler/csl_test_support.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

namespace fs = std::filesystem;
using runtime::host::SdkRuntime;

// Relative distance in units of float epsilon (exact matches and equal infinities are 0).
double ulps(float got, float want) {
  if (got == want) return 0.0;
  return std::fabs(double(got) - double(want)) / (std::fabs(double(want)) * double(std::numeric_limits<float>::epsilon()));
}

TEST(CslStdlib, MathRandomControlDirections) {
  const std::vector<float> x = {4.0f, 2.0f, 0.25f, 1e-15f, 3e18f, -3.0f, 0.0f, 7.5f, 123456.7f, 1.0f};
  const int N = int(x.size());
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    LoadedRuntime rt = test_program_runtime("stdlib", {{"N", std::to_string(N)}}, arch, {3, 3, 1, 1});
    std::vector<uint32_t> xw;
    for (float v : x) xw.push_back(std::bit_cast<uint32_t>(v));
    rt.memcpy_h2d("x", xw, 0, 0, 1, 1, N);
    rt.launch("compute");
    std::vector<uint32_t> m = read_back(rt, "math_out", 0, 0, 1, 1, 5 * N);
    std::vector<uint32_t> rnd = read_back(rt, "rand_out", 0, 0, 1, 1, 2 * N);
    std::vector<uint32_t> ctl = read_back(rt, "ctrl_out", 0, 0, 1, 1, 6);
    std::vector<uint32_t> bits = read_back(rt, "rand_bits", 0, 0, 1, 1, 7);
    // <debug>: the two buffers, worked out by hand from the format in compiler/csl/lib/debug.csl.
    std::vector<uint32_t> trace = read_back(rt, "trace", 0, 0, 1, 1, 24);
    std::vector<uint32_t> times = read_back(rt, "times", 0, 0, 1, 1, 5);
    auto packed = [](const char* four) { return uint32_t(uint8_t(four[0])) | uint32_t(uint8_t(four[1])) << 8 |
                                                uint32_t(uint8_t(four[2])) << 16 | uint32_t(uint8_t(four[3])) << 24; };
    std::vector<uint32_t> want_trace = {17,
                                        0x10004, packed("Hell"), packed("o, t"), packed("race"), 0,  // "Hello, trace"
                                        0x20001, 0x2B0000,                                         // u32: task 43's payload
                                        0x60001, 0xFFFE,                                           // i16 -2
                                        0x40001, 0x40000000,                                       // f32 2.0
                                        0x70001, 1,                                                // bool
                                        0x10001, 0,                                                // ""
                                        0x50001, 7};  // the long string did not fit; the u16 after it did
    want_trace.resize(24, 0);
    EXPECT_EQ(trace, want_trace);
    EXPECT_EQ(times[0], 3u) << "one timestamp; the second does not fit";
    EXPECT_EQ(times[1], 0x80002u);
    EXPECT_GT(times[2], 0u);
    EXPECT_LT(times[2], rt.cycles());
    EXPECT_EQ(times[3], 0u) << "bits 47..32";
    EXPECT_EQ(times[4], 0u);

    std::vector<std::string> log;
    for (const auto& line : rt.wafer().take_log()) {
      EXPECT_EQ(line.x, 1);  // the kernel rectangle's PE (0, 0) at fabric offset (1, 1)
      EXPECT_EQ(line.y, 1);
      log.push_back(line.text);
    }
    // <simprint>: one entry per call, the values formatted as their names say.
    const std::vector<std::string> want_log = {"stdlib: \"begin\" 100%\n", "9", "680002", "-5", "2", "beef", "4000000000"};
    EXPECT_EQ(log, want_log);
    std::printf("stdlib %s: %d elements, cycles %llu\n", arch.c_str(), N, (unsigned long long)rt.cycles());

    auto f = [&](int k) { return std::bit_cast<float>(m[size_t(k)]); };
    for (int i = 0; i < N; ++i) {
      SCOPED_TRACE("x = " + std::to_string(x[size_t(i)]));
      const float v = x[size_t(i)];
      if (v < 0) {
        EXPECT_TRUE(std::isnan(f(5 * i))) << "sqrt of a negative";
        EXPECT_TRUE(std::isnan(f(5 * i + 1))) << "invsqrt of a negative";
      } else {
        EXPECT_LE(ulps(f(5 * i), std::sqrt(v)), 1.0) << "sqrt " << f(5 * i);
        EXPECT_LE(ulps(f(5 * i + 1), 1.0f / std::sqrt(v)), 2.0) << "invsqrt " << f(5 * i + 1);
      }
      EXPECT_EQ(f(5 * i + 2), 1.0f / v) << "inv";
      EXPECT_EQ(f(5 * i + 3), std::fabs(v)) << "abs";
      EXPECT_LE(ulps(f(5 * i + 4), std::fabs(v)), 1.0) << "sqrt(x * x) " << f(5 * i + 4);
    }
    EXPECT_TRUE(std::isinf(f(5 * 6 + 1)) && f(5 * 6 + 1) > 0) << "invsqrt(0) is +inf";

    // @random16 as the SDK documents it: an LFSR with polynomial x^23 + x^18 + 1 from 0xdeadbeef,
    // a draw is the low 16 bits, then 128 steps; one step here at a time (the library takes 16
    // at once), a step bringing bit 22 xor bit 17 in at bit 0 (compiler/csl/lib/random.csl).
    uint32_t s = 0xdeadbeefu;
    auto draw16 = [&] {
      const uint32_t v = s & 0xFFFFu;
      for (int k = 0; k < 128; ++k) s = (s << 1) | (((s >> 22) ^ (s >> 17)) & 1u);
      return v;
    };
    auto draw32 = [&] {
      const uint32_t high = draw16();
      return high << 16 | draw16();
    };
    EXPECT_EQ(bits[0], 0xBEEFu) << "the first draw: the low half of the documented initial state";
    EXPECT_EQ(bits[0], draw16());
    EXPECT_EQ(bits[1], draw16());
    s = 7;
    for (int i = 0; i < 2 * N; ++i) {
      const float lo = i < N ? -1.0f : 2.0f, hi = i < N ? 1.0f : 5.0f;
      const float u = std::bit_cast<float>((draw32() >> 9) | 0x3F800000u) - 1.0f;
      const float want = lo + (hi - lo) * u;
      const float got = std::bit_cast<float>(rnd[size_t(i)]);
      EXPECT_EQ(got, want) << "draw " << i;
      EXPECT_TRUE(got >= lo && got < hi) << "draw " << i;
    }
    EXPECT_EQ(bits[2], draw32() & 31u) << "random_pow_u32(5)";
    EXPECT_EQ(bits[3], draw32()) << "random_pow_u32(32)";
    draw32();  // random_pow_u32(0) draws and keeps nothing
    EXPECT_EQ(bits[4], 0u) << "random_pow_u32(0)";
    EXPECT_EQ(bits[5], draw32()) << "random_u32";
    // random_f16(1, 2): u = the draw's top 10 bits as the fraction of an f16 in [1, 2), minus 1;
    // 1 + 1 * u is exact in f16 (the ulp in [1, 2) is 2^-10): 0x3C00 | those 10 bits.
    EXPECT_EQ(bits[6], 0x3C00u | (draw16() >> 6)) << "random_f16(1, 2)";

    // Payloads by hand, in the hardware's layout: slot 0's command in bits 23:22, task in 21:16
    // (31: none), data in 15:0; routers only = every slot's no-CE bit (24, 27, 0, 3, 6, 9, 12, 15:
    // 0x09009249) and task 31.
    EXPECT_EQ(ctl[0], 0x09009249u | (1u << 22) | (31u << 16)) << "SWITCH_ADV, routers only";
    EXPECT_EQ(ctl[1], (1u << 22) | (40u << 16) | 2u) << "SWITCH_ADV + task 40, data 2";
    EXPECT_EQ(ctl[2], (3u << 22) | (33u << 16) | 9u) << "TEARDOWN + task 33, run-time data 9";
    EXPECT_EQ(ctl[3], 43u << 16) << "task 43 only";
    EXPECT_EQ(ctl[4], 0x09009249u | (2u << 22) | (31u << 16)) << "SWITCH_RST, routers only";
    EXPECT_EQ(ctl[5], 0xFF800000u) << "NEGATIVE_INF_f32";
    // encode_payload, worked from isa/README.md's layout: SWITCH_ADV in slots 0 (24:22) and 1 (27:25)
    // with slot 1's no-CE bit (27), task 40, run-time data 9; then ADV, RST, TEARDOWN in slots 0..2
    // (slot 2's command in 29:28) with every no-CE bit (24, 27, 0, 3, 6, ..., 15) and no task (31):
    // the data (9 | 0x30: bits 4 and 5 would make slot 4 a TEARDOWN) share bits with slots 2..7
    // and are dropped; the same built at comptime.
    std::vector<uint32_t> payloads = read_back(rt, "payload_out", 0, 0, 1, 1, 3);
    EXPECT_EQ(payloads[0], (1u << 22) | (5u << 25) | (40u << 16) | 9u);
    EXPECT_EQ(payloads[1], (5u << 22) | (6u << 25) | (3u << 28) | 0x9249u | (31u << 16));
    EXPECT_EQ(payloads[2], payloads[1]);
  }
}

// <control> against wsemu's cores: the west PE sends three control wavelets built by the
// library; the east PE's control task 40 must run for each with its 16-bit data in r0.
TEST(CslStdlib, ControlPayloadsRunTheControlTask) {
  expect_words_after_launch("control", {4, 3, 1, 1}, "send", {"seen", 2, 1, 4},
                            {0, 0, 0, 0,              // the sender runs no control task
                             0x1234, 0xBEEF, 0, 3});  // comptime data, run-time data, none; 3 runs
}

// A comptime @unblock of a trigger that no data task is bound to: the id starts unblocked with
// no task, so control wavelets on it run their control task (7 + 100 = 107, last 100, 2 runs).
TEST(CslStdlib, UnblockedUnboundTriggerRunsControlTasks) {
  expect_words_after_launch("unbound_trigger", {4, 3, 1, 1}, "send", {"got", 2, 1, 3}, {0, 0, 0, 107, 100, 2});
}

// <memcpy/memcpy_switches>: the payloads by value (worked from isa/README.md, "Control
// wavelets"), then by effect: switch_cmd_1 advances only the sender's router (a ring of two
// equal positions, so the advance moves it and, pop always, is popped there), so both data words
// reach PE 2;
// switch_cmd_11 also advances PE 1's, which keeps the word after the control wavelet.
TEST(CslStdlib, MemcpySwitchesMoveTheSwitchesTheyName) {
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    LoadedRuntime rt = test_program_runtime("switches", {}, arch, {5, 3, 1, 1});
    std::vector<uint32_t> words = read_back(rt, "words", 0, 0, 1, 1, 5);
    // switch_cmd_1, _11, _111, reset_cmd_1, teardown_cmd_1 in the hardware's layout: task 31 (0x1F0000), every
    // slot's no-CE bit (24, 27, 0, 3, 6, 9, 12, 15: 0x09009249); ADV 1, RST 2, TEARDOWN 3 in slot 0 (bits
    // 23:22), ADV in slot 1 (26:25) and slot 2 (29:28). teardown_cmd_1 is the SDK allreduce's 0x9df9249.
    EXPECT_EQ(words, (std::vector<uint32_t>{0x095F9249, 0x0B5F9249, 0x1B5F9249, 0x099F9249, 0x09DF9249}));
    rt.launch("send_1");
    std::vector<uint32_t> got = read_back(rt, "got", 1, 0, 2, 1, 4);
    EXPECT_EQ(got, (std::vector<uint32_t>{0, 0, 0, 0, 11, 22, 0, 0}));
    rt.launch("send_11");
    got = read_back(rt, "got", 1, 0, 2, 1, 4);
    EXPECT_EQ(got, (std::vector<uint32_t>{22, 0, 0, 0, 11, 22, 11, 0}));
  }
}

// <tile_config> with @set_local_color_config (.teardown = true, pop on advance) and
// @set_teardown_handler: one color, two phases (tests/compiler/programs/tile_config). PE 0 sends
// 21 east and a one-command teardown (ce_ignore), which tears the color down at both routers only
// because it is not popped; both handlers (each seeing bit 4, the color, pending) reverse the
// route and PE 1 sends back 2 * 21. Worked by hand: PE 0 gets 42, PE 1 21. Without the pop mode,
// the handlers or the route rewrites, PE 1 keeps waiting and the run hangs. PE 0's receive
// loads its DSRs with @load_to_dsr(.., .{ .async = true, .activate = done }): `done` must see 42.
TEST(CslStdlib, TileConfigRewritesOneColorBetweenPhases) {
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    LoadedRuntime rt = test_program_runtime("tile_config", {}, arch, {9, 3, 4, 1});
    rt.launch("start");
    std::vector<uint32_t> result = read_back(rt, "result", 0, 0, 2, 1, 1);
    std::vector<uint32_t> pending = read_back(rt, "pending", 0, 0, 2, 1, 1);
    EXPECT_EQ(result, (std::vector<uint32_t>{42, 21}));
    EXPECT_EQ(pending, (std::vector<uint32_t>{1u << 4, 1u << 4}));
    std::vector<uint32_t> seen = read_back(rt, "seen", 0, 0, 1, 1, 1);
    EXPECT_EQ(seen, std::vector<uint32_t>{42});  // `done` ran after the receive, not at the load
  }
}

// <memcpy/memcpy>'s unblock_cmd_stream() (tests/compiler/programs/cmd_stream, one PE in each of
// two rows): a launch blocks each PE's command stream until its kernel calls it, from the
// function (twice: the second call does nothing) or from a task after it; a PE that never calls
// it holds its row's next command, which then never runs (the hang names the stream and the
// launch), while the other row's commands run.
TEST(CslStdlib, UnblockCmdStreamReleasesTheNextHostCommand) {
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    LoadedRuntime rt = test_program_runtime("cmd_stream", {}, arch, {8, 4, 4, 1});
    rt.launch("set_now", std::vector<uint32_t>{7});
    EXPECT_EQ(read_back(rt, "value", 0, 0, 1, 2, 1), (std::vector<uint32_t>{7, 7}));
    rt.launch("set_later", std::vector<uint32_t>{8});
    EXPECT_EQ(read_back(rt, "value", 0, 0, 1, 2, 1), (std::vector<uint32_t>{8, 8}));
    EXPECT_EQ(read_back(rt, "steps", 0, 0, 1, 2, 1), (std::vector<uint32_t>{3, 3}));
    rt.launch("set_and_forget", std::vector<uint32_t>{9});
    rt.memcpy_h2d("value", std::vector<uint32_t>{5}, 0, 1, 1, 1, 1);  // row 2: its PE unblocked
    EXPECT_EQ(read_back(rt, "value", 0, 1, 1, 1, 1), std::vector<uint32_t>{5});
    try {
      rt.memcpy_h2d("value", std::vector<uint32_t>{6}, 0, 0, 1, 1, 1);
      ADD_FAILURE() << "a command behind a blocked command stream ran";
    } catch (const runtime::host::HostError& e) {
      EXPECT_EQ(e.kind(), runtime::host::HostError::Kind::HANG) << e.what();
      const std::string what = e.what();
      EXPECT_NE(what.find("PE(4,1)"), std::string::npos) << what;
      EXPECT_NE(what.find("memcpy's command stream is blocked: the launch of 'set_and_forget' still waits for "
                          "unblock_cmd_stream()"), std::string::npos) << what;
    }
    EXPECT_EQ(rt.read_symbol(0, 0, "value"), std::vector<uint32_t>{9});  // the stuck command never wrote
  }
}

}  // namespace
}  // namespace wsemu::testing
