// The loss-curve CSV and the PNG chart: the file decodes (stb_image) to the requested size, the
// series colour is drawn where the data says, text and axes are present; tick selection.
#include "runtime/train/loss_curve.hpp"
#include "runtime/train/plot.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "tests/stb_image_read.hpp"

namespace wsemu::train {
namespace {

namespace fs = std::filesystem;

class PlotFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("wsemu-train-plot-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST(NiceTicks, PicksOneTwoFiveSteps) {
  EXPECT_EQ(nice_ticks(0, 10, 5), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(nice_ticks(0, 49, 8), (std::vector<double>{0, 10, 20, 30, 40}));
  const auto ticks = nice_ticks(0.23, 2.41, 6);  // step 0.5
  ASSERT_EQ(ticks.size(), 4u);
  EXPECT_NEAR(ticks.front(), 0.5, 1e-12);
  EXPECT_NEAR(ticks.back(), 2.0, 1e-12);
  EXPECT_TRUE(nice_ticks(1, 1).empty());
}

TEST_F(PlotFiles, WritesTheCsvWithExactLosses) {
  const fs::path path = dir_ / "loss.csv";
  write_loss_curve_csv(path, {{0, 0.5, 2.302585124969482, 0.125}, {1, 1.0, 0.1f, 0.5}});
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "step,epoch,loss,train_accuracy\n"
            "0,0.500000,2.30258512,0.125000\n"
            "1,1.000000,0.100000001,0.500000\n");
  EXPECT_FALSE(fs::exists(dir_ / "loss.csv.tmp"));
  EXPECT_THROW(write_loss_curve_csv(dir_ / "no-such-dir" / "x.csv", {}), std::runtime_error);
}

TEST_F(PlotFiles, DrawsADecodablePngWithTheSeriesWhereTheDataIs) {
  std::vector<LossRecord> records;
  for (uint64_t s = 0; s < 200; ++s) records.push_back({s, s / 100.0, 2.3 * std::exp(-static_cast<double>(s) / 40.0) + 0.2, 0.0});
  const fs::path path = dir_ / "loss.png";
  plot_loss_curve(path, records, "synthetic test curve");
  int width = 0, height = 0, channels = 0;
  unsigned char* pixels = stbi_load(path.c_str(), &width, &height, &channels, 3);
  ASSERT_NE(pixels, nullptr) << stbi_failure_reason();
  EXPECT_EQ(width, 900);
  EXPECT_EQ(height, 560);
  size_t red = 0, light_blue = 0, dark = 0;
  int leftmost_red_row = -1, rightmost_red_row = -1, leftmost_x = width, rightmost_x = -1;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const unsigned char* p = pixels + (y * width + x) * 3;
      if (p[0] > 180 && p[1] < 80 && p[2] < 80) {  // the smoothed line (214, 39, 40)
        ++red;
        if (x < leftmost_x) leftmost_x = x, leftmost_red_row = y;
        if (x > rightmost_x) rightmost_x = x, rightmost_red_row = y;
      }
      if (p[0] == 140 && p[1] == 180 && p[2] == 220) ++light_blue;  // the raw losses
      if (p[0] < 50 && p[1] < 50 && p[2] < 50) ++dark;
    }
  stbi_image_free(pixels);
  EXPECT_GT(red, 700u);
  EXPECT_GT(light_blue, 100u);
  EXPECT_GT(dark, 2000u);  // axes, ticks, text
  // The curve falls: its left end is higher up (smaller y) than its right end, and it starts
  // 24 steps in (the first full window), about 1/8 of the way across the 770-pixel plot area.
  EXPECT_LT(leftmost_red_row, rightmost_red_row);
  EXPECT_GT(leftmost_x, 160);
  EXPECT_LT(leftmost_x, 240);
}

TEST_F(PlotFiles, RejectsEmptyOrMismatchedData) {
  LineChart chart;
  EXPECT_THROW(plot_line_chart(dir_ / "a.png", chart), std::invalid_argument);
  chart.series.push_back({"nan only", {0.0}, {NAN}, {}});
  EXPECT_THROW(plot_line_chart(dir_ / "a.png", chart), std::invalid_argument);
  chart.series.push_back({"bad", {0.0, 1.0}, {1.0}, {}});
  EXPECT_THROW(plot_line_chart(dir_ / "a.png", chart), std::invalid_argument);
  chart.series.pop_back();
  chart.series.push_back({"one point", {3.0}, {1.0}, {}});
  EXPECT_NO_THROW(plot_line_chart(dir_ / "a.png", chart));
  EXPECT_THROW(plot_line_chart(dir_ / "missing" / "a.png", chart), std::runtime_error);
}

}  // namespace
}  // namespace wsemu::train
