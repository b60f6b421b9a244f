// Issue #16's calibration table from one command: for every row a published figure, what
// wsemu emulates and the ratio emulated / published. Run on request (not in CI):
//
//   build/bin/calibration [--arch wse2|wse3] [--set key=value]... [--sdk DIR] [--stencil2d DIR]
//                         [--rows reduce,kernels,memcpy,launch,bicgstab,fft,csl]
//
// Rows:
//   reduce   the wafer-scale reduce model (Luczynski et al., HPDC'24, under 4 % error on CS-2):
//            chain, star and tree on 1-D rows, P = 4..64, B = 1..256 (tests/emulator/reduce_row.hpp
//            has the programs and the formulas); "published" is the model's formula with the
//            profile's T_R.
//   kernels  single-tile-matvec (the SDK benchmark's "N^2 fmacs at one element per cycle"), the
//            2-D 5-point stencil of the community Stencil2D series (WSE-2 simulator, one
//            iteration incl. halo exchange: 4x4 PEs of 64^2 and the strong-scaling 256^2 grid
//            on 8x8, 16x16, 32x32 PEs), each timed by the kernel's own cycle-counter stamps
//            (min..max over the PEs, as the published figures are); the stencil again from its
//            CSL version (kernels/stencil-2d-5pt/csl, compiled by wsemu cslc).
//   memcpy   host -> device and device -> host bandwidth timed on the device with the
//            bandwidth-test kernel's `tic` / `toc` stamps (max toc - min tic), against the SDK's
//            7 Gbps per channel (875 MB/s of 32-bit words): one PE with 4096 words, and the SDK
//            benchmark's 5x5 PEs with 256 words each.
//   launch   the launch skew (firmware/README.md "Launch skew"): max - min over the PEs of the
//            stamp `tic` takes first thing, on rows and rectangles; and what is left of it after
//            a rectangle-wide sync (a scalar allreduce, lib/allreduce/test's `timed_sum` start
//            stamps), against the hop distance px + py the SDK's bandwidth-test corrects by.
//   bicgstab the SC20 BiCGStab figure (28 us per iteration at 600 x 595 x 1536, CS-1, mixed
//            precision): cycles per iteration of kernels/bicgstab (its own stamps, taken after a
//            first SpMV and allreduce, i.e. after a rectangle-wide sync) on 8 x 8 PEs at Z = 128
//            and 512, the part linear in Z from the two, plus 3 allreduces at the per-PE cost
//            of lib/allreduce measured on 8x8 and 32x8, extrapolated to the published size by the
//            kernel's scaling rule (kernels/bicgstab/README.md). Not in the default rows (about a
//            minute).
//   fft      the 3-D FFT 512^3 on 512 x 512 PEs of a CS-2 in 959 us (Orenes-Vera et al., ICS'23):
//            kernels/fft-3d with one pencil per PE (P = 1) on N x N PEs, N = 16, 32, 64 (its own
//            stamps, max end - min start, and the longest per-PE time of each step), extrapolated
//            to 512 by kernels/fft-3d/README.md's rule: the FFTs by their operation count
//            (~ N log2 N), each transpose by a N^2 + b N fitted to N = 32 and 64. Not in the
//            default rows (about a minute).
//   csl      like for like with the SDK's own CSL: examples of a checkout of Cerebras/csl-examples
//            (--sdk DIR, else $WSEMU_CSL_EXAMPLES, else ../csl-examples beside the source tree)
//            compiled by `wsemu cslc` and run by their own run.py under `wsemu python`, in a
//            scratch copy; the figures are the ones their run.py prints: single-tile-matvec's
//            max cycles (against N^2 fmacs), bandwidth-test's MB/s (against 7 Gbps), and
//            bicgstab's device cycles per iteration (shown only: its steps are host-driven). Skipped
//            with a message when there is no checkout. With --stencil2d DIR (else
//            $WSEMU_STENCIL2D), a folder holding the community Stencil2D at the commit whose
//            run_test_log.csv has the published cycles (Elia-Belli/stencil-cerebras cd54d0e,
//            Stencil2D/), also its 4x4 PEs of 64^2 and the 256^2 strong-scaling shapes, min..max
//            cycles as its run.py prints them; a program wsemu cslc cannot compile prints the
//            first error instead of a row. Not in the default rows (seconds). --set reaches these
//            runs too (WSEMU_PROFILE, as `wsemu python --profile`).
// The other row of kernels/README.md's table (the 2-D allreduce) is measured by its kernel's
// test and documented there.
#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/csl/cslc.hpp"
#include "compiler/layout/build.hpp"
#include "emulator/arch_profile.hpp"
#include "firmware/memcpy_protocol.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/emulator/reduce_row.hpp"
#include "tools/cli_conventions.hpp"

