// The parameter of the FFT tests of this folder (fft_test: 1-D on one PE, fft2d_test: 2-D on a
// row of PEs) and the name INSTANTIATE_TEST_SUITE_P gives each case.
//
// Contract: header-only test support; FftCase{16, true, false, "wse3"} is named
// "fp16_forward_N16_wse3".
#pragma once

#include <cstddef>
#include <string>

#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {

struct FftCase {
  size_t n;            // points per dimension
  bool half, inverse;  // fp16 (else fp32); inverse (else forward)
  std::string arch;
};

inline auto fft_case_name() {
  return named_by(either(&FftCase::half, "fp16_", "fp32_"),
                  either(&FftCase::inverse, "inverse_", "forward_"), "N", &FftCase::n, "_",
                  &FftCase::arch);
}

}  // namespace wsemu::testing
