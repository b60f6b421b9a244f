#include "inspect/trace/trace_filter.hpp"

#include <fmt/format.h>

#include <charconv>
#include <vector>

namespace wsemu::trace {
namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(sep, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return parts;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

template <typename T>
T parse_number(std::string_view text, std::string_view what, std::string_view whole) {
  text = trim(text);
  T v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw TraceError(fmt::format("{} '{}': '{}' is not a non-negative integer", what, whole, text));
  return v;
}

// Exactly `count` comma-separated integers, `what` and `shape` naming them in the error.
std::vector<int> parse_numbers(std::string_view text, size_t count, std::string_view what, std::string_view shape) {
  const auto parts = split(text, ',');
  if (parts.size() != count) throw TraceError(fmt::format("{} '{}': expected {}", what, text, shape));
  std::vector<int> numbers;
  for (std::string_view part : parts) numbers.push_back(parse_number<int>(part, what, text));
  return numbers;
}

struct KindGroup {
  std::string_view name;
  KindMask mask;
};
constexpr KindGroup kGroups[] = {
    {"wavelets", kWaveletKinds}, {"instructions", kInstructionKinds}, {"tasks", kTaskKinds},
    {"stalls", kStallKinds},     {"router", kRouterKinds},            {"all", kAllKinds},
};

}  // namespace

bool event_has_color(const emu::TraceEvent& e) {
  switch (e.kind) {
    case emu::TraceKind::WAVELET_HOP:
    case emu::TraceKind::WAVELET_LANDED:
    case emu::TraceKind::SWITCH_CHANGED:
    case emu::TraceKind::LINK_STALL: return true;
    case emu::TraceKind::STALL: return e.color < 32;
    default: return false;
  }
}

KindMask parse_kinds(std::string_view text) {
  KindMask m = 0;
  for (std::string_view part : split(text, ',')) {
    part = trim(part);
    bool found = false;
    for (const KindGroup& g : kGroups)
      if (part == g.name) {
        m |= g.mask;
        found = true;
      }
    for (int k = 0; k <= int(emu::kLastTraceKind) && !found; ++k)
      if (part == emu::trace_kind_name(emu::TraceKind(k))) {
        m |= kind_bit(emu::TraceKind(k));
        found = true;
      }
    if (!found)
      throw TraceError(fmt::format("event kinds '{}': unknown kind '{}' (wavelets, instructions, tasks, stalls, "
                                   "router, all, or one event name such as wavelet_hop)",
                                   text, part));
  }
  return m;
}

PeRect parse_rect(std::string_view text) {
  const auto n = parse_numbers(text, 4, "rectangle", "x0,y0,width,height");
  const PeRect r{.x = n[0], .y = n[1], .width = n[2], .height = n[3]};
  if (r.width < 1 || r.height < 1) throw TraceError(fmt::format("rectangle '{}': width and height must be >= 1", text));
  return r;
}

PeRect parse_pe(std::string_view text) {
  const auto n = parse_numbers(text, 2, "PE", "x,y");
  return PeRect{.x = n[0], .y = n[1], .width = 1, .height = 1};
}

uint32_t parse_colors(std::string_view text) {
  uint32_t m = 0;
  for (std::string_view part : split(text, ',')) {
    part = trim(part);
    const size_t dash = part.find('-');
    const int lo = parse_number<int>(part.substr(0, dash), "colors", text);
    const int hi = dash == std::string_view::npos ? lo : parse_number<int>(part.substr(dash + 1), "colors", text);
    if (lo > 31 || hi > 31 || lo > hi) throw TraceError(fmt::format("colors '{}': '{}' is not a color 0..31 or a range lo-hi", text, part));
    for (int c = lo; c <= hi; ++c) m |= 1u << c;
  }
  return m;
}

CycleRange parse_cycles(std::string_view text) {
  CycleRange r;
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    r.first = parse_number<uint64_t>(text, "cycles", text);
    r.end = r.first + 1;
    return r;
  }
  const std::string_view a = trim(text.substr(0, colon)), b = trim(text.substr(colon + 1));
  if (!a.empty()) r.first = parse_number<uint64_t>(a, "cycles", text);
  if (!b.empty()) r.end = parse_number<uint64_t>(b, "cycles", text);
  if (r.end <= r.first) throw TraceError(fmt::format("cycles '{}': the range a:b needs a < b (b is exclusive)", text));
  return r;
}

std::string kinds_to_string(KindMask kinds) {
  if ((kinds & kAllKinds) == kAllKinds) return "all";
  std::string s;
  KindMask left = kinds;
  for (const KindGroup& g : kGroups) {
    if (g.mask == kAllKinds || (left & g.mask) != g.mask) continue;
    if (!s.empty()) s += ',';
    s += g.name;
    left &= ~g.mask;
  }
  const std::string single = join_set_bits(left, 32, ',', "", [](int k) { return emu::trace_kind_name(emu::TraceKind(k)); });
  if (!s.empty() && !single.empty()) s += ',';
  s += single;
  return s.empty() ? "none" : s;
}

std::string colors_to_string(uint32_t colors) {
  if (colors == 0xFFFFFFFFu) return "all";
  return join_set_bits(colors, 32, ',', "none", [](int c) { return std::to_string(c); });
}

std::string TraceFilter::to_string() const {
  std::string s = "kinds=" + kinds_to_string(kinds);
  if (!rect.everything()) s += fmt::format(" rect={},{},{},{}", rect.x, rect.y, rect.width, rect.height);
  if (colors != 0xFFFFFFFFu) s += " colors=" + colors_to_string(colors);
  if (!cycles.everything()) {
    s += fmt::format(" cycles={}:", cycles.first);
    if (cycles.end != std::numeric_limits<uint64_t>::max()) s += std::to_string(cycles.end);
  }
  return s;
}

}  // namespace wsemu::trace
