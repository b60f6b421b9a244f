#include "runtime/train/plot.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wconversion"
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb/stb_image_write.h>
#include <stb/stb_easy_font.h>
#pragma GCC diagnostic pop

namespace wsemu::train {

namespace {

constexpr Rgb white{255, 255, 255}, black{0, 0, 0}, grid_grey{225, 225, 225}, text_grey{40, 40, 40};

class Canvas {
 public:
  Canvas(int width, int height) : width_(width), height_(height), pixels_(size_t(width) * height * 3, 255) {}

  int width() const { return width_; }
  int height() const { return height_; }
  const uint8_t* data() const { return pixels_.data(); }

  void blend(int x, int y, Rgb c, double alpha) {
    if (x < 0 || y < 0 || x >= width_ || y >= height_ || alpha <= 0.0) return;
    alpha = std::min(alpha, 1.0);
    uint8_t* p = &pixels_[(size_t(y) * width_ + x) * 3];
    const uint8_t rgb[3] = {c.r, c.g, c.b};
    for (int k = 0; k < 3; ++k) p[k] = static_cast<uint8_t>(std::lround(p[k] * (1.0 - alpha) + rgb[k] * alpha));
  }

  void fill_rect(int x0, int y0, int x1, int y1, Rgb c) {
    for (int y = std::max(y0, 0); y < std::min(y1, height_); ++y)
      for (int x = std::max(x0, 0); x < std::min(x1, width_); ++x) blend(x, y, c, 1.0);
  }

  void horizontal_line(int x0, int x1, int y, Rgb c) { fill_rect(x0, y, x1 + 1, y + 1, c); }
  void vertical_line(int x, int y0, int y1, Rgb c) { fill_rect(x, y0, x + 1, y1 + 1, c); }

 private:
  int width_, height_;
  std::vector<uint8_t> pixels_;
};

// Anti-aliased polylines: coverage is kept per pixel as the maximum over the pen positions, then
// blended once, so overlapping pen stamps do not darken.
class Stroke {
 public:
  Stroke(int width, int height) : width_(width), height_(height), coverage_(size_t(width) * height, 0.0f) {}

  void segment(double x0, double y0, double x1, double y1, double radius) {
    const double length = std::hypot(x1 - x0, y1 - y0);
    const int steps = std::max(1, static_cast<int>(std::ceil(length * 4.0)));
    for (int s = 0; s <= steps; ++s) {
      const double t = static_cast<double>(s) / steps;
      stamp(x0 + (x1 - x0) * t, y0 + (y1 - y0) * t, radius);
    }
  }

  void stamp(double cx, double cy, double radius) {
    const int reach = static_cast<int>(std::ceil(radius + 1.0));
    for (int y = static_cast<int>(cy) - reach; y <= static_cast<int>(cy) + reach; ++y)
      for (int x = static_cast<int>(cx) - reach; x <= static_cast<int>(cx) + reach; ++x) {
        if (x < 0 || y < 0 || x >= width_ || y >= height_) continue;
        const double distance = std::hypot(x + 0.5 - cx, y + 0.5 - cy);
        const auto cover = static_cast<float>(std::clamp(radius + 0.5 - distance, 0.0, 1.0));
        float& cell = coverage_[size_t(y) * width_ + x];
        cell = std::max(cell, cover);
      }
  }

  void paint(Canvas& canvas, Rgb color) const {
    for (int y = 0; y < height_; ++y)
      for (int x = 0; x < width_; ++x) canvas.blend(x, y, color, coverage_[size_t(y) * width_ + x]);
  }

