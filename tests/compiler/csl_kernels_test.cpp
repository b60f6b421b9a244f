// CSL versions of kernels/ (kernels/<kernel>/csl) run beside their assembly versions: each
// test runs both on the same inputs and host calls, checks both against the kernel's own
// independent reference (x + 1, the fp32 sum in stream order, each filter's quarter of the
// stream, xtensor's A x + b, the whole-grid stencil sweeps, a direct DFT) and the two outputs
// against each other, and prints both cycle counts (the rows of the kernels' READMEs).
#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdio>
#include <initializer_list>
#include <numbers>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/7pt-stencil-spmv/stencil7_reference.hpp"
#include "kernels/fft/dft_reference.hpp"
#include "kernels/gemv-09-streaming/gemv_09_run.hpp"
#include "kernels/pipeline-01-basic/pipeline_run.hpp"
#include "kernels/stencil-2d-5pt/stencil_run.hpp"
#include "kernels/topic-05-sentinels/sentinel_sums.hpp"
#include "runtime/host/host_error.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/compiler/csl_test_support.hpp"
#include "tests/e2e/gemv_tiles.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::SdkRuntime;

// kernels/<folder>/csl/layout.csl compiled as `wsemu cslc` would (sources left in a temporary
// folder named after the kernel and arch).
compiler::Executable compile_kernel_csl(const std::string& folder, std::vector<std::pair<std::string, std::string>> params,
                                        const std::string& arch, CslPlacement at) {
  return executable_of(compile_csl_kernel(source_dir() + "/kernels/" + folder + "/csl/layout.csl", std::move(params), arch, at,
                                          "wsemu-csl-" + folder + "-" + arch));
}

// A seeded 16-bit host stream whose last element wraps when 1 is added.
std::vector<uint32_t> u16_stream(int size, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<uint32_t> in(static_cast<size_t>(size));
  for (uint32_t& x : in) x = gen() & 0xFFFF;
  in.back() = 0xFFFF;  // wraps to 0
  return in;
}

compiler::Executable pipeline_02_csl(int size, int fifo_cap, const std::string& arch) {
  return compile_kernel_csl("pipeline-02-fifo", {{"SIZE", std::to_string(size)}, {"FIFO_CAP", std::to_string(fifo_cap)}}, arch,
                            {4, 3, 1, 1});
}

// pipeline-02: x + 1 (u16, wrapping) through the FIFO, with pipeline-01's host calls (launch
// `start`, stream in, launch `drain`, stream out), sizes as the assembly kernel's test. The CSL
// stream has its own color and input queue 2 (4 wavelets deep on wse2, where the assembly
// version's input queue 1 holds 6), so on wse2 the path beside the FIFO holds 4 + 6 + 3 + 4 = 17
// (pipeline-01's README counts the assembly version's 19): one more hangs. The assembly kernel
// is wse2 only; the CSL one runs on wse3 as well.
TEST(CslPipeline02, FifoBetweenTwoMicrothreadsAddsOne) {
  struct Size {
    int size, fifo_cap;
  };
  for (const std::string arch : {"wse2", "wse3"})
    for (Size c : {Size{32, 32}, Size{40, 32}, Size{24, 16}, Size{17 + 16, 16}}) {
      SCOPED_TRACE(arch + " size " + std::to_string(c.size) + ", FIFO " + std::to_string(c.fifo_cap));
      const std::vector<uint32_t> in = u16_stream(c.size, uint32_t(2000 + c.size));
      uint64_t cycles = 0;
      const std::vector<uint32_t> out = stream_through(pipeline_02_csl(c.size, c.fifo_cap, arch), in, &cycles, "kernel", "kernel", 1);
      for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(out[i], (in[i] + 1) & 0xFFFF) << "element " << i;
      if (arch != "wse2") continue;
      uint64_t cycles_asm = 0;
      const std::vector<uint32_t> out_asm = stream_through(
          build_kernel("pipeline-02-fifo", {{"SIZE", c.size}, {"FIFO_CAP", c.fifo_cap}}), in, &cycles_asm);
      EXPECT_EQ(out, out_asm);
      std::printf("pipeline-02 %s size %d, FIFO %d: cycles CSL %llu, assembly %llu\n", arch.c_str(), c.size, c.fifo_cap,
                  (unsigned long long)cycles, (unsigned long long)cycles_asm);
    }
}

