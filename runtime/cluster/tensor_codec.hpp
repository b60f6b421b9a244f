// How tensor values travel in a pb::Chunk: fp32/fp16/bf16 element encodings and the dense,
// index-list and bitmap layouts, plus the sparsity rules that decide which weights are dropped.
//
// Contract: decode_chunk(encode_chunk(v, ...)) gives back v converted to the dtype and back,
// with dropped elements as +0.0. decode_chunk validates everything it reads (sizes, index order
// and range) and throws ProtocolError on inconsistent input; it never reads out of bounds.
// fp16/bf16 conversions round to nearest even and keep infinities and NaNs. Pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/cluster/protocol.hpp"

namespace wsemu::cluster {

uint16_t float_to_fp16(float value);
float fp16_to_float(uint16_t bits);
uint16_t float_to_bf16(float value);
float bf16_to_float(uint16_t bits);

size_t dtype_bytes(pb::DType dtype);

// A mask over a whole tensor: 1 keeps the element in the stream, 0 drops it. Empty when the
// sparsity mode is NONE (keep everything).
std::vector<uint8_t> sparsity_keep_mask(std::span<const float> tensor,
                                        const pb::Sparsity& sparsity);

// Fills chunk.{dtype, layout, values, index_u32, bitmap} for `values` (the elements
// [chunk.offset, chunk.offset + values.size())). `keep` is empty (dense) or has values.size()
// entries. The cheaper of the index and bitmap layouts is chosen; when every element is kept the
// chunk is dense. Dropped elements never travel; a dense chunk carries them as +0.0 only when
// some are kept but a sparse layout would cost more.
void encode_chunk_values(std::span<const float> values, std::span<const uint8_t> keep,
                         pb::DType dtype, pb::Chunk& chunk);

// The chunk's `count` elements as fp32 (dropped ones +0.0). Throws ProtocolError. Everything
// that bounds the allocation is checked before it: count at most max_elements (a node passes
// its frame limit / 4: no legitimate chunk decodes to more than a dense fp32 frame carries),
// and the payload sizes the layout implies.
std::vector<float> decode_chunk(const pb::Chunk& chunk,
                                uint64_t max_elements = kDefaultMaxFrameBytes / 4);

// Bytes of values, indices and bitmap the chunk carries.
uint64_t chunk_payload_bytes(const pb::Chunk& chunk);
// What the same elements would cost dense in the chunk's dtype.
uint64_t chunk_dense_bytes(const pb::Chunk& chunk);

// Little-endian fp32 byte strings, as used by InitTensor and the MemoryX store.
std::string floats_to_bytes(std::span<const float> values);
std::vector<float> bytes_to_floats(const std::string& bytes);

}  // namespace wsemu::cluster