namespace {

using namespace wsemu;

std::string source_dir() {
  const char* s = std::getenv("WSEMU_SOURCE_DIR");
  return s ? s : WSEMU_DEFAULT_SOURCE_DIR;
}

// A ratio of 0 marks a row that only shows a measurement (printed "-").
void row(const std::string& what, const std::string& published, const std::string& emulated, double ratio) {
  if (ratio == 0.0)
    std::printf("| %s | %s | %s | - |\n", what.c_str(), published.c_str(), emulated.c_str());
  else
    std::printf("| %s | %s | %s | %.3f |\n", what.c_str(), published.c_str(), emulated.c_str(), ratio);
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

void reduce_rows(const emu::ArchProfile& p) {
  std::printf("\n### Reduce model, 1-D rows, T_R = %d (ramp up %d, down %d)\n\n", p.ramp_up_latency,
              p.ramp_up_latency, p.ramp_down_latency);
  std::printf("| algorithm, P, B | model cycles | emulated cycles | ratio |\n|---|---|---|---|\n");
  for (reduce_row::Algorithm a : {reduce_row::Algorithm::CHAIN, reduce_row::Algorithm::STAR, reduce_row::Algorithm::TREE})
    for (int P : {4, 8, 16, 32, 64})
      for (int B : {1, 4, 16, 64, 256}) {
        const double model = reduce_row::model_cycles(a, P, B, p.ramp_up_latency);
        const reduce_row::Result r = reduce_row::run(p, a, P, B);
        row(std::string(reduce_row::algorithm_name(a)) + " " + std::to_string(P) + " " + std::to_string(B),
            number(model), std::to_string(r.cycles()), double(r.cycles()) / model);
      }
}

struct Stamps {
  uint64_t min = UINT64_MAX, max = 0;
};

compiler::Executable build(const std::string& kernel, const std::map<std::string, int64_t>& params) {
  compiler::layout::BuildOptions options;
  options.params = params;
  options.include_dirs = {firmware::include_dir()};
  compiler::layout::BuildResult built =
      compiler::layout::build_layout_file(source_dir() + "/kernels/" + kernel + "/layout.wsl", options);
  if (!built.ok()) throw std::runtime_error(kernel + " does not build");
  return *built.executable;
}

Stamps stamps(runtime::host::SdkRuntime& rt, int kx, int ky) {
  std::vector<uint32_t> t(size_t(kx * ky) * 4);
  rt.memcpy_d2h(t, "maxmin_time", 0, 0, kx, ky, 4);
  Stamps s;
  for (size_t p = 0; p < size_t(kx * ky); ++p) {
    const uint64_t start = (uint64_t(t[p * 4 + 1] & 0xFFFF) << 32) | t[p * 4];
    const uint64_t end = (uint64_t(t[p * 4 + 3] & 0xFFFF) << 32) | t[p * 4 + 2];
    s.min = std::min(s.min, end - start);
    s.max = std::max(s.max, end - start);
  }
  return s;
}

runtime::host::RuntimeOptions runtime_options(const std::vector<std::string>& overrides) {
  runtime::host::RuntimeOptions o;
  o.backdoor = true;  // the copies are not what these rows time
  o.profile_overrides = overrides;
  return o;
}

void matvec_row(int nb, int kx, int ky, const std::vector<std::string>& overrides) {
  runtime::host::SdkRuntime rt(build("single-tile-matvec", {{"kx", kx}, {"ky", ky}, {"NB", nb}}),
                               runtime_options(overrides));
  rt.load();
  std::vector<uint32_t> a(size_t(kx * ky * nb * nb), std::bit_cast<uint32_t>(0.5f)),
      x(size_t(kx * ky * nb), std::bit_cast<uint32_t>(1.0f));
  rt.memcpy_h2d("A", a, 0, 0, kx, ky, nb * nb);
  rt.memcpy_h2d("x", x, 0, 0, kx, ky, nb);
  rt.launch("compute");
  rt.run_until_quiescent();
  const Stamps s = stamps(rt, kx, ky);
  row("single-tile-matvec NB = " + std::to_string(nb), "N^2 = " + std::to_string(nb * nb),
      std::to_string(s.min) + ".." + std::to_string(s.max), double(s.max) / double(nb * nb));
}

// kernels/stencil-2d-5pt/csl (the same dataflow in CSL) compiled as `wsemu cslc` would.
compiler::Executable build_stencil_csl(int k, int n) {
  compiler::csl::CslOptions o;
  o.layout_file = source_dir() + "/kernels/stencil-2d-5pt/csl/layout.csl";
  o.placement = {k + 2, k + 2, 1, 1};
  for (const auto& [name, v] : {std::pair{"kx", k}, std::pair{"ky", k}, std::pair{"M", n}, std::pair{"N", n}, std::pair{"ITERS", 1}})
    o.params.emplace_back(name, std::to_string(v));
  compiler::csl::CslResult r = compiler::csl::compile_csl(o);
  if (!r.ok()) throw std::runtime_error("kernels/stencil-2d-5pt/csl does not compile");
  return std::move(*r.executable);
}

void stencil_row(int k, int n, uint64_t pub_min, uint64_t pub_max, const std::vector<std::string>& overrides,
                 bool csl = false) {
  runtime::host::SdkRuntime rt(csl ? build_stencil_csl(k, n)
                                   : build("stencil-2d-5pt", {{"kx", k}, {"ky", k}, {"M", n}, {"N", n}, {"ITERS", 1}}),
                               runtime_options(overrides));
  rt.load();
  const size_t tile = size_t(n + 2) * size_t(n + 2);
  std::vector<uint32_t> u0(size_t(k * k) * tile, std::bit_cast<uint32_t>(1.0f)), coeff;
  for (int p = 0; p < k * k; ++p)
    for (float v : {0.11f, 0.13f, 0.17f, 0.4f, 0.19f}) coeff.push_back(std::bit_cast<uint32_t>(v));
  rt.memcpy_h2d("u0", u0, 0, 0, k, k, int(tile));
  rt.memcpy_h2d("coeff", coeff, 0, 0, k, k, 5);
  rt.launch("compute");
  rt.run_until_quiescent();
  const Stamps s = stamps(rt, k, k);
  row(std::string(csl ? "stencil-2d-5pt CSL (wsemu cslc) " : "stencil-2d-5pt ") + std::to_string(k) + "x" +
          std::to_string(k) + " PEs of " + std::to_string(n) + "^2",
      std::to_string(pub_min) + ".." + std::to_string(pub_max), std::to_string(s.min) + ".." + std::to_string(s.max),
      (double(s.min) + double(s.max)) / double(pub_min + pub_max));
}

void kernel_rows(const std::vector<std::string>& overrides) {
  std::printf("\n### Kernels (wse2), the kernels' own cycle stamps; ratio of the max (matvec) or of min+max\n\n");
  std::printf("| row | published | emulated | ratio |\n|---|---|---|---|\n");
  matvec_row(25, 2, 2, overrides);
  matvec_row(100, 1, 1, overrides);
  stencil_row(4, 64, 33374, 35052, overrides);
  stencil_row(8, 32, 10452, 11501, overrides);
  stencil_row(16, 16, 3495, 4140, overrides);
  stencil_row(32, 8, 1420, 1797, overrides);
  // The same dataflow written in CSL (this project's, from the documented interfaces), compiled
  // by wsemu cslc: compiled CSL against compiled CSL, though not the community's source.
  stencil_row(4, 64, 33374, 35052, overrides, true);
  stencil_row(8, 32, 10452, 11501, overrides, true);
  stencil_row(16, 16, 3495, 4140, overrides, true);
  stencil_row(32, 8, 1420, 1797, overrides, true);
}

uint64_t u48(const std::vector<uint32_t>& t, size_t word) { return (uint64_t(t[word + 1] & 0xFFFF) << 32) | t[word]; }

// max toc - min tic, and the tic stamps' spread, of bandwidth-test's `stamps` over the PEs.
struct Window {
  uint64_t cycles, tic_spread;
};
Window bandwidth_window(runtime::host::SdkRuntime& rt, int pw, int ph) {
  std::vector<uint32_t> t(size_t(pw * ph) * 4);
  rt.memcpy_d2h(t, "stamps", 0, 0, pw, ph, 4);
  uint64_t first_tic = UINT64_MAX, last_tic = 0, last_toc = 0;
  for (size_t p = 0; p < size_t(pw * ph); ++p) {
    first_tic = std::min(first_tic, u48(t, p * 4));
    last_tic = std::max(last_tic, u48(t, p * 4));
    last_toc = std::max(last_toc, u48(t, p * 4 + 2));
  }
  return {last_toc - first_tic, last_tic - first_tic};
}

runtime::host::RuntimeOptions fabric_options(const std::vector<std::string>& overrides) {
  runtime::host::RuntimeOptions o;
  o.profile_overrides = overrides;
  return o;
}

void memcpy_rows(const std::vector<std::string>& overrides) {
  std::printf("\n### Host memcpy, timed on the device (bandwidth-test tic / toc), 1 channel\n\n");
  std::printf("| row | published | emulated | ratio |\n|---|---|---|---|\n");
  struct Case {
    int pw, ph, n;
  };
  for (const Case c : {Case{1, 1, 4096}, Case{5, 5, 256}}) {
    runtime::host::SdkRuntime rt(build("bandwidth-test", {{"PW", c.pw}, {"PH", c.ph}, {"N", c.n}}),
                                 fabric_options(overrides));
    rt.load();
    const size_t words = size_t(c.pw * c.ph * c.n);
    std::vector<uint32_t> data(words, 7u);
    const double bytes = 4.0 * double(words), mhz = rt.clock_mhz();
    rt.launch("tic");
    rt.memcpy_h2d("buf", data, 0, 0, c.pw, c.ph, c.n);
    rt.launch("toc");
    const Window h2d = bandwidth_window(rt, c.pw, c.ph);
    rt.launch("tic");
    rt.memcpy_d2h(data, "buf", 0, 0, c.pw, c.ph, c.n);
    rt.launch("toc");
    const Window d2h = bandwidth_window(rt, c.pw, c.ph);
    const double published = 7e9 / 8 / 1e6;  // MB/s of one channel
    for (const auto& [dir, w] : {std::pair{"H2D", h2d}, std::pair{"D2H", d2h}}) {
      const double mbs = bytes / (double(w.cycles) / mhz);
      row(std::string("memcpy ") + dir + " " + std::to_string(c.pw) + "x" + std::to_string(c.ph) + " PEs, " +
              std::to_string(c.n) + " words each",
          "7 Gbps = " + number(published) + " MB/s",
          std::to_string(w.cycles) + " cycles = " + number(mbs) + " MB/s", mbs / published);
    }
  }
}

void launch_rows(const std::vector<std::string>& overrides) {
  std::printf("\n### Launch skew (max - min over the PEs of a stamp taken first thing), 1 channel\n\n");
  std::printf("| row | published | emulated | ratio |\n|---|---|---|---|\n");
  struct Shape {
    int pw, ph;
  };
  for (const Shape s : {Shape{8, 1}, Shape{32, 1}, Shape{8, 8}, Shape{32, 8}}) {
    const std::string shape = std::to_string(s.pw) + "x" + std::to_string(s.ph);
    const double hops = double(s.pw + s.ph - 2);
    {
      runtime::host::SdkRuntime rt(build("bandwidth-test", {{"PW", s.pw}, {"PH", s.ph}, {"N", 1}}),
                                   fabric_options(overrides));
      rt.load();
      rt.launch("tic");
      rt.launch("toc");
      const Window w = bandwidth_window(rt, s.pw, s.ph);
      row("launch " + shape, "about the dimension: px + py <= " + number(hops),
          std::to_string(w.tic_spread) + " cycles", double(w.tic_spread) / std::max(hops, 1.0));
    }
    {
      runtime::host::SdkRuntime rt(build("lib/allreduce/test", {{"PW", s.pw}, {"PH", s.ph}, {"N", 1}}),
                                   fabric_options(overrides));
      rt.load();
      rt.launch("timed_sum");
      rt.run_until_quiescent();
      std::vector<uint32_t> t(size_t(s.pw * s.ph) * 4);
      rt.memcpy_d2h(t, "t", 0, 0, s.pw, s.ph, 4);
      uint64_t lo = UINT64_MAX, hi = 0;
      for (size_t p = 0; p < size_t(s.pw * s.ph); ++p) {
        lo = std::min(lo, u48(t, p * 4));
        hi = std::max(hi, u48(t, p * 4));
      }
      row("after a scalar allreduce " + shape, "px + py <= " + number(hops), std::to_string(hi - lo) + " cycles",
          double(hi - lo) / std::max(hops, 1.0));
    }
  }
}

// Cycles per iteration of kernels/bicgstab on kx x ky x z, ITERS = 2 (max end - min start / 2).
double bicgstab_iteration(int kx, int ky, int z, const std::vector<std::string>& overrides) {
  const int iters = 2;
  runtime::host::SdkRuntime rt(build("bicgstab", {{"kx", kx}, {"ky", ky}, {"Z", z}, {"ITERS", iters}}),
                               runtime_options(overrides));
  rt.load();
  const size_t pes = size_t(kx * ky), n = pes * size_t(z);
  // A diagonally dominant stencil (centre 1, neighbours -0.1): the cycles do not depend on the
  // values, only the iteration count does, which is fixed.
  std::vector<uint32_t> coeff;
  for (size_t p = 0; p < pes; ++p)
    for (int k = 0; k < 7; ++k)
      for (int i = 0; i < z; ++i) coeff.push_back(std::bit_cast<uint32_t>(k == 0 ? 1.0f : -0.1f));
  rt.memcpy_h2d("x", std::vector<uint32_t>(n, std::bit_cast<uint32_t>(0.01f)), 0, 0, kx, ky, z);
  rt.memcpy_h2d("b", std::vector<uint32_t>(n, std::bit_cast<uint32_t>(1.0f)), 0, 0, kx, ky, z);
  rt.memcpy_h2d("coeff", coeff, 0, 0, kx, ky, 7 * z);
  rt.launch("bicgstab");
  rt.run_until_quiescent();
  std::vector<uint32_t> t(pes * 4);
  rt.memcpy_d2h(t, "t", 0, 0, kx, ky, 4);
  uint64_t first = UINT64_MAX, last = 0;
  for (size_t p = 0; p < pes; ++p) {
    first = std::min(first, u48(t, p * 4));
    last = std::max(last, u48(t, p * 4 + 2));
  }
  return double(last - first) / iters;
}

// One scalar allreduce of lib/allreduce on pw x ph (ar_test's timed_sum: max end - min start).
double allreduce_cycles(int pw, int ph, const std::vector<std::string>& overrides) {
  runtime::host::SdkRuntime rt(build("lib/allreduce/test", {{"PW", pw}, {"PH", ph}, {"N", 1}}),
                               fabric_options(overrides));
  rt.load();
  rt.launch("timed_sum");
  rt.run_until_quiescent();
  std::vector<uint32_t> t(size_t(pw * ph) * 4);
  rt.memcpy_d2h(t, "t", 0, 0, pw, ph, 4);
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t p = 0; p < size_t(pw * ph); ++p) {
    lo = std::min(lo, u48(t, p * 4));
    hi = std::max(hi, u48(t, p * 4 + 2));
  }
  return double(hi - lo);
}

void bicgstab_rows(const std::vector<std::string>& overrides) {
  std::printf("\n### BiCGStab (SC20: 28 us per iteration at 600 x 595 x 1536, CS-1, mixed precision)\n\n");
  std::printf("| row | published | emulated | ratio |\n|---|---|---|---|\n");
  const double i128 = bicgstab_iteration(8, 8, 128, overrides), i512 = bicgstab_iteration(8, 8, 512, overrides);
  const double per_z = (i512 - i128) / (512 - 128);
  // The allreduce's cost per PE of PW + PH from two shapes, its fixed part dropped.
  const double a8 = allreduce_cycles(8, 8, overrides), a40 = allreduce_cycles(32, 8, overrides);
  const double per_pe = (a40 - a8) / ((32 + 8) - (8 + 8));
  const double full = per_z * 1536 + 3 * per_pe * (600 + 595);
  const double mhz = emu::arch_profile("wse2").clock_mhz;
  row("bicgstab 8x8x128 / 8x8x512, per iteration: the part linear in Z",
      "48 flops per z point at the fp32 peak of 2 per cycle: 24 cycles per z point",
      number(i128) + " / " + number(i512) + " cycles: " + number(per_z) + " per z point", per_z / 24.0);
  row("bicgstab extrapolated to 600x595x1536: " + number(per_z) + " cycles per z point + 3 allreduces at " +
          number(per_pe) + " per PE of PW + PH",
      "28 us", number(full) + " cycles = " + number(full / mhz) + " us", full / mhz / 28.0);
}


// kernels/fft-3d, forward fp32, P = 1 on n x n PEs, zero input (the cycles do not depend on the
// values): the kernel's span and the longest per-PE time of each of its 5 steps.
struct FftRun {
  uint64_t kernel = 0;
  uint32_t step[5] = {};
};
FftRun fft3d_run(int n, const std::vector<std::string>& overrides) {
  runtime::host::SdkRuntime rt(build("fft-3d", {{"N", n}, {"P", 1}, {"INVERSE", 0}}), runtime_options(overrides));
  rt.load();
  const int pes = n * n;
  rt.memcpy_h2d("X", std::vector<uint32_t>(size_t(pes) * size_t(2 * n), 0u), 0, 0, n, n, 2 * n);
  std::vector<uint32_t> wre, wim;
  for (int p = 0; p < pes; ++p)
    for (int k = 0; k < n / 2; ++k) {
      wre.push_back(std::bit_cast<uint32_t>(float(std::cos(2 * M_PI * k / n))));
      wim.push_back(std::bit_cast<uint32_t>(float(-std::sin(2 * M_PI * k / n))));
    }
  rt.memcpy_h2d("wre", wre, 0, 0, n, n, n / 2);
  rt.memcpy_h2d("wim", wim, 0, 0, n, n, n / 2);
  rt.launch("compute");
  rt.run_until_quiescent();
  std::vector<uint32_t> t(size_t(pes) * 4), ph(size_t(pes) * 6);
  rt.memcpy_d2h(t, "maxmin_time", 0, 0, n, n, 4);
  rt.memcpy_d2h(ph, "phase_time", 0, 0, n, n, 6);
  FftRun r;
  uint64_t first = UINT64_MAX, last = 0;
  for (size_t p = 0; p < size_t(pes); ++p) {
    first = std::min(first, u48(t, p * 4));
    last = std::max(last, u48(t, p * 4 + 2));
    for (size_t s = 0; s < 5; ++s) r.step[s] = std::max(r.step[s], ph[6 * p + s + 1] - ph[6 * p + s]);
  }
  r.kernel = last - first;
  return r;
}

// The FFT's operation count per pencil (kernels/fft-3d/README.md "Scaling rule").
double fft_ops(double n) {
  const double l = std::log2(n);
  return l * (3.25 * n + 40) + (l - 1) * (n + 20);
}

void fft_rows(const std::vector<std::string>& overrides) {
  std::printf("\n### 3-D FFT (published: 512^3 complex fp32 on 512 x 512 PEs, CS-2, 959 us)\n\n");
  std::printf("| row | published | emulated | ratio |\n|---|---|---|---|\n");
  std::map<int, FftRun> runs;
  for (int n : {16, 32, 64}) {
    runs[n] = fft3d_run(n, overrides);
    const FftRun& r = runs[n];
    row("fft-3d N = " + std::to_string(n) + ", P = 1 on " + std::to_string(n) + "x" + std::to_string(n) +
            " PEs: FFT c / transpose 1 / FFT a / transpose 2 / FFT b, longest per PE",
        "-",
        std::to_string(r.kernel) + " cycles (" + std::to_string(r.step[0]) + " / " + std::to_string(r.step[1]) +
            " / " + std::to_string(r.step[2]) + " / " + std::to_string(r.step[3]) + " / " +
            std::to_string(r.step[4]) + ")",
        0.0);
  }
  // Each transpose: a N^2 + b N through N = 32 and 64; the FFTs scaled from N = 64 by fft_ops.
  auto transpose_at_512 = [&](int step) {
    const double t32 = runs[32].step[step], t64 = runs[64].step[step];
    const double a = (t64 - 2 * t32) / (64.0 * 64.0 - 2 * 32.0 * 32.0), b = (t32 - a * 32 * 32) / 32;
    return a * 512 * 512 + b * 512;
  };
  const double ffts = double(runs[64].step[0] + runs[64].step[2] + runs[64].step[4]) * fft_ops(512) / fft_ops(64);
  const double t1 = transpose_at_512(1), t2 = transpose_at_512(3), total = ffts + t1 + t2;
  const double link_bound = ffts + 2 * 2.0 * 512 * 511;  // the scheme: N - 1 streams of N - 1 bricks of 2 wavelets
  const double mhz = emu::arch_profile("wse2").clock_mhz;
  row("fft-3d extrapolated to N = 512: FFTs " + number(ffts) + " + transposes " + number(t1) + " + " + number(t2) +
          " cycles (the scheme's link limit: " + number(link_bound) + ")",
      "959 us", number(total) + " cycles = " + number(total / mhz) + " us", total / mhz / 959.0);
}

// The folder of a checkout of Cerebras/csl-examples, or "" when there is none.
std::string sdk_checkout(const std::string& given) {
  namespace fs = std::filesystem;
  std::vector<std::string> candidates;
  if (!given.empty()) candidates.push_back(given);
  if (const char* e = std::getenv("WSEMU_CSL_EXAMPLES")) candidates.push_back(e);
  candidates.push_back(source_dir() + "/../csl-examples");
  for (const std::string& c : candidates)
    if (fs::is_directory(fs::path(c) / "benchmarks")) return fs::canonical(c).string();
  return "";
}

// Runs `commands` (cslc and cs_python lines, as an example's commands file writes them) in a
// scratch copy of the folder `example` whose siblings are links to the originals (imports such as
// ../benchmark-libs still resolve), with `cslc` and `cs_python` standing for `wsemu cslc` and
// `wsemu python` (tools/csl_examples.sh does the same); returns what they printed. A failure
// throws, unless `ok` is given: then it says whether all succeeded.
std::string run_example_copy(const std::filesystem::path& example, const std::string& commands, bool* ok = nullptr) {
  namespace fs = std::filesystem;
  const fs::path wsemu = fs::canonical("/proc/self/exe").parent_path() / "wsemu";
  char pattern[] = "/tmp/wsemu-calibration-XXXXXX";
  if (!mkdtemp(pattern)) throw std::runtime_error("cannot make a scratch folder");
  const fs::path scratch = pattern, parent = scratch / "examples", copy = parent / example.filename();
  fs::create_directories(scratch / "shims");
  for (const auto& [tool, sub] : {std::pair{"cslc", "cslc"}, std::pair{"cs_python", "python"}}) {
    std::ofstream(scratch / "shims" / tool) << "#!/bin/sh\nexec timeout 300 " << wsemu << " " << sub << " \"$@\"\n";
    fs::permissions(scratch / "shims" / tool, fs::perms::owner_all);
  }
  fs::create_directories(parent);
  for (const auto& sibling : fs::directory_iterator(example.parent_path()))
    if (sibling.path().filename() != example.filename())
      fs::create_symlink(sibling.path(), parent / sibling.path().filename());
  fs::copy(example, copy, fs::copy_options::recursive);
  const fs::path log = scratch / "log.txt";
  const std::string command = "cd '" + copy.string() + "' && PATH='" + (scratch / "shims").string() +
                              "':\"$PATH\" sh -e -c '" + commands + "' > '" + log.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  std::stringstream out;
  out << std::ifstream(log).rdbuf();
  fs::remove_all(scratch);
  if (ok) *ok = status == 0;
  else if (status != 0) throw std::runtime_error(example.string() + " failed:\n" + out.str());
  return out.str();
}
std::string run_sdk_example(const std::string& checkout, const std::string& name, const std::string& commands) {
  return run_example_copy(std::filesystem::path(checkout) / "benchmarks" / name, commands);
}

double printed_number(const std::string& output, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(output, m, std::regex(pattern))) throw std::runtime_error("no '" + pattern + "' in:\n" + output);
  return std::stod(m[1].str());
}

