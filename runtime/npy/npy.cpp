#include "runtime/npy/npy.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>

#include "isa/fp16.hpp"

namespace wsemu::runtime::npy {

static_assert(std::endian::native == std::endian::little,
              ".npy data is little-endian and is copied as is");

namespace {

constexpr unsigned char kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr size_t kMagicSize = sizeof kMagic;
// Larger headers are certainly not numpy's (it writes a few hundred bytes at most).
constexpr size_t kMaxHeaderBytes = 1 << 20;

struct TypeInfo {
  DType type;
  std::string_view descr;
  std::string_view name;
  int size;
};
constexpr TypeInfo kTypes[] = {
    {DType::F32, "<f4", "float32", 4}, {DType::F16, "<f2", "float16", 2},
    {DType::I32, "<i4", "int32", 4},   {DType::U32, "<u4", "uint32", 4},
    {DType::I16, "<i2", "int16", 2},   {DType::U16, "<u2", "uint16", 2},
};

const TypeInfo& info(DType t) {
  for (const TypeInfo& i : kTypes)
    if (i.type == t) return i;
  return kTypes[0];
}

std::string supported_list() {
  std::string out;
  for (const TypeInfo& i : kTypes) {
    if (!out.empty()) out += ", ";
    out += std::string(i.descr) + " (" + std::string(i.name) + ")";
  }
  return out;
}

// A tiny reader for the Python dict literal of the header:
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view file) : text_(text), file_(file) {}

  void parse(std::string& descr, bool& fortran, std::vector<size_t>& shape) {
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (accept('}')) break;
      std::string key = string_literal("a key");
      expect(':');
      skip_space();
      if (key == "descr") {
        if (peek() == '[')
          fail("structured arrays (a dtype with fields) are not supported; save a plain "
               "numeric array");
        descr = string_literal("the dtype string");
        have_descr = true;
      } else if (key == "fortran_order") {
        fortran = boolean();
        have_order = true;
      } else if (key == "shape") {
        shape = tuple();
        have_shape = true;
      } else {
        fail("unexpected key '" + key + "' in the header");
      }
      skip_space();
      if (accept('}')) break;
      expect(',');
    }
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the header's closing '}'");
    if (!have_descr) fail("the header has no 'descr' (dtype)");
    if (!have_order) fail("the header has no 'fortran_order'");
    if (!have_shape) fail("the header has no 'shape'");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw NpyError(std::string(file_) + ": malformed .npy header: " + what);
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!accept(c)) fail(std::string("expected '") + c + "'");
  }
  std::string string_literal(const char* what) {
    skip_space();
    char quote = peek();
    if (quote != '\'' && quote != '"') fail(std::string("expected ") + what + " in quotes");
    ++pos_;
    size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  bool boolean() {
    skip_space();
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("'fortran_order' must be True or False");
  }
  std::vector<size_t> tuple() {
    std::vector<size_t> dims;
    expect('(');
    while (true) {
      skip_space();
      if (accept(')')) break;
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        fail("'shape' must be a tuple of non-negative integers");
      uint64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (v > (std::numeric_limits<uint64_t>::max() - 9) / 10) fail("dimension too large");
        v = v * 10 + static_cast<uint64_t>(text_[pos_++] - '0');
      }
      if (peek() == 'L') ++pos_;  // Python 2 long suffix, written by very old numpy
      dims.push_back(static_cast<size_t>(v));
      if (dims.size() > 32) fail("more than 32 dimensions");
      skip_space();
      if (accept(')')) break;
      expect(',');
    }
    return dims;
  }

  std::string_view text_;
  std::string_view file_;
  size_t pos_ = 0;
};

uint32_t read_le(std::span<const uint8_t> b, size_t at, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | b[at + i];
  return v;
}

// Strides (in elements) of a C-order or Fortran-order layout of `shape`.
std::vector<size_t> strides_of(const std::vector<size_t>& shape, Order order) {
  std::vector<size_t> strides(shape.size());
  size_t s = 1;
  if (order == Order::C) {
    for (size_t i = shape.size(); i-- > 0;) {
      strides[i] = s;
      s *= shape[i];
    }
  } else {
    for (size_t i = 0; i < shape.size(); ++i) {
      strides[i] = s;
      s *= shape[i];
    }
  }
  return strides;
}

// Copies every element of an array of `shape` from a buffer in one order to a buffer in the
// other (C to Fortran or Fortran to C).
void copy_reordered(const std::vector<size_t>& shape, size_t item, const uint8_t* from,
                    Order from_order, uint8_t* to, Order to_order) {
  size_t n = 1;
  for (size_t d : shape) n *= d;
  if (n == 0) return;
  const std::vector<size_t> from_strides = strides_of(shape, from_order);
  const std::vector<size_t> to_strides = strides_of(shape, to_order);
  std::vector<size_t> index(shape.size(), 0);
  for (size_t k = 0; k < n; ++k) {
    size_t f = 0, t = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      f += index[d] * from_strides[d];
      t += index[d] * to_strides[d];
    }
    std::memcpy(to + t * item, from + f * item, item);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

std::vector<size_t> shape_of(const auto& xarr) {
  return std::vector<size_t>(xarr.shape().begin(), xarr.shape().end());
}

}  // namespace

