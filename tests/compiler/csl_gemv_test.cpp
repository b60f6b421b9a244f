// CSL kernels end to end: compiled by compile_csl (as `wsemu cslc` does), loaded by the host
// runtime, fed through the memcpy firmware, and checked against the xtensor references of
// tests/e2e/kernel_harness.hpp (never against the emulator's own output).
#include <filesystem>
#include <initializer_list>
#include <string>
#include <utility>

#include "compiler/csl/cslc.hpp"
#include "kernels/topic-15-wse3-microthreads/topic_15_run.hpp"
#include "tests/compiler/csl_test_support.hpp"
#include "runtime/host/host_error.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/gemv_tiles.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

namespace fs = std::filesystem;
using runtime::host::SdkRuntime;

compiler::csl::CslResult compile_kernel(const std::string& layout, const std::vector<std::pair<std::string, std::string>>& params,
                                        const std::string& arch, const std::string& out) {
  return compile_csl_kernel(source_dir() + "/" + layout, params, arch,
                             {8, 3, 4, 1}, out);
}

struct Case {
  int M, N;
  std::string arch;
};

class CslGemv01 : public ::testing::TestWithParam<Case> {};

TEST_P(CslGemv01, MatchesReference) {
  const Case c = GetParam();
  auto r = compile_kernel("kernels/gemv-01-single-pe/csl/layout.csl",
                          {{"M", std::to_string(c.M)}, {"N", std::to_string(c.N)}}, c.arch,
                          "wsemu-csl-gemv01-" + c.arch + "-" + std::to_string(c.M) + "x" + std::to_string(c.N));
  ASSERT_TRUE(r.ok()) << compiler::layout::format_diagnostics(r.diagnostics);
  const xt::xarray<float> A = random_array({size_t(c.M), size_t(c.N)}, 1);
  const xt::xarray<float> x = random_array({size_t(c.N)}, 2);
  const xt::xarray<float> b = random_array({size_t(c.M)}, 3);
  // The CSL and the assembly versions on the same inputs and host calls (the assembly one for the
  // kernel README's cycle row).
  auto load_and_run = [&](SdkRuntime& s) {
    s.load();
    s.memcpy_h2d("A", words(A), 0, 0, 1, 1, c.M * c.N);
    s.memcpy_h2d("x", words(x), 0, 0, 1, 1, c.N);
    s.memcpy_h2d("b", words(b), 0, 0, 1, 1, c.M);
    launch_and_settle(s, "compute");
    return read_back(s, "y", 0, 0, 1, 1, c.M);
  };
  SdkRuntime rt(*r.executable);
  expect_close(floats(load_and_run(rt), {size_t(c.M)}), gemv_reference(A, x, b), 1e-5, 1e-5, "y");
  {
    SdkRuntime ra(build_kernel("gemv-01-single-pe", {{"M", c.M}, {"N", c.N}}, c.arch));
    load_and_run(ra);
    std::printf("gemv-01 %s %dx%d: cycles CSL %llu (launch %llu), assembly %llu (launch %llu)\n", c.arch.c_str(), c.M, c.N,
                (unsigned long long)rt.cycles(), (unsigned long long)rt.stats().launch_cycles,
                (unsigned long long)ra.cycles(), (unsigned long long)ra.stats().launch_cycles);
  }
  // A second launch starts from column 0 again (the column DSD is a local).
  launch_and_settle(rt, "compute");
  expect_close(floats(read_back(rt, "y", 0, 0, 1, 1, c.M), {size_t(c.M)}), gemv_reference(A, x, b), 1e-5, 1e-5,
               "y after a second launch");
}

INSTANTIATE_TEST_SUITE_P(Sizes, CslGemv01,
                         ::testing::Values(Case{4, 6, "wse2"}, Case{17, 9, "wse2"}, Case{4, 6, "wse3"}, Case{13, 7, "wse3"}),
                         named_by(&Case::arch, "_", &Case::M, "x", &Case::N));

