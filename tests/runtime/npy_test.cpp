// .npy reading and writing. The input files are built byte by byte here from the NPY format
// specification (magic "\x93NUMPY", version, little-endian header length, a Python dict literal,
// the raw data), independently of the writer under test.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/npy/npy.hpp"
#include "tests/test_support.hpp"

namespace wsemu::runtime::npy {
namespace {

std::vector<uint8_t> npy_file(int major, const std::string& dict, const std::vector<uint8_t>& data,
                              int minor = 0) {
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major),
                              static_cast<uint8_t>(minor)};
  std::string header = dict + "\n";
  size_t len = header.size();
  int len_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i) out.push_back(static_cast<uint8_t>(len >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

template <class T>
std::vector<uint8_t> raw(std::initializer_list<T> values) {
  std::vector<uint8_t> out;
  for (T v : values) {
    uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.insert(out.end(), b, b + sizeof(T));
  }
  return out;
}

std::string error_of(const std::vector<uint8_t>& bytes) {
  return wsemu::testing::thrown_message<NpyError>([&] { parse_npy(bytes, "in.npy"); });
}

TEST(Npy, ReadsFloat32InCOrder) {
  auto bytes = npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                        raw<float>({1, 2, 3, 4, 5, 6}));
  NpyArray a = parse_npy(bytes);
  EXPECT_EQ(a.dtype, DType::F32);
  EXPECT_EQ(a.shape, (std::vector<size_t>{2, 3}));
  xt::xarray<float> x = a.to_xarray<float>();
  ASSERT_EQ(x.dimension(), 2u);
  EXPECT_EQ(x(0, 0), 1.0f);
  EXPECT_EQ(x(0, 2), 3.0f);
  EXPECT_EQ(x(1, 0), 4.0f);
  EXPECT_EQ(x(1, 2), 6.0f);
}

TEST(Npy, ReadsFortranOrderIntoCOrder) {
  // A = [[1, 2, 3], [4, 5, 6]] stored column by column: 1 4 2 5 3 6.
  auto bytes = npy_file(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
                        raw<int32_t>({1, 4, 2, 5, 3, 6}));
  xt::xarray<int32_t> x = parse_npy(bytes).to_xarray<int32_t>();
  EXPECT_EQ(x(0, 1), 2);
  EXPECT_EQ(x(1, 0), 4);
  EXPECT_EQ(x(1, 2), 6);
  // Three dimensions: element (i, j, k) of a 2x2x2 Fortran array is at i + 2j + 4k.
  std::vector<int16_t> f(8);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 2; ++k) f[i + 2 * j + 4 * k] = static_cast<int16_t>(100 * i + 10 * j + k);
  std::vector<uint8_t> data(16);
  std::memcpy(data.data(), f.data(), 16);
  auto bytes3 = npy_file(1, "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 2, 2), }", data);
  xt::xarray<int16_t> y = parse_npy(bytes3).to_xarray<int16_t>();
  EXPECT_EQ(y(1, 0, 1), 101);
  EXPECT_EQ(y(0, 1, 1), 11);
  EXPECT_EQ(y(1, 1, 0), 110);
}

TEST(Npy, ReadsFloat16AsExactDoubles) {
  // binary16 patterns: 1.0 = 0x3C00, -2.0 = 0xC000, 0.5 = 0x3800, 65504 = 0x7BFF,
  // the smallest subnormal 2^-24 = 0x0001.
  auto bytes = npy_file(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (5,), }",
                        raw<uint16_t>({0x3C00, 0xC000, 0x3800, 0x7BFF, 0x0001}));
  NpyArray a = parse_npy(bytes);
  EXPECT_EQ(a.dtype, DType::F16);
  xt::xarray<double> d = a.to_double();
  EXPECT_EQ(d(0), 1.0);
  EXPECT_EQ(d(1), -2.0);
  EXPECT_EQ(d(2), 0.5);
  EXPECT_EQ(d(3), 65504.0);
  EXPECT_EQ(d(4), std::ldexp(1.0, -24));
  EXPECT_EQ(a.f16_bits()(3), 0x7BFF);
  EXPECT_THROW(a.to_xarray<float>(), NpyError);
}