std::string_view dtype_descr(DType t) { return info(t).descr; }
std::string_view dtype_name(DType t) { return info(t).name; }
int dtype_size(DType t) { return info(t).size; }

std::optional<DType> dtype_from_descr(std::string_view descr) {
  for (const TypeInfo& i : kTypes)
    if (i.descr == descr) return i.type;
  return std::nullopt;
}

size_t NpyArray::size() const {
  size_t n = 1;
  for (size_t d : shape) n *= d;
  return n;
}

std::string NpyArray::shape_string() const {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

NpyArray parse_npy(std::span<const uint8_t> bytes, std::string_view name) {
  const std::string file(name);
  if (bytes.size() < kMagicSize + 2 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0)
    throw NpyError(file + ": not a .npy file (it does not start with \\x93NUMPY)");
  const int major = bytes[6], minor = bytes[7];
  size_t len_bytes;
  if (major == 1) len_bytes = 2;
  else if (major == 2 || major == 3) len_bytes = 4;
  else
    throw NpyError(file + ": .npy format version " + std::to_string(major) + "." +
                   std::to_string(minor) + " is not supported (1.0, 2.0 and 3.0 are)");
  const size_t prefix = kMagicSize + 2 + len_bytes;
  if (bytes.size() < prefix) throw NpyError(file + ": truncated .npy file (no header length)");
  const size_t header_len = read_le(bytes, kMagicSize + 2, static_cast<int>(len_bytes));
  if (header_len > kMaxHeaderBytes)
    throw NpyError(file + ": malformed .npy header: it claims " + std::to_string(header_len) +
                   " bytes");
  if (bytes.size() < prefix + header_len)
    throw NpyError(file + ": truncated .npy file: the header needs " +
                   std::to_string(header_len) + " bytes, only " +
                   std::to_string(bytes.size() - prefix) + " follow");
  std::string_view header(reinterpret_cast<const char*>(bytes.data() + prefix), header_len);

  std::string descr;
  bool fortran = false;
  NpyArray array;
  HeaderParser(header, file).parse(descr, fortran, array.shape);
  std::optional<DType> type = dtype_from_descr(descr);
  if (!type) {
    std::string hint;
    if (!descr.empty() && descr[0] == '>')
      hint = "big-endian data is not supported; save it with arr.astype(arr.dtype.newbyteorder('<'))";
    else
      hint = "convert it first, e.g. arr.astype(np.float32)";
    throw NpyError(file + ": dtype '" + descr + "' is not supported (supported: " +
                   supported_list() + "); " + hint);
  }
  array.dtype = *type;
  const size_t item = static_cast<size_t>(dtype_size(array.dtype));
  size_t count = 1;
  for (size_t d : array.shape) {
    if (d != 0 && count > std::numeric_limits<size_t>::max() / item / d)
      throw NpyError(file + ": malformed .npy header: shape " + array.shape_string() +
                     " is too large");
    count *= d;
  }
  const size_t need = count * item;
  const size_t have = bytes.size() - prefix - header_len;
  if (have < need)
    throw NpyError(file + ": truncated .npy file: shape " + array.shape_string() + " of " +
                   std::string(dtype_name(array.dtype)) + " needs " + std::to_string(need) +
                   " bytes of data, only " + std::to_string(have) + " follow the header");
  if (have > need)
    throw NpyError(file + ": " + std::to_string(have - need) +
                   " unexpected bytes after the array data (shape " + array.shape_string() +
                   " of " + std::string(dtype_name(array.dtype)) + " is " +
                   std::to_string(need) + " bytes)");
  const uint8_t* src = bytes.data() + prefix + header_len;
  array.data.resize(need);
  if (fortran && array.shape.size() > 1)
    copy_reordered(array.shape, item, src, Order::FORTRAN, array.data.data(), Order::C);
  else if (need > 0)
    std::memcpy(array.data.data(), src, need);
  return array;
}

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NpyError(path + ": cannot open: " + std::strerror(errno));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw NpyError(path + ": read error");
  return parse_npy(bytes, path);
}

