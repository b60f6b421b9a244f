// The IDX reader on small files built here byte by byte (plain and gzip), its errors for broken
// files, the real Fashion-MNIST files when installed, and the synthetic data set.
#include "runtime/train/dataset.hpp"
#include "runtime/train/synthetic_dataset.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <fstream>
#include <string>
#include <vector>

namespace wsemu::train {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> idx_bytes(std::vector<uint32_t> dims, const std::vector<uint8_t>& data, uint8_t type = 0x08) {
  std::vector<uint8_t> bytes = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<uint8_t>(d >> shift));
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

std::vector<uint8_t> gzip_bytes(const std::vector<uint8_t>& plain) {
  z_stream stream{};
  EXPECT_EQ(deflateInit2(&stream, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::vector<uint8_t> out(deflateBound(&stream, plain.size()) + 64);
  stream.next_in = const_cast<Bytef*>(plain.data());
  stream.avail_in = static_cast<uInt>(plain.size());
  stream.next_out = out.data();
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

class IdxFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("wsemu-train-idx-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::vector<uint8_t>& bytes) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
    return path;
  }

  void expect_error(const std::vector<uint8_t>& bytes, size_t ndims, const std::string& fragment) {
    const fs::path path = write("broken", bytes);
    try {
      read_idx_file(path, ndims);
      ADD_FAILURE() << "no error, expected one containing '" << fragment << "'";
    } catch (const DatasetError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    }
  }

  fs::path dir_;
};

// 3 images of 2x2 pixels and their labels.
const std::vector<uint8_t> pixels = {0, 255, 51, 102, 1, 2, 3, 4, 255, 255, 0, 0};
const std::vector<uint8_t> labels = {2, 0, 1};

TEST_F(IdxFiles, ReadsPlainAndGzipFilesAlike) {
  const auto images = idx_bytes({3, 2, 2}, pixels);
  const fs::path plain = write("images", images), gz = write("images.gz", gzip_bytes(images));
  for (const fs::path& path : {plain, gz}) {
    const IdxArray array = read_idx_file(path, 3);
    EXPECT_EQ(array.dims, (std::vector<uint32_t>{3, 2, 2}));
    EXPECT_EQ(array.data, pixels);
  }
}

TEST_F(IdxFiles, BuildsADatasetScaledToUnitRange) {
  const fs::path images = write("i.gz", gzip_bytes(idx_bytes({3, 2, 2}, pixels)));
  const fs::path label_file = write("l", idx_bytes({3}, labels));
  const Dataset dataset = load_idx_dataset(images, label_file, 3, "tiny");
  ASSERT_EQ(dataset.num_samples(), 3u);
  ASSERT_EQ(dataset.input_dim(), 4u);
  EXPECT_EQ(dataset.inputs(0, 0), 0.0f);
  EXPECT_EQ(dataset.inputs(0, 1), 1.0f);
  EXPECT_EQ(dataset.inputs(0, 2), 0.2f);  // 51 / 255 rounds to the float nearest 0.2
  EXPECT_EQ(dataset.inputs(0, 3), 0.4f);
  EXPECT_EQ(dataset.inputs(1, 3), 4.0f / 255.0f);
  EXPECT_EQ(dataset.labels, (std::vector<uint32_t>{2, 0, 1}));
}

TEST_F(IdxFiles, RejectsBadMagicTypeAndDimensions) {
  auto bad_magic = idx_bytes({3}, labels);
  bad_magic[0] = 0x1f;  // not 00 00
  bad_magic[1] = 0x7f;
  expect_error(bad_magic, 1, "bad IDX magic");
  expect_error(idx_bytes({3}, labels, 0x0d), 1, "element type 0x0d");
  expect_error(idx_bytes({3, 2, 2}, pixels), 1, "has 3 dimensions, expected 1");
  expect_error(idx_bytes({0}, {}), 1, "dimension 0 is zero");
  expect_error({0, 0, 8}, 1, "too short");
  expect_error({0, 0, 8, 3, 0, 0, 0, 3}, 3, "truncated IDX header");
}

TEST_F(IdxFiles, RejectsTruncatedAndOversizedData) {
  auto images = idx_bytes({3, 2, 2}, pixels);
  images.pop_back();
  expect_error(images, 3, "truncated IDX data: header declares 12 bytes, file has 11");
  auto long_labels = idx_bytes({3}, labels);
  long_labels.push_back(7);
  expect_error(long_labels, 1, "1 unexpected bytes");
}

TEST_F(IdxFiles, RejectsCorruptAndTruncatedGzip) {
  const auto gz = gzip_bytes(idx_bytes({3, 2, 2}, pixels));
  auto truncated = gz;
  truncated.resize(gz.size() - 12);
  expect_error(truncated, 3, "truncated gzip stream");
  auto corrupt = gz;
  for (size_t k = 10; k < corrupt.size() - 8; ++k) corrupt[k] ^= 0x5a;
  expect_error(corrupt, 3, "corrupt gzip stream");
}

TEST_F(IdxFiles, ReportsMissingFilesAndMismatchedDatasets) {
  expect_error({}, 1, "too short");
  try {
    read_idx_file(dir_ / "absent.gz", 1);
    ADD_FAILURE();
  } catch (const DatasetError& e) {
    EXPECT_NE(std::string(e.what()).find("no such file"), std::string::npos) << e.what();
  }
  const fs::path images = write("i", idx_bytes({3, 2, 2}, pixels));
  const fs::path two_labels = write("l2", idx_bytes({2}, {0, 1}));
  EXPECT_THROW(load_idx_dataset(images, two_labels, 3, "x"), DatasetError);
  const fs::path big_label = write("l3", idx_bytes({3}, {0, 1, 9}));
  try {
    load_idx_dataset(images, big_label, 3, "x");
    ADD_FAILURE();
  } catch (const DatasetError& e) {
    EXPECT_NE(std::string(e.what()).find("label 9 of sample 2 is out of range"), std::string::npos) << e.what();
  }
  try {
    load_fashion_mnist(DatasetSplit::train, dir_ / "nowhere");
    ADD_FAILURE();
  } catch (const DatasetError& e) {
    EXPECT_NE(std::string(e.what()).find("dataset-fashion-mnist"), std::string::npos) << e.what();
  }
}

TEST(FashionMnist, RealFilesWhenInstalled) {
  if (!fs::exists(default_fashion_mnist_dir / "t10k-labels-idx1-ubyte.gz"))
    GTEST_SKIP() << "Fashion-MNIST is not installed (Debian package dataset-fashion-mnist)";
  const Dataset test = load_fashion_mnist(DatasetSplit::test);
  EXPECT_EQ(test.num_samples(), 10000u);
  EXPECT_EQ(test.input_dim(), 784u);
  EXPECT_EQ(test.num_classes, 10u);
  // The first labels as Python's gzip module reads them from the same files.
  EXPECT_EQ(std::vector<uint32_t>(test.labels.begin(), test.labels.begin() + 10),
            (std::vector<uint32_t>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7}));
  const Dataset train = load_fashion_mnist(DatasetSplit::train);
  EXPECT_EQ(train.num_samples(), 60000u);
  EXPECT_EQ(std::vector<uint32_t>(train.labels.begin(), train.labels.begin() + 10),
            (std::vector<uint32_t>{9, 0, 0, 3, 0, 2, 7, 2, 5, 5}));
  // First training image: byte sum 76247, maximum 255 first at pixel 417 (Python).
  double sum = 0;
  for (size_t k = 0; k < 784; ++k) sum += train.inputs(0, k) * 255.0;
  EXPECT_NEAR(sum, 76247.0, 0.01);
  EXPECT_EQ(train.inputs(0, 417), 1.0f);
}

TEST(SyntheticDataset, IsDeterministicAndWellFormed) {
  SyntheticSpec spec;
  spec.num_samples = 500;
  const Dataset a = make_synthetic_dataset(spec, DatasetSplit::train);
  const Dataset b = make_synthetic_dataset(spec, DatasetSplit::train);
  const Dataset test = make_synthetic_dataset(spec, DatasetSplit::test);
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_NE(a.inputs, test.inputs);
  EXPECT_EQ(a.input_dim(), 16u);
  std::vector<int> counts(4, 0);
  for (uint32_t label : a.labels) ++counts.at(label);
  for (int c : counts) EXPECT_GT(c, 80);
  spec.seed = 2;
  EXPECT_NE(make_synthetic_dataset(spec, DatasetSplit::train).inputs, a.inputs);
}

TEST(SyntheticDataset, ClassesAreSeparatedByTheirCentres) {
  // Nearest class mean (estimated on train) classifies most test samples: the data is learnable.
  SyntheticSpec spec;
  const Dataset train = make_synthetic_dataset(spec, DatasetSplit::train);
  const Dataset test = make_synthetic_dataset(spec, DatasetSplit::test);
  std::vector<std::vector<double>> mean(4, std::vector<double>(16, 0.0));
  std::vector<int> count(4, 0);
  for (size_t n = 0; n < train.num_samples(); ++n) {
    ++count[train.labels[n]];
    for (size_t d = 0; d < 16; ++d) mean[train.labels[n]][d] += train.inputs(n, d);
  }
  for (size_t k = 0; k < 4; ++k)
    for (double& m : mean[k]) m /= count[k];
  size_t right = 0;
  for (size_t n = 0; n < test.num_samples(); ++n) {
    size_t best = 0;
    double best_distance = 1e300;
    for (size_t k = 0; k < 4; ++k) {
      double distance = 0;
      for (size_t d = 0; d < 16; ++d) distance += (test.inputs(n, d) - mean[k][d]) * (test.inputs(n, d) - mean[k][d]);
      if (distance < best_distance) best_distance = distance, best = k;
    }
    right += best == test.labels[n];
  }
  EXPECT_GT(static_cast<double>(right) / test.num_samples(), 0.9);
}

TEST(StandardizeInputs, ShiftsAndScalesEveryInput) {
  Dataset data;
  data.inputs = {{0.0f, 0.5f}, {1.0f, 0.25f}};
  data.labels = {0, 1};
  standardize_inputs(data, 0.5f, 0.25f);
  EXPECT_EQ(data.inputs, (xt::xtensor<float, 2>{{-2.0f, 0.0f}, {2.0f, -1.0f}}));
  EXPECT_THROW(standardize_inputs(data, 0.0f, 0.0f), std::invalid_argument);
}

TEST(GatherBatch, CopiesRowsInIndexOrder) {
  SyntheticSpec spec;
  spec.num_samples = 10;
  const Dataset data = make_synthetic_dataset(spec, DatasetSplit::train);
  const std::vector<uint32_t> indices = {7, 2, 7};
  const Batch batch = gather_batch(data, indices);
  ASSERT_EQ(batch.size(), 3u);
  for (size_t row = 0; row < 3; ++row) {
    EXPECT_EQ(batch.labels[row], data.labels[indices[row]]);
    for (size_t d = 0; d < 16; ++d) EXPECT_EQ(batch.inputs(row, d), data.inputs(indices[row], d));
  }
  const std::vector<uint32_t> bad = {10};
  EXPECT_THROW(gather_batch(data, bad), std::out_of_range);
}

}  // namespace
}  // namespace wsemu::train