// The community Stencil2D (the published 5-point rows of kernels/README.md) on kx x kx PEs of an
// m x m grid, one iteration, as its commands_wse2.sh builds and runs it (with --verbose, without
// which its run.py prints no cycle counts) and as its run_test.sh checks it (--verify: the result
// read back through the exported pointer variable A_ptr must equal its reference exactly; it
// writes both to out/output/); false (after printing why) when wsemu cannot run it.
bool stencil2d_row(const std::string& folder, int kx, int m, uint64_t pub_min, uint64_t pub_max) {
  const std::string k = std::to_string(kx), mm = std::to_string(m);
  bool ok = false;
  const std::string out = run_example_copy(
      std::filesystem::canonical(folder),
      "cslc --arch=wse2 ./layout.csl --fabric-dims=" + std::to_string(kx + 7) + "," + std::to_string(kx + 2) +
          " --fabric-offsets=4,1 --params=kernel_dim_x:" + k + ",kernel_dim_y:" + k + ",M:" + mm + ",N:" + mm +
          ",iterations:1 -o out --memcpy --channels 1; mkdir -p out/output; cs_python run.py --name out --verbose --verify",
      &ok);
  if (!ok) {
    std::smatch m1;
    const bool found = std::regex_search(out, m1, std::regex(R"([^\n]*(error|Error)[^\n]*)"));
    std::printf("| stencil2d (community CSL) %sx%s PEs of %s^2 | %llu..%llu | does not run: %s | - |\n", k.c_str(),
                k.c_str(), mm.c_str(), (unsigned long long)pub_min, (unsigned long long)pub_max,
                found ? m1[0].str().c_str() : "(no error line)");
    return false;
  }
  const double lo = printed_number(out, R"(Min cycles \([^)]*\):\s*([0-9]+))");
  const double hi = printed_number(out, R"(Max cycles \([^)]*\):\s*([0-9]+))");
  row("stencil2d (community CSL) " + k + "x" + k + " PEs of " + mm + "^2",
      std::to_string(pub_min) + ".." + std::to_string(pub_max), number(lo) + ".." + number(hi),
      (lo + hi) / double(pub_min + pub_max));
  return true;
}