TEST(CslGemv01, GeneratedSourcesStayInTheOutputFolder) {
  auto r = compile_kernel("kernels/gemv-01-single-pe/csl/layout.csl", {{"M", "4"}, {"N", "6"}}, "wse2", "wsemu-csl-gemv01-src");
  ASSERT_TRUE(r.ok()) << compiler::layout::format_diagnostics(r.diagnostics);
  const fs::path out = fs::temp_directory_path() / "wsemu-csl-gemv01-src";
  EXPECT_TRUE(fs::exists(out / "layout.wsl"));
  EXPECT_TRUE(fs::exists(out / "pe_0.wsa"));
  // The generated instructions name their CSL lines (.loc lines: the object's line table).
  EXPECT_NE(r.programs.at("pe_0.wsa").find(".loc \"pe.csl\", "), std::string::npos);
  EXPECT_NE(r.layout_wsl.find("rect r0 at (4, 1) size 1 x 1"), std::string::npos) << r.layout_wsl;
}

// gemv-06 and gemv-07 as CSL on the same host harness as their assembly versions
// (tests/e2e/gemv_tiles.hpp, A x + b on kx x ky PEs), so the cycle counts compare like for like:
// each M x N size on wse2 and wse3 against the reference; on wse2 the assembly version runs the
// same inputs for the kernel README's cycle row. A from `seed`, x from seed + 1, b from seed + 2.
void expect_tiled_csl_gemv(const std::string& folder, std::initializer_list<std::pair<int, int>> sizes,
                           CslPlacement at, size_t kx, size_t ky, uint32_t seed) {
  const std::string kernel = folder.substr(0, 7);  // "gemv-06"
  std::string tag = kernel;
  std::erase(tag, '-');
  for (const std::string arch : {"wse2", "wse3"})
    for (auto [M, N] : sizes) {
      SCOPED_TRACE(arch + " " + std::to_string(M) + "x" + std::to_string(N));
      auto r = compile_csl_kernel(source_dir() + "/kernels/" + folder + "/csl/layout.csl",
                                  {{"M", std::to_string(M)}, {"N", std::to_string(N)}}, arch, at,
                                  "wsemu-csl-" + tag + "-" + arch);
      ASSERT_TRUE(r.ok()) << compiler::layout::format_diagnostics(r.diagnostics);
      const xt::xarray<float> A = random_array({size_t(M), size_t(N)}, seed), x = random_array({size_t(N)}, seed + 1),
                              b = random_array({size_t(M)}, seed + 2);
      const TiledRun csl = run_tiled_gemv(*r.executable, A, x, b, kx, ky);
      expect_close(csl.y, gemv_reference(A, x, b), 1e-5, 1e-5, "y");
      if (arch == "wse2") {
        const TiledRun wsa = run_tiled_gemv(build_kernel(folder, {{"M", M}, {"N", N}}), A, x, b, kx, ky);
        std::printf("%s %dx%d: cycles CSL %llu (launch %llu), assembly %llu (launch %llu)\n", kernel.c_str(), M, N,
                    (unsigned long long)csl.cycles, (unsigned long long)csl.launch_cycles, (unsigned long long)wsa.cycles,
                    (unsigned long long)wsa.launch_cycles);
      }
    }
}

// gemv-06: two PEs, a route, fabout and fabin DSDs.
TEST(CslGemv06, MatchesReferenceAndPrintsCycles) {
  expect_tiled_csl_gemv("gemv-06-routes-1", {{4, 6}, {10, 9}}, {4, 3, 1, 1}, 2, 1, 41);
}