TEST(CslPipeline02, OneMoreThanFifoPlusPathHangs) {
  try {
    stream_through(pipeline_02_csl(17 + 16 + 1, 16, "wse2"), u16_stream(17 + 16 + 1, 2034), nullptr, "kernel", "kernel", 1);
    FAIL() << "expected a hang";
  } catch (const runtime::host::HostError& e) {
    EXPECT_EQ(e.kind(), runtime::host::HostError::Kind::HANG) << e.what();
  }
}

// topic-05: the receiver's sum, closed by the sentinel's control task, against the fp32 sum in
// stream order (and the double sum within 1e-5 * N); the count must be N. The same host calls as
// the assembly kernel's test (copy `values` in, launch `send`, read `result` and `count`); the
// assembly kernel is wse2 only.
TEST(CslTopic05, SentinelClosesTheSum) {
  for (const std::string arch : {"wse2", "wse3"})
    for (int n : {4, 1, 37}) {
      SCOPED_TRACE(arch + " N=" + std::to_string(n));
      const xt::xarray<float> values = random_array({size_t(n)}, uint32_t(500 + n));
      const SentinelSums sums = sentinel_sums(values);
      const float in_order = sums.in_order;
      const double exact = sums.exact;
      auto run = [&](const compiler::Executable& exe, uint64_t& cycles) {
        SdkRuntime rt(exe);
        rt.load();
        rt.memcpy_h2d("values", words(values), 0, 0, 1, 1, n);
        rt.launch("send");
        std::vector<uint32_t> out = read_back(rt, "result", 1, 0, 1, 1, 1);
        out.push_back(read_back(rt, "count", 1, 0, 1, 1, 1)[0]);
        cycles = rt.cycles();
        return out;
      };
      uint64_t cycles = 0, cycles_asm = 0;
      const std::vector<uint32_t> got = run(compile_kernel_csl("topic-05-sentinels", {{"N", std::to_string(n)}}, arch, {4, 3, 1, 1}), cycles);
      EXPECT_EQ(got[1], uint32_t(n));
      EXPECT_EQ(std::bit_cast<float>(got[0]), in_order);
      EXPECT_NEAR(std::bit_cast<float>(got[0]), exact, 1e-5 * n);
      if (arch != "wse2") continue;
      EXPECT_EQ(run(build_kernel("topic-05-sentinels", {{"N", n}}), cycles_asm), got);
      std::printf("topic-05 %s N=%d: cycles CSL %llu, assembly %llu\n", arch.c_str(), n, (unsigned long long)cycles,
                  (unsigned long long)cycles_asm);
    }
}

