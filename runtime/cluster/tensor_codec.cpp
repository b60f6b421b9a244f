#include "runtime/cluster/tensor_codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>

namespace wsemu::cluster {

static_assert(std::endian::native == std::endian::little,
              "the wire format is little-endian and the codec copies memory directly");

uint16_t float_to_fp16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t exponent = (bits >> 23) & 0xFFu;
  uint32_t mantissa = bits & 0x7FFFFFu;
  if (exponent == 0xFF) {  // infinity or NaN (NaN keeps a quiet bit)
    return static_cast<uint16_t>(sign | 0x7C00u | (mantissa ? 0x200u | (mantissa >> 13) : 0u));
  }
  const int32_t half_exponent = static_cast<int32_t>(exponent) - 127 + 15;
  if (half_exponent >= 0x1F) return static_cast<uint16_t>(sign | 0x7C00u);  // overflow -> inf
  if (half_exponent <= 0) {
    if (half_exponent < -10) return static_cast<uint16_t>(sign);  // underflows to zero
    mantissa |= 0x800000u;                                        // implicit leading one
    const uint32_t shift = static_cast<uint32_t>(14 - half_exponent);
    uint32_t half_mantissa = mantissa >> shift;
    const uint32_t remainder = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (half_mantissa & 1u))) ++half_mantissa;
    return static_cast<uint16_t>(sign | half_mantissa);
  }
  uint32_t half = sign | (static_cast<uint32_t>(half_exponent) << 10) | (mantissa >> 13);
  const uint32_t remainder = mantissa & 0x1FFFu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u))) ++half;  // may carry to inf
  return static_cast<uint16_t>(half);
}

float fp16_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1Fu;
  uint32_t mantissa = bits & 0x3FFu;
  uint32_t out;
  if (exponent == 0) {
    if (mantissa == 0) {
      out = sign;
    } else {  // subnormal: normalise
      int32_t e = -1;
      do {
        ++e;
        mantissa <<= 1;
      } while ((mantissa & 0x400u) == 0);
      out = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mantissa & 0x3FFu) << 13);
    }
  } else if (exponent == 0x1F) {
    out = sign | 0x7F800000u | (mantissa << 13);
  } else {
    out = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(out);
}