// gemv-05: gemv-01's PE program on a row of PEs, a different problem per PE.
TEST(CslGemv05, EveryPeOfTheRowMatchesItsReference) {
  const size_t M = 5, N = 4, width = 3;
  auto r = compile_csl_kernel(source_dir() + "/kernels/gemv-05-multiple-pes/csl/layout.csl", {{"M", std::to_string(M)}, {"N", std::to_string(N)}, {"pes", std::to_string(width)}}, "wse2",
                             {int(width) + 2, 3, 1, 1}, "wsemu-csl-gemv05");
  ASSERT_TRUE(r.ok()) << compiler::layout::format_diagnostics(r.diagnostics);
  const xt::xarray<float> A = random_array({width, M, N}, 61), x = random_array({width, N}, 62), b = random_array({width, M}, 63);
  SdkRuntime rt(*r.executable);
  rt.load();
  rt.memcpy_h2d("A", words(A), 0, 0, int(width), 1, int(M * N));
  rt.memcpy_h2d("x", words(x), 0, 0, int(width), 1, int(N));
  rt.memcpy_h2d("b", words(b), 0, 0, int(width), 1, int(M));
  launch_and_settle(rt, "compute");
  std::vector<uint32_t> y = read_back(rt, "y", 0, 0, int(width), 1, int(M));
  for (size_t p = 0; p < width; ++p) {
    xt::xarray<float> yp = xt::zeros<float>({M});
    for (size_t i = 0; i < M; ++i) yp(i) = std::bit_cast<float>(y[p * M + i]);
    const xt::xarray<float> Ap = xt::view(A, p), xp = xt::view(x, p), bp = xt::view(b, p);
    expect_close(yp, gemv_reference(Ap, xp, bp), 1e-5, 1e-5, "y of PE " + std::to_string(p));
  }
}

// gemv-07: 2 x 2 PEs, x multicast south, partial sums east.
TEST(CslGemv07, MatchesReferenceAndPrintsCycles) {
  expect_tiled_csl_gemv("gemv-07-routes-2", {{8, 6}, {9, 7}}, {4, 4, 1, 1}, 2, 2, 51);
}

// The host streams of <memcpy/memcpy>: MEMCPYH2D_1 into a fabin DSD, MEMCPYD2H_1 out of a fabout
// DSD (tests/compiler/programs/stream).
TEST(CslStreams, HostStreamsInAndOut) {
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    const int N = 9;
    auto r = compile_test_program("stream", {{"N", std::to_string(N)}}, arch, {3, 3, 1, 1});
    ASSERT_TRUE(r.ok()) << compiler::layout::format_diagnostics(r.diagnostics);
    const xt::xarray<float> x = random_array({size_t(N)}, 9);
    SdkRuntime rt(*r.executable);
    rt.load();
    rt.launch("start");
    runtime::host::MemcpyOptions stream;
    stream.streaming = true;
    rt.memcpy_h2d("start", words(x), 0, 0, 1, 1, N, stream);
    std::vector<uint32_t> out = read_back(rt, "start", 0, 0, 1, 1, N, stream);
    const xt::xarray<float> got = floats(out, {size_t(N)});
    for (int i = 0; i < N; ++i) EXPECT_FLOAT_EQ(got(i), x(i) + 1.0f) << i;
  }
}

// topic-09: the host stream through a FIFO and a loopback color into a data task (wse2, as the
// assembly version); every value must come back cubed, in order.
TEST(CslTopic09, FifoAndLoopbackCubeTheStream) {
  for (auto [n, cap] : {std::pair{512, 64}, std::pair{40, 4}}) {
    SCOPED_TRACE(std::to_string(n) + " elements, FIFO " + std::to_string(cap));
    auto r = compile_csl_kernel(source_dir() + "/kernels/topic-09-fifos/csl/layout.csl", {{"NUM_ELEMS", std::to_string(n)}, {"FIFO_CAP", std::to_string(cap)}}, "wse2",
                               {3, 3, 1, 1}, "wsemu-csl-topic09");
    ASSERT_TRUE(r.ok()) << compiler::layout::format_diagnostics(r.diagnostics);
    const xt::xarray<float> x = random_array({size_t(n)}, uint32_t(900 + n));
    auto run = [&](const compiler::Executable& exe, const std::string& name, std::vector<uint32_t>& out, uint64_t& cycles) {
      SdkRuntime rt(exe);
      rt.load();
      runtime::host::MemcpyOptions stream;
      stream.streaming = true;
      rt.launch("start");
      rt.memcpy_h2d(name, words(x), 0, 0, 1, 1, n, stream);
      out = read_back(rt, name, 0, 0, 1, 1, n, stream);
      std::vector<uint32_t> ncubed = read_back(rt, "ncubed", 0, 0, 1, 1, 1);
      EXPECT_EQ(ncubed[0], uint32_t(n));
      cycles = rt.cycles();
    };
    std::vector<uint32_t> out, out_asm;
    uint64_t cycles = 0, cycles_asm = 0;
    run(*r.executable, "start", out, cycles);
    for (int i = 0; i < n; ++i) {
      const float v = x(i);
      ASSERT_EQ(std::bit_cast<float>(out[size_t(i)]), v * v * v) << "element " << i;
    }
    run(build_kernel("topic-09-fifos", {{"NUM_ELEMS", n}, {"FIFO_CAP", cap}}), "fifos", out_asm, cycles_asm);
    std::printf("topic-09 %d elements, FIFO %d: cycles CSL %llu, assembly %llu\n", n, cap, (unsigned long long)cycles,
                (unsigned long long)cycles_asm);
  }
}

