#include "runtime/train/reference_trainer.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace wsemu::train {

namespace {

// Every tensor of the model in optimizer order: layer 0 weight, layer 0 bias, layer 1 weight, ...
std::vector<std::span<float>> tensors_of(ModelParameters& parameters) {
  std::vector<std::span<float>> tensors;
  for (DenseLayer& layer : parameters.layers) {
    tensors.emplace_back(layer.weight.data(), layer.weight.size());
    tensors.emplace_back(layer.bias.data(), layer.bias.size());
  }
  return tensors;
}

}  // namespace

void TrainConfig::validate() const {
  if (global_batch == 0) throw std::invalid_argument("global batch size must be at least 1");
  if (wafers == 0) throw std::invalid_argument("the number of wafers must be at least 1");
  if (global_batch < wafers)
    throw std::invalid_argument(fmt::format(
        "global batch {} is smaller than the number of wafers {}: every wafer needs at least one sample",
        global_batch, wafers));
  if (order.feature_chunks == 0 || order.sample_chunks == 0)
    throw std::invalid_argument("compute order: chunk counts must be at least 1");
  if (!(sparsity >= 0.0 && sparsity < 1.0))
    throw std::invalid_argument(fmt::format("sparsity {} is out of range: expected 0 <= sparsity < 1", sparsity));
  optimizer.validate();
  if (reduction) reduction->validate(wafers);
}

GradientSums wafer_gradient_sums(const ModelParameters& parameters, const Batch& batch, SampleRange shard,
                                 size_t micro_batch, const ComputeOrder& order) {
  if (shard.end > batch.size() || shard.begin > shard.end)
    throw std::out_of_range(fmt::format("shard [{}, {}) is outside the batch of {}", shard.begin, shard.end,
                                        batch.size()));
  const size_t dim = batch.inputs.shape()[1];
  GradientSums wafer_sums = zero_gradient_sums(parameters.spec());
  for (const SampleRange& range : micro_batch_ranges(shard, micro_batch)) {
    const MicroBatchView view{batch.inputs.data() + range.begin * dim, batch.labels.data() + range.begin,
                              range.size()};
    add_gradient_sums(wafer_sums, micro_batch_gradients(parameters, view, order));
  }
  return wafer_sums;
}

Evaluation evaluate(const ModelParameters& parameters, const Dataset& dataset, const ComputeOrder& order) {
  const ModelSpec spec = parameters.spec();
  if (dataset.input_dim() != spec.input_dim() || dataset.num_classes != spec.num_classes())
    throw std::invalid_argument(fmt::format("data set '{}' ({} inputs, {} classes) does not fit model {}",
                                            dataset.name, dataset.input_dim(), dataset.num_classes, spec.to_string()));
  constexpr size_t block = 256;
  const size_t classes = spec.num_classes();
  Evaluation result;
  std::vector<float> delta(classes);
  for (size_t begin = 0; begin < dataset.num_samples(); begin += block) {
    const size_t count = std::min(block, dataset.num_samples() - begin);
    const MicroBatchView view{dataset.inputs.data() + begin * spec.input_dim(), dataset.labels.data() + begin, count};
    const ForwardPass pass = forward(parameters, view, order);
    for (size_t b = 0; b < count; ++b) {
      const float* logits = pass.pre_activations.back().data() + b * classes;
      const uint32_t label = dataset.labels[begin + b];
      result.loss += softmax_cross_entropy(logits, classes, label, delta.data());
      if (predicted_class(logits, classes) == label) ++result.correct;
    }
  }
  result.samples = dataset.num_samples();
  if (result.samples > 0) {
    result.loss /= static_cast<double>(result.samples);
    result.accuracy = static_cast<double>(result.correct) / static_cast<double>(result.samples);
  }
  return result;
}

ReferenceTrainer::ReferenceTrainer(ModelSpec spec, TrainConfig config)
    : spec_(std::move(spec)), config_(std::move(config)) {
  if (spec_.sizes.size() < 2) throw std::invalid_argument("reference trainer: the model needs at least one layer");
  config_.validate();
  reduction_ = config_.reduction ? *config_.reduction : ReductionTree::fan_in_tree(config_.wafers, 4);
  parameters_ = initialize_parameters(spec_, config_.seed);
  if (config_.sparsity > 0.0) {
    mask_ = make_sparsity_mask(spec_, config_.sparsity, config_.seed);
    apply_sparsity_mask(parameters_, *mask_);
  }
  slots_.resize(2 * spec_.num_layers());
  last_gradient_ = ModelParameters::zeros(spec_);
}

