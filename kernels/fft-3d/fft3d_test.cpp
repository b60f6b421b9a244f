// fft-3d: N x N x N complex FFT by pencil decomposition on a W x W grid (W = N / P), fp32 and
// fp16, forward and inverse, against a 3-D DFT computed here in double precision as three passes
// of the direct O(N) sum per output along each axis (the DFT's definition, separable; no FFT
// and nothing of the emulator). numpy's fftn / ifftn conventions (inverse scaled by 1/N^3).
// PE (u, v) gets a in [uP, uP+P), b in [vP, vP+P), all c; it returns c in [uP, uP+P),
// a in [vP, vP+P), all b (kernels/fft-3d/README.md). The kernel's own cycle counter stamps
// give the time the SDK benchmarks report: max(end) - min(start) over the PEs. Inputs are
// seeded uniform [-1, 1), rounded to fp16 for the fp16 kernel (the reference takes the rounded
// values); the twiddle table is cos / sin in double, rounded to the kernel's precision.
#include <cmath>
#include <complex>
#include <cstdio>
#include <numbers>

#include "kernels/fft/dft_reference.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using Complex = std::complex<double>;
using runtime::host::MemcpyDataType;
using runtime::host::MemcpyOptions;

struct Case {
  size_t n, p;
  bool inverse;
  std::string arch;
  bool half = false;  // the fp16 program (fft3d_f16.wsa, layout_f16.wsl)
};

struct Result {
  uint64_t kernel_cycles = 0, launch_cycles = 0, session_cycles = 0;
  double clock_mhz = 0;
  uint32_t step[5] = {};  // the longest FFT c, transpose 1, FFT a, transpose 2, FFT b over the PEs
};

// One axis of the DFT: out[..k..] = sum_j in[..j..] w^(jk), for every line along `axis`.
std::vector<Complex> dft_axis(const std::vector<Complex>& in, size_t n, int axis, bool inverse) {
  std::vector<Complex> out(in.size());
  std::vector<Complex> w(n);
  for (size_t j = 0; j < n; ++j) w[j] = std::polar(1.0, (inverse ? 2.0 : -2.0) * std::numbers::pi * double(j) / double(n));
  const size_t stride = axis == 0 ? n * n : axis == 1 ? n : 1;
  for (size_t i0 = 0; i0 < n; ++i0)
    for (size_t i1 = 0; i1 < n; ++i1) {
      // the two indices that are not `axis`, as a base offset
      const size_t base = axis == 0 ? i0 * n + i1 : axis == 1 ? i0 * n * n + i1 : i0 * n * n + i1 * n;
      for (size_t k = 0; k < n; ++k) {
        Complex sum = 0;
        for (size_t j = 0; j < n; ++j) sum += in[base + j * stride] * w[(j * k) % n];
        out[base + k * stride] = inverse ? sum / double(n) : sum;
      }
    }
  return out;
}

// The kernel's data in and out, the tensor [W (v)][W (u)][P][P][N][2] in row-major order: each
// complex element of PE (u, v)'s [P][P][N] visited as at(u, v, i, j, k, q), in that order, q
// its real part's index in the whole tensor (the imaginary part follows).
template <class Visit>
void for_each_pencil_element(size_t w, size_t p, size_t n, Visit at) {
  for (size_t v = 0; v < w; ++v)
    for (size_t u = 0; u < w; ++u)
      for (size_t i = 0; i < p; ++i)
        for (size_t j = 0; j < p; ++j)
          for (size_t k = 0; k < n; ++k) at(u, v, i, j, k, ((((v * w + u) * p + i) * p + j) * n + k) * 2);
}

