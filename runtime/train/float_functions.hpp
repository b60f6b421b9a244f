// exp and log for the training computation, defined with fp32 +, -, *, / and exponent-bit
// manipulation only, so that a wafer kernel (which has no libm) can reproduce them bit for bit.
//
// Contract: float_exp and float_log are pure functions whose every operation is an IEEE-754
// binary32 operation rounded to nearest, performed in the order the code and README.md state
// (no fused multiply-add; GCC with -std=c++20 does not contract). Accuracy: within 2 ulp of
// the true value over their documented ranges. They must never call std::exp / std::log, whose
// results differ between C libraries.
#pragma once

namespace wsemu::train {

// e^x. Returns 0 for x < -87, +inf for x > 88, NaN for NaN. Otherwise k = round-half-away(x *
// log2(e)), r = (x - k * ln2_hi) - k * ln2_lo, p = degree-7 Taylor polynomial of e^r in Horner
// form, result = p * 2^k (2^k built from its exponent bits).
float float_exp(float x);

// ln(x). NaN for x < 0 or NaN, -inf for 0, +inf for +inf. Otherwise x = m * 2^e with m in
// [sqrt(1/2), sqrt(2)), f = (m - 1) / (m + 1), ln(m) = 2f + 2f * f^2 * (1/3 + f^2 (1/5 + f^2
// (1/7 + f^2 / 9))), result = e * ln2_hi + (e * ln2_lo + ln(m)).
float float_log(float x);

}  // namespace wsemu::train