 private:
  int width_, height_;
  std::vector<float> coverage_;
};

int text_width(const std::string& text, int scale) {
  std::string copy = text;
  return stb_easy_font_width(copy.data()) * scale;
}

constexpr int text_height(int scale) { return 7 * scale; }

// Draws `text` with its top-left corner at (x, y); vertical text reads bottom to top and (x, y)
// is then its bottom-left corner.
void draw_text(Canvas& canvas, int x, int y, const std::string& text, int scale, Rgb color, bool vertical = false) {
  std::string copy;
  for (char c : text) copy.push_back(c >= 32 && c < 127 ? c : '?');
  std::vector<char> buffer(copy.size() * 64 * 32 + 64);  // at most 32 quads of 64 bytes per glyph
  const int quads = stb_easy_font_print(0, 0, copy.data(), nullptr, buffer.data(), static_cast<int>(buffer.size()));
  for (int q = 0; q < quads; ++q) {
    float min_x = 1e9f, min_y = 1e9f, max_x = -1e9f, max_y = -1e9f;
    for (int v = 0; v < 4; ++v) {
      const float* vertex = reinterpret_cast<const float*>(buffer.data() + (q * 4 + v) * 16);
      min_x = std::min(min_x, vertex[0]);
      max_x = std::max(max_x, vertex[0]);
      min_y = std::min(min_y, vertex[1]);
      max_y = std::max(max_y, vertex[1]);
    }
    const int x0 = static_cast<int>(std::lround(min_x * scale)), x1 = static_cast<int>(std::lround(max_x * scale));
    const int y0 = static_cast<int>(std::lround(min_y * scale)), y1 = static_cast<int>(std::lround(max_y * scale));
    if (vertical)
      canvas.fill_rect(x + y0, y - x1, x + y1, y - x0, color);
    else
      canvas.fill_rect(x + x0, y + y0, x + x1, y + y1, color);
  }
}

std::string tick_label(double value, double step) {
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  if (std::abs(value) < step * 1e-6) value = 0.0;
  if (std::abs(value) >= 1e6 || (value != 0.0 && std::abs(value) < 1e-4)) return fmt::format("{:.3g}", value);
  return fmt::format("{:.{}f}", value, decimals);
}

}  // namespace

std::vector<double> nice_ticks(double low, double high, int target) {
  std::vector<double> ticks;
  if (!(high > low) || !std::isfinite(low) || !std::isfinite(high) || target < 1) return ticks;
  const double raw = (high - low) / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    step = factor * magnitude;
    if (step >= raw) break;
  }
  const double first = std::ceil(low / step - 1e-9) * step;
  for (int k = 0; first + k * step <= high + step * 1e-9; ++k) ticks.push_back(first + k * step);
  return ticks;
}

