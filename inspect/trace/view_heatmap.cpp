// The heatmap view: link utilization and backpressure per exit (N, E, S, W, RAMP) over the
// fabric, as a PNG.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "inspect/trace/trace_views.hpp"
#include "emulator/wavelet.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb/stb_image_write.h>
#include <stb/stb_easy_font.h>
#pragma GCC diagnostic pop

namespace wsemu::trace {

namespace {

constexpr int kMargin = 8, kLabelBand = 16, kAxisBand = 12, kLegendBand = 48;
// One panel per exit of a router, in emu::Direction order: the four links and RAMP (to the core).
constexpr int kPanels = 5;
constexpr std::array<const char*, kPanels> kPanelNames = {"to N", "to E", "to S", "to W", "to core"};

struct Rgb {
  uint8_t r, g, b;
};

class Canvas {
 public:
  Canvas(int w, int h, Rgb background) : image_{w, h, std::vector<uint8_t>(size_t(w) * size_t(h) * 3)} {
    fill(0, 0, w, h, background);
  }
  void fill(int x0, int y0, int x1, int y1, Rgb c) {  // [x0, x1) x [y0, y1), clipped
    x0 = std::max(x0, 0), y0 = std::max(y0, 0), x1 = std::min(x1, image_.width), y1 = std::min(y1, image_.height);
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) {
        uint8_t* p = &image_.rgb[(size_t(y) * size_t(image_.width) + size_t(x)) * 3];
        p[0] = c.r, p[1] = c.g, p[2] = c.b;
      }
  }
  void text(int x, int y, const std::string& s, Rgb c) {
    std::string copy;
    for (char ch : s) copy.push_back(ch >= 32 && ch < 127 ? ch : '?');
    std::vector<char> buffer(copy.size() * 64 * 32 + 64);
    const int quads = stb_easy_font_print(0, 0, copy.data(), nullptr, buffer.data(), int(buffer.size()));
    for (int q = 0; q < quads; ++q) {
      float min_x = 1e9f, min_y = 1e9f, max_x = -1e9f, max_y = -1e9f;
      for (int v = 0; v < 4; ++v) {
        const float* vertex = reinterpret_cast<const float*>(buffer.data() + (q * 4 + v) * 16);
        min_x = std::min(min_x, vertex[0]), max_x = std::max(max_x, vertex[0]);
        min_y = std::min(min_y, vertex[1]), max_y = std::max(max_y, vertex[1]);
      }
      fill(x + int(std::lround(min_x)), y + int(std::lround(min_y)), x + int(std::lround(max_x)), y + int(std::lround(max_y)), c);
    }
  }
  Image take() { return std::move(image_); }

 private:
  Image image_;
};

// 0 -> dark blue, then blue, cyan, yellow, 1 -> red.
Rgb scale_color(double u) {
  u = std::clamp(u, 0.0, 1.0);
  static constexpr std::array<std::array<double, 3>, 5> stops = {{{20, 24, 90}, {30, 90, 220}, {40, 200, 220}, {240, 220, 40}, {220, 30, 30}}};
  const double at = u * 4.0;
  const int i = std::min(int(at), 3);
  const double f = at - i;
  auto mix = [&](int k) { return uint8_t(std::lround(stops[i][k] + (stops[i + 1][k] - stops[i][k]) * f)); };
  return {mix(0), mix(1), mix(2)};
}

constexpr Rgb kNoTraffic{44, 44, 52}, kBackground{255, 255, 255}, kInk{20, 20, 20}, kGrid{90, 90, 100};

// What one row of panels shows: wavelets that left by a direction (utilization), or cycles a
// wavelet waited at that exit because there was no room downstream (backpressure).
enum class Layer { UTILIZATION, BACKPRESSURE };

// Coordinates under a panel (x) or left of it (y): the first, middle and last index.
void axis_labels(Canvas& canvas, int left, int top, int cells, int cell, bool horizontal) {
  std::vector<int> at = {0};
  if (cells > 2) at.push_back(cells / 2);
  if (cells > 1) at.push_back(cells - 1);
  for (int i : at) {
    const std::string label = std::to_string(i);
    if (horizontal) {
      canvas.text(left + i * cell + cell / 2 - 2 * int(label.size()), top, label, kInk);
    } else {
      canvas.text(left - kAxisBand + 2, top + i * cell + cell / 2 - 3, label, kInk);
    }
  }
}

}  // namespace