// pipeline-01: +1 on a 16-bit host stream (add16 over fabric DSDs, 16 bits wide from the
// operation), east on a color, out through MEMCPYD2H_1 (wse2, as the assembly version).
TEST(CslPipeline01, AddsOneToTheStream) {
  const int size = 12;
  auto r = compile_csl_kernel(source_dir() + "/kernels/pipeline-01-basic/csl/layout.csl", {{"SIZE", std::to_string(size)}}, "wse2",
                             {4, 3, 1, 1}, "wsemu-csl-pipeline01");
  ASSERT_TRUE(r.ok()) << compiler::layout::format_diagnostics(r.diagnostics);
  std::mt19937 gen(101);
  std::vector<uint32_t> in(static_cast<size_t>(size));
  for (uint32_t& x : in) x = gen() & 0xFFFF;
  in[0] = 0xFFFF;  // wraps to 0
  SdkRuntime rt(*r.executable);
  rt.load();
  runtime::host::MemcpyOptions stream;
  stream.streaming = true;
  rt.launch("start");
  rt.memcpy_h2d("start", in, 0, 0, 1, 1, size, stream);
  std::vector<uint32_t> out = read_back(rt, "start", 1, 0, 1, 1, size, stream);
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(out[i], (in[i] + 1) & 0xFFFF) << "element " << i;
  std::printf("pipeline-01 %d elements: cycles CSL %llu\n", size, (unsigned long long)rt.cycles());
}

// topic-15 (wse3): explicit microthreads, queues bound by @initialize_queue after the DSDs that
// name them, a task that starts blocked, unblocked by one completion and activated by another.
TEST(CslTopic15, MicrothreadsCarryTwoTransfersAtOnce) {
  const int n = 8;
  auto r = compile_csl_kernel(source_dir() + "/kernels/topic-15-wse3-microthreads/csl/layout.csl", {{"N", std::to_string(n)}}, "wse3",
                             {4, 3, 1, 1}, "wsemu-csl-topic15");
  ASSERT_TRUE(r.ok()) << compiler::layout::format_diagnostics(r.diagnostics);
  expect_two_transfers_sum(*r.executable, n, "CSL");
  // wse2 is refused with the program's own assertion.
  auto r2 = compile_csl_kernel(source_dir() + "/kernels/topic-15-wse3-microthreads/csl/layout.csl", {{"N", std::to_string(n)}}, "wse2", {4, 3, 1, 1}, "wsemu-csl-topic15");
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(compiler::layout::format_diagnostics(r2.diagnostics).find("topic-15 is a WSE-3 program"), std::string::npos);
}

