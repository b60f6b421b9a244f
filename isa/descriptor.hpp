// Data-structure descriptors (DSDs): what a descriptor register d0..d47 holds.
//
// Contract: a Descriptor is plain data (no pointers), the same in an object file's initial
// register image and in a running PE core. The fields a kind does not use are zero. Element
// width is part of the descriptor: a vector operation whose width (16 or 32 bits) does not
// match its descriptor's is a kernel error, except for the conversions fh2s / fs2h and the
// mixed fmachs, which read each operand at its own width, and a 32-bit operation over a 16-bit
// MEM1D / MEM4D descriptor, which moves 32-bit elements from its (4-byte aligned) base, as the
// SDK's DSDs take their width from the operation. Addresses are byte addresses in the PE's
// SRAM; strides and lengths count elements.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace wsemu::isa {

enum class DsdKind : uint8_t {
  NONE = 0,  // an unset register; using it is a kernel error
  MEM1D,     // base, length, stride
  MEM4D,     // base, extents[4], strides[4]; dimension 0 is innermost
  CIRCBUF,   // a ring over [base, base + buffer_len): length elements starting at `head`
  FABIN,     // length wavelets popped from input queue `queue` (bound to `color`)
  FABOUT,    // length wavelets pushed to output queue `queue` (bound to `color`)
  FIFO,      // a FIFO in SRAM [base, base + capacity elements); push as dst, pop as src
};

std::string_view dsd_kind_name(DsdKind kind);

// What an arriving control wavelet does to a streaming fabin operation.
enum class OnControl : uint8_t { NONE = 0, TERMINATE = 1, ACTIVATE = 2, UNBLOCK = 3 };

struct Descriptor {
  DsdKind kind = DsdKind::NONE;
  uint8_t elem_bits = 32;  // 16 or 32
  uint16_t base = 0;       // byte address (MEM1D, MEM4D, CIRCBUF, FIFO)
  uint32_t length = 0;     // elements (MEM1D, CIRCBUF, FABIN, FABOUT); FIFO: capacity
  int16_t stride = 1;      // elements (MEM1D, CIRCBUF)
  std::array<uint16_t, 4> extents{};  // MEM4D
  std::array<int16_t, 4> strides{};   // MEM4D
  // Fabric descriptors.
  uint8_t color = 0;
  uint8_t queue = 0;
  bool control = false;        // FABOUT: send control wavelets
  int32_t index = -1;          // FABOUT: upper-16-bit wavelet index, -1 for none
  bool advance_switch = false; // FABOUT: advance the router switch after the last wavelet
  bool save_address = false;   // MEM1D: an operation leaves the base where it ended (the SDK's .save_address)
  OnControl on_control = OnControl::NONE;  // FABIN
  uint8_t on_control_task = 0;
  // Ring state (CIRCBUF: head; FIFO: head, count, and the tasks activated on push / pop).
  uint32_t head = 0;
  uint32_t count = 0;
  int8_t activate_on_push = -1;
  int8_t activate_on_pop = -1;
  friend bool operator==(const Descriptor&, const Descriptor&) = default;
};

// A descriptor image: a descriptor as 20 little-endian 16-bit words in SRAM, what `dsdld`
// loads into a register and `dsdst` stores (isa/README.md "Descriptor images" gives the
// layout). Circular buffers and FIFOs have none: their ring state lives in their register.
constexpr int kDescriptorImageWords = 20;
using DescriptorImage = std::array<uint16_t, kDescriptorImageWords>;

// The image of `d`; `d` must not be a CIRCBUF or FIFO.
DescriptorImage descriptor_image(const Descriptor& d);
// The descriptor an image holds (true), or false with what is wrong with it in `why`.
bool descriptor_from_image(const DescriptorImage& image, Descriptor& out, std::string& why);

}  // namespace wsemu::isa