// topic-08: receiver k must get exactly wavelets 3k, 3k + 1, 3k + 2 (index << 16 | value, in
// order) and nothing else, the routers count every other copy as filtered; the same host calls
// as the assembly kernel's test (16-bit `values` in, launch `send`, read `ngot` and `got`). The
// assembly kernel is wse2 only.
TEST(CslTopic08, EachReceiverKeepsItsQuarter) {
  const int receivers = 4, total = 3 * receivers;
  std::mt19937 gen(800);
  std::vector<uint32_t> values(static_cast<size_t>(total));
  for (uint32_t& v : values) v = gen() & 0xFFFF;
  auto run = [&](const compiler::Executable& exe, uint64_t& cycles) {
    SdkRuntime rt(exe);
    rt.load();
    runtime::host::MemcpyOptions half;
    half.data_type = runtime::host::MemcpyDataType::MEMCPY_16BIT;
    rt.memcpy_h2d("values", values, 0, 0, 1, 1, total, half);
    launch_and_settle(rt, "send");
    std::vector<uint32_t> kept;  // each receiver's count, then its three wavelets
    for (int k = 0; k < receivers; ++k) {
      kept.push_back(read_back(rt, "ngot", k + 1, 0, 1, 1, 1)[0]);
      const std::vector<uint32_t> got = read_back(rt, "got", k + 1, 0, 1, 1, total);
      kept.insert(kept.end(), got.begin(), got.begin() + 3);
    }
    uint64_t filtered = 0;
    const nlohmann::json stats = rt.wafer().stats_json();
    for (const auto& c : stats["colors"])
      if (c["color"] == 0) filtered = c["filtered"].get<uint64_t>();
    EXPECT_EQ(filtered, uint64_t(receivers * total - total));  // every copy but the kept ones
    cycles = rt.cycles();
    return kept;
  };
  std::vector<uint32_t> want;
  for (int k = 0; k < receivers; ++k) {
    want.push_back(3);
    for (uint32_t i = uint32_t(3 * k); i < uint32_t(3 * k + 3); ++i) want.push_back(i << 16 | values[i]);
  }
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    uint64_t cycles = 0, cycles_asm = 0;
    EXPECT_EQ(run(compile_kernel_csl("topic-08-filters", {}, arch, {7, 3, 1, 1}), cycles), want);
    if (arch != "wse2") continue;
    EXPECT_EQ(run(build_kernel("topic-08-filters", {}), cycles_asm), want);
    std::printf("topic-08 %s: cycles CSL %llu, assembly %llu\n", arch.c_str(), (unsigned long long)cycles,
                (unsigned long long)cycles_asm);
  }
}

// stencil-2d-5pt: the grids of the assembly kernel's test and its calibration size (4 x 4 PEs
// of 64 x 64, one iteration, copies through the back door), each against the whole-grid
// reference; on wse2 the assembly version runs the same grid and must give the same floats
// (both compute each point in the same order). Printed: each version's per-PE stamps (min ..
// max over the PEs) and the whole run.
TEST(CslStencil2d5pt, MatchesTheWholeGridReferenceAndTheAssembly) {
  for (const std::string arch : {"wse2", "wse3"})
    for (StencilCase c : {StencilCase{3, 3, 5, 4, 3}, StencilCase{2, 2, 8, 8, 2}, StencilCase{4, 1, 3, 6, 4},
                          StencilCase{1, 1, 4, 4, 2}, StencilCase{1, 3, 6, 2, 1}, StencilCase{4, 4, 64, 64, 1}}) {
      const std::string name = std::to_string(c.kx) + "x" + std::to_string(c.ky) + " PEs of " + std::to_string(c.m) +
                                "x" + std::to_string(c.n) + ", " + std::to_string(c.iters) + " iterations";
      SCOPED_TRACE(arch + " " + name);
      const bool calibration = c.m == 64;
      const xt::xarray<float> grid = random_array({size_t(c.ky * c.m), size_t(c.kx * c.n)}, calibration ? 78 : 77);
      const compiler::Executable csl = compile_kernel_csl(
          "stencil-2d-5pt",
          {{"kx", std::to_string(c.kx)}, {"ky", std::to_string(c.ky)}, {"M", std::to_string(c.m)},
           {"N", std::to_string(c.n)}, {"ITERS", std::to_string(c.iters)}},
          arch, {c.kx + 2, c.ky + 2, 1, 1});
      const StencilRun r = run_stencil(csl, c, grid, calibration);
      expect_close(r.u, jacobi_reference(grid, c.iters), 1e-5, 1e-5, "u");
      if (arch != "wse2") continue;
      const StencilRun a = run_stencil(
          build_kernel("stencil-2d-5pt", {{"kx", c.kx}, {"ky", c.ky}, {"M", c.m}, {"N", c.n}, {"ITERS", c.iters}}), c,
          grid, calibration);
      EXPECT_EQ(r.u, a.u);
      std::printf("stencil-2d-5pt %s %s: per PE CSL %llu .. %llu, assembly %llu .. %llu; whole run CSL %llu, assembly %llu\n",
                  arch.c_str(), name.c_str(), (unsigned long long)r.min_cycles, (unsigned long long)r.max_cycles,
                  (unsigned long long)a.min_cycles, (unsigned long long)a.max_cycles, (unsigned long long)r.run_cycles,
                  (unsigned long long)a.run_cycles);
    }
}

