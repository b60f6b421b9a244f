// bandwidth-test: H2D and D2H of N words into every PE of a PW x PH rectangle, timed with the
// device's cycle counter between a `tic` and a `toc` launch (max toc - min tic over the PEs), and
// reported in MB/s at the profile's clock. Checks: the data round-trips exactly, and the
// measured MB/s agrees with the host-channel model (runtime/host/host_channel.hpp) within a
// tolerance derived from the same model:
//   - a channel moves r = 7 Gbps / 32 bits / clock wavelets per cycle (0.257 at 850 MHz) in each
//     direction; rows with traffic are dealt round robin to min(channels, PH) channels;
//   - H2D sends 3 header wavelets + N data per PE; D2H sends 3 in and takes 2 + N out per PE, the
//     two directions in parallel;
//   - so the copy needs T = PEs * (N + 3 or N + 2) / (r * channels) cycles, and the payload rate
//     4 N PEs / T is the model's MB/s, an upper bound (the channel cannot go faster);
//   - each PE's command is decoded by the memcpy firmware (firmware/memcpy.wsa: about 30
//     instructions on the target's or a relay's command path, about 12 more in memcpy_resume);
//     meanwhile the row's chain input stalls and the channel, which banks at most one wavelet,
//     idles: at most F = 48 cycles per PE, per channel in use;
//   - the window also holds the part of the tic launch after the first PE stamped and the toc
//     launch until the last PE stamped: each launch sends 3 wavelets per row through the
//     channel and passes each PE of a row in a few firmware instructions, plus the hops across
//     the rectangle: at most 2 * (3 * PH / (r * channels) + 16 * PW + PW + PH) + 64 cycles.
//   With S the sum of the two, the measured MB/s must lie in [model * T / (T + S), model * 1.001]:
//   tight for long copies, loose for the SDK's 5 words per PE, where the per-command work is
//   most of the time.
#include <algorithm>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

uint64_t stamp(const std::vector<uint32_t>& s, size_t pe, int which) {
  return uint64_t(s[pe * 4 + size_t(2 * which)]) | uint64_t(s[pe * 4 + size_t(2 * which) + 1]) << 32;
}

// max toc - min tic over the PEs.
uint64_t window(runtime::host::SdkRuntime& rt, const PeGridCase& c) {
  std::vector<uint32_t> s = read_back(rt, "stamps", 0, 0, c.pw, c.ph, 4);
  uint64_t first_tic = UINT64_MAX, last_toc = 0;
  for (size_t pe = 0; pe < size_t(c.pw * c.ph); ++pe) {
    first_tic = std::min(first_tic, stamp(s, pe, 0));
    last_toc = std::max(last_toc, stamp(s, pe, 1));
  }
  EXPECT_GT(last_toc, first_tic);
  return last_toc - first_tic;
}

class Bandwidth : public ::testing::TestWithParam<PeGridCase> {};

TEST_P(Bandwidth, RoundTripsAtTheChannelModelsRate) {
  const PeGridCase c = GetParam();
  runtime::host::RuntimeOptions options;
  options.channel.channels = c.channels;
  LoadedRuntime rt(build_kernel("bandwidth-test", {{"PW", c.pw}, {"PH", c.ph}, {"N", c.n}}, c.arch), options);
  const size_t pes = size_t(c.pw * c.ph);
  const std::vector<uint32_t> in = words(random_array({size_t(c.ph), size_t(c.pw), size_t(c.n)}, 9000 + c.n));

  rt.launch("tic");
  rt.memcpy_h2d("buf", in, 0, 0, c.pw, c.ph, c.n);
  rt.launch("toc");
  const uint64_t h2d = window(rt, c);

  rt.launch("tic");
  std::vector<uint32_t> out = read_back(rt, "buf", 0, 0, c.pw, c.ph, c.n);
  rt.launch("toc");
  const uint64_t d2h = window(rt, c);
  EXPECT_EQ(out, in) << "the data must round-trip";

  // The model (see the top of this file).
  const double mhz = rt.clock_mhz();
  const double rate = options.channel.wavelets_per_cycle(mhz) * std::min(c.channels, c.ph);
  const double bytes = 4.0 * double(pes) * c.n;
  const double firmware_per_pe = 48;
  const double slack = double(pes) * firmware_per_pe / std::min(c.channels, c.ph) +
                       2 * (3.0 * c.ph / rate + 16.0 * c.pw + c.pw + c.ph) + 64;
  auto check = [&](const char* dir, uint64_t cycles, int per_pe_wavelets) {
    const double t_model = double(pes) * per_pe_wavelets / rate;
    const double model_mbs = bytes / (t_model / mhz);
    const double measured_mbs = bytes / (double(cycles) / mhz);
    std::printf("bandwidth-test %s %dx%d N=%d, %d channel(s) (%s): %llu cycles = %.3f us, %.1f MB/s "
                "(model %.1f MB/s, %.0f cycles; lower bound %.1f MB/s)\n",
                dir, c.pw, c.ph, c.n, c.channels, c.arch.c_str(), (unsigned long long)cycles, double(cycles) / mhz,
                measured_mbs, model_mbs, t_model, model_mbs * t_model / (t_model + slack));
    EXPECT_LE(measured_mbs, model_mbs * 1.001) << dir << ": faster than the channel allows";
    EXPECT_GE(measured_mbs, model_mbs * t_model / (t_model + slack)) << dir << ": slower than the model explains";
  };
  check("H2D", h2d, c.n + 3);
  check("D2H", d2h, c.n + 2);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Bandwidth,
    ::testing::Values(PeGridCase{5, 5, 5, "wse2"},       // the SDK's size (pe_length 5)
                      PeGridCase{5, 5, 256, "wse2"},     // long copies: near 875 MB/s
                      PeGridCase{4, 4, 128, "wse2", 2},  // two channels
                      PeGridCase{3, 2, 64, "wse3", 4}),  // more channels than rows
    named_by(&PeGridCase::arch, "_", &PeGridCase::pw, "x", &PeGridCase::ph, "_n", &PeGridCase::n,
             "_ch", &PeGridCase::channels));

}  // namespace
}  // namespace wsemu::testing