void csl_rows(const std::string& sdk, const std::string& stencil2d, const std::vector<std::string>& overrides) {
  std::printf("\n### The SDK's own CSL (wsemu cslc, its run.py under wsemu python), wse2\n\n");
  // --set reaches every SdkRuntime of the run.py scripts as `wsemu python --profile` would.
  std::string profile;
  for (const std::string& o : overrides) profile += (profile.empty() ? "" : ",") + o;
  ::setenv("WSEMU_PROFILE", profile.c_str(), 1);
  const std::string checkout = sdk_checkout(sdk);
  if (checkout.empty()) {
    std::printf("(skipped: no checkout of Cerebras/csl-examples; give --sdk DIR or WSEMU_CSL_EXAMPLES)\n");
    return;
  }
  std::printf("| row | published | emulated | ratio |\n|---|---|---|---|\n");
  const std::string matvec = run_sdk_example(
      checkout, "single-tile-matvec",
      "cslc ./src/layout_matvec.csl --arch wse2 --fabric-dims=9,4 --fabric-offsets=4,1 "
      "--params=width:2,height:2,tile_size:25,iters:1 -o out --memcpy --channels=1; cs_python ./run.py --name out --verify");
  const double max_cycles = printed_number(matvec, R"(Max cycles \([^)]*\):\s*([0-9]+))");
  row("single-tile-matvec (SDK CSL) NB = 25 on 2x2 PEs, its run.py's max cycles", "N^2 = 625",
      number(max_cycles) + " cycles", max_cycles / 625.0);
  const std::string bw_build =
      "cslc ./src/bw_sync_layout.csl --arch wse2 --fabric-dims=12,7 --fabric-offsets=4,1 "
      "--params=width:5,height:5,pe_length:256 --params=C0_ID:0 --params=C1_ID:1 --params=C2_ID:2 "
      "--params=C3_ID:3 --params=C4_ID:4 -o=out --memcpy --channels=1 --width-west-buf=0 --width-east-buf=0; ";
  const std::string bw_run = "cs_python ./run.py -m=5 -n=5 -k=256 --latestlink out --channels=1 "
                             "--width-west-buf=0 --width-east-buf=0 --run-only --loop_count=1";
  const double published = 7e9 / 8 / 1e6;
  for (const std::string dir : {"H2D", "D2H"}) {
    const std::string out = run_sdk_example(checkout, "bandwidth-test", bw_build + bw_run + (dir == "D2H" ? " --d2h" : ""));
    const double mbs = printed_number(out, R"(bandwidth = ([0-9.]+) MB/S)");
    row("bandwidth-test (SDK CSL) " + dir + ", 5x5 PEs of 256 words, 1 channel, its run.py's MB/s",
        "7 Gbps = " + number(published) + " MB/s", number(mbs) + " MB/s", mbs / published);
  }
  // BiCGStab from the SDK's CSL: its run.py drives every step from the host (a launch and scalar
  // copies per step), so its device time per iteration is mostly those transfers; shown, not
  // held against SC20's on-device loop (the bicgstab rows).
  const std::string bicg = run_sdk_example(
      checkout, "bicgstab",
      "cslc ./src/layout.csl --arch wse2 --fabric-dims=15,10 --fabric-offsets=4,1 "
      "--params=width:8,height:8,MAX_ZDIM:128 --params=BLOCK_SIZE:2 --params=C0_ID:0 --params=C1_ID:1 "
      "--params=C2_ID:2 --params=C3_ID:3 --params=C4_ID:4 --params=C5_ID:5 --params=C6_ID:6 --params=C7_ID:7 "
      "--params=C8_ID:8 -o=out --memcpy --channels=1 --width-west-buf=0 --width-east-buf=0; "
      "cs_python ./run.py -m=8 -n=8 -k=128 --latestlink out --channels=1 --width-west-buf=0 "
      "--width-east-buf=0 --zDim=128 --run-only --max-ite=2");
  const double bicg_cycles = printed_number(bicg, R"(cycles_send = ([0-9]+) cycles)");
  const double bicg_iters = printed_number(bicg, R"(number of iterations = ([0-9]+))");
  row("bicgstab (SDK CSL) 8x8x128, its run.py's cycles_send / iterations (host-driven steps)", "-",
      number(bicg_cycles / bicg_iters) + " cycles per iteration (kernels/bicgstab's on-device loop: see --rows bicgstab)", 0.0);
  std::string stencil = stencil2d;
  if (stencil.empty())
    if (const char* e = std::getenv("WSEMU_STENCIL2D")) stencil = e;
  if (stencil.empty()) {
    std::printf("\n(stencil2d rows skipped: give --stencil2d DIR or WSEMU_STENCIL2D)\n");
    return;
  }
  // Weak scaling (64^2 per PE) and the 256^2 strong-scaling series; the first failure ends it.
  if (stencil2d_row(stencil, 4, 256, 33374, 35052) && stencil2d_row(stencil, 8, 256, 10452, 11501) &&
      stencil2d_row(stencil, 16, 256, 3495, 4140))
    stencil2d_row(stencil, 32, 256, 1420, 1797);
}
}  // namespace

