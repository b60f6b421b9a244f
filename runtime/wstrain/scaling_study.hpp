// `wsemu train --scaling-study`: the same training run on 1, 2, 4, ... wafers with a fixed
// batch per wafer (weak scaling) and a fixed global batch (strong scaling), dense and sparse,
// each a real run_training() on the network clock; the table of emulated throughput, speed-up,
// efficiency and critical path, as text, CSV and a PNG plot of the speed-up.
//
// Contract: every row is a run (nothing is extrapolated): a "projected" row (the wafer counts of
// `projected`, batch per wafer) is one wafer whose clock sees the SwarmX tree of that many wafers,
// which in this model is each wafer of that cluster (identical work, identical network); throughput is global batch /
// (mean emulated cycles of the slowest wafer per step / clock), over the steps after the first
// (the first has no previous update to wait for) when there are several. Speed-up and efficiency
// compare with the 1-wafer row of the same mode and sparsity (the smallest wafer count when 1 is
// not in the list). Throws std::invalid_argument for a study that cannot run (no --out, a
// global batch smaller than the largest wafer count), and whatever run_training throws.
#pragma once

#include <cstddef>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "runtime/wstrain/network.hpp"
#include "runtime/wstrain/orchestrator.hpp"

namespace wsemu::wstrain {

struct ScalingStudyOptions {
  std::vector<size_t> wafers{1, 2, 4, 8, 16};
  std::vector<double> sparsities{0.0, 0.5, 0.9};
  std::vector<size_t> projected{192};  // beyond what runs as processes (--wafers stops at 64)
};

struct ScalingRow {
  std::string mode;  // "per-wafer" (batch per wafer fixed), "global" (global batch fixed) or "projected"
                     // (batch per wafer, one wafer in the tree of `wafers`; speed-up against per-wafer's)
  double sparsity = 0.0;
  size_t wafers = 0;
  size_t global_batch = 0;
  double cycles_per_step = 0.0;
  double samples_per_s = 0.0;  // at the profile's clock
  double speedup = 0.0;
  double efficiency = 0.0;
  StepPath path;               // mean over the measured steps
};

// base.run.batch is the batch per wafer of the "per-wafer" rows and the global batch of the
// "global" rows; base.out_dir receives scaling.csv and scaling.png.
std::vector<ScalingRow> run_scaling_study(const TrainOptions& base, const ScalingStudyOptions& study,
                                          std::ostream& out);

}  // namespace wsemu::wstrain
