// A line chart rendered to PNG (stb_image_write) with axes, "nice" ticks, grid, tick labels,
// axis labels, a title and a legend drawn in stb_easy_font's bitmap font.
//
// Contract: plot_line_chart draws every finite (x, y) point of every series as a polyline in its
// colour, scaled to the data's range (padded by 5% in y). Non-finite points are skipped. It
// throws std::invalid_argument when there is nothing finite to draw and std::runtime_error
// naming the path when the PNG cannot be written (written to "<path>.tmp", then renamed). It
// must never write outside its pixel buffer, whatever the data.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace wsemu::train {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
};

struct PlotSeries {
  std::string name;
  std::vector<double> x;
  std::vector<double> y;
  Rgb color{31, 119, 180};
};

struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<PlotSeries> series;
  int width = 900;
  int height = 560;
};

void plot_line_chart(const std::filesystem::path& path, const LineChart& chart);

// Tick positions for [low, high]: multiples of 1, 2 or 5 times a power of ten, about `target`
// of them, all within the range.
std::vector<double> nice_ticks(double low, double high, int target = 6);

}  // namespace wsemu::train