void plot_line_chart(const std::filesystem::path& path, const LineChart& chart) {
  if (chart.width < 200 || chart.height < 150 || chart.width > 8000 || chart.height > 8000)
    throw std::invalid_argument(fmt::format("plot: image size {}x{} is outside 200x150 .. 8000x8000", chart.width,
                                            chart.height));
  double x_min = INFINITY, x_max = -INFINITY, y_min = INFINITY, y_max = -INFINITY;
  for (const PlotSeries& series : chart.series) {
    if (series.x.size() != series.y.size())
      throw std::invalid_argument(fmt::format("plot: series '{}' has {} x values and {} y values", series.name,
                                              series.x.size(), series.y.size()));
    for (size_t k = 0; k < series.x.size(); ++k) {
      if (!std::isfinite(series.x[k]) || !std::isfinite(series.y[k])) continue;
      x_min = std::min(x_min, series.x[k]);
      x_max = std::max(x_max, series.x[k]);
      y_min = std::min(y_min, series.y[k]);
      y_max = std::max(y_max, series.y[k]);
    }
  }
  if (!std::isfinite(x_min)) throw std::invalid_argument("plot: no finite data points to draw");
  if (x_max == x_min) x_min -= 1.0, x_max += 1.0;
  if (y_max == y_min) y_min -= std::max(std::abs(y_min) * 0.1, 1e-3), y_max += std::max(std::abs(y_max) * 0.1, 1e-3);
  const double y_pad = (y_max - y_min) * 0.05;
  y_min -= y_pad;
  y_max += y_pad;

  Canvas canvas(chart.width, chart.height);
  const int scale = 2;
  const int left = 40 + 8 * 6 * scale / 2 + 16, right = chart.width - 24;
  const int top = 50, bottom = chart.height - 64;
  auto px = [&](double x) { return left + (x - x_min) / (x_max - x_min) * (right - left); };
  auto py = [&](double y) { return bottom - (y - y_min) / (y_max - y_min) * (bottom - top); };

  const std::vector<double> x_ticks = nice_ticks(x_min, x_max, 8), y_ticks = nice_ticks(y_min, y_max, 6);
  const double x_step = x_ticks.size() > 1 ? x_ticks[1] - x_ticks[0] : 1.0;
  const double y_step = y_ticks.size() > 1 ? y_ticks[1] - y_ticks[0] : 1.0;
  for (double t : x_ticks) {
    const int x = static_cast<int>(std::lround(px(t)));
    canvas.vertical_line(x, top, bottom, grid_grey);
    canvas.vertical_line(x, bottom, bottom + 5, black);
    const std::string label = tick_label(t, x_step);
    draw_text(canvas, x - text_width(label, scale) / 2, bottom + 9, label, scale, text_grey);
  }
  for (double t : y_ticks) {
    const int y = static_cast<int>(std::lround(py(t)));
    canvas.horizontal_line(left, right, y, grid_grey);
    canvas.horizontal_line(left - 5, left, y, black);
    const std::string label = tick_label(t, y_step);
    draw_text(canvas, left - 9 - text_width(label, scale), y - text_height(scale) / 2, label, scale, text_grey);
  }
  canvas.horizontal_line(left, right, bottom, black);
  canvas.horizontal_line(left, right, top, black);
  canvas.vertical_line(left, top, bottom, black);
  canvas.vertical_line(right, top, bottom, black);

  for (const PlotSeries& series : chart.series) {
    Stroke stroke(chart.width, chart.height);
    bool have_previous = false;
    double previous_x = 0, previous_y = 0;
    for (size_t k = 0; k < series.x.size(); ++k) {
      if (!std::isfinite(series.x[k]) || !std::isfinite(series.y[k])) {
        have_previous = false;
        continue;
      }
      const double x = px(series.x[k]), y = py(series.y[k]);
      if (have_previous)
        stroke.segment(previous_x, previous_y, x, y, 1.0);
      else
        stroke.stamp(x, y, 1.0);
      previous_x = x, previous_y = y, have_previous = true;
    }
    stroke.paint(canvas, series.color);
  }

  if (!chart.title.empty())
    draw_text(canvas, (chart.width - text_width(chart.title, 3)) / 2, 14, chart.title, 3, black);
  if (!chart.x_label.empty())
    draw_text(canvas, (left + right - text_width(chart.x_label, scale)) / 2, chart.height - 26, chart.x_label, scale,
              black);
  if (!chart.y_label.empty())
    draw_text(canvas, 10, (top + bottom + text_width(chart.y_label, scale)) / 2, chart.y_label, scale, black, true);

  // Legend in the top-right corner of the plot area.
  int legend_width = 0;
  for (const PlotSeries& series : chart.series) legend_width = std::max(legend_width, text_width(series.name, scale));
  if (legend_width > 0) {
    const int row = text_height(scale) + 8;
    const int box_w = legend_width + 48, box_h = static_cast<int>(chart.series.size()) * row + 8;
    const int box_x = right - box_w - 10, box_y = top + 10;
    canvas.fill_rect(box_x, box_y, box_x + box_w, box_y + box_h, white);
    canvas.horizontal_line(box_x, box_x + box_w, box_y, black);
    canvas.horizontal_line(box_x, box_x + box_w, box_y + box_h, black);
    canvas.vertical_line(box_x, box_y, box_y + box_h, black);
    canvas.vertical_line(box_x + box_w, box_y, box_y + box_h, black);
    for (size_t s = 0; s < chart.series.size(); ++s) {
      const int y = box_y + 6 + static_cast<int>(s) * row;
      canvas.fill_rect(box_x + 8, y + row / 2 - 3, box_x + 32, y + row / 2 - 1, chart.series[s].color);
      draw_text(canvas, box_x + 40, y + 1, chart.series[s].name, scale, text_grey);
    }
  }

  std::filesystem::path temporary = path;
  temporary += ".tmp";
  if (!stbi_write_png(temporary.c_str(), canvas.width(), canvas.height(), 3, canvas.data(), canvas.width() * 3))
    throw std::runtime_error(fmt::format("{}: cannot write the PNG file", temporary.string()));
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot rename from {}: {}", path.string(), temporary.string(), ec.message()));
}

}  // namespace wsemu::train
