// Issue #16's calibration table from one command: for every row a published figure, what
// wsemu emulates and the ratio emulated / published. Run on request (not in CI):
//
//   build/bin/calibration [--arch wse2|wse3] [--set key=value]... [--rows reduce,kernels,memcpy,launch,bicgstab]
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
//            (min..max over the PEs, as the published figures are).
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
// The other rows of kernels/README.md's table (the 2-D allreduce, the 3-D FFT) are measured by
// their kernels' tests and documented there.
#include <algorithm>
#include <bit>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/layout/build.hpp"
#include "emulator/arch_profile.hpp"
#include "firmware/memcpy_protocol.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/emulator/reduce_row.hpp"

namespace {

using namespace wsemu;

std::string source_dir() {
  const char* s = std::getenv("WSEMU_SOURCE_DIR");
  return s ? s : WSEMU_DEFAULT_SOURCE_DIR;
}

void row(const std::string& what, const std::string& published, const std::string& emulated, double ratio) {
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

void stencil_row(int k, int n, uint64_t pub_min, uint64_t pub_max, const std::vector<std::string>& overrides) {
  runtime::host::SdkRuntime rt(build("stencil-2d-5pt", {{"kx", k}, {"ky", k}, {"M", n}, {"N", n}, {"ITERS", 1}}),
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
  row("stencil-2d-5pt " + std::to_string(k) + "x" + std::to_string(k) + " PEs of " + std::to_string(n) + "^2",
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

}  // namespace

int main(int argc, char** argv) {
  std::string arch = "wse2", rows = "reduce,kernels,memcpy,launch";
  std::vector<std::string> overrides;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--arch" || a == "--set" || a == "--rows") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "--arch") arch = v;
      if (a == "--set") overrides.push_back(v);
      if (a == "--rows") rows = v;
    } else {
      std::fprintf(stderr, "usage: calibration [--arch wse2|wse3] [--set key=value]... [--rows reduce,kernels,memcpy,launch,bicgstab]\n");
      return 2;
    }
  }
  try {
    const emu::ArchProfile p = emu::arch_profile_with(arch, overrides);
    if (rows.find("reduce") != std::string::npos) reduce_rows(p);
    if (rows.find("kernels") != std::string::npos) kernel_rows(overrides);
    if (rows.find("memcpy") != std::string::npos) memcpy_rows(overrides);
    if (rows.find("launch") != std::string::npos) launch_rows(overrides);
    if (rows.find("bicgstab") != std::string::npos) bicgstab_rows(overrides);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "calibration: %s\n", e.what());
    return 3;
  }
  return 0;
}
