#include "isa/fp16.hpp"

#include <bit>

namespace wsemu::isa {

uint16_t fp32_to_fp16(float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000);
  const uint32_t exp = (f >> 23) & 0xFF;
  uint32_t mant = f & 0x7FFFFF;
  if (exp == 0xFF) {  // infinity or NaN
    if (mant == 0) return sign | 0x7C00;
    return static_cast<uint16_t>(sign | 0x7E00 | (mant >> 13));
  }
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return sign | 0x7C00;  // too large: infinity
  if (e <= 0) {
    // Subnormal half (or zero): shift the mantissa with its implicit bit into place.
    if (e < -10) return sign;
    mant |= 0x800000;
    const int shift = 14 - e;  // 13 for normal alignment, plus 1 - e
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;  // may carry into the exponent
  return static_cast<uint16_t>(sign | half);
}

float fp16_to_fp32(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  const uint32_t exp = (bits >> 10) & 0x1F;
  uint32_t mant = bits & 0x3FF;
  uint32_t out;
  if (exp == 0x1F) {
    out = sign | 0x7F800000 | (mant << 13);
  } else if (exp != 0) {
    out = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  } else if (mant == 0) {
    out = sign;
  } else {
    int e = -14;
    while ((mant & 0x400) == 0) {
      mant <<= 1;
      --e;
    }
    mant &= 0x3FF;
    out = sign | (static_cast<uint32_t>(e + 127) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(out);
}

}  // namespace wsemu::isa