TEST(Npy, ReadsEveryIntegerType) {
  EXPECT_EQ(parse_npy(npy_file(1, "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }",
                               raw<int16_t>({-32768, 7})))
                .to_double()(0),
            -32768.0);
  EXPECT_EQ(parse_npy(npy_file(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }",
                               raw<uint16_t>({65535})))
                .to_xarray<uint16_t>()(0),
            65535);
  EXPECT_EQ(parse_npy(npy_file(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }",
                               raw<int32_t>({-123456789})))
                .to_xarray<int32_t>()(0),
            -123456789);
  EXPECT_EQ(parse_npy(npy_file(1, "{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }",
                               raw<uint32_t>({4000000000u})))
                .to_double()(0),
            4000000000.0);
}

TEST(Npy, HeaderVariants) {
  // Keys in another order, double quotes, extra spaces, no trailing comma, version 2.0 and 3.0.
  auto v2 = npy_file(2, "{ \"shape\" : ( 3 , ) , \"descr\":\"<u4\",'fortran_order':False}",
                     raw<uint32_t>({7, 8, 9}));
  NpyArray a = parse_npy(v2);
  EXPECT_EQ(a.shape, (std::vector<size_t>{3}));
  EXPECT_EQ(a.to_xarray<uint32_t>()(2), 9u);
  auto v3 = npy_file(3, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
                     raw<float>({2.5f}));
  EXPECT_EQ(parse_npy(v3).to_xarray<float>()(0), 2.5f);
  // A scalar (shape ()) holds one element; a zero-length dimension holds none.
  auto scalar = npy_file(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (), }",
                         raw<int32_t>({42}));
  NpyArray s = parse_npy(scalar);
  EXPECT_EQ(s.size(), 1u);
  EXPECT_EQ(s.to_double()(), 42.0);
  auto empty = npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4), }", {});
  EXPECT_EQ(parse_npy(empty).size(), 0u);
}

TEST(Npy, RejectsWhatItCannotRead) {
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  EXPECT_NE(error_of({'n', 'o', 't', ' ', 'n', 'p', 'y', '!', 0, 0}).find("in.npy: not a .npy file"),
            std::string::npos);
  EXPECT_NE(error_of(npy_file(4, f4, raw<float>({1, 2}))).find("version 4.0 is not supported"),
            std::string::npos);
  std::string f8 = error_of(
      npy_file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", raw<double>({1, 2})));
  EXPECT_NE(f8.find("dtype '<f8' is not supported"), std::string::npos) << f8;
  EXPECT_NE(f8.find("<f4 (float32)"), std::string::npos) << f8;
  std::string big = error_of(
      npy_file(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", raw<float>({1, 2})));
  EXPECT_NE(big.find("big-endian"), std::string::npos) << big;
  EXPECT_NE(error_of(npy_file(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }",
                              {1, 2}))
                .find("'|u1' is not supported"),
            std::string::npos);
  EXPECT_NE(error_of(npy_file(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }",
                              raw<float>({1})))
                .find("structured arrays"),
            std::string::npos);
  EXPECT_NE(error_of(npy_file(1, "{'descr': '<f4', 'shape': (2,), }", raw<float>({1, 2})))
                .find("no 'fortran_order'"),
            std::string::npos);
  EXPECT_NE(error_of(npy_file(1, "{'descr': '<f4', 'fortran_order': maybe, 'shape': (2,), }",
                              raw<float>({1, 2})))
                .find("True or False"),
            std::string::npos);
  EXPECT_NE(error_of(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }",
                              raw<float>({1, 2})))
                .find("non-negative integers"),
            std::string::npos);
  std::string truncated = error_of(npy_file(1, f4, raw<float>({1})));
  EXPECT_NE(truncated.find("truncated .npy file: shape (2,) of float32 needs 8 bytes of data, only 4"),
            std::string::npos)
      << truncated;
  EXPECT_NE(error_of(npy_file(1, f4, raw<float>({1, 2, 3}))).find("4 unexpected bytes"),
            std::string::npos);
  // The header length claims more bytes than the file has.
  std::vector<uint8_t> cut = npy_file(1, f4, raw<float>({1, 2}));
  cut.resize(20);
  EXPECT_NE(error_of(cut).find("truncated .npy file: the header needs"), std::string::npos);
  EXPECT_THROW(read_npy("/nonexistent/dir/x.npy"), NpyError);
}

