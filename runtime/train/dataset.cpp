#include "runtime/train/dataset.hpp"

#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

namespace wsemu::train {

namespace {

constexpr uint8_t idx_type_unsigned_byte = 0x08;

std::vector<uint8_t> read_raw_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw DatasetError(fmt::format("{}: no such file", path.string()));
  if (std::filesystem::is_directory(path, ec))
    throw DatasetError(fmt::format("{}: is a directory, expected a file", path.string()));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DatasetError(fmt::format("{}: cannot open for reading", path.string()));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw DatasetError(fmt::format("{}: read error", path.string()));
  return bytes;
}

// Inflates every gzip member in `compressed` (gzip allows several, concatenated).
std::vector<uint8_t> gunzip(const std::vector<uint8_t>& compressed, const std::string& what) {
  std::vector<uint8_t> out;
  out.reserve(compressed.size() * 4);
  z_stream stream{};
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK)
    throw DatasetError(fmt::format("{}: cannot initialise zlib", what));
  stream.next_in = const_cast<Bytef*>(compressed.data());
  stream.avail_in = static_cast<uInt>(compressed.size());
  uint8_t chunk[1 << 16];
  for (;;) {
    stream.next_out = chunk;
    stream.avail_out = sizeof chunk;
    const int rc = inflate(&stream, Z_NO_FLUSH);
    out.insert(out.end(), chunk, chunk + (sizeof chunk - stream.avail_out));
    if (rc == Z_STREAM_END) {
      if (stream.avail_in == 0) break;
      if (inflateReset(&stream) != Z_OK) {
        inflateEnd(&stream);
        throw DatasetError(fmt::format("{}: corrupt gzip stream after member end", what));
      }
      continue;
    }
    if (rc == Z_OK) continue;
    const std::string reason = stream.msg ? stream.msg : zError(rc);
    inflateEnd(&stream);
    if (rc == Z_BUF_ERROR)
      throw DatasetError(fmt::format("{}: truncated gzip stream (ends after {} compressed bytes)",
                                     what, compressed.size()));
    throw DatasetError(fmt::format("{}: corrupt gzip stream: {}", what, reason));
  }
  inflateEnd(&stream);
  return out;
}

uint32_t read_big_endian_u32(std::span<const uint8_t> bytes, size_t offset) {
  return (uint32_t{bytes[offset]} << 24) | (uint32_t{bytes[offset + 1]} << 16) |
         (uint32_t{bytes[offset + 2]} << 8) | uint32_t{bytes[offset + 3]};
}

}  // namespace

Batch gather_batch(const Dataset& dataset, std::span<const uint32_t> indices) {
  const size_t dim = dataset.input_dim();
  Batch batch;
  batch.inputs = xt::xtensor<float, 2>::from_shape({indices.size(), dim});
  batch.labels.resize(indices.size());
  for (size_t row = 0; row < indices.size(); ++row) {
    const uint32_t index = indices[row];
    if (index >= dataset.num_samples())
      throw std::out_of_range(fmt::format("gather_batch: sample {} out of range (data set '{}' has {})",
                                          index, dataset.name, dataset.num_samples()));
    const float* src = dataset.inputs.data() + size_t{index} * dim;
    std::copy(src, src + dim, batch.inputs.data() + row * dim);
    batch.labels[row] = dataset.labels[index];
  }
  return batch;
}

void standardize_inputs(Dataset& dataset, float mean, float stddev) {
  if (!(stddev > 0.0f)) throw std::invalid_argument(fmt::format("standardize_inputs: stddev {} must be positive", stddev));
  for (float& x : dataset.inputs) x = (x - mean) / stddev;
}

std::vector<uint8_t> read_maybe_gzipped_file(const std::filesystem::path& path) {
  std::vector<uint8_t> raw = read_raw_file(path);
  if (raw.size() >= 2 && raw[0] == 0x1f && raw[1] == 0x8b) return gunzip(raw, path.string());
  return raw;
}

