#include "isa/descriptor.hpp"

namespace wsemu::isa {

std::string_view dsd_kind_name(DsdKind kind) {
  switch (kind) {
    case DsdKind::NONE: return "none";
    case DsdKind::MEM1D: return "mem1d";
    case DsdKind::MEM4D: return "mem4d";
    case DsdKind::CIRCBUF: return "circbuf";
    case DsdKind::FABIN: return "fabin";
    case DsdKind::FABOUT: return "fabout";
    case DsdKind::FIFO: return "fifo";
  }
  return "?";
}

namespace {
// Word offsets in a descriptor image.
enum ImageWord : int {
  KIND = 0, ELEM_BITS = 1, BASE = 2, LENGTH_LO = 3, LENGTH_HI = 4, STRIDE = 5, EXTENTS = 6, STRIDES = 10,
  COLOR = 14, QUEUE = 15, FLAGS = 16, INDEX_LO = 17, INDEX_HI = 18, ON_CONTROL = 19,
};
constexpr uint16_t kFlagControl = 1, kFlagAdvanceSwitch = 2, kFlagSaveAddress = 4;
}  // namespace

DescriptorImage descriptor_image(const Descriptor& d) {
  DescriptorImage w{};
  w[KIND] = uint16_t(d.kind);
  w[ELEM_BITS] = d.elem_bits;
  w[BASE] = d.base;
  w[LENGTH_LO] = uint16_t(d.length & 0xFFFF);
  w[LENGTH_HI] = uint16_t(d.length >> 16);
  w[STRIDE] = uint16_t(d.stride);
  for (int i = 0; i < 4; ++i) {
    w[EXTENTS + i] = d.extents[size_t(i)];
    w[STRIDES + i] = uint16_t(d.strides[size_t(i)]);
  }
  w[COLOR] = d.color;
  w[QUEUE] = d.queue;
  w[FLAGS] = uint16_t((d.control ? kFlagControl : 0) | (d.advance_switch ? kFlagAdvanceSwitch : 0) |
                      (d.save_address ? kFlagSaveAddress : 0));
  w[INDEX_LO] = uint16_t(uint32_t(d.index) & 0xFFFF);
  w[INDEX_HI] = uint16_t(uint32_t(d.index) >> 16);
  w[ON_CONTROL] = uint16_t(uint16_t(d.on_control) | d.on_control_task << 8);
  return w;
}

bool descriptor_from_image(const DescriptorImage& w, Descriptor& out, std::string& why) {
  const uint16_t kind = w[KIND];
  if (kind == uint16_t(DsdKind::CIRCBUF) || kind == uint16_t(DsdKind::FIFO)) {
    why = "a " + std::string(dsd_kind_name(DsdKind(kind))) + " has no image (its ring state lives in its register)";
    return false;
  }
  if (kind > uint16_t(DsdKind::FIFO)) {
    why = "kind " + std::to_string(kind) + " is not a descriptor kind";
    return false;
  }
  if (w[ELEM_BITS] != 16 && w[ELEM_BITS] != 32) {
    why = "element width " + std::to_string(w[ELEM_BITS]) + " (16 or 32)";
    return false;
  }
  const int32_t index = int32_t(uint32_t(w[INDEX_LO]) | uint32_t(w[INDEX_HI]) << 16);
  const uint16_t on_control = w[ON_CONTROL] & 0xFF;
  if (w[COLOR] > 31 || w[QUEUE] > 7 || (w[FLAGS] & ~(kFlagControl | kFlagAdvanceSwitch | kFlagSaveAddress)) || index < -1 ||
      index > 0xFFFF || on_control > uint16_t(OnControl::UNBLOCK) || (w[ON_CONTROL] >> 8) > 63) {
    why = "a color, queue, flag, wavelet index or on-control field is out of range";
    return false;
  }
  Descriptor d;
  d.kind = DsdKind(kind);
  d.elem_bits = uint8_t(w[ELEM_BITS]);
  d.base = w[BASE];
  d.length = uint32_t(w[LENGTH_LO]) | uint32_t(w[LENGTH_HI]) << 16;
  d.stride = int16_t(w[STRIDE]);
  for (int i = 0; i < 4; ++i) {
    d.extents[size_t(i)] = w[EXTENTS + i];
    d.strides[size_t(i)] = int16_t(w[STRIDES + i]);
  }
  d.color = uint8_t(w[COLOR]);
  d.queue = uint8_t(w[QUEUE]);
  d.control = (w[FLAGS] & kFlagControl) != 0;
  d.advance_switch = (w[FLAGS] & kFlagAdvanceSwitch) != 0;
  d.save_address = (w[FLAGS] & kFlagSaveAddress) != 0;
  d.index = index;
  d.on_control = OnControl(on_control);
  d.on_control_task = uint8_t(w[ON_CONTROL] >> 8);
  out = d;
  return true;
}

}  // namespace wsemu::isa