// topic-03: a data task on the host stream (wse2: its color, wse3: its queue), u32 wrapping sum.
TEST(CslTopic03, DataTaskSumsTheHostStream) {
  for (auto [arch, n] : {std::pair{std::string("wse2"), size_t(100)}, std::pair{std::string("wse3"), size_t(64)}}) {
    SCOPED_TRACE(arch);
    auto r = compile_csl_kernel(source_dir() + "/kernels/topic-03-streaming-wavelet-data/csl/layout.csl", {}, arch,
                               {3, 3, 1, 1}, "wsemu-csl-topic03-" + arch);
    ASSERT_TRUE(r.ok()) << compiler::layout::format_diagnostics(r.diagnostics);
    std::mt19937 gen(uint32_t(300 + n));
    std::vector<uint32_t> data(n);
    uint32_t expected = 0;
    for (uint32_t& v : data) {
      v = gen();
      expected += v;
    }
    SdkRuntime rt(*r.executable);
    rt.load();
    runtime::host::MemcpyOptions stream;
    stream.streaming = true;
    rt.memcpy_h2d("sum", data, 0, 0, 1, 1, int(n), stream);
    std::vector<uint32_t> sum = read_back(rt, "sum", 0, 0, 1, 1, 1);
    std::vector<uint32_t> count = read_back(rt, "count", 0, 0, 1, 1, 1);
    EXPECT_EQ(sum[0], expected);
    EXPECT_EQ(count[0], n);
    std::printf("topic-03 %s, %zu wavelets: cycles CSL %llu\n", arch.c_str(), n, (unsigned long long)rt.cycles());
  }
}

// More run-time locals than registers: the rest live in data words (hand-worked values).
TEST(CslSpill, LocalsBeyondTheRegistersLiveInMemory) {
  LoadedRuntime rt = test_program_runtime("spill", {}, "wse2", {3, 3, 1, 1});
  launch_and_settle(rt, "f");
  std::vector<uint32_t> out = read_back(rt, "out", 0, 0, 1, 1, 2);
  EXPECT_EQ(int32_t(out[0]), 36);
  EXPECT_EQ(int32_t(out[1]), 36);
  // Nested loops past the registers and a call with nine parameters, the same sums in C++.
  int32_t acc = 0, count = 0;
  for (int32_t i = 0; i < 4; ++i)
    for (int32_t j = 0; j < 3; ++j)
      for (int32_t k = i; k < 4; ++k) {
        acc += i * 100 + j * 10 + k;
        ++count;
      }
  launch_and_settle(rt, "loops");
  std::vector<uint32_t> sums = read_back(rt, "sums", 0, 0, 1, 1, 3);
  EXPECT_EQ(int32_t(sums[0]), acc);
  EXPECT_EQ(int32_t(sums[1]), count);
  EXPECT_EQ(int32_t(sums[2]), 1 + 2 * 2 + 3 * 3 + 4 * 4 + 5 * 5 + 6 * 4 + 7 * -3 + 8 * 5 + 9 * 8);
}

// Data task, local task, @activate, global scalars and a run-time if: the east PE sums N values
// that the west PE streams to it (tests/compiler/programs/tasks), sent through a fabout of extent
// N, then through one of extent 1 (the memory operand sets the length, as the SDK's topic-12 relies on).
TEST(CslTasks, DataTaskSumsTheStream) {
  for (const std::string arch : {"wse2", "wse3"}) {
    for (const std::string send : {"send", "send_extent_1"}) {
      SCOPED_TRACE(arch + " " + send);
      const int N = 7;
      auto r = compile_csl_kernel(source_dir() + "/tests/compiler/programs/tasks/layout.csl", {{"N", std::to_string(N)}}, arch,
                                 {4, 3, 1, 1}, "wsemu-csl-tasks-" + arch + "-" + send);
      ASSERT_TRUE(r.ok()) << compiler::layout::format_diagnostics(r.diagnostics);
      EXPECT_NE(r.layout_wsl.find("route 3 rx [W] tx [RAMP] where"), std::string::npos) << r.layout_wsl;
      const xt::xarray<float> x = random_array({size_t(N)}, 7);
      SdkRuntime rt(*r.executable);
      rt.load();
      rt.memcpy_h2d("x", words(x), 0, 0, 1, 1, N);
      launch_and_settle(rt, send);
      std::vector<uint32_t> out = read_back(rt, "result", 1, 0, 1, 1, 2);
      const xt::xarray<float> got = floats(out, {2});
      double want = 0;
      for (float v : x) want += v;
      EXPECT_NEAR(got(0), want, 1e-5);
      EXPECT_EQ(got(1), float(N));
      // 'result' is exported by the receiver's program only: a copy from the sender is refused.
      try {
        rt.memcpy_d2h(out, "result", 0, 0, 1, 1, 2);
        ADD_FAILURE() << "a copy from a PE that does not export 'result' was accepted";
      } catch (const runtime::host::HostError& e) {
        EXPECT_EQ(e.kind(), runtime::host::HostError::Kind::USAGE) << e.what();
        EXPECT_NE(std::string(e.what()).find("PE (1, 1) runs no program defining 'result'"), std::string::npos) << e.what();
      }
    }
  }
}

