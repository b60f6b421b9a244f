// The .wstrace file format, version 1.2: constants, chunk types and the event record codec
// shared by the recorder (trace_writer) and the reader. inspect/trace/README.md documents
// every field; this header is its executable form and must stay in step with it.
//
// Contract: little-endian throughout. A file is a 64-byte FileHeader followed by chunks
// (u32 type, u32 payload length, payload); readers skip chunk types they do not know, so new
// chunk types never break old readers. Event records carry their own length, so a reader skips
// event kinds it does not know. encode_event() appends to a byte vector and never fails;
// decode_event() never reads past the end it is given and reports malformed input by
// returning false, never by crashing.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <utility>
#include <vector>

#include <zlib.h>

#include "emulator/trace.hpp"

namespace wsemu::trace {

constexpr std::array<uint8_t, 8> kMagic = {0x89, 'W', 'S', 'T', 'R', '\r', '\n', 0x1A};
constexpr uint16_t kVersionMajor = 1;  // a reader refuses another major version
constexpr uint16_t kVersionMinor = 2;  // and accepts any minor version of its major
                                       // (1.1: link_stall events, wavelet_landed emitted;
                                       // 1.2: checksums, below)
constexpr uint32_t kFileHeaderBytes = 64;
constexpr uint32_t kMaxChunkBytes = 64u << 20;  // larger chunk lengths mean a corrupt file

// Chunk types are four ASCII characters read as a little-endian u32.
constexpr uint32_t fourcc(char a, char b, char c, char d) {
  return uint32_t(uint8_t(a)) | uint32_t(uint8_t(b)) << 8 | uint32_t(uint8_t(c)) << 16 | uint32_t(uint8_t(d)) << 24;
}
constexpr uint32_t kChunkFilter = fourcc('F', 'I', 'L', 'T');    // binary: what was recorded
constexpr uint32_t kChunkPrograms = fourcc('P', 'R', 'O', 'G');  // JSON: programs, disassembly
constexpr uint32_t kChunkPeMap = fourcc('P', 'E', 'M', 'P');     // JSON: which PE runs which program
constexpr uint32_t kChunkEvents = fourcc('E', 'V', 'T', 'S');    // binary: a block of events
constexpr uint32_t kChunkHang = fourcc('H', 'A', 'N', 'G');      // JSON: the wait-for graph
constexpr uint32_t kChunkStats = fourcc('S', 'T', 'A', 'T');     // JSON: the wafer's counters at the end
constexpr uint32_t kChunkEnd = fourcc('E', 'N', 'D', ' ');       // binary: how the recording ended
// From 1.2 every chunk is followed by a CRC chunk: u32 CRC-32 of the chunk before it (its type,
// length and payload). Readers of 1.0 and 1.1 skip it as an unknown type. The header's CRC-32
// (computed with its own four bytes zero) sits at kHeaderChecksumOffset, in what 1.1 reserved.
constexpr uint32_t kChunkChecksum = fourcc('C', 'R', 'C', ' ');
constexpr uint16_t kFirstChecksummedMinor = 2;
constexpr uint32_t kHeaderChecksumOffset = 48;

// Why a recording ended (the END chunk).
enum class EndStatus : uint8_t { QUIESCENT = 0, CYCLE_LIMIT = 1, HANG = 2, FAULT = 3, STOPPED = 4 };

// ---- little-endian primitives ----
// The checksum of the format: zlib's CRC-32 of the byte ranges one after the other.
inline uint32_t crc32_of(std::initializer_list<std::pair<const void*, size_t>> ranges) {
  uLong crc = ::crc32_z(0L, Z_NULL, 0);
  for (const auto& [data, size] : ranges)
    if (size) crc = ::crc32_z(crc, static_cast<const Bytef*>(data), size);
  return static_cast<uint32_t>(crc);
}

template <typename T>
void put_le(std::vector<uint8_t>& b, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) b.push_back(uint8_t(uint64_t(v) >> (8 * i)));
}
inline void put_u8(std::vector<uint8_t>& b, uint8_t v) { put_le(b, v); }
inline void put_u16(std::vector<uint8_t>& b, uint16_t v) { put_le(b, v); }
inline void put_u32(std::vector<uint8_t>& b, uint32_t v) { put_le(b, v); }
inline void put_u64(std::vector<uint8_t>& b, uint64_t v) { put_le(b, v); }
inline void put_varint(std::vector<uint8_t>& b, uint64_t v) {  // unsigned LEB128
  while (v >= 0x80) {
    b.push_back(uint8_t(v) | 0x80);
    v >>= 7;
  }
  b.push_back(uint8_t(v));
}

// A bounds-checked cursor over a byte range; every get fails (ok = false) past the end.
struct ByteCursor {
  const uint8_t* p = nullptr;
  const uint8_t* end = nullptr;
  bool ok = true;

  bool need(size_t n) {
    if (!ok || size_t(end - p) < n) ok = false;
    return ok;
  }
  template <typename T>
  T le() {
    if (!need(sizeof(T))) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t(p[i]) << (8 * i);
    p += sizeof(T);
    return T(v);
  }
  uint8_t u8() { return le<uint8_t>(); }
  uint16_t u16() { return le<uint16_t>(); }
  uint32_t u32() { return le<uint32_t>(); }
  uint64_t u64() { return le<uint64_t>(); }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const uint8_t byte = u8();
      if (!ok) return 0;
      v |= uint64_t(byte & 0x7F) << shift;
      if (!(byte & 0x80)) return v;
    }
    ok = false;
    return 0;
  }
  size_t left() const { return ok ? size_t(end - p) : 0; }
};