Result run_case(const Case& c, bool backdoor = false) {
  const size_t n = c.n, p = c.p, w = n / p, per_pe = 2 * p * p * n;
  const compiler::Executable exe =
      build_kernel("fft-3d", {{"N", int64_t(n)}, {"P", int64_t(p)}, {"INVERSE", c.inverse ? 1 : 0}}, c.arch,
                   c.half ? "layout_f16.wsl" : "layout.wsl");
  xt::xarray<float> re = random_array({n, n, n}, 501), im = random_array({n, n, n}, 502);
  if (c.half) re = to_half_precision(re), im = to_half_precision(im);
  std::vector<Complex> a(n * n * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = Complex(re.flat(i), im.flat(i));

  // PE (u, v) holds [P (a')][P (b')][N (c)].
  std::vector<float> x(w * w * per_pe);
  for_each_pencil_element(w, p, n, [&](size_t u, size_t v, size_t a1, size_t b1, size_t cc, size_t q) {
    const size_t src = ((u * p + a1) * n + (v * p + b1)) * n + cc;
    x[q] = re.flat(src), x[q + 1] = im.flat(src);
  });
  xt::xarray<float> xa = xt::zeros<float>({x.size()});
  for (size_t i = 0; i < x.size(); ++i) xa(i) = x[i];
  const auto [wre, wim] = twiddle_tables(n, w * w);

  runtime::host::RuntimeOptions options;
  options.backdoor = backdoor;  // the large runs time the kernel, not the copies
  auto encode = [&](const xt::xarray<float>& v) { return c.half ? half_words(v) : words(v); };
  MemcpyOptions o;
  if (c.half) o.data_type = MemcpyDataType::MEMCPY_16BIT;
  runtime::host::SdkRuntime rt(exe, options);
  rt.load();
  const int iw = int(w);
  rt.memcpy_h2d("X", encode(xa), 0, 0, iw, iw, int(per_pe), o);
  rt.memcpy_h2d("wre", encode(wre), 0, 0, iw, iw, int(n / 2), o);
  rt.memcpy_h2d("wim", encode(wim), 0, 0, iw, iw, int(n / 2), o);
  Result r;
  const uint64_t before = rt.cycles();
  rt.launch("compute");
  r.launch_cycles = rt.cycles() - before;
  std::vector<uint32_t> out = read_back(rt, "X", 0, 0, iw, iw, int(per_pe), o);
  const xt::xarray<float> y = c.half ? halves(out, {out.size()}) : floats(out, {out.size()});
  std::vector<uint32_t> t = read_back(rt, "maxmin_time", 0, 0, iw, iw, 4);
  std::vector<uint32_t> ph = read_back(rt, "phase_time", 0, 0, iw, iw, 6);
  for (size_t pe = 0; pe < w * w; ++pe)
    for (size_t s = 0; s < 5; ++s) r.step[s] = std::max(r.step[s], ph[6 * pe + s + 1] - ph[6 * pe + s]);
  r.session_cycles = rt.cycles();
  r.clock_mhz = rt.clock_mhz();
  uint64_t t_start = UINT64_MAX, t_end = 0;
  for (size_t pe = 0; pe < w * w; ++pe) {
    t_start = std::min(t_start, (uint64_t(t[4 * pe + 1] & 0xFFFF) << 32) | t[4 * pe]);
    t_end = std::max(t_end, (uint64_t(t[4 * pe + 3] & 0xFFFF) << 32) | t[4 * pe + 2]);
  }
  r.kernel_cycles = t_end - t_start;

  const std::vector<Complex> ref = dft_axis(dft_axis(dft_axis(a, n, 0, c.inverse), n, 1, c.inverse), n, 2, c.inverse);
  // 3 log2(N) radix-2 stages (fft_tolerance counts them from the N^3 outputs); u = 2^-24 (fp32)
  // or 2^-11 (fp16, the same rule as kernels/fft's fp16 tests; README "fp16" for why it suffices).
  const double unit = c.half ? std::ldexp(1.0, -11) : std::ldexp(1.0, -24);
  const double tol = fft_tolerance(ref, unit);
  double worst = 0;
  size_t bad = 0;
  // PE (u, v) returns [P (c')][P (a')][N (b)].
  for_each_pencil_element(w, p, n, [&](size_t u, size_t v, size_t c1, size_t a1, size_t b, size_t q) {
    const Complex got(y(q), y(q + 1));
    const size_t ai = v * p + a1, ci = u * p + c1;
    const Complex want = ref[(ai * n + b) * n + ci];
    const double err = std::abs(got - want);
    worst = std::max(worst, err);
    if (!(err <= tol) && ++bad <= 5)
      ADD_FAILURE() << "F[" << ai << "][" << b << "][" << ci << "]: got " << got << ", expected " << want << ", error "
                    << err << " > " << tol;
  });
  EXPECT_EQ(bad, 0u);
  std::printf("fft-3d N=%zu P=%zu on %zux%zu PEs, %s %s (%s): kernel (TSC) %llu cycles = %.3f us at %.0f MHz; launch %llu, "
              "session %llu cycles; max error %.3g (tolerance %.3g)\n",
              n, p, w, w, c.half ? "fp16" : "fp32", c.inverse ? "inverse" : "forward", c.arch.c_str(), (unsigned long long)r.kernel_cycles,
              double(r.kernel_cycles) / r.clock_mhz, r.clock_mhz, (unsigned long long)r.launch_cycles,
              (unsigned long long)r.session_cycles, worst, tol);
  std::printf("  longest per PE: FFT c %u, transpose 1 %u, FFT a %u, transpose 2 %u, FFT b %u cycles\n", r.step[0],
              r.step[1], r.step[2], r.step[3], r.step[4]);
  return r;
}

class Fft3d : public ::testing::TestWithParam<Case> {};
TEST_P(Fft3d, MatchesDirectDft) { run_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Sizes, Fft3d,
                         ::testing::Values(Case{4, 2, false, "wse2"}, Case{8, 2, false, "wse2"},
                                           Case{8, 2, true, "wse2"}, Case{8, 4, false, "wse3"},
                                           Case{8, 1, false, "wse2"}, Case{4, 4, true, "wse2"},
                                           Case{4, 2, false, "wse3", true}, Case{4, 2, true, "wse3", true},
                                           Case{8, 2, false, "wse2", true}, Case{8, 2, true, "wse2", true},
                                           Case{8, 4, true, "wse3", true}),
                         named_by(either(&Case::half, "fp16_", ""),
                                  either(&Case::inverse, "inverse_", "forward_"), "N", &Case::n, "_P",
                                  &Case::p, "_", &Case::arch));

// On request (WSEMU_KERNEL_LARGE=1): the SDK's size (N 16, 4 x 4 pencils per PE, 4 x 4 PEs; fp32, fp16) and
// the calibration series against the published 512^3 on 512 x 512 PEs (one pencil per PE, P = 1):
// N = 16, 32, 64 on N x N PEs (README: "Calibration").
TEST(Fft3dLarge, SdkSizeAndCalibrationSeries) {
  if (!std::getenv("WSEMU_KERNEL_LARGE")) GTEST_SKIP() << "set WSEMU_KERNEL_LARGE=1 to run";
  run_case(Case{16, 4, false, "wse2"});
  run_case(Case{16, 4, false, "wse2", true});  // the same in fp16
  for (size_t n : {16, 32, 64}) run_case(Case{n, 1, false, "wse2"}, true);
}

}  // namespace
}  // namespace wsemu::testing
