// Which trace events to keep: event kinds, a rectangle of PEs, colors, and a cycle range.
//
// Contract: a TraceFilter is plain data shared by the recorder (what to write) and the trace
// views (what to show). keep() is a handful of compares and never allocates. The parse_*
// functions read the command-line spellings documented in inspect/trace/README.md
// ("wavelets,stalls", "x0,y0,w,h", "1,2", "a:b") and throw TraceError with a message that
// quotes the bad text; they never accept a malformed value silently.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

#include "emulator/trace.hpp"

namespace wsemu::trace {

// Every error of the trace recorder, reader and views: bad files, bad options, I/O failures.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using KindMask = uint32_t;  // bit i = emu::TraceKind(i)
constexpr KindMask kind_bit(emu::TraceKind k) { return KindMask(1) << static_cast<int>(k); }

// The groups users name on the command line, as kind masks.
constexpr KindMask kWaveletKinds = kind_bit(emu::TraceKind::WAVELET_HOP) | kind_bit(emu::TraceKind::WAVELET_LANDED);
constexpr KindMask kInstructionKinds = kind_bit(emu::TraceKind::INSTRUCTION);
constexpr KindMask kTaskKinds = kind_bit(emu::TraceKind::TASK_PICKED) | kind_bit(emu::TraceKind::TASK_ACTIVATED) |
                                kind_bit(emu::TraceKind::TASK_BLOCKED) | kind_bit(emu::TraceKind::TASK_UNBLOCKED);
// Core stalls and link stalls (a wavelet waiting for room downstream or for the link).
constexpr KindMask kStallKinds = kind_bit(emu::TraceKind::STALL) | kind_bit(emu::TraceKind::LINK_STALL);
constexpr KindMask kRouterKinds = kind_bit(emu::TraceKind::SWITCH_CHANGED);
constexpr KindMask kAllKinds = kWaveletKinds | kInstructionKinds | kTaskKinds | kStallKinds | kRouterKinds;

// Events whose `color` field means something (the color filter applies to them only).
bool event_has_color(const emu::TraceEvent& e);

struct PeRect {
  int x = 0, y = 0;
  int width = std::numeric_limits<int>::max(), height = std::numeric_limits<int>::max();
  bool contains(int px, int py) const {
    return px >= x && py >= y && int64_t(px) - x < width && int64_t(py) - y < height;
  }
  bool everything() const { return x == 0 && y == 0 && width == std::numeric_limits<int>::max() &&
                                   height == std::numeric_limits<int>::max(); }
};

struct CycleRange {
  uint64_t first = 0;                                       // inclusive
  uint64_t end = std::numeric_limits<uint64_t>::max();      // exclusive
  bool contains(uint64_t c) const { return c >= first && c < end; }
  bool everything() const { return first == 0 && end == std::numeric_limits<uint64_t>::max(); }
};

struct TraceFilter {
  KindMask kinds = kAllKinds;
  PeRect rect;
  uint32_t colors = 0xFFFFFFFFu;  // bit c = color c
  CycleRange cycles;

  bool keep(const emu::TraceEvent& e) const {
    if (!(kinds & kind_bit(e.kind))) return false;
    if (!cycles.contains(e.cycle)) return false;
    if (!rect.contains(e.x, e.y)) return false;
    if (colors != 0xFFFFFFFFu && event_has_color(e) && !((colors >> (e.color & 31)) & 1)) return false;
    return true;
  }
  std::string to_string() const;  // "kinds=wavelets,stalls rect=0,0,4,4 colors=1,2 cycles=10:20"
};

// "wavelets,instructions,tasks,stalls,router" (any subset, any order) or "all".
KindMask parse_kinds(std::string_view text);
// "x0,y0,w,h" with w, h >= 1.
PeRect parse_rect(std::string_view text);
// "x,y": a rectangle of one PE.
PeRect parse_pe(std::string_view text);
// "1,2,5" or "1-4,7": colors 0..31.
uint32_t parse_colors(std::string_view text);
// "a:b" (a inclusive, b exclusive), "a:" (from a on), ":b", or "a" (that one cycle).
CycleRange parse_cycles(std::string_view text);

std::string kinds_to_string(KindMask kinds);
std::string colors_to_string(uint32_t colors);

// The set bits of `bits` below bit `count`, bit i spelled name(i), joined by `separator`;
// `none` when no bit is set. The spelling of every bit set in these views.
template <typename Name>
std::string join_set_bits(uint64_t bits, int count, char separator, std::string_view none, Name name) {
  std::string s;
  for (int i = 0; i < count; ++i)
    if ((bits >> i) & 1) {
      if (!s.empty()) s += separator;
      s += name(i);
    }
  return s.empty() ? std::string(none) : s;
}

}  // namespace wsemu::trace
