#include "emulator/sram.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "emulator/fault.hpp"

namespace wsemu::emu {

void Sram::check_range(uint64_t addr, uint64_t bytes, int align, bool write, const char* what) const {
  if (addr + bytes > size_)
    kernel_error(fmt::format("{} at SRAM address {:#x} (+{} bytes) is outside the {} bytes of SRAM",
                             what, addr, bytes, size_));
  if (align > 1 && addr % align != 0)
    kernel_error(fmt::format("{} at SRAM address {:#x} is not {}-byte aligned", what, addr, align));
  if (write && addr < code_bytes_)
    kernel_error(fmt::format("{} writes SRAM address {:#x}, inside the code [0, {:#x})", what, addr,
                             code_bytes_));
}

void Sram::grow_to(uint32_t end) {
  if (end <= bytes_.size()) return;
  const uint32_t rounded = std::min<uint32_t>(size_, (end + 1023) / 1024 * 1024);
  bytes_.resize(rounded, 0);
}

uint32_t Sram::load32_slow(uint32_t addr) const {
  check_range(addr, 4, 4, false, "32-bit load");
  uint32_t v = 0;
  if (addr + 4 <= bytes_.size()) std::memcpy(&v, bytes_.data() + addr, 4);
  return v;
}

uint16_t Sram::load16_slow(uint32_t addr) const {
  check_range(addr, 2, 2, false, "16-bit load");
  uint16_t v = 0;
  if (addr + 2 <= bytes_.size()) std::memcpy(&v, bytes_.data() + addr, 2);
  return v;
}

void Sram::store32_slow(uint32_t addr, uint32_t v) {
  check_range(addr, 4, 4, true, "32-bit store");
  grow_to(addr + 4);
  std::memcpy(bytes_.data() + addr, &v, 4);
}

void Sram::store16_slow(uint32_t addr, uint16_t v) {
  check_range(addr, 2, 2, true, "16-bit store");
  grow_to(addr + 2);
  std::memcpy(bytes_.data() + addr, &v, 2);
}

void Sram::read(uint32_t addr, std::span<uint8_t> out) const {
  if (uint64_t(addr) + out.size() > size_)
    config_error(fmt::format("SRAM read [{:#x}, +{}) is outside the {} bytes of SRAM", addr, out.size(), size_));
  if (addr + out.size() <= bytes_.size()) {
    if (!out.empty()) std::memcpy(out.data(), bytes_.data() + addr, out.size());
    return;
  }
  for (size_t i = 0; i < out.size(); ++i) out[i] = addr + i < bytes_.size() ? bytes_[addr + i] : 0;
}

void Sram::write(uint32_t addr, std::span<const uint8_t> in) {
  if (uint64_t(addr) + in.size() > size_)
    config_error(fmt::format("SRAM write [{:#x}, +{}) is outside the {} bytes of SRAM", addr, in.size(), size_));
  if (in.empty()) return;
  grow_to(addr + uint32_t(in.size()));
  std::memcpy(bytes_.data() + addr, in.data(), in.size());
}

}  // namespace wsemu::emu