// 16-bit operations over u32 arrays (tests/compiler/programs/halfwords): each touches the low
// half of every element; the reference is worked per element with masks.
TEST(CslHalfwords, Mov16AndAdd16OverU32ArraysTouchTheLowHalves) {
  const int N = 6;
  const std::vector<uint32_t> a = {0x12345678u, 0xFFFF0001u, 0x0000FFFFu, 0xABCD8000u, 0x00010002u, 0xDEADBEEFu};
  const std::vector<uint32_t> b0 = {0xAAAA0000u, 0x5555FFFFu, 0x00000000u, 0xFFFFFFFFu, 0x11112222u, 0x80000001u};
  std::vector<uint32_t> want(N);
  for (int i = 0; i < N; ++i) {
    uint32_t lo = a[size_t(i)] & 0xFFFFu;                       // @mov16
    if (i % 2 == 1) lo = (lo + (a[size_t(i)] & 0xFFFFu)) & 0xFFFFu;  // @add16 on the odd elements
    want[size_t(i)] = (b0[size_t(i)] & 0xFFFF0000u) | lo;
  }
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    LoadedRuntime rt = test_program_runtime("halfwords", {{"N", std::to_string(N)}}, arch, {3, 3, 1, 1});
    rt.memcpy_h2d("a", a, 0, 0, 1, 1, N);
    rt.memcpy_h2d("b", b0, 0, 0, 1, 1, N);
    rt.launch("move_low_halves");
    std::vector<uint32_t> got = read_back(rt, "b", 0, 0, 1, 1, N);
    EXPECT_EQ(got, want);
  }
}

// A switch on a run-time value (tests/compiler/programs/switch); the reference is the same
// switch written in C++.
TEST(CslSwitch, RunTimeSwitchStatementPicksTheProng) {
  const std::vector<int32_t> x = {0, 1, 2, 3, -7, 0, -2, 40};
  const int N = int(x.size());
  std::vector<uint32_t> want, xw;
  for (int32_t v : x) {
    int32_t y = 0;
    switch (v) {
      case 0: y = 100; break;
      case 1: case 2: y = 200 + v; break;
      case -7: y = 7; break;
      default: y = v * 3;
    }
    want.push_back(uint32_t(y));
    xw.push_back(uint32_t(v));
  }
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    LoadedRuntime rt = test_program_runtime("switch", {{"N", std::to_string(N)}}, arch, {3, 3, 1, 1});
    rt.memcpy_h2d("x", xw, 0, 0, 1, 1, N);
    rt.launch("classify");
    std::vector<uint32_t> got = read_back(rt, "y", 0, 0, 1, 1, N);
    EXPECT_EQ(got, want);
  }
}

// Locals whose address is taken (tests/compiler/programs/locals): worked by hand, a = 5 + 3,
// b = 7 + a, c = 100 + b.
TEST(CslLocals, AddressOfALocalReachesTheCallee) {
  expect_words_after_launch("locals", {3, 3, 1, 1}, "run", {"out", 1, 1, 3}, {8, 15, 115});
}

}  // namespace
}  // namespace wsemu::testing