void ReferenceTrainer::set_weights(ModelParameters parameters) {
  if (parameters.layers.size() != spec_.num_layers())
    throw std::invalid_argument(fmt::format("set_weights: {} layers given, model {} has {}", parameters.layers.size(),
                                            spec_.to_string(), spec_.num_layers()));
  for (size_t l = 0; l < spec_.num_layers(); ++l) {
    const DenseLayer& layer = parameters.layers[l];
    if (layer.weight.shape()[0] != spec_.sizes[l] || layer.weight.shape()[1] != spec_.sizes[l + 1] ||
        layer.bias.shape()[0] != spec_.sizes[l + 1])
      throw std::invalid_argument(fmt::format("set_weights: layer {} is {}x{} with {} biases, model {} needs {}x{}",
                                              l, layer.weight.shape()[0], layer.weight.shape()[1],
                                              layer.bias.shape()[0], spec_.to_string(), spec_.sizes[l],
                                              spec_.sizes[l + 1]));
  }
  parameters_ = std::move(parameters);
  if (mask_) apply_sparsity_mask(parameters_, *mask_);
}

StepResult ReferenceTrainer::step(const Batch& batch) {
  const size_t batch_size = batch.size();
  if (batch_size != config_.global_batch)
    throw std::invalid_argument(fmt::format("step {}: batch has {} samples, the global batch size is {}",
                                            steps_done_, batch_size, config_.global_batch));
  if (batch.inputs.shape()[0] != batch_size || batch.inputs.shape()[1] != spec_.input_dim())
    throw std::invalid_argument(fmt::format("step {}: batch inputs are {}x{}, model {} needs {} inputs",
                                            steps_done_, batch.inputs.shape()[0], batch.inputs.shape()[1],
                                            spec_.to_string(), spec_.input_dim()));

  last_wafer_sums_.clear();
  for (size_t w = 0; w < config_.wafers; ++w)
    last_wafer_sums_.push_back(wafer_gradient_sums(parameters_, batch, shard_range(batch_size, config_.wafers, w),
                                                   config_.micro_batch, config_.order));

  // Reduce tensor by tensor in the tree's order, then scale by 1/B.
  const float scale = 1.0f / static_cast<float>(batch_size);
  std::vector<float> wafer_losses;
  size_t correct = 0;
  for (const GradientSums& sums : last_wafer_sums_) {
    wafer_losses.push_back(sums.loss_sum);
    correct += sums.correct;
  }
  std::vector<std::vector<std::span<float>>> wafer_tensors;
  for (GradientSums& sums : last_wafer_sums_) wafer_tensors.push_back(tensors_of(sums.gradient));
  const std::vector<std::span<float>> reduced = tensors_of(last_gradient_);
  std::vector<const float*> sources(config_.wafers);
  for (size_t t = 0; t < reduced.size(); ++t) {
    for (size_t w = 0; w < config_.wafers; ++w) sources[w] = wafer_tensors[w][t].data();
    reduction_.reduce(sources, reduced[t].size(), reduced[t].data());
  }
  if (mask_) apply_sparsity_mask(last_gradient_, *mask_);

  // MemoryX receives the reduced sum S and scales it itself (grad_scale = 1/B).
  const std::vector<std::span<float>> weights = tensors_of(parameters_);
  for (size_t t = 0; t < weights.size(); ++t)
    optimizer_update(config_.optimizer, slots_[t], weights[t], reduced[t], scale);
  for (const std::span<float>& tensor : reduced)
    for (float& value : tensor) value = value * scale;

  StepResult result;
  result.step = steps_done_++;
  result.loss = reduction_.reduce_scalar(wafer_losses) * scale;
  result.train_accuracy = static_cast<double>(correct) / static_cast<double>(batch_size);
  return result;
}

}  // namespace wsemu::train
