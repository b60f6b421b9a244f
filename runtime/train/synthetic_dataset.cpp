#include "runtime/train/synthetic_dataset.hpp"

#include <stdexcept>

#include "runtime/train/random.hpp"

namespace wsemu::train {

Dataset make_synthetic_dataset(const SyntheticSpec& spec, DatasetSplit split) {
  if (spec.input_dim == 0 || spec.num_classes < 2 || spec.num_samples == 0)
    throw std::invalid_argument(
        "synthetic data set: input_dim and num_samples must be >= 1 and num_classes >= 2");
  if (spec.num_samples > UINT32_MAX) throw std::invalid_argument("synthetic data set: too many samples");

  Xoshiro256StarStar centre_rng(spec.seed, RandomPurpose::synthetic_data, 0);
  xt::xtensor<float, 2> centres = xt::xtensor<float, 2>::from_shape({spec.num_classes, spec.input_dim});
  for (float& c : centres) c = centre_rng.uniform_symmetric(1.0f);

  Xoshiro256StarStar rng(spec.seed, RandomPurpose::synthetic_data, split == DatasetSplit::train ? 1 : 2);
  Dataset dataset;
  dataset.name = split == DatasetSplit::train ? "synthetic/train" : "synthetic/test";
  dataset.num_classes = spec.num_classes;
  dataset.inputs = xt::xtensor<float, 2>::from_shape({spec.num_samples, spec.input_dim});
  dataset.labels.resize(spec.num_samples);
  for (size_t n = 0; n < spec.num_samples; ++n) {
    const auto label = static_cast<uint32_t>(rng.below(spec.num_classes));
    dataset.labels[n] = label;
    for (size_t d = 0; d < spec.input_dim; ++d) {
      const float u1 = rng.uniform01(), u2 = rng.uniform01(), u3 = rng.uniform01(), u4 = rng.uniform01();
      const float noise = (((u1 + u2) + u3) + u4) - 2.0f;
      dataset.inputs(n, d) = centres(label, d) + spec.noise_scale * noise;
    }
  }
  return dataset;
}

}  // namespace wsemu::train
