// Classification data sets for training: Fashion-MNIST read from IDX files (plain or gzip) and
// a seeded synthetic data set for CI.
//
// Contract: a Dataset holds num_samples rows of input_dim fp32 features and one label in
// [0, num_classes) per row. Loaders either return a complete, validated data set or throw
// DatasetError whose message names the file and what is wrong with it (missing, not gzip, bad
// magic, bad dimensions, truncated, trailing bytes, label out of range); they never return a
// partial data set and never read past the data the header declares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor/xtensor.hpp>

namespace wsemu::train {

class DatasetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Dataset {
  std::string name;
  size_t num_classes = 0;
  xt::xtensor<float, 2> inputs;  // [num_samples][input_dim], row-major
  std::vector<uint32_t> labels;  // [num_samples]

  size_t num_samples() const { return labels.size(); }
  size_t input_dim() const { return inputs.shape()[1]; }
};

// The samples of one global batch, in batch order.
struct Batch {
  xt::xtensor<float, 2> inputs;  // [batch_size][input_dim]
  std::vector<uint32_t> labels;  // [batch_size]

  size_t size() const { return labels.size(); }
};

// Copies the rows `indices` of `dataset` (in that order) into a Batch. Throws
// std::out_of_range for an index >= dataset.num_samples().
Batch gather_batch(const Dataset& dataset, std::span<const uint32_t> indices);

// An IDX file of unsigned bytes (type code 0x08): its dimensions and its data, row-major.
struct IdxArray {
  std::vector<uint32_t> dims;
  std::vector<uint8_t> data;
};

// Reads a whole file, gunzipping it if it starts with the gzip magic (1f 8b); plain files are
// read as they are. Throws DatasetError if the file is missing or the gzip stream is corrupt
// or truncated.
std::vector<uint8_t> read_maybe_gzipped_file(const std::filesystem::path& path);

// Parses an IDX byte array: magic 00 00 08 <ndims>, then ndims big-endian uint32 dimensions,
// then exactly prod(dims) bytes. `expected_ndims` is checked. `what` names the source in errors.
IdxArray parse_idx(std::span<const uint8_t> bytes, size_t expected_ndims, const std::string& what);

IdxArray read_idx_file(const std::filesystem::path& path, size_t expected_ndims);

// Builds a data set from an IDX images file (3 dims: count, rows, cols) and an IDX labels file
// (1 dim: count): pixels scaled to [0, 1] as float(byte) / 255.0f, counts must match, labels
// must be < num_classes.
Dataset load_idx_dataset(const std::filesystem::path& images_path,
                         const std::filesystem::path& labels_path, size_t num_classes,
                         const std::string& name);

// Per-pixel statistics of the Fashion-MNIST training images (all 47,040,000 pixels, after the
// [0, 1] scaling), for standardize_inputs.
inline constexpr float fashion_mnist_pixel_mean = 0.2860406f;
inline constexpr float fashion_mnist_pixel_stddev = 0.3530242f;

// x = (x - mean) / stddev for every input of the data set, each operation rounded in fp32. An
// optional host-side preprocessing step: the wafers receive the inputs after it, so it is no
// part of the mirrored computation. stddev must be positive.
void standardize_inputs(Dataset& dataset, float mean, float stddev);

enum class DatasetSplit { train, test };

// Where Debian's dataset-fashion-mnist package installs the files.
inline const std::filesystem::path default_fashion_mnist_dir = "/usr/share/datasets/fashion-mnist";

// Fashion-MNIST: 60000 training or 10000 test images of 28x28 pixels (input_dim 784), 10
// classes, from {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] in `dir` (the .gz name is
// tried first). The error for a missing directory says which Debian package provides it.
Dataset load_fashion_mnist(DatasetSplit split,
                           const std::filesystem::path& dir = default_fashion_mnist_dir);

}  // namespace wsemu::train
