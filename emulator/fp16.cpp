#include "emulator/fp16.hpp"

#include <bit>

namespace wsemu::emu {

uint16_t float_to_half(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000);
  const uint32_t exp = (x >> 23) & 0xFF;
  uint32_t mant = x & 0x7FFFFF;
  if (exp == 0xFF) {  // inf or NaN
    if (mant == 0) return sign | 0x7C00;
    return uint16_t(sign | 0x7E00 | (mant >> 13));
  }
  const int e = int(exp) - 127 + 15;  // biased half exponent
  if (e >= 31) return sign | 0x7C00;   // overflow (before rounding)
  if (e <= 0) {
    // Subnormal half (or zero): shift the full significand right, round to nearest even.
    if (e < -10) return sign;  // below half of the smallest subnormal
    mant |= 0x800000;           // implicit bit
    const int shift = 14 - e;   // 13 + (1 - e)
    const uint32_t half_mant = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    uint32_t r = half_mant;
    if (rem > halfway || (rem == halfway && (half_mant & 1))) ++r;  // may carry into exp 1: fine
    return uint16_t(sign | r);
  }
  uint32_t h = (uint32_t(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;  // a carry may reach infinity: correct
  return uint16_t(sign | h);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400) == 0);
      bits = sign | (uint32_t(127 - 15 - e) << 23) | ((mant & 0x3FF) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7F800000 | (mant << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

}  // namespace wsemu::emu