struct GemvShape {
  size_t M, N, kx, ky;
};

// A tiled GEMV kernel (kernels/<folder>) beside its assembly version: each shape on wse2 and
// wse3, A, x and b drawn from `seed`, `seed` + 1 and + 2, the CSL version then the assembly one
// run by run(executable, A, x, b, case, csl); the CSL y against the xtensor reference and both
// y the same floats; the cycles printed as "<label> wse2 6x8 on 4x3: cycles CSL ..".
template <class Run>
void compare_tiled_gemv(const std::string& folder, const char* label, std::initializer_list<GemvShape> shapes,
                        uint32_t seed, Run run) {
  for (const std::string arch : {"wse2", "wse3"})
    for (const GemvShape s : shapes) {
      const TiledGemvCase c{s.M, s.N, s.kx, s.ky, arch};
      const std::string name = ::testing::PrintToString(c);
      SCOPED_TRACE(name);
      const xt::xarray<float> A = random_array({c.M, c.N}, seed), x = random_array({c.N}, seed + 1),
                              b = random_array({c.M}, seed + 2);
      const TiledRun csl = run(compile_kernel_csl(folder,
                                                  {{"M", std::to_string(c.M)}, {"N", std::to_string(c.N)},
                                                   {"kx", std::to_string(c.kx)}, {"ky", std::to_string(c.ky)}},
                                                  arch, {int(c.kx) + 2, int(c.ky) + 2, 1, 1}),
                               A, x, b, c, true);
      const TiledRun wsa = run(build_tiled_gemv(folder, c), A, x, b, c, false);
      expect_close(csl.y, gemv_reference(A, x, b), 1e-5, 1e-5, "y");
      EXPECT_EQ(csl.y, wsa.y);
      std::printf("%s %s: cycles CSL %llu (launch %llu), assembly %llu (launch %llu)\n", label, name.c_str(),
                  (unsigned long long)csl.cycles, (unsigned long long)csl.launch_cycles, (unsigned long long)wsa.cycles,
                  (unsigned long long)wsa.launch_cycles);
    }
}

// gemv-08: the shapes of the assembly kernel's test (even and uneven blocks, one column, one
// row) through the gemv tiles' host harness (tests/e2e/gemv_tiles.hpp).
TEST(CslGemv08, MatchesTheReferenceAndTheAssembly) {
  compare_tiled_gemv("gemv-08-routes-3", "gemv-08",
                     {{6, 8, 4, 3}, {32, 16, 4, 4}, {13, 11, 3, 4}, {9, 7, 5, 2}, {5, 20, 1, 3}, {10, 9, 4, 1}}, 81,
                     [](const compiler::Executable& exe, const xt::xarray<float>& A, const xt::xarray<float>& x,
                        const xt::xarray<float>& b, const TiledGemvCase& c, bool) {
                       return run_tiled_gemv(exe, A, x, b, c.kx, c.ky);
                     });
}

// gemv-09: the shapes of the assembly kernel's test (and 8x8 on 2x2 on both archs) through the
// host calls of gemv_09_run.hpp: x and b streamed in, y streamed out (the CSL kernel's host
// functions are `kernel`'s, the assembly one's `gemv`'s).
TEST(CslGemv09, StreamsMatchTheReferenceAndTheAssembly) {
  compare_tiled_gemv("gemv-09-streaming", "gemv-09", {{6, 8, 4, 3}, {13, 10, 3, 4}, {8, 8, 2, 2}, {7, 5, 1, 2}}, 91,
                     [](const compiler::Executable& exe, const xt::xarray<float>& A, const xt::xarray<float>& x,
                        const xt::xarray<float>& b, const TiledGemvCase& c, bool csl) -> TiledRun {
                       return run_streaming_gemv(exe, A, x, b, c.kx, c.ky, csl ? "kernel" : "gemv");
                     });
}

