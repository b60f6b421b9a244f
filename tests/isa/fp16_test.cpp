// IEEE half-precision conversions against hand-worked bit patterns, and an exhaustive round
// trip of every half value.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "isa/fp16.hpp"

namespace wsemu::isa {
namespace {

TEST(Fp16, KnownValues) {
  EXPECT_EQ(fp32_to_fp16(0.0f), 0x0000);
  EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(fp32_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(fp32_to_fp16(-2.0f), 0xC000);
  EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7BFF);         // largest finite
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7C00);         // rounds up to infinity
  EXPECT_EQ(fp32_to_fp16(65519.0f), 0x7BFF);         // rounds down
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: 0
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.5f, -25)), 0x0001);  // above the tie
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(fp32_to_fp16(INFINITY), 0x7C00);
  EXPECT_EQ(fp32_to_fp16(-INFINITY), 0xFC00);
  EXPECT_EQ(fp32_to_fp16(NAN) & 0x7C00, 0x7C00);
  EXPECT_NE(fp32_to_fp16(NAN) & 0x03FF, 0);
}

TEST(Fp16, RoundToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to the even mantissa (1.0).
  EXPECT_EQ(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even): rounds up.
  EXPECT_EQ(fp32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  EXPECT_EQ(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3C01);
}

TEST(Fp16, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = fp16_to_fp32(uint16_t(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(fp16_to_fp32(fp32_to_fp16(f))));
      continue;
    }
    EXPECT_EQ(fp32_to_fp16(f), h) << std::hex << h;
  }
  EXPECT_EQ(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(fp16_to_fp32(0x3555), 0.333251953125f);
}

}  // namespace
}  // namespace wsemu::isa
