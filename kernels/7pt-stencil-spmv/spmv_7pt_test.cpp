// 7pt-stencil-spmv: y = A x for the 7-point stencil matrix with per-point coefficients on a
// kx x ky x Z grid (one z column per PE), against a reference that indexes the whole 3-D grid
// directly (zero outside), in double precision (stencil7_reference.hpp, shared with the solvers).
#include <cstdio>

#include "emulator/arch_profile.hpp"
#include "kernels/7pt-stencil-spmv/stencil7_reference.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

// The cycles of spmv_main.wsa's timed window (tsc before to tsc after `call spmv7`) when every
// neighbour's element is in its FIFO in time, from the timing model (emulator/README.md: 1 cycle
// per scalar instruction and async issue, startup + Z for fmuls / fmacs at width 1) and the
// code: 36 instructions on the path without neighbours, fmuls over Z; for Z > 1 the two z terms
// (15 instructions, two vector start-ups and 2 x (Z - 1) elements); per neighbour one async
// receive and an addi, dsdbase and fmacs (5 + Z); one async send per axis with neighbours.
uint64_t code_cycles(const emu::ArchProfile& p, int z, bool w, bool e, bool n, bool s) {
  const uint64_t vs = uint64_t(p.vector_startup_cycles), Z = uint64_t(z);
  const uint64_t neighbours = uint64_t(w) + uint64_t(e) + uint64_t(n) + uint64_t(s);
  return 34 + vs + Z + (z > 1 ? 15 + 2 * vs + 2 * (Z - 1) : 0) + neighbours * (3 + vs + Z) + uint64_t(w || e) +
         uint64_t(n || s);
}

// When a PE issues its send on an axis, in cycles after its start stamp: the 18 instructions
// before the horizontal send, one async receive per neighbour, and for the vertical send the
// horizontal one and its test (li, beq) before it.
int64_t send_offset(int neighbours, bool horizontal_send, bool vertical) {
  return 18 + neighbours + (vertical ? 2 + int64_t(horizontal_send) : 0);
}

// How much later than code_cycles a PE may finish: its neighbours' x arrives in its FIFOs no
// earlier than their send is issued (the launch reaches them up to the launch skew later, and a
// PE with more neighbours posts more receives first; `later_neighbour_start` is the latest
// neighbour's send issue after this PE's own on that axis) plus one element's latency (the send's issue, vector start-up, 1 + ramp up, the hop, ramp down, the
// receiving op's move into the FIFO), and on wse2 the horizontal send goes through output
// queue 1, of depth 2, which streams one wavelet per 2 cycles (emulator/README.md
// "Consequences": a stream of B wavelets through such a queue takes B - 2 .. B cycles more
// than through a deeper one): Z cycles more for the horizontal FIFOs, which fill in parallel.
uint64_t wait_bound(const emu::ArchProfile& p, int z, uint64_t later_neighbour_start, bool horizontal) {
  const uint64_t latency = 1 + uint64_t(p.vector_startup_cycles) + 1 + uint64_t(p.ramp_up_latency) + 1 +
                           uint64_t(p.ramp_down_latency) + 1;
  const bool half_rate = horizontal && p.output_queue_depth[1] <= 2;
  return later_neighbour_start + latency + (half_rate ? uint64_t(z) : 0);
}

struct Case {
  int kx, ky, z;
  std::string arch;
};

// Readable (and stable) CTest names.
void PrintTo(const Case& c, std::ostream* os) { *os << c.arch << " " << c.kx << "x" << c.ky << "x" << c.z; }

class Spmv7pt : public ::testing::TestWithParam<Case> {};