// 7pt-stencil-spmv: the grids of the assembly kernel's test, each on wse2 and wse3, through its
// host calls (x and coeff in, launch `compute`, y and maxmin_time out), against the reference
// that indexes the whole 3-D grid (stencil7_reference.hpp); CSL and assembly y the same floats.
// Printed: each version's timed window per PE (min .. max) and the whole run.
TEST(CslSpmv7pt, MatchesTheGridReferenceAndTheAssembly) {
  struct Grid {
    int kx, ky, z;
  };
  struct Run {
    std::vector<uint32_t> y;
    uint32_t lo = ~0u, hi = 0;
    uint64_t cycles = 0;
  };
  for (const std::string arch : {"wse2", "wse3"})
    for (Grid c : {Grid{5, 5, 5}, Grid{1, 1, 1}, Grid{1, 1, 6}, Grid{3, 2, 7}, Grid{4, 4, 32}, Grid{7, 4, 9}}) {
      const std::string name = std::to_string(c.kx) + "x" + std::to_string(c.ky) + "x" + std::to_string(c.z);
      SCOPED_TRACE(arch + " " + name);
      const size_t kx = size_t(c.kx), ky = size_t(c.ky), z = size_t(c.z);
      const xt::xarray<float> x = random_array({ky, kx, z}, 511), coeff = random_array({ky, kx, 7, z}, 512);
      auto run = [&](const compiler::Executable& exe) {
        SdkRuntime rt(exe);
        rt.load();
        rt.memcpy_h2d("x", words(x), 0, 0, c.kx, c.ky, c.z);
        rt.memcpy_h2d("coeff", words(coeff), 0, 0, c.kx, c.ky, 7 * c.z);
        launch_and_settle(rt, "compute");
        Run r;
        r.y = read_back(rt, "y", 0, 0, c.kx, c.ky, c.z);
        const std::vector<uint32_t> t = read_back(rt, "maxmin_time", 0, 0, c.kx, c.ky, 4);
        for (size_t p = 0; p < kx * ky; ++p) {
          r.lo = std::min(r.lo, t[p * 4 + 2] - t[p * 4]);
          r.hi = std::max(r.hi, t[p * 4 + 2] - t[p * 4]);
        }
        r.cycles = rt.cycles();
        return r;
      };
      const Run csl = run(compile_kernel_csl("7pt-stencil-spmv",
                                             {{"kx", std::to_string(c.kx)}, {"ky", std::to_string(c.ky)}, {"Z", std::to_string(c.z)}},
                                             arch, {c.kx + 2, c.ky + 2, 1, 1}));
      const Run wsa = run(build_kernel("7pt-stencil-spmv", {{"kx", c.kx}, {"ky", c.ky}, {"Z", c.z}}, arch));
      expect_close(floats(csl.y, {ky, kx, z}), stencil7::apply(coeff, xt::cast<double>(x)), 1e-5, 1e-5, "y");
      EXPECT_EQ(csl.y, wsa.y);
      std::printf("spmv7 %s %s: per PE CSL %u .. %u, assembly %u .. %u; whole run CSL %llu, assembly %llu\n", arch.c_str(),
                  name.c_str(), csl.lo, csl.hi, wsa.lo, wsa.hi, (unsigned long long)csl.cycles, (unsigned long long)wsa.cycles);
    }
}

