#include "runtime/wstrain/scaling_study.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "runtime/train/plot.hpp"

namespace wsemu::wstrain {

namespace {

PathPart mean_part(const std::vector<const StepFigures*>& steps, PathPart StepPath::*part) {
  double total = 0, exposed = 0;
  for (const StepFigures* s : steps) {
    total += static_cast<double>((s->path.*part).total);
    exposed += static_cast<double>((s->path.*part).exposed);
  }
  const double n = std::max<double>(1.0, static_cast<double>(steps.size()));
  return {static_cast<uint64_t>(total / n + 0.5), static_cast<uint64_t>(exposed / n + 0.5)};
}

// mode "projected": one wafer with the batch per wafer, its clock's SwarmX tree sized for `wafers`;
// every wafer of a data-parallel cluster does the same work on the same clock, so the one wafer's
// step is the cluster's (checked against measured rows in scaling_study_test).
ScalingRow measure(const TrainOptions& base, const std::string& mode, double sparsity, size_t wafers,
                   std::ostream& out) {
  const bool projected = mode == "projected";
  TrainOptions o = base;
  o.verify = false;
  o.out_dir.clear();
  o.progress_bar = false;
  o.kill_memoryx_after_step = -1;
  o.kill_wafer_after_step = -1;
  o.run.wafers = projected ? 1 : wafers;
  o.run.tree_wafers = projected ? wafers : 0;
  o.run.batch = mode == "per-wafer" ? base.run.batch * wafers : base.run.batch;
  o.run.sparsity = sparsity;
  o.run.sparse_stream = sparsity > 0.0;
  if (o.run.dataset == "synthetic") o.run.synthetic_samples = std::max(o.run.synthetic_samples, o.run.batch);
  std::ostream quiet(nullptr);
  const TrainReport report = run_training(o, quiet);
  std::vector<const StepFigures*> measured;
  for (size_t i = report.steps.size() > 1 ? 1 : 0; i < report.steps.size(); ++i) measured.push_back(&report.steps[i]);
  if (measured.empty()) throw std::runtime_error("the scaling study's run reported no step");
  ScalingRow row;
  row.mode = mode;
  row.sparsity = sparsity;
  row.wafers = wafers;
  row.global_batch = projected ? base.run.batch * wafers : o.run.batch;
  double cycles = 0;
  for (const StepFigures* s : measured) cycles += static_cast<double>(s->max_cycles);
  row.cycles_per_step = cycles / static_cast<double>(measured.size());
  row.samples_per_s = static_cast<double>(row.global_batch) / (row.cycles_per_step / (report.clock_mhz * 1e6));
  row.path.cycles = static_cast<uint64_t>(row.cycles_per_step + 0.5);
  row.path.compute = mean_part(measured, &StepPath::compute);
  row.path.stream = mean_part(measured, &StepPath::stream);
  row.path.reduce = mean_part(measured, &StepPath::reduce);
  row.path.optimizer = mean_part(measured, &StepPath::optimizer);
  out << fmt::format("  {:<9} sparsity {:.1f} {:>3} wafer(s) batch {:>5}: {:>10.0f} cycles/step\n", mode, sparsity,
                     wafers, row.global_batch, row.cycles_per_step)
      << std::flush;
  return row;
}

std::string part_cell(const PathPart& p) { return fmt::format("{}/{}", p.total, p.exposed); }

}  // namespace

std::vector<ScalingRow> run_scaling_study(const TrainOptions& base, const ScalingStudyOptions& study, std::ostream& out) {
  if (base.out_dir.empty()) throw std::invalid_argument("--scaling-study needs --out DIR (for scaling.csv and scaling.png)");
  if (study.wafers.empty() || study.sparsities.empty())
    throw std::invalid_argument("--scaling-study: no wafer counts or sparsities to run");
  const size_t most = *std::max_element(study.wafers.begin(), study.wafers.end());
  if (base.run.batch < most)
    throw std::invalid_argument(fmt::format("--scaling-study: the global batch {} is smaller than {} wafers "
                                            "(every wafer needs a sample); raise --batch",
                                            base.run.batch, most));
  std::vector<size_t> wafers = study.wafers;
  std::sort(wafers.begin(), wafers.end());
  wafers.erase(std::unique(wafers.begin(), wafers.end()), wafers.end());
  out << fmt::format("scaling study: {} on {}, {} steps per run, batch {} (per wafer, then global)\n", base.run.model,
                     base.run.dataset, base.run.steps, base.run.batch);
  std::vector<ScalingRow> rows;
  for (const char* mode : {"per-wafer", "global"})
    for (double sparsity : study.sparsities) {
      const size_t first = rows.size();
      for (size_t n : wafers) rows.push_back(measure(base, mode, sparsity, n, out));
      if (std::string(mode) == "per-wafer")
        for (size_t n : study.projected) rows.push_back(measure(base, "projected", sparsity, n, out));
      const ScalingRow& one = rows[first];
      for (size_t i = first; i < rows.size(); ++i) {
        rows[i].speedup = rows[i].samples_per_s / one.samples_per_s;
        rows[i].efficiency = rows[i].speedup * static_cast<double>(one.wafers) / static_cast<double>(rows[i].wafers);
      }
    }

  out << fmt::format("\n{:<9} {:>8} {:>6} {:>6} {:>12} {:>12} {:>8} {:>10}  {}\n", "mode", "sparsity", "wafers", "batch",
                     "cycles/step", "samples/s", "speed-up", "efficiency",
                     "critical path total/exposed: compute, stream, reduce, optimizer");
  for (const ScalingRow& r : rows)
    out << fmt::format("{:<9} {:>8.1f} {:>6} {:>6} {:>12.0f} {:>12.0f} {:>8.2f} {:>9.1f}%  {} {} {} {}\n", r.mode,
                       r.sparsity, r.wafers, r.global_batch, r.cycles_per_step, r.samples_per_s, r.speedup,
                       100.0 * r.efficiency, part_cell(r.path.compute), part_cell(r.path.stream),
                       part_cell(r.path.reduce), part_cell(r.path.optimizer));

  std::filesystem::create_directories(base.out_dir);
  const std::filesystem::path csv = base.out_dir / "scaling.csv";
  {
    std::ofstream f(csv);
    if (!f) throw std::runtime_error("cannot write " + csv.string());
    f << "mode,sparsity,wafers,global_batch,cycles_per_step,samples_per_s,speedup,efficiency,"
         "compute,compute_exposed,stream,stream_exposed,reduce,reduce_exposed,optimizer,optimizer_exposed\n";
    for (const ScalingRow& r : rows)
      f << fmt::format("{},{},{},{},{:.1f},{:.1f},{:.4f},{:.4f},{},{},{},{},{},{},{},{}\n", r.mode, r.sparsity,
                       r.wafers, r.global_batch, r.cycles_per_step, r.samples_per_s, r.speedup, r.efficiency,
                       r.path.compute.total, r.path.compute.exposed, r.path.stream.total, r.path.stream.exposed,
                       r.path.reduce.total, r.path.reduce.exposed, r.path.optimizer.total, r.path.optimizer.exposed);
  }
  train::LineChart chart;
  chart.title = fmt::format("{}: emulated speed-up over {} wafer(s)", base.run.model, wafers.front());
  chart.x_label = "wafers";
  chart.y_label = "speed-up (samples/s)";
  const train::Rgb colors[] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {214, 39, 40}, {148, 103, 189},
                               {140, 86, 75},  {227, 119, 194}, {127, 127, 127}};
  train::PlotSeries ideal;
  ideal.name = "ideal";
  ideal.color = {0, 0, 0};
  for (size_t n : wafers) {
    ideal.x.push_back(static_cast<double>(n));
    ideal.y.push_back(static_cast<double>(n) / static_cast<double>(wafers.front()));
  }
  chart.series.push_back(ideal);
  // One line per mode and sparsity, of the measured rows (a projection far right would flatten them).
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].mode == "projected") continue;
    const std::string name = fmt::format("{} batch, sparsity {:.1f}", rows[i].mode, rows[i].sparsity);
    if (chart.series.back().name != name) {
      train::PlotSeries s;
      s.name = name;
      s.color = colors[(chart.series.size() - 1) % std::size(colors)];
      chart.series.push_back(std::move(s));
    }
    chart.series.back().x.push_back(static_cast<double>(rows[i].wafers));
    chart.series.back().y.push_back(rows[i].speedup);
  }
  const std::filesystem::path png = base.out_dir / "scaling.png";
  train::plot_line_chart(png, chart);
  out << "wrote " << csv.string() << "\nwrote " << png.string() << "\n";
  return rows;
}

}  // namespace wsemu::wstrain
