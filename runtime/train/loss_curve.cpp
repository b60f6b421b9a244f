#include "runtime/train/loss_curve.hpp"

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "runtime/train/plot.hpp"

namespace wsemu::train {

void write_loss_curve_csv(const std::filesystem::path& path, const std::vector<LossRecord>& records) {
  std::filesystem::path temporary = path;
  temporary += ".tmp";
  {
    std::ofstream out(temporary);
    if (!out) throw std::runtime_error(fmt::format("{}: cannot open for writing", temporary.string()));
    out << "step,epoch,loss,train_accuracy\n";
    for (const LossRecord& r : records)
      out << fmt::format("{},{:.6f},{:.9g},{:.6f}\n", r.step, r.epoch, r.loss, r.train_accuracy);
    out.flush();
    if (!out) throw std::runtime_error(fmt::format("{}: write error", temporary.string()));
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot rename from {}: {}", path.string(), temporary.string(), ec.message()));
}

void plot_loss_curve(const std::filesystem::path& path, const std::vector<LossRecord>& records,
                     const std::string& title, size_t smoothing_window) {
  LineChart chart;
  chart.title = title;
  chart.x_label = "step";
  chart.y_label = "training loss";
  PlotSeries loss;
  loss.name = "loss";
  for (const LossRecord& r : records) {
    loss.x.push_back(static_cast<double>(r.step));
    loss.y.push_back(r.loss);
  }
  if (smoothing_window > 1 && records.size() > smoothing_window) {
    PlotSeries smooth;
    smooth.name = fmt::format("mean of {} steps", smoothing_window);
    smooth.color = {214, 39, 40};
    double window_sum = 0;
    for (size_t k = 0; k < records.size(); ++k) {
      window_sum += records[k].loss;
      if (k >= smoothing_window) window_sum -= records[k - smoothing_window].loss;
      if (k + 1 < smoothing_window) continue;
      smooth.x.push_back(static_cast<double>(records[k].step));
      smooth.y.push_back(window_sum / static_cast<double>(smoothing_window));
    }
    loss.color = {140, 180, 220};
    chart.series.push_back(std::move(loss));
    chart.series.push_back(std::move(smooth));
  } else {
    chart.series.push_back(std::move(loss));
  }
  plot_line_chart(path, chart);
}

}  // namespace wsemu::train