// fft (1-D, fp32): N = 2, 16, 64, 256 forward and inverse, wse2 and wse3, the assembly kernel's
// host calls (re, im, wre, wim in, launch `compute`, re and im out); CSL and assembly outputs the
// same floats, both within the FFT bound of a direct DFT (dft_reference.hpp).
TEST(CslFft1d, MatchesTheDirectDftAndTheAssembly) {
  for (const std::string arch : {"wse2", "wse3"})
    for (size_t n : {size_t(2), size_t(16), size_t(64), size_t(256)})
      for (bool inverse : {false, true}) {
        const std::string name = "N=" + std::to_string(n) + (inverse ? " inverse" : " forward");
        SCOPED_TRACE(arch + " " + name);
        const xt::xarray<float> re = random_array({n}, 95), im = random_array({n}, 96);
        xt::xarray<float> wre = xt::zeros<float>({n / 2}), wim = xt::zeros<float>({n / 2});
        for (size_t k = 0; k < n / 2; ++k) {
          wre(k) = float(std::cos(2.0 * std::numbers::pi * double(k) / double(n)));
          wim(k) = float(-std::sin(2.0 * std::numbers::pi * double(k) / double(n)));
        }
        auto run = [&](const compiler::Executable& exe, uint64_t& cycles, uint64_t& compute) {
          SdkRuntime rt(exe);
          rt.load();
          rt.memcpy_h2d("re", words(re), 0, 0, 1, 1, int(n));
          rt.memcpy_h2d("im", words(im), 0, 0, 1, 1, int(n));
          rt.memcpy_h2d("wre", words(wre), 0, 0, 1, 1, int(n / 2));
          rt.memcpy_h2d("wim", words(wim), 0, 0, 1, 1, int(n / 2));
          const uint64_t before = rt.cycles();
          rt.launch("compute");
          compute = rt.cycles() - before;
          std::vector<uint32_t> out = read_back(rt, "re", 0, 0, 1, 1, int(n));
          const std::vector<uint32_t> out_im = read_back(rt, "im", 0, 0, 1, 1, int(n));
          out.insert(out.end(), out_im.begin(), out_im.end());
          cycles = rt.cycles();
          return out;
        };
        uint64_t cycles = 0, compute = 0, cycles_asm = 0, compute_asm = 0;
        const std::vector<uint32_t> got = run(
            compile_kernel_csl("fft", {{"N", std::to_string(n)}, {"INVERSE", inverse ? "1" : "0"}}, arch, {3, 3, 1, 1}),
            cycles, compute);
        const xt::xarray<std::complex<double>> ref = reference_dft(re, im, inverse);
        const double tol = fft_tolerance(ref, std::ldexp(1.0, -24));
        for (size_t k = 0; k < n; ++k)
          EXPECT_LE(std::abs(std::complex<double>(std::bit_cast<float>(got[k]), std::bit_cast<float>(got[n + k])) - ref(k)), tol)
              << "X[" << k << "]";
        EXPECT_EQ(run(build_kernel("fft", {{"N", int64_t(n)}, {"INVERSE", inverse ? 1 : 0}}, arch), cycles_asm, compute_asm), got);
        std::printf("fft %s %s: cycles CSL %llu (compute %llu), assembly %llu (compute %llu)\n", arch.c_str(), name.c_str(),
                    (unsigned long long)cycles, (unsigned long long)compute, (unsigned long long)cycles_asm,
                    (unsigned long long)compute_asm);
      }
}

// `words` streamed into the first PE of `rect` (the host stream of topic-14 and topic-04).
void stream_in(SdkRuntime& rt, const std::string& rect, const std::vector<uint32_t>& words) {
  runtime::host::MemcpyOptions stream;
  stream.streaming = true;
  rt.memcpy_h2d(rect, words, 0, 0, 1, 1, int(words.size()), stream);
}

