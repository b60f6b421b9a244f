// Phases 2 and 4b: data layout (offsets in source order, after the code) and the bytes of the
// initialised data.
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <limits>

#include "isa/asm/assembler_impl.hpp"
#include "isa/fp16.hpp"

namespace wsemu::isa::assembler {
namespace {

uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

// Nearest-even rounding of a double to fp16 without double rounding through fp32: round to
// fp32 "to odd" first (keeps enough information for the second rounding to be exact).
uint16_t double_to_fp16(double d) {
  float f = static_cast<float>(d);
  if (std::isfinite(f) && static_cast<double>(f) != d) {
    uint32_t b = std::bit_cast<uint32_t>(f);
    if ((b & 1) == 0) b += std::fabs(static_cast<double>(f)) < std::fabs(d) ? 1 : -1;
    f = std::bit_cast<float>(b);
  }
  return fp32_to_fp16(f);
}

void put_le(std::vector<uint8_t>& out, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out[at + static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

void Assembler::layout_data() {
  data_base_ = static_cast<uint32_t>(std::min<size_t>(instructions_.size(), kMaxInstructions)) * 8;
  uint32_t offset = 0;
  bool full = false;
  for (DataItem& item : data_items_) {
    if (full) break;
    set_stmt(item.stmt);
    TokenCursor cur = cursor(item.stmt, item.count_pos);
    const int col = cur.col();
    int64_t n = 0;
    if (item.kind == DataItem::Kind::ALIGN) {
      Status s = parse_integer(cur, *this, n);
      if (s == Status::NOT_YET) {
        error(col, "the alignment must be a constant (it uses an address not known yet)");
      } else if (s == Status::OK && (n < 1 || n > 4096 || (n & (n - 1)) != 0)) {
        error(col, fmt::format("alignment {} is not a power of two in 1..4096", n));
      } else if (s == Status::OK && expect_end(cur, "the alignment")) {
        offset = align_up(offset, static_cast<uint32_t>(n));
      }
      continue;
    }
    const uint32_t bytes = static_cast<uint32_t>(elem_bytes(item.type));
    if (item.kind == DataItem::Kind::ZERO) {
      Status s = parse_integer(cur, *this, n);
      if (s == Status::NOT_YET) {
        error(col, "the element count must be known before the data is laid out: it may use "
                   "constants, parameters and sizeof() of data declared earlier, not addresses");
        n = 0;
      } else if (s == Status::OK && (n < 0 || n > kAddressSpace / bytes)) {
        error(col, fmt::format("element count {} is outside 0..{}", n, kAddressSpace / bytes));
        n = 0;
      } else if (s == Status::OK) {
        if (!expect_punct(cur, "]", "after the element count") || !expect_end(cur, "the element count")) n = 0;
      } else {
        n = 0;
      }
    } else {
      n = static_cast<int64_t>(item.value_pos.size());
    }
    offset = align_up(offset, bytes);
    item.offset = offset;
    item.count = static_cast<uint32_t>(std::min<int64_t>(n, kAddressSpace));
    if (static_cast<uint64_t>(data_base_) + offset + uint64_t{item.count} * bytes > kAddressSpace) {
      error(statements_[item.stmt].tokens.front().col,
            fmt::format("the program does not fit in the 64 KiB address space: code {} bytes, data "
                        "reaches {} bytes here",
                        data_base_, uint64_t{offset} + uint64_t{item.count} * bytes));
      full = true;
      break;
    }
    offset += item.count * bytes;
    for (size_t si : item.symbols) {
      DataSymbol& sym = data_symbols_[si];
      sym.symbol.address = data_base_ + item.offset;
      sym.symbol.count = item.count;
      sym.laid_out = true;
    }
  }
  data_size_ = offset;
  layout_done_ = true;
}

void Assembler::fill_data() {
  data_.assign(data_size_, 0);
  for (const DataItem& item : data_items_) {
    if (item.kind != DataItem::Kind::VALUES) continue;
    if (item.value_pos.size() != item.count) continue;  // not laid out (an error was reported)
    const int bytes = elem_bytes(item.type);
    const std::string_view tname = elem_type_name(item.type);
    for (size_t k = 0; k < item.value_pos.size() && !too_many_errors(); ++k) {
      const auto [s, pos] = item.value_pos[k];
      set_stmt(s);
      TokenCursor cur = cursor(s, pos);
      const int col = cur.col();
      Value v;
      if (parse_expression(cur, *this, v) != Status::OK) continue;
      if (!cur.at_end() && !cur.peek_is(",")) {
        error(cur.col(), fmt::format("expected ',' between data values, found {}", cur.describe_next()));
        continue;
      }
      uint64_t raw = 0;
      switch (item.type) {
        case ElemType::I16:
        case ElemType::U16:
        case ElemType::I32:
        case ElemType::U32: {
          if (v.kind == Value::Kind::FLOAT) {
            error(col, fmt::format(".{} needs integers, not the floating-point value {}", tname, v.f));
            continue;
          }
          const int64_t lo = item.type == ElemType::I16 ? -32768
                             : item.type == ElemType::I32 ? std::numeric_limits<int32_t>::min() : 0;
          const int64_t hi = item.type == ElemType::I16   ? 32767
                             : item.type == ElemType::U16 ? 65535
                             : item.type == ElemType::I32 ? std::numeric_limits<int32_t>::max()
                                                          : std::numeric_limits<uint32_t>::max();
          if (v.i < lo || v.i > hi) {
            error(col, fmt::format("value {} does not fit in .{} ({}..{})", v.i, tname, lo, hi));
            continue;
          }
          raw = static_cast<uint64_t>(v.i);
          break;
        }
        case ElemType::F32:
        case ElemType::F16: {
          const bool half = item.type == ElemType::F16;
          if (v.kind == Value::Kind::BITS) {
            const int64_t hi = half ? 0xFFFF : 0xFFFFFFFF;
            if (v.i < 0 || v.i > hi) {
              error(col, fmt::format("bits({}) does not fit in .{}", v.i, tname));
              continue;
            }
            raw = static_cast<uint64_t>(v.i);
            break;
          }
          const double d = v.kind == Value::Kind::FLOAT ? v.f : static_cast<double>(v.i);
          if (half) {
            const uint16_t h = double_to_fp16(d);
            if ((h & 0x7C00) == 0x7C00) {
              error(col, fmt::format("value {} is out of range for .f16 (largest 65504)", d));
              continue;
            }
            raw = h;
          } else {
            const float f = static_cast<float>(d);
            if (!std::isfinite(f)) {
              error(col, fmt::format("value {} is out of range for .f32", d));
              continue;
            }
            raw = std::bit_cast<uint32_t>(f);
          }
          break;
        }
      }
      put_le(data_, item.offset + k * static_cast<size_t>(bytes), raw, bytes);
    }
  }
}

}  // namespace wsemu::isa::assembler
