#include "runtime/train/float_functions.hpp"

#include <bit>
#include <cstdint>
#include <limits>

namespace wsemu::train {

namespace {

// ln(2) split so that k * ln2_hi is exact for |k| < 2^8 (ln2_hi has 16 significant bits).
constexpr float ln2_hi = 0x1.62e400p-1f;
constexpr float ln2_lo = 0x1.7f7d1cp-20f;
constexpr float log2e = 0x1.715476p+0f;

float power_of_two(int k) {  // k in [-126, 127]
  return std::bit_cast<float>(static_cast<uint32_t>(k + 127) << 23);
}

}  // namespace

float float_exp(float x) {
  if (x != x) return x;
  if (x > 88.0f) return std::numeric_limits<float>::infinity();
  if (x < -87.0f) return 0.0f;
  const float t = x * log2e;
  const int k = static_cast<int>(t >= 0.0f ? t + 0.5f : t - 0.5f);
  const float kf = static_cast<float>(k);
  const float r = (x - kf * ln2_hi) - kf * ln2_lo;
  float p = 1.0f / 5040.0f;
  p = 1.0f / 720.0f + r * p;
  p = 1.0f / 120.0f + r * p;
  p = 1.0f / 24.0f + r * p;
  p = 1.0f / 6.0f + r * p;
  p = 0.5f + r * p;
  p = 1.0f + r * p;
  p = 1.0f + r * p;
  return p * power_of_two(k);
}

float float_log(float x) {
  if (x != x || x < 0.0f) return std::numeric_limits<float>::quiet_NaN();
  if (x == 0.0f) return -std::numeric_limits<float>::infinity();
  if (x == std::numeric_limits<float>::infinity()) return x;
  int e = 0;
  if (x < std::numeric_limits<float>::min()) {  // subnormal: scale into the normal range
    x = x * 0x1.0p+23f;
    e = -23;
  }
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  e += static_cast<int>((bits >> 23) & 0xffu) - 127;
  float m = std::bit_cast<float>((bits & 0x007fffffu) | 0x3f800000u);  // [1, 2)
  if (m > 0x1.6a09e6p+0f) {  // > sqrt(2): use m/2 in [sqrt(1/2), 1)
    m = m * 0.5f;
    e += 1;
  }
  const float f = (m - 1.0f) / (m + 1.0f);
  const float f2 = f * f;
  float poly = 1.0f / 9.0f;
  poly = 1.0f / 7.0f + f2 * poly;
  poly = 1.0f / 5.0f + f2 * poly;
  poly = 1.0f / 3.0f + f2 * poly;
  poly = f2 * poly;
  const float two_f = 2.0f * f;
  const float log_m = two_f + two_f * poly;
  const float ef = static_cast<float>(e);
  return ef * ln2_hi + (ef * ln2_lo + log_m);
}

}  // namespace wsemu::train