TEST(Npy, WriterProducesTheSpecifiedLayout) {
  xt::xarray<float> x = {1.5f, -2.0f};
  std::vector<uint8_t> bytes = serialize_npy(NpyArray::from_xarray(x));
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  ASSERT_GE(bytes.size(), 10u + dict.size());
  EXPECT_EQ(bytes[0], 0x93);
  EXPECT_EQ(std::string(bytes.begin() + 1, bytes.begin() + 6), "NUMPY");
  EXPECT_EQ(bytes[6], 1);
  EXPECT_EQ(bytes[7], 0);
  size_t header_len = bytes[8] | (bytes[9] << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u) << "numpy aligns the data to 64 bytes";
  std::string header(bytes.begin() + 10, bytes.begin() + 10 + header_len);
  EXPECT_EQ(header.substr(0, dict.size()), dict);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(bytes.size(), 10 + header_len + 8);
  EXPECT_EQ(std::vector<uint8_t>(bytes.end() - 8, bytes.end()), raw<float>({1.5f, -2.0f}));
}

TEST(Npy, RoundTripsEveryTypeAndOrder) {
  xt::xarray<float> f = {{1, 2, 3}, {4, 5, 6}};
  xt::xarray<int16_t> i16 = {{-1, 2}, {3, -4}, {5, 6}};
  xt::xarray<uint32_t> u32 = {0u, 1u, 4294967295u};
  for (Order order : {Order::C, Order::FORTRAN}) {
    EXPECT_EQ(parse_npy(serialize_npy(NpyArray::from_xarray(f), order)).to_xarray<float>(), f);
    EXPECT_EQ(parse_npy(serialize_npy(NpyArray::from_xarray(i16), order)).to_xarray<int16_t>(), i16);
    EXPECT_EQ(parse_npy(serialize_npy(NpyArray::from_xarray(u32), order)).to_xarray<uint32_t>(), u32);
  }
  // Fortran output really is column-major: the second stored element is f(1, 0) = 4.
  std::vector<uint8_t> fbytes = serialize_npy(NpyArray::from_xarray(f), Order::FORTRAN);
  float second;
  std::memcpy(&second, fbytes.data() + fbytes.size() - 6 * 4 + 4, 4);
  EXPECT_EQ(second, 4.0f);
  // float16: values that binary16 represents exactly come back exactly.
  xt::xarray<float> h = {0.25f, -3.0f, 1024.0f};
  NpyArray ha = NpyArray::from_float_as_f16(h);
  EXPECT_EQ(ha.dtype, DType::F16);
  xt::xarray<double> back = parse_npy(serialize_npy(ha)).to_double();
  EXPECT_EQ(back(0), 0.25);
  EXPECT_EQ(back(1), -3.0);
  EXPECT_EQ(back(2), 1024.0);
  // Through a file.
  auto path = std::filesystem::temp_directory_path() / "wsemu_npy_test_roundtrip.npy";
  write_npy(path.string(), NpyArray::from_xarray(i16));
  EXPECT_EQ(read_npy(path.string()).to_xarray<int16_t>(), i16);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace wsemu::runtime::npy