// ---- event records ----
// record = u8 kind, u8 body length, body; body = varint cycle delta, u16 x, u16 y, then the
// kind's fields (README.md, "Event records").

// What a record holds after x and y: a list of fields, one table for both directions.
enum class EventField : uint8_t { DIRECTION, COLOR_AND_CONTROL, PAYLOAD, AUX, TASK, PC, REASON, COLOR };

// The kind's fields in file order (README.md, "Event records").
inline std::span<const EventField> kind_fields(emu::TraceKind kind) {
  using enum EventField;
  static constexpr EventField kWavelet[] = {DIRECTION, COLOR_AND_CONTROL, PAYLOAD, AUX};
  static constexpr EventField kTask[] = {TASK, PC};
  static constexpr EventField kStall[] = {REASON, AUX, COLOR, TASK, PC};
  static constexpr EventField kSwitch[] = {COLOR, AUX};
  static constexpr EventField kLinkStall[] = {DIRECTION, COLOR_AND_CONTROL, REASON};
  switch (kind) {
    case emu::TraceKind::WAVELET_HOP:
    case emu::TraceKind::WAVELET_LANDED: return kWavelet;
    case emu::TraceKind::INSTRUCTION:
    case emu::TraceKind::TASK_PICKED:
    case emu::TraceKind::TASK_ACTIVATED:
    case emu::TraceKind::TASK_BLOCKED:
    case emu::TraceKind::TASK_UNBLOCKED: return kTask;
    case emu::TraceKind::STALL: return kStall;
    case emu::TraceKind::SWITCH_CHANGED: return kSwitch;
    case emu::TraceKind::LINK_STALL: return kLinkStall;
  }
  return {};
}

// Io is EventWriter (encode, Event const) or EventReader (decode): each field's bytes are
// described once, so the two directions cannot drift apart.
template <typename Io, typename Event>
void transfer_kind_fields(Io& io, Event& e) {
  for (const EventField field : kind_fields(e.kind)) {
    switch (field) {
      case EventField::DIRECTION: io.u8(e.direction); break;
      case EventField::COLOR_AND_CONTROL: io.color_and_control(e.color, e.control); break;
      case EventField::PAYLOAD: io.u32(e.payload); break;
      case EventField::AUX: io.u8(e.aux); break;
      case EventField::TASK: io.u8(e.task); break;
      case EventField::PC: io.varint(e.pc); break;
      case EventField::REASON: io.u8(e.reason); break;
      case EventField::COLOR: io.u8(e.color); break;
    }
  }
}

// A wavelet's color (bits 0-4) and its control flag (bit 7) share one byte.
constexpr uint8_t kControlBit = 0x80;
constexpr uint8_t kColorBits = 31;

struct EventWriter {
  std::vector<uint8_t>& b;
  void u8(uint8_t v) { put_u8(b, v); }
  void u32(uint32_t v) { put_u32(b, v); }
  void varint(uint64_t v) { put_varint(b, v); }
  void color_and_control(uint8_t color, bool control) { put_u8(b, uint8_t((color & kColorBits) | (control ? kControlBit : 0))); }
};

struct EventReader {
  ByteCursor& c;
  void u8(uint8_t& v) { v = c.u8(); }
  void u32(uint32_t& v) { v = c.u32(); }
  void varint(uint32_t& v) { v = uint32_t(c.varint()); }
  void color_and_control(uint8_t& color, bool& control) {
    const uint8_t byte = c.u8();
    color = byte & kColorBits;
    control = (byte & kControlBit) != 0;
  }
};

inline void encode_event(std::vector<uint8_t>& b, const emu::TraceEvent& e, uint64_t previous_cycle) {
  b.push_back(uint8_t(e.kind));
  const size_t length_at = b.size();
  b.push_back(0);
  put_varint(b, e.cycle - previous_cycle);
  put_u16(b, e.x);
  put_u16(b, e.y);
  EventWriter writer{b};
  transfer_kind_fields(writer, e);
  b[length_at] = uint8_t(b.size() - length_at - 1);
}

enum class DecodeResult : uint8_t { EVENT, SKIPPED_UNKNOWN_KIND, MALFORMED };

// Decodes one record at the cursor; `cycle` is the running cycle (updated for every record,
// known kind or not).
inline DecodeResult decode_event(ByteCursor& c, uint64_t& cycle, emu::TraceEvent& e) {
  const uint8_t kind = c.u8();
  const uint8_t length = c.u8();
  if (!c.need(length)) return DecodeResult::MALFORMED;
  ByteCursor body{c.p, c.p + length};
  c.p += length;
  cycle += body.varint();
  e = emu::TraceEvent{};
  e.cycle = cycle;
  e.x = body.u16();
  e.y = body.u16();
  if (kind > uint8_t(emu::kLastTraceKind)) return body.ok ? DecodeResult::SKIPPED_UNKNOWN_KIND : DecodeResult::MALFORMED;
  e.kind = emu::TraceKind(kind);
  EventReader reader{body};
  transfer_kind_fields(reader, e);
  return body.ok ? DecodeResult::EVENT : DecodeResult::MALFORMED;
}

}  // namespace wsemu::trace
