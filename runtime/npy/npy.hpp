// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0), the host data format
// of wsemu: kernel inputs and outputs, reference results.
//
// Contract: the element types are the ones a PE can hold: <f4 (float32), <f2 (float16), <i4,
// <u4, <i2, <u2, little-endian. Files in C or Fortran order are read; in memory an NpyArray is
// always in C (row-major) order. Anything else (another dtype, big-endian, structured or object
// arrays, a malformed header, a truncated or over-long file) is an NpyError whose message names
// the file and says what is wrong and, where there is one, how to fix it. Nothing here crashes
// or reads out of bounds on hostile input; sizes are checked before they are allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <xtensor/xarray.hpp>

namespace wsemu::runtime::npy {

enum class DType : uint8_t { F32, F16, I32, U32, I16, U16 };

std::string_view dtype_descr(DType t);  // "<f4"
std::string_view dtype_name(DType t);   // "float32", as numpy prints it
int dtype_size(DType t);                // bytes per element
// The dtype of a descr string such as "<f4", or nullopt when unsupported.
std::optional<DType> dtype_from_descr(std::string_view descr);

// The dtype holding C++ type T: float, int32_t, uint32_t, int16_t, uint16_t. (float16 data has
// no C++ type; it is read and written as uint16_t bit patterns with f16_bits / from_f16_bits.)
template <class T>
constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::F32; }
template <> constexpr DType dtype_of<int32_t>() { return DType::I32; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::U32; }
template <> constexpr DType dtype_of<int16_t>() { return DType::I16; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::U16; }

class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Order { C, FORTRAN };

struct NpyArray {
  DType dtype = DType::F32;
  std::vector<size_t> shape;  // empty: a scalar (one element)
  std::vector<uint8_t> data;  // size() elements, C order, little-endian

  size_t size() const;  // number of elements: the product of shape
  std::string shape_string() const;  // "(3, 4)", "(3,)", "()" as numpy prints shapes
  friend bool operator==(const NpyArray&, const NpyArray&) = default;

  // The elements as an xtensor array of the matching type; NpyError if dtype is not T's.
  template <class T>
  xt::xarray<T> to_xarray() const;
  // float16 elements as their bit patterns; NpyError unless dtype is F16.
  xt::xarray<uint16_t> f16_bits() const;
  // Any dtype, converted exactly to double (float16 and every 32-bit integer fit).
  xt::xarray<double> to_double() const;

  template <class T>
  static NpyArray from_xarray(const xt::xarray<T>& values);
  static NpyArray from_f16_bits(const xt::xarray<uint16_t>& bits);
  // Rounds each value to float16 (nearest, ties to even).
  static NpyArray from_float_as_f16(const xt::xarray<float>& values);
};

// Parses the bytes of a .npy file; `name` is used in error messages.
NpyArray parse_npy(std::span<const uint8_t> bytes, std::string_view name = "<memory>");
NpyArray read_npy(const std::string& path);

std::vector<uint8_t> serialize_npy(const NpyArray& array, Order order = Order::C);
// Writes atomically enough for CI use: to `path` directly, NpyError on any I/O failure.
void write_npy(const std::string& path, const NpyArray& array, Order order = Order::C);

}  // namespace wsemu::runtime::npy