IdxArray parse_idx(std::span<const uint8_t> bytes, size_t expected_ndims, const std::string& what) {
  if (bytes.size() < 4)
    throw DatasetError(fmt::format("{}: too short for an IDX header ({} bytes)", what, bytes.size()));
  if (bytes[0] != 0 || bytes[1] != 0)
    throw DatasetError(fmt::format("{}: bad IDX magic {:02x} {:02x} {:02x} {:02x} (expected 00 00 08 {:02x})",
                                   what, bytes[0], bytes[1], bytes[2], bytes[3], expected_ndims));
  if (bytes[2] != idx_type_unsigned_byte)
    throw DatasetError(fmt::format("{}: IDX element type 0x{:02x} is not supported (expected 0x08, unsigned byte)",
                                   what, bytes[2]));
  const size_t ndims = bytes[3];
  if (ndims != expected_ndims)
    throw DatasetError(fmt::format("{}: IDX file has {} dimensions, expected {}", what, ndims, expected_ndims));
  const size_t header_size = 4 + 4 * ndims;
  if (bytes.size() < header_size)
    throw DatasetError(fmt::format("{}: truncated IDX header ({} bytes, header needs {})", what,
                                   bytes.size(), header_size));
  IdxArray array;
  size_t count = 1;
  for (size_t d = 0; d < ndims; ++d) {
    const uint32_t dim = read_big_endian_u32(bytes, 4 + 4 * d);
    if (dim == 0) throw DatasetError(fmt::format("{}: IDX dimension {} is zero", what, d));
    array.dims.push_back(dim);
    if (count > (size_t{1} << 40) / dim)
      throw DatasetError(fmt::format("{}: IDX dimensions are implausibly large", what));
    count *= dim;
  }
  const size_t available = bytes.size() - header_size;
  if (available < count)
    throw DatasetError(fmt::format("{}: truncated IDX data: header declares {} bytes, file has {}",
                                   what, count, available));
  if (available > count)
    throw DatasetError(fmt::format("{}: {} unexpected bytes after the {} data bytes the IDX header declares",
                                   what, available - count, count));
  array.data.assign(bytes.begin() + header_size, bytes.end());
  return array;
}

IdxArray read_idx_file(const std::filesystem::path& path, size_t expected_ndims) {
  const std::vector<uint8_t> bytes = read_maybe_gzipped_file(path);
  return parse_idx(bytes, expected_ndims, path.string());
}

Dataset load_idx_dataset(const std::filesystem::path& images_path,
                         const std::filesystem::path& labels_path, size_t num_classes,
                         const std::string& name) {
  const IdxArray images = read_idx_file(images_path, 3);
  const IdxArray labels = read_idx_file(labels_path, 1);
  if (images.dims[0] != labels.dims[0])
    throw DatasetError(fmt::format("{} has {} images but {} has {} labels", images_path.string(),
                                   images.dims[0], labels_path.string(), labels.dims[0]));
  const size_t count = images.dims[0];
  const size_t dim = size_t{images.dims[1]} * images.dims[2];
  Dataset dataset;
  dataset.name = name;
  dataset.num_classes = num_classes;
  dataset.inputs = xt::xtensor<float, 2>::from_shape({count, dim});
  float* pixels = dataset.inputs.data();
  for (size_t i = 0; i < count * dim; ++i) pixels[i] = static_cast<float>(images.data[i]) / 255.0f;
  dataset.labels.resize(count);
  for (size_t i = 0; i < count; ++i) {
    if (labels.data[i] >= num_classes)
      throw DatasetError(fmt::format("{}: label {} of sample {} is out of range (expected < {})",
                                     labels_path.string(), labels.data[i], i, num_classes));
    dataset.labels[i] = labels.data[i];
  }
  return dataset;
}

Dataset load_fashion_mnist(DatasetSplit split, const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw DatasetError(fmt::format(
        "{}: Fashion-MNIST directory not found (install the Debian package dataset-fashion-mnist, "
        "e.g. with tools/setup.sh)", dir.string()));
  const std::string prefix = split == DatasetSplit::train ? "train" : "t10k";
  auto locate = [&](const std::string& stem) {
    std::filesystem::path gz = dir / (stem + ".gz");
    if (std::filesystem::exists(gz, ec)) return gz;
    std::filesystem::path plain = dir / stem;
    if (std::filesystem::exists(plain, ec)) return plain;
    throw DatasetError(fmt::format("{}: neither {} nor {} exists", dir.string(), gz.filename().string(),
                                   plain.filename().string()));
  };
  const auto images = locate(prefix + "-images-idx3-ubyte");
  const auto labels = locate(prefix + "-labels-idx1-ubyte");
  Dataset dataset = load_idx_dataset(images, labels, 10,
                                     split == DatasetSplit::train ? "fashion-mnist/train" : "fashion-mnist/test");
  if (dataset.input_dim() != 784)
    throw DatasetError(fmt::format("{}: Fashion-MNIST images should be 28x28, found {} pixels per image",
                                   images.string(), dataset.input_dim()));
  return dataset;
}

}  // namespace wsemu::train
