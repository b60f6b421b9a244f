// The SRAM of one PE: byte-addressed, little-endian, lazily allocated.
//
// Contract: the full size (the profile's sram_bytes) is addressable; storage grows in 1 KiB
// steps only as far as the highest byte ever written, reads above it return zero. Accesses
// are bounds- and alignment-checked and throw FaultError(KERNEL_ERROR); a kernel store into
// the code region [0, code_bytes) is a kernel error too (the back door may write anywhere
// above the code). Plain data: copyable as a snapshot.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace wsemu::emu {

class Sram {
 public:
  Sram() = default;
  Sram(uint32_t size_bytes, uint32_t code_bytes) : size_(size_bytes), code_bytes_(code_bytes) {}

  uint32_t size() const { return size_; }
  uint32_t code_bytes() const { return code_bytes_; }
  size_t allocated_bytes() const { return bytes_.capacity(); }
  // Where byte `addr` is stored (the start of the storage when it lies past the allocation):
  // for prefetching, not for access.
  const uint8_t* storage_at(uint32_t addr) const { return bytes_.data() + (addr < bytes_.size() ? addr : 0); }

  // Fast paths inline; anything unusual (bounds, alignment, code, growth) goes the slow way.
  uint32_t load32(uint32_t addr) const { return fast<uint32_t>(addr, false) ? load<uint32_t>(addr) : load32_slow(addr); }
  uint16_t load16(uint32_t addr) const { return fast<uint16_t>(addr, false) ? load<uint16_t>(addr) : load16_slow(addr); }
  void store32(uint32_t addr, uint32_t v) { fast<uint32_t>(addr, true) ? store(addr, v) : store32_slow(addr, v); }
  void store16(uint32_t addr, uint16_t v) { fast<uint16_t>(addr, true) ? store(addr, v) : store16_slow(addr, v); }

  // The bytes stored so far (the allocation), for a bulk operation that has checked every
  // address it will touch against bounds, alignment and the code region itself.
  uint8_t* stored() { return bytes_.data(); }
  uint32_t stored_bytes() const { return uint32_t(bytes_.size()); }
  // What a store ending at byte `end` (checked) grows the storage to, as store32 would.
  void grow_for_store(uint32_t end) { grow_to(end); }
  uint32_t stored_bytes_after_store(uint32_t end) const {
    return end <= bytes_.size() ? uint32_t(bytes_.size()) : std::min<uint32_t>(size_, (end + 1023) / 1024 * 1024);
  }

  // Checks that [addr, addr + count * elem_bytes) is inside SRAM and aligned (and, for a
  // write, above the code); throws a kernel error naming `what` otherwise.
  void check_range(uint64_t addr, uint64_t bytes, int align, bool write, const char* what) const;

  // Host back door and program loading: no code-region check, bounds still checked.
  void read(uint32_t addr, std::span<uint8_t> out) const;
  void write(uint32_t addr, std::span<const uint8_t> in);

 private:
  // A T-sized access at `addr` inside the allocation, aligned (and, for a store, above the code).
  template <class T>
  bool fast(uint32_t addr, bool writing) const {
    return __builtin_expect(uint64_t(addr) + sizeof(T) <= bytes_.size() && !(addr & (sizeof(T) - 1)) &&
                                !(writing && addr < code_bytes_),
                            1);
  }
  template <class T>
  T load(uint32_t addr) const {
    T v;
    std::memcpy(&v, bytes_.data() + addr, sizeof(T));
    return v;
  }
  template <class T>
  void store(uint32_t addr, T v) {
    std::memcpy(bytes_.data() + addr, &v, sizeof(T));
  }
  void grow_to(uint32_t end);
  uint32_t load32_slow(uint32_t addr) const;
  uint16_t load16_slow(uint32_t addr) const;
  void store32_slow(uint32_t addr, uint32_t v);
  void store16_slow(uint32_t addr, uint16_t v);
  uint32_t size_ = 0;
  uint32_t code_bytes_ = 0;
  std::vector<uint8_t> bytes_;
};

}  // namespace wsemu::emu
