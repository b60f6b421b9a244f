// compare_into, the comparison behind `wsemu train --verify`, on hand-made tensors: equal,
// one value off, a NaN, and the case that used to pass: a tensor shorter (or longer) than the
// reference, whose common prefix is equal.
#include "runtime/wstrain/tensor_comparison.hpp"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace wsemu::wstrain {
namespace {

TensorComparison compared(const std::vector<float>& got, const std::vector<float>& want) {
  TensorComparison c;
  compare_into(c, got, want);
  return c;
}

TEST(TensorComparison, EqualTensorsAreIdentical) {
  const std::vector<float> a = {1.0f, -2.5f, 0.0f};
  const TensorComparison c = compared(a, a);
  EXPECT_TRUE(c.identical);
  EXPECT_EQ(c.max_abs, 0.0);
  EXPECT_EQ(c.max_rel, 0.0);
}

TEST(TensorComparison, OneValueOffGivesItsDifference) {
  const TensorComparison c = compared(/*got=*/{1.0f, 5.0f, 2.0f}, /*want=*/{1.0f, 4.0f, 2.0f});
  EXPECT_FALSE(c.identical);
  EXPECT_EQ(c.max_abs, 1.0);
  EXPECT_EQ(c.max_rel, 0.25);
}

TEST(TensorComparison, ATruncatedTensorIsAMismatch) {
  const TensorComparison c = compared(/*got=*/{1.0f, 2.0f}, /*want=*/{1.0f, 2.0f, 3.0f, 4.0f});
  EXPECT_FALSE(c.identical);
  EXPECT_TRUE(std::isinf(c.max_abs));
  EXPECT_TRUE(std::isinf(c.max_rel));
}

TEST(TensorComparison, ALongerTensorIsAMismatch) {
  const TensorComparison c = compared(/*got=*/{1.0f, 0.0f}, /*want=*/{1.0f});
  EXPECT_FALSE(c.identical);
  EXPECT_TRUE(std::isinf(c.max_abs));
}

TEST(TensorComparison, AnEmptyTensorAgainstANonEmptyOneIsAMismatch) {
  EXPECT_FALSE(compared(/*got=*/{}, /*want=*/{0.0f}).identical);
}

TEST(TensorComparison, AMismatchStaysOverLaterEqualTensors) {
  const std::vector<float> a = {1.0f, 2.0f}, b = {1.0f};
  TensorComparison c;
  compare_into(c, b, a);
  compare_into(c, a, a);
  EXPECT_FALSE(c.identical);
  EXPECT_TRUE(std::isinf(c.max_abs));
}

TEST(TensorComparison, ANanIsAMismatch) {
  const TensorComparison c = compared(/*got=*/{1.0f, NAN}, /*want=*/{1.0f, 2.0f});
  EXPECT_FALSE(c.identical);
  EXPECT_TRUE(std::isinf(c.max_abs));
}

}  // namespace
}  // namespace wsemu::wstrain