// topic-14 (wse2, as the assembly kernel and the SDK's): values streamed into the first PE;
// the even PEs (which see blue) end with twice the sum, the odd ones (red) with the sum; the
// assembly kernel's two cases, the same words from both versions.
TEST(CslTopic14, RedAndBlueSwapOnEveryHop) {
  std::mt19937 gen(1400);
  std::vector<uint32_t> seeded(9);
  for (uint32_t& v : seeded) v = gen() % 100000;
  for (const auto& [width, values] : {std::pair{4, std::vector<uint32_t>{0, 1, 2, 3, 4}}, std::pair{7, seeded}}) {
    SCOPED_TRACE("width " + std::to_string(width));
    auto run = [&](const compiler::Executable& exe, const std::string& rect, uint64_t& cycles) {
      LoadedRuntime rt(exe);
      stream_in(rt, rect, values);
      rt.run_until_quiescent();
      cycles = rt.cycles();
      return read_back(rt, "sum", 0, 0, width, 1, 1);
    };
    uint64_t cycles = 0, cycles_asm = 0;
    const std::vector<uint32_t> sums =
        run(compile_kernel_csl("topic-14-color-swap", {{"WIDTH", std::to_string(width)}}, "wse2", {width + 2, 3, 1, 1}), "kernel",
            cycles);
    uint32_t total = 0;
    for (uint32_t v : values) total += v;
    for (int x = 0; x < width; ++x) EXPECT_EQ(sums[size_t(x)], (x % 2 == 0 ? 2 : 1) * total) << "PE " << x;
    EXPECT_EQ(run(build_kernel("topic-14-color-swap", {{"WIDTH", width}}), "row", cycles_asm), sums);
    std::printf("topic-14 wse2 width %d, %zu values: cycles CSL %llu, assembly %llu\n", width, values.size(),
                (unsigned long long)cycles, (unsigned long long)cycles_asm);
  }
}

// topic-04 (wse2): seeded (index, value) pairs, repeated indices and out-of-range ones
// included, packed as index << 16 | value and streamed in; the dense vector must be the host's
// scatter-add (mod 2^16) and the out-of-range count exact, the same words from both versions.
TEST(CslTopic04, ScatterAddOfIndexedWavelets) {
  for (auto [n, nonzeros, out_of_range, seed] : {std::tuple{16, 40, 0, 41u}, std::tuple{10, 25, 3, 42u}}) {
    SCOPED_TRACE("N=" + std::to_string(n));
    std::mt19937 gen(seed);
    std::vector<uint32_t> wavelets, want(size_t(n), 0);
    for (int i = 0; i < nonzeros; ++i) {
      const uint32_t index = gen() % uint32_t(n), value = gen() & 0xFFFF;
      want[index] = (want[index] + value) & 0xFFFF;
      wavelets.push_back(index << 16 | value);
    }
    for (int i = 0; i < out_of_range; ++i) wavelets.insert(wavelets.begin() + i * 3, uint32_t(n + i) << 16 | 7u);
    want.push_back(uint32_t(out_of_range));
    auto run = [&](const compiler::Executable& exe, const std::string& rect, uint64_t& cycles) {
      LoadedRuntime rt(exe);
      stream_in(rt, rect, wavelets);
      runtime::host::MemcpyOptions half;
      half.data_type = runtime::host::MemcpyDataType::MEMCPY_16BIT;
      std::vector<uint32_t> got = read_back(rt, "dense", 0, 0, 1, 1, n, half);
      got.push_back(read_back(rt, "dropped", 0, 0, 1, 1, 1)[0]);
      cycles = rt.cycles();
      return got;
    };
    uint64_t cycles = 0, cycles_asm = 0;
    EXPECT_EQ(run(compile_kernel_csl("topic-04-sparse-tensors", {{"N", std::to_string(n)}}, "wse2", {3, 3, 1, 1}), "kernel", cycles),
              want);
    EXPECT_EQ(run(build_kernel("topic-04-sparse-tensors", {{"N", n}}), "sparse", cycles_asm), want);
    std::printf("topic-04 wse2 N=%d, %zu wavelets: cycles CSL %llu, assembly %llu\n", n, wavelets.size(),
                (unsigned long long)cycles, (unsigned long long)cycles_asm);
  }
}

}  // namespace
}  // namespace wsemu::testing
