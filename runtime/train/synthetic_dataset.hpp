// A seeded synthetic classification data set for CI: Gaussian-like clusters, one per class.
//
// Contract: the same SyntheticSpec always gives bit-identical data on any machine (only the
// xoshiro256** streams of random.hpp and fp32 +, -, * are used; no libm). Each class k has a
// centre c_k with coordinates uniform in [-1, 1); a sample of class k is c_k plus noise whose
// coordinates are noise_scale * (u1 + u2 + u3 + u4 - 2), u_i uniform in [0, 1) (an Irwin-Hall
// approximation of a normal with standard deviation noise_scale / sqrt(3)). Labels are uniform
// over the classes. Train and test samples come from different streams but share the centres.
// A small MLP separates the classes within tens of steps.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/train/dataset.hpp"

namespace wsemu::train {

struct SyntheticSpec {
  size_t input_dim = 16;
  size_t num_classes = 4;
  size_t num_samples = 1024;
  float noise_scale = 1.0f;
  uint64_t seed = 1;
};

Dataset make_synthetic_dataset(const SyntheticSpec& spec, DatasetSplit split);

}  // namespace wsemu::train
