// float_exp and float_log against the C library's double-precision exp and log.
#include "runtime/train/float_functions.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace wsemu::train {
namespace {

// Distance in units in the last place of `reference` rounded to float.
double ulp_error(float value, double reference) {
  const float rounded = static_cast<float>(reference);
  const double ulp = std::nextafter(std::abs(rounded), std::numeric_limits<float>::infinity()) - std::abs(rounded);
  return std::abs(static_cast<double>(value) - reference) / ulp;
}

TEST(FloatExp, IsWithinTwoUlpOverTheUsefulRange) {
  double worst = 0;
  for (double x = -87.0; x <= 88.0; x += 0.0137) {
    const float xf = static_cast<float>(x);
    worst = std::max(worst, ulp_error(float_exp(xf), std::exp(static_cast<double>(xf))));
  }
  EXPECT_LE(worst, 2.0);
  EXPECT_EQ(float_exp(0.0f), 1.0f);
  EXPECT_EQ(float_exp(-0.0f), 1.0f);
}

TEST(FloatExp, HandlesTheEdges) {
  EXPECT_EQ(float_exp(-87.5f), 0.0f);
  EXPECT_EQ(float_exp(-1000.0f), 0.0f);
  EXPECT_EQ(float_exp(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_TRUE(std::isinf(float_exp(88.5f)));
  EXPECT_TRUE(std::isnan(float_exp(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_GT(float_exp(-86.9f), 0.0f);
}

TEST(FloatLog, IsWithinTwoUlpFromTinyToHuge) {
  double worst = 0;
  for (double x = 1e-30; x < 1e30; x *= 1.0213) {
    const float xf = static_cast<float>(x);
    const double reference = std::log(static_cast<double>(xf));
    if (std::abs(reference) < 1e-3) continue;  // near x = 1 the ulp scale shrinks; checked below
    worst = std::max(worst, ulp_error(float_log(xf), reference));
  }
  EXPECT_LE(worst, 2.0);
  for (float x = 0.9f; x < 1.1f; x += 0.000731f)
    EXPECT_NEAR(float_log(x), std::log(static_cast<double>(x)), 2e-7 * std::abs(std::log(static_cast<double>(x))) + 1e-9);
  EXPECT_EQ(float_log(1.0f), 0.0f);
}

TEST(FloatLog, HandlesTheEdges) {
  EXPECT_TRUE(std::isnan(float_log(-1.0f)));
  EXPECT_TRUE(std::isnan(float_log(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(float_log(0.0f), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(float_log(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  const float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_NEAR(float_log(tiny), std::log(static_cast<double>(tiny)), 1e-5);
}

}  // namespace
}  // namespace wsemu::train