int main(int argc, char** argv) {
  std::string arch = "wse2", sdk, stencil2d;
  std::vector<std::string> rows{"reduce", "kernels", "memcpy", "launch"};
  std::vector<std::string> overrides;
  CLI::App app{
      "calibration: issue #16's table (kernels/README.md \"Calibration\"): published cycles, "
      "emulated cycles and their ratio"};
  app.add_option("--arch", arch, "wse2 or wse3")
      ->check(CLI::IsMember({"wse2", "wse3"}))
      ->capture_default_str();
  app.add_option("--set", overrides, "key=value of the profile (as wsemu info --set); repeatable")
      ->allow_extra_args(false);
  app.add_option("--rows", rows, "rows: reduce,kernels,memcpy,launch,bicgstab,fft,csl")
      ->delimiter(',')
      ->check(CLI::IsMember({"reduce", "kernels", "memcpy", "launch", "bicgstab", "fft", "csl"}))
      ->capture_default_str();
  app.add_option("--sdk", sdk, "a checkout of the SDK examples (csl rows)");
  app.add_option("--stencil2d", stencil2d, "the community Stencil2D folder (csl rows)");
  wsemu::cli::add_version_flag(app, "calibration");
  WSEMU_CLI_PARSE(app, argc, argv);
  try {
    const emu::ArchProfile p = emu::arch_profile_with(arch, overrides);
    const auto wants = [&](const char* name) { return std::find(rows.begin(), rows.end(), name) != rows.end(); };
    if (wants("reduce")) reduce_rows(p);
    if (wants("kernels")) kernel_rows(overrides);
    if (wants("memcpy")) memcpy_rows(overrides);
    if (wants("launch")) launch_rows(overrides);
    if (wants("bicgstab")) bicgstab_rows(overrides);
    if (wants("fft")) fft_rows(overrides);
    if (wants("csl")) csl_rows(sdk, stencil2d, overrides);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "calibration: %s\n", e.what());
    return 3;
  }
  return 0;
}
