// The loss curve of a training run: one record per step, written as CSV and plotted as PNG.
//
// Contract: write_loss_curve_csv writes a header line "step,epoch,loss,train_accuracy" and one
// line per record, floats with 9 significant digits (enough to read an fp32 loss back exactly);
// plot_loss_curve draws loss against step (plot.hpp), with a second line for the mean of the
// last `smoothing_window` steps when there are more steps than that. Both throw std::runtime_error naming the
// path when the file cannot be written; neither ever writes a partial file under the final name
// (they write to "<path>.tmp" and rename).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace wsemu::train {

struct LossRecord {
  uint64_t step = 0;            // 0-based
  double epoch = 0.0;           // fractional: (step + 1) / steps_per_epoch
  double loss = 0.0;            // mean training loss of the step
  double train_accuracy = 0.0;  // fraction of the step's batch predicted right
};

void write_loss_curve_csv(const std::filesystem::path& path, const std::vector<LossRecord>& records);

void plot_loss_curve(const std::filesystem::path& path, const std::vector<LossRecord>& records,
                     const std::string& title, size_t smoothing_window = 25);

}  // namespace wsemu::train