Image render_heatmap(const TraceReader& trace, const HeatmapOptions& options) {
  const int w = trace.header().width, h = trace.header().height;
  const int cell = options.cell > 0 ? options.cell : std::clamp(512 / std::max(w, h), 1, 32);
  if (int64_t(w) * cell > 16384 || int64_t(h) * cell > 16384)
    throw TraceError(fmt::format("heatmap: {} pixels per PE on a {}x{} fabric makes an image too large; use a smaller --cell", cell, w, h));
  std::vector<int> rows_colors;  // -1: all colors together
  if (options.colors) {
    for (int c = 0; c < 32; ++c)
      if ((*options.colors >> c) & 1) rows_colors.push_back(c);
  } else {
    rows_colors.push_back(-1);
  }
  if (rows_colors.empty()) throw TraceError("heatmap: no color asked for");
  const int colors = int(rows_colors.size());
  const int rows = 2 * colors;  // per color: utilization, then backpressure

  // Events per (row, exit, PE): hops for the utilization rows, backpressure stalls for the
  // others.
  std::vector<uint32_t> counts(size_t(rows) * kPanels * size_t(w) * size_t(h), 0);
  std::array<int, 32> color_index;
  color_index.fill(rows_colors[0] < 0 ? 0 : -1);
  for (int r = 0; r < colors && rows_colors[0] >= 0; ++r) color_index[size_t(rows_colors[size_t(r)])] = r;
  TraceFilter filter;
  filter.kinds = kind_bit(emu::TraceKind::WAVELET_HOP) | kind_bit(emu::TraceKind::LINK_STALL);
  filter.cycles = options.cycles;
  trace.for_each_event(filter, [&](const emu::TraceEvent& e) {
    if (e.direction >= kPanels || e.x >= w || e.y >= h) return true;
    const bool stall = e.kind == emu::TraceKind::LINK_STALL;
    if (stall && e.reason != uint8_t(emu::LinkStallReason::BACKPRESSURE)) return true;
    const int c = color_index[e.color & 31];
    if (c < 0) return true;
    const int r = 2 * c + (stall ? 1 : 0);
    ++counts[((size_t(r) * kPanels + e.direction) * size_t(h) + e.y) * size_t(w) + e.x];
    return true;
  });
  const uint64_t first = std::max(trace.first_cycle(), options.cycles.first);
  const uint64_t end = std::min(trace.end_cycle(), options.cycles.end);
  const double cycles = end > first ? double(end - first) : 1.0;

  const int panel_w = w * cell, panel_h = h * cell;
  const int width = kAxisBand + kPanels * panel_w + (kPanels + 1) * kMargin;
  const int row_h = kLabelBand + panel_h + kAxisBand + kMargin;
  const int height = kMargin + rows * row_h + kLegendBand;
  Canvas canvas(width, height, kBackground);
  for (int r = 0; r < rows; ++r) {
    const Layer layer = r % 2 == 0 ? Layer::UTILIZATION : Layer::BACKPRESSURE;
    const int color = rows_colors[size_t(r / 2)];
    const int top = kMargin + r * row_h;
    for (int d = 0; d < kPanels; ++d) {
      const int left = kAxisBand + kMargin + d * (panel_w + kMargin);
      std::string label = std::string(layer == Layer::UTILIZATION ? "" : "waits ") + kPanelNames[size_t(d)];
      if (color >= 0) label += fmt::format(", c{}", color);
      canvas.text(left, top + 3, label, kInk);
      const int y0 = top + kLabelBand;
      canvas.fill(left, y0, left + panel_w, y0 + panel_h, kGrid);
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          const uint32_t n = counts[((size_t(r) * kPanels + size_t(d)) * size_t(h) + size_t(y)) * size_t(w) + size_t(x)];
          const Rgb c = n ? scale_color(double(n) / cycles) : kNoTraffic;
          const int gap = cell >= 4 ? 1 : 0;
          canvas.fill(left + x * cell, y0 + y * cell, left + (x + 1) * cell - gap, y0 + (y + 1) * cell - gap, c);
        }
      axis_labels(canvas, left, y0 + panel_h + 2, w, cell, true);
      if (d == 0) axis_labels(canvas, left, y0, h, cell, false);
    }
  }
  // What is drawn, and the colour scale: no events, then 0% .. 100% of the cycles.
  const int ly = height - kLegendBand + 4;
  canvas.text(kMargin, ly, "x, y: PE; to N/E/S/W: wavelets per cycle leaving on that link; to core: delivered to the PE (RAMP);", kInk);
  canvas.text(kMargin, ly + 10, "waits: cycles a wavelet waited there for room downstream (backpressure)", kInk);
  const int sy = ly + 24;
  canvas.fill(kMargin, sy, kMargin + 12, sy + 10, kNoTraffic);
  canvas.text(kMargin + 16, sy + 1, "none", kInk);
  const int bar_left = kMargin + 56, bar_w = std::max(64, std::min(256, width - bar_left - 120));
  for (int i = 0; i < bar_w; ++i) canvas.fill(bar_left + i, sy, bar_left + i + 1, sy + 10, scale_color(double(i) / (bar_w - 1)));
  canvas.text(bar_left, sy + 12, "0%", kInk);
  canvas.text(bar_left + bar_w - 24, sy + 12, "100%", kInk);
  canvas.text(bar_left + bar_w + 8, sy + 1, fmt::format("of {} cycles", uint64_t(cycles)), kInk);
  return canvas.take();
}

void write_png(const Image& image, const std::string& path) {
  const std::filesystem::path target(path);
  const std::filesystem::path temporary = target.string() + ".partial";
  if (!stbi_write_png(temporary.c_str(), image.width, image.height, 3, image.rgb.data(), image.width * 3)) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw TraceError(fmt::format("cannot write the PNG {}", path));
  }
  std::error_code ec;
  std::filesystem::rename(temporary, target, ec);
  if (ec) throw TraceError(fmt::format("cannot write the PNG {}: {}", path, ec.message()));
}

}  // namespace wsemu::trace