std::vector<uint8_t> serialize_npy(const NpyArray& array, Order order) {
  const size_t item = static_cast<size_t>(dtype_size(array.dtype));
  if (array.data.size() != array.size() * item)
    throw NpyError("serialize_npy: the array holds " + std::to_string(array.data.size()) +
                   " bytes, its shape " + array.shape_string() + " needs " +
                   std::to_string(array.size() * item));
  std::string dict = "{'descr': '" + std::string(dtype_descr(array.dtype)) +
                     "', 'fortran_order': " + (order == Order::FORTRAN ? "True" : "False") +
                     ", 'shape': " + array.shape_string() + ", }";
  // numpy pads so that the data starts on a 64-byte boundary, and ends the header with '\n'.
  size_t len_bytes = 2;
  int major = 1;
  if (kMagicSize + 2 + 2 + dict.size() + 1 > 65535) {
    len_bytes = 4;
    major = 2;
  }
  size_t total = kMagicSize + 2 + len_bytes + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  std::vector<uint8_t> out(kMagic, kMagic + kMagicSize);
  out.push_back(static_cast<uint8_t>(major));
  out.push_back(0);
  for (size_t i = 0; i < len_bytes; ++i) out.push_back(static_cast<uint8_t>(dict.size() >> (8 * i)));
  out.insert(out.end(), dict.begin(), dict.end());
  size_t start = out.size();
  out.resize(start + array.data.size());
  if (order == Order::FORTRAN && array.shape.size() > 1)
    copy_reordered(array.shape, item, array.data.data(), Order::C, out.data() + start, Order::FORTRAN);
  else if (!array.data.empty())
    std::memcpy(out.data() + start, array.data.data(), array.data.size());
  return out;
}

void write_npy(const std::string& path, const NpyArray& array, Order order) {
  std::vector<uint8_t> bytes = serialize_npy(array, order);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw NpyError(path + ": cannot create: " + std::strerror(errno));
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw NpyError(path + ": write error");
}

template <class T>
xt::xarray<T> NpyArray::to_xarray() const {
  if (dtype != dtype_of<T>())
    throw NpyError("array of " + std::string(dtype_name(dtype)) + " read as " +
                   std::string(dtype_name(dtype_of<T>())));
  xt::xarray<T> out = xt::xarray<T>::from_shape(shape);
  if (!data.empty()) std::memcpy(out.data(), data.data(), data.size());
  return out;
}

xt::xarray<uint16_t> NpyArray::f16_bits() const {
  if (dtype != DType::F16)
    throw NpyError("array of " + std::string(dtype_name(dtype)) + " read as float16");
  xt::xarray<uint16_t> out = xt::xarray<uint16_t>::from_shape(shape);
  if (!data.empty()) std::memcpy(out.data(), data.data(), data.size());
  return out;
}

xt::xarray<double> NpyArray::to_double() const {
  xt::xarray<double> out = xt::xarray<double>::from_shape(shape);
  const size_t n = size();
  auto load = [&](auto tag, size_t i) {
    decltype(tag) v;
    std::memcpy(&v, data.data() + i * sizeof v, sizeof v);
    return v;
  };
  for (size_t i = 0; i < n; ++i) {
    double v = 0;
    switch (dtype) {
      case DType::F32: v = load(float{}, i); break;
      case DType::F16: v = isa::fp16_to_fp32(load(uint16_t{}, i)); break;
      case DType::I32: v = load(int32_t{}, i); break;
      case DType::U32: v = load(uint32_t{}, i); break;
      case DType::I16: v = load(int16_t{}, i); break;
      case DType::U16: v = load(uint16_t{}, i); break;
    }
    out.data()[i] = v;
  }
  return out;
}

template <class T>
NpyArray NpyArray::from_xarray(const xt::xarray<T>& values) {
  NpyArray a;
  a.dtype = dtype_of<T>();
  a.shape = shape_of(values);
  // xt::xarray is row-major by default; copy through a row-major container to be sure.
  xt::xarray<T, xt::layout_type::row_major> c = values;
  a.data.resize(c.size() * sizeof(T));
  if (!a.data.empty()) std::memcpy(a.data.data(), c.data(), a.data.size());
  return a;
}

NpyArray NpyArray::from_f16_bits(const xt::xarray<uint16_t>& bits) {
  NpyArray a = from_xarray(bits);
  a.dtype = DType::F16;
  return a;
}

NpyArray NpyArray::from_float_as_f16(const xt::xarray<float>& values) {
  xt::xarray<uint16_t> bits = xt::xarray<uint16_t>::from_shape(values.shape());
  xt::xarray<float, xt::layout_type::row_major> c = values;
  for (size_t i = 0; i < c.size(); ++i) bits.data()[i] = isa::fp32_to_fp16(c.data()[i]);
  return from_f16_bits(bits);
}

template xt::xarray<float> NpyArray::to_xarray<float>() const;
template xt::xarray<int32_t> NpyArray::to_xarray<int32_t>() const;
template xt::xarray<uint32_t> NpyArray::to_xarray<uint32_t>() const;
template xt::xarray<int16_t> NpyArray::to_xarray<int16_t>() const;
template xt::xarray<uint16_t> NpyArray::to_xarray<uint16_t>() const;
template NpyArray NpyArray::from_xarray<float>(const xt::xarray<float>&);
template NpyArray NpyArray::from_xarray<int32_t>(const xt::xarray<int32_t>&);
template NpyArray NpyArray::from_xarray<uint32_t>(const xt::xarray<uint32_t>&);
template NpyArray NpyArray::from_xarray<int16_t>(const xt::xarray<int16_t>&);
template NpyArray NpyArray::from_xarray<uint16_t>(const xt::xarray<uint16_t>&);

}  // namespace wsemu::runtime::npy
