// How `wsemu train --verify` holds a tensor read from MemoryX against the reference trainer's:
// the largest absolute and relative difference and whether every value is bit-for-bit equal,
// accumulated over the tensors of a step.
//
// Contract: a tensor whose length differs from the reference's (truncated or padded) is a
// mismatch, never a shorter comparison: `identical` becomes false and `max_abs` / `max_rel`
// infinite, as does a NaN on either side where the other is not the same NaN bits. Pure
// arithmetic, no I/O; it must never read past either span.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>

namespace wsemu::wstrain {

struct TensorComparison {
  double max_abs = 0.0, max_rel = 0.0;
  bool identical = true;
};

inline void compare_into(TensorComparison& c, std::span<const float> got, std::span<const float> expected) {
  if (got.size() != expected.size()) {
    c.identical = false;
    c.max_abs = c.max_rel = INFINITY;
  }
  const size_t n = std::min(got.size(), expected.size());
  for (size_t k = 0; k < n; ++k) {
    const double a = got[k], b = expected[k];
    if (!(got[k] == expected[k])) c.identical = false;
    const double d = std::fabs(a - b);
    if (std::isnan(d)) {
      c.max_abs = c.max_rel = INFINITY;
      continue;
    }
    c.max_abs = std::max(c.max_abs, d);
    c.max_rel = std::max(c.max_rel, d / std::max(std::fabs(b), 1e-30));
  }
}

}  // namespace wsemu::wstrain
