// topic-05's reference: the sum the receiver must hold once the sentinel closes it, as the f32
// sum in stream order (what the kernel adds, bit for bit) and the exact sum in double (for the
// tolerance). Used by the assembly test and the CSL one (tests/compiler/csl_kernels_test.cpp).
#pragma once

#include <xtensor/xarray.hpp>

namespace wsemu::testing {

struct SentinelSums {
  float in_order = 0;
  double exact = 0;
};

inline SentinelSums sentinel_sums(const xt::xarray<float>& values) {
  SentinelSums s;
  for (float v : values) {
    s.in_order += v;
    s.exact += v;
  }
  return s;
}

}  // namespace wsemu::testing