uint16_t float_to_bf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x7FFFFFu)) {
    return static_cast<uint16_t>((bits >> 16) | 0x40u);  // quiet NaN stays NaN
  }
  const uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float bf16_to_float(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

size_t dtype_bytes(pb::DType dtype) {
  switch (dtype) {
    case pb::FP16:
    case pb::BF16:
      return 2;
    default:
      return 4;
  }
}

static bool valid_dtype(int dtype) {
  return dtype == pb::DTYPE_UNSPECIFIED || dtype == pb::FP32 || dtype == pb::FP16 ||
         dtype == pb::BF16;
}

std::vector<uint8_t> sparsity_keep_mask(std::span<const float> tensor,
                                        const pb::Sparsity& sparsity) {
  std::vector<uint8_t> keep;
  switch (sparsity.mode()) {
    case pb::Sparsity::THRESHOLD: {
      keep.resize(tensor.size());
      const float threshold = sparsity.threshold();
      for (size_t i = 0; i < tensor.size(); ++i) keep[i] = !(std::fabs(tensor[i]) <= threshold);
      break;
    }
    case pb::Sparsity::TOP_K: {
      const double fraction = std::clamp(static_cast<double>(sparsity.keep_fraction()), 0.0, 1.0);
      const size_t k =
          static_cast<size_t>(std::ceil(fraction * static_cast<double>(tensor.size())));
      keep.assign(tensor.size(), 0);
      std::vector<uint32_t> order(tensor.size());
      std::iota(order.begin(), order.end(), 0u);
      auto larger = [&](uint32_t a, uint32_t b) {
        const float ma = std::fabs(tensor[a]);
        const float mb = std::fabs(tensor[b]);
        if (ma != mb) return ma > mb;
        return a < b;
      };
      if (k < order.size()) {
        std::nth_element(order.begin(), order.begin() + static_cast<ptrdiff_t>(k), order.end(),
                         larger);
      }
      for (size_t i = 0; i < std::min(k, order.size()); ++i) keep[order[i]] = 1;
      break;
    }
    default:
      break;
  }
  return keep;
}

static void append_value(std::string& out, float value, pb::DType dtype) {
  if (dtype == pb::FP16 || dtype == pb::BF16) {
    const uint16_t bits = dtype == pb::FP16 ? float_to_fp16(value) : float_to_bf16(value);
    out.push_back(static_cast<char>(bits & 0xFF));
    out.push_back(static_cast<char>(bits >> 8));
  } else {
    char raw[4];
    std::memcpy(raw, &value, 4);
    out.append(raw, 4);
  }
}

static float read_value(const std::string& in, size_t index, pb::DType dtype) {
  if (dtype == pb::FP16 || dtype == pb::BF16) {
    const auto lo = static_cast<uint8_t>(in[2 * index]);
    const auto hi = static_cast<uint8_t>(in[2 * index + 1]);
    const uint16_t bits = static_cast<uint16_t>(lo | (hi << 8));
    return dtype == pb::FP16 ? fp16_to_float(bits) : bf16_to_float(bits);
  }
  float value;
  std::memcpy(&value, in.data() + 4 * index, 4);
  return value;
}

void encode_chunk_values(std::span<const float> values, std::span<const uint8_t> keep,
                         pb::DType dtype, pb::Chunk& chunk) {
  if (dtype == pb::DTYPE_UNSPECIFIED) dtype = pb::FP32;
  chunk.set_dtype(dtype);
  chunk.set_count(static_cast<uint32_t>(values.size()));
  chunk.clear_index_u32();
  chunk.clear_bitmap();
  std::string* out = chunk.mutable_values();
  out->clear();
  const size_t element_bytes = dtype_bytes(dtype);
  size_t kept = values.size();
  if (!keep.empty()) kept = static_cast<size_t>(std::count(keep.begin(), keep.end(), uint8_t{1}));
  const size_t dense_cost = values.size() * element_bytes;
  const size_t index_cost = kept * (element_bytes + 4);
  const size_t bitmap_cost = kept * element_bytes + (values.size() + 7) / 8;
  if (keep.empty() || kept == values.size() || std::min(index_cost, bitmap_cost) >= dense_cost) {
    chunk.set_layout(pb::DENSE);
    if (dtype == pb::FP32 && keep.empty()) {  // the common case: one copy
      out->assign(reinterpret_cast<const char*>(values.data()), dense_cost);
      return;
    }
    out->reserve(dense_cost);
    for (size_t i = 0; i < values.size(); ++i) {
      append_value(*out, keep.empty() || keep[i] ? values[i] : 0.0f, dtype);
    }
    return;
  }
  out->reserve(kept * element_bytes);
  if (index_cost <= bitmap_cost) {
    chunk.set_layout(pb::SPARSE_INDICES);
    std::string* indices = chunk.mutable_index_u32();
    indices->reserve(kept * 4);
    for (size_t i = 0; i < values.size(); ++i) {
      if (!keep[i]) continue;
      const auto index = static_cast<uint32_t>(i);
      char raw[4];
      std::memcpy(raw, &index, 4);
      indices->append(raw, 4);
      append_value(*out, values[i], dtype);
    }
  } else {
    chunk.set_layout(pb::SPARSE_BITMAP);
    std::string* bitmap = chunk.mutable_bitmap();
    bitmap->assign((values.size() + 7) / 8, '\0');
    for (size_t i = 0; i < values.size(); ++i) {
      if (!keep[i]) continue;
      (*bitmap)[i / 8] = static_cast<char>((*bitmap)[i / 8] | (1 << (i % 8)));
      append_value(*out, values[i], dtype);
    }
  }
}

std::vector<float> decode_chunk(const pb::Chunk& chunk, uint64_t max_elements) {
  if (!valid_dtype(chunk.dtype()))
    throw ProtocolError(fmt::format("unknown dtype {}", static_cast<int>(chunk.dtype())));
  const pb::DType dtype = chunk.dtype() == pb::DTYPE_UNSPECIFIED ? pb::FP32 : chunk.dtype();
  const size_t element_bytes = dtype_bytes(dtype);
  const size_t count = chunk.count();
  if (chunk.offset() > chunk.tensor_elements() ||
      count > chunk.tensor_elements() - chunk.offset()) {
    throw ProtocolError(fmt::format("chunk [{}, +{}) lies outside its tensor of {} elements",
                                    chunk.offset(), count, chunk.tensor_elements()));
  }
  if (count > max_elements) {
    throw ProtocolError(fmt::format("chunk of {} elements is larger than a frame carries ({})",
                                    count, max_elements));
  }
  const std::string& values = chunk.values();
  if (values.size() % element_bytes != 0)
    throw ProtocolError("chunk values are not whole elements");
  const size_t present = values.size() / element_bytes;
  if (present > count) throw ProtocolError("chunk carries more values than elements");
  if (chunk.layout() == pb::SPARSE_BITMAP && chunk.bitmap().size() != (count + 7) / 8)
    throw ProtocolError("sparse chunk: bitmap size does not match count");
  std::vector<float> out(count, 0.0f);
  switch (chunk.layout()) {
    case pb::DENSE:
      if (present != count) {
        throw ProtocolError(
            fmt::format("dense chunk carries {} values for {} elements", present, count));
      }
      if (dtype == pb::FP32) {
        if (count) std::memcpy(out.data(), values.data(), count * 4);
      } else {
        for (size_t i = 0; i < count; ++i) out[i] = read_value(values, i, dtype);
      }
      break;
    case pb::SPARSE_INDICES: {
      const std::string& indices = chunk.index_u32();
      if (indices.size() != present * 4)
        throw ProtocolError("sparse chunk: index and value counts differ");
      int64_t previous = -1;
      for (size_t i = 0; i < present; ++i) {
        uint32_t index;
        std::memcpy(&index, indices.data() + 4 * i, 4);
        if (index >= count || static_cast<int64_t>(index) <= previous) {
          throw ProtocolError("sparse chunk: indices out of range or not strictly increasing");
        }
        previous = index;
        out[index] = read_value(values, i, dtype);
      }
      break;
    }
    case pb::SPARSE_BITMAP: {
      const std::string& bitmap = chunk.bitmap();
      if (bitmap.size() != (count + 7) / 8)
        throw ProtocolError("sparse chunk: bitmap size does not match count");
      size_t next = 0;
      for (size_t i = 0; i < count; ++i) {
        if (!((static_cast<uint8_t>(bitmap[i / 8]) >> (i % 8)) & 1u)) continue;
        if (next >= present)
          throw ProtocolError("sparse chunk: bitmap marks more elements than it carries");
        out[i] = read_value(values, next++, dtype);
      }
      if (next != present)
        throw ProtocolError("sparse chunk: bitmap marks fewer elements than it carries");
      break;
    }
    default:
      throw ProtocolError(fmt::format("unknown chunk layout {}", static_cast<int>(chunk.layout())));
  }
  return out;
}

uint64_t chunk_payload_bytes(const pb::Chunk& chunk) {
  return chunk.values().size() + chunk.index_u32().size() + chunk.bitmap().size();
}

uint64_t chunk_dense_bytes(const pb::Chunk& chunk) {
  return static_cast<uint64_t>(chunk.count()) * dtype_bytes(chunk.dtype());
}

std::string floats_to_bytes(std::span<const float> values) {
  std::string out(values.size() * 4, '\0');
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::vector<float> bytes_to_floats(const std::string& bytes) {
  if (bytes.size() % 4 != 0)
    throw ProtocolError("fp32 byte string is not a whole number of values");
  std::vector<float> out(bytes.size() / 4);
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

}  // namespace wsemu::cluster
