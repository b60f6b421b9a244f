// wide-multiplication: 128 x 128-bit unsigned products in 16-bit words against a reference built
// from 64-bit limbs and unsigned __int128 partial products (a different decomposition from the
// kernel's 16-bit schoolbook). Seeded random operands plus the extremes (all ones, zero, one).
#include <cstdio>
#include <random>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using u128 = unsigned __int128;

// 256-bit product of two 128-bit values as four 64-bit limbs, least significant first.
std::array<uint64_t, 4> reference_product(u128 a, u128 b) {
  const uint64_t al = uint64_t(a), ah = uint64_t(a >> 64), bl = uint64_t(b), bh = uint64_t(b >> 64);
  const u128 ll = u128(al) * bl, lh = u128(al) * bh, hl = u128(ah) * bl, hh = u128(ah) * bh;
  std::array<uint64_t, 4> r{uint64_t(ll), 0, 0, 0};
  u128 mid = (ll >> 64) + uint64_t(lh) + uint64_t(hl);
  r[1] = uint64_t(mid);
  u128 high = (mid >> 64) + (lh >> 64) + (hl >> 64) + uint64_t(hh);
  r[2] = uint64_t(high);
  r[3] = uint64_t((high >> 64) + (hh >> 64));
  return r;
}

std::vector<uint32_t> to_words(u128 v) {
  std::vector<uint32_t> w(8);
  for (int i = 0; i < 8; ++i) w[i] = uint32_t((v >> (16 * i)) & 0xFFFF);
  return w;
}

TEST(WideMultiplication, MatchesReference) {
  std::mt19937_64 gen(101);
  const u128 ones = ~u128(0);
  std::vector<std::pair<u128, u128>> cases = {{ones, ones}, {0, ones}, {1, ones}, {ones, u128(1) << 127}};
  for (int i = 0; i < 6; ++i) {
    const u128 a = (u128(gen()) << 64) | gen(), b = (u128(gen()) << 64) | gen();
    cases.push_back({a, b});
  }
  runtime::host::MemcpyOptions o;
  o.data_type = runtime::host::MemcpyDataType::MEMCPY_16BIT;
  for (const auto& [a, b] : cases) {
    LoadedRuntime rt(build_kernel("wide-multiplication", {{"WORDS", 8}}));
    rt.memcpy_h2d("a", to_words(a), 0, 0, 1, 1, 8, o);
    rt.memcpy_h2d("b", to_words(b), 0, 0, 1, 1, 8, o);
    const uint64_t before = rt.cycles();
    rt.launch("compute");
    const uint64_t compute = rt.cycles() - before;
    std::vector<uint32_t> r = read_back(rt, "r", 0, 0, 1, 1, 16, o);
    const std::array<uint64_t, 4> want = reference_product(a, b);
    for (int limb = 0; limb < 4; ++limb) {
      uint64_t got = 0;
      for (int k = 3; k >= 0; --k) got = (got << 16) | (r[4 * limb + k] & 0xFFFF);
      EXPECT_EQ(got, want[limb]) << "limb " << limb << " of a=" << uint64_t(a >> 64) << ":" << uint64_t(a)
                                 << " b=" << uint64_t(b >> 64) << ":" << uint64_t(b);
    }
    if (&a == &cases.front().first)
      std::printf("wide-multiplication 128x128 bits: %llu cycles total, %llu in compute\n",
                  (unsigned long long)rt.cycles(), (unsigned long long)compute);
  }
}

}  // namespace
}  // namespace wsemu::testing