TEST_P(Spmv7pt, MatchesGridReference) {
  const Case c = GetParam();
  const size_t kx = size_t(c.kx), ky = size_t(c.ky), z = size_t(c.z);
  const xt::xarray<float> x = random_array({ky, kx, z}, 501);
  const xt::xarray<float> coeff = random_array({ky, kx, 7, z}, 502);
  LoadedRuntime rt(build_kernel("7pt-stencil-spmv", {{"kx", c.kx}, {"ky", c.ky}, {"Z", c.z}}, c.arch));
  rt.memcpy_h2d("x", words(x), 0, 0, c.kx, c.ky, c.z);
  rt.memcpy_h2d("coeff", words(coeff), 0, 0, c.kx, c.ky, 7 * c.z);
  launch_and_settle(rt, "compute");
  std::vector<uint32_t> y = read_back(rt, "y", 0, 0, c.kx, c.ky, c.z);
  std::vector<uint32_t> t = read_back(rt, "maxmin_time", 0, 0, c.kx, c.ky, 4);
  expect_close(floats(y, {ky, kx, z}), stencil7::apply(coeff, xt::cast<double>(x)), 1e-5, 1e-5, "y");
  // Every PE's window: at least the code's cycles, exactly when its neighbours' data is in time,
  // and at most that plus the wait the timing model allows (above).
  const emu::ArchProfile& prof = emu::arch_profile(c.arch);
  uint32_t lo = ~0u, hi = 0, exact = 0;
  auto start = [&](int px, int py) { return int64_t(t[size_t(py * c.kx + px) * 4]); };
  for (int py = 0; py < c.ky; ++py)
    for (int px = 0; px < c.kx; ++px) {
      const size_t p = size_t(py * c.kx + px);
      const uint32_t cycles = t[p * 4 + 2] - t[p * 4];
      const bool w = px > 0, e = px + 1 < c.kx, n = py > 0, s = py + 1 < c.ky;
      auto count = [&](int qx, int qy) {
        return int(qx > 0) + int(qx + 1 < c.kx) + int(qy > 0) + int(qy + 1 < c.ky);
      };
      auto has_h = [&](int qx) { return qx > 0 || qx + 1 < c.kx; };
      // The latest neighbour's send toward this PE, after this PE's own send on that axis.
      int64_t later = 0;
      auto consider = [&](int qx, int qy, bool vertical) {
        const int64_t theirs = start(qx, qy) + send_offset(count(qx, qy), has_h(qx), vertical);
        const int64_t mine = start(px, py) + send_offset(count(px, py), has_h(px), vertical);
        later = std::max(later, theirs - mine);
      };
      if (w) consider(px - 1, py, false);
      if (e) consider(px + 1, py, false);
      if (n) consider(px, py - 1, true);
      if (s) consider(px, py + 1, true);
      const uint64_t code = code_cycles(prof, c.z, w, e, n, s);
      EXPECT_GE(cycles, code) << "PE (" << px << "," << py << ")";
      EXPECT_LE(cycles, code + ((w || e || n || s) ? wait_bound(prof, c.z, uint64_t(later), w || e) : 0))
          << "PE (" << px << "," << py << "), a neighbour's send issued up to " << later << " cycles after its own";
      exact += cycles == code;
      lo = std::min(lo, cycles);
      hi = std::max(hi, cycles);
    }
  std::printf("spmv7 %dx%dx%d (%s): %u..%u cycles per PE, %u of %zu PEs exactly the code's cycles\n", c.kx, c.ky,
              c.z, c.arch.c_str(), lo, hi, exact, kx * ky);
}

INSTANTIATE_TEST_SUITE_P(Grids, Spmv7pt,
                         ::testing::Values(Case{5, 5, 5, "wse2"}, Case{1, 1, 1, "wse2"}, Case{1, 1, 6, "wse2"},
                                           Case{3, 2, 7, "wse3"}, Case{4, 4, 32, "wse2"}, Case{2, 5, 3, "wse3"},
                                           Case{7, 4, 9, "wse2"}, Case{4, 7, 5, "wse3"}),
                         named_by(&Case::arch, "_", &Case::kx, "x", &Case::ky, "x", &Case::z));

}  // namespace
}  // namespace wsemu::testing
