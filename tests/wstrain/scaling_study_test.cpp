// `wsemu train --scaling-study` at CI size: 1 and 2 wafers, both batch modes, dense and sparse.
// The table, scaling.csv and scaling.png are written; every row's throughput is its global
// batch over its cycles at the clock, speed-up and efficiency follow from the 1-wafer row.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/wstrain/train_test_support.hpp"

namespace {

using wsemu::testing::holds_all;
using wsemu::wstrain::fresh_temp_dir;
using wsemu::wstrain::run_cli;
using wsemu::wstrain::run_cli_ok;

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
  return cells;
}

TEST(ScalingStudy, WritesTheTableTheCsvAndThePlot) {
  const std::filesystem::path dir = fresh_temp_dir("wsemu-scaling-study-test");
  const std::string out = run_cli_ok("train --scaling-study --scaling-wafers 1,2 --model mlp:16,12,4 --dataset "
                                     "synthetic --synthetic-samples 256 --batch 4 --steps 2 --lr 0.01 -q --out " +
                                     dir.string());
  EXPECT_TRUE(holds_all(out, {"speed-up", "critical path"}));

  std::ifstream csv(dir / "scaling.csv");
  ASSERT_TRUE(csv) << out;
  std::string line;
  std::getline(csv, line);
  const std::vector<std::string> header = split(line);
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* name : {"mode", "sparsity", "wafers", "global_batch", "cycles_per_step", "samples_per_s",
                           "speedup", "efficiency", "stream_exposed", "optimizer"})
    ASSERT_TRUE(col.count(name)) << name << " missing in " << line;
  size_t rows = 0;
  std::map<std::string, double> one_wafer;  // mode + sparsity -> samples/s
  while (std::getline(csv, line)) {
    const std::vector<std::string> c = split(line);
    ASSERT_EQ(c.size(), header.size()) << line;
    ++rows;
    const bool projected = c[col["mode"]] == "projected";  // against the per-wafer rows
    const std::string series = (projected ? std::string("per-wafer") : c[col["mode"]]) + "/" + c[col["sparsity"]];
    const double wafers = std::stod(c[col["wafers"]]), batch = std::stod(c[col["global_batch"]]);
    const double cycles = std::stod(c[col["cycles_per_step"]]), rate = std::stod(c[col["samples_per_s"]]);
    EXPECT_GT(cycles, 0.0) << line;
    EXPECT_NEAR(rate, batch / (cycles / 850e6), 1e-3 * rate) << line;  // the profile's clock
    EXPECT_EQ(batch, c[col["mode"]] != "global" ? 4.0 * wafers : 4.0) << line;
    if (projected) {
      EXPECT_EQ(wafers, 192.0) << "the default projection: " << line;
    }
    if (wafers == 1) one_wafer[series] = rate;
    ASSERT_TRUE(one_wafer.count(series)) << "the 1-wafer row comes first: " << line;
    const double speedup = rate / one_wafer[series];
    EXPECT_NEAR(std::stod(c[col["speedup"]]), speedup, 1e-3) << line;
    EXPECT_NEAR(std::stod(c[col["efficiency"]]), speedup / wafers, 1e-3) << line;
  }
  EXPECT_EQ(rows, 2u * 3u * 2u + 3u);  // modes x sparsities x wafer counts, and 192 projected per sparsity
  EXPECT_EQ(one_wafer.size(), 6u);

  std::ifstream png(dir / "scaling.png", std::ios::binary);
  char magic[8] = {};
  ASSERT_TRUE(png.read(magic, 8)) << "no scaling.png";
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  EXPECT_GT(std::filesystem::file_size(dir / "scaling.png"), 1000u);
  std::filesystem::remove_all(dir);
}

// Where both run, the projection is the measured cluster: one wafer in a tree sized for 4 wafers
// (fan-out 2: two SwarmX levels) takes the cycles of the wafers of the real 4-wafer run. The
// inner level's latency is set high (20 us each way) so that the step boundary is exposed and the
// tree's depth shows: both exceed the 1-wafer step (one level) by the model's extra latency, one
// SwarmX-to-SwarmX hop down and one up, 2 x 20 us x 850 cycles/us = 34,000 cycles a step.
TEST(ScalingStudy, AProjectionIsTheMeasuredClusterWhereBothRun) {
  const std::filesystem::path dir = fresh_temp_dir("wsemu-scaling-projection-test");
  const std::string out = run_cli_ok("train --scaling-study --scaling-wafers 1,4 --scaling-project 4 --fanout 2 "
                                     "--net down.swarmx-swarmx.us=20 --net up.swarmx-swarmx.us=20 --model "
                                     "mlp:16,12,4 --dataset synthetic --synthetic-samples 256 --batch 4 --steps 3 "
                                     "--lr 0.01 -q --out " +
                                     dir.string());
  std::ifstream csv(dir / "scaling.csv");
  ASSERT_TRUE(csv) << out;
  std::string line;
  std::getline(csv, line);
  std::map<std::string, double> cycles;  // mode/sparsity/wafers
  while (std::getline(csv, line)) {
    const std::vector<std::string> c = split(line);
    cycles[c[0] + "/" + c[1] + "/" + c[2]] = std::stod(c[4]);
  }
  for (const char* sparsity : {"0", "0.5", "0.9"}) {
    const std::string s = sparsity;
    ASSERT_TRUE(cycles.count("projected/" + s + "/4")) << out;
    const double one = cycles["per-wafer/" + s + "/1"], four = cycles["per-wafer/" + s + "/4"];
    // The slowest of the 4 wafers counts; their compute differs by a few cycles with their data.
    EXPECT_NEAR(cycles["projected/" + s + "/4"], four, 10.0) << "sparsity " << s << "\n" << out;
    // The projected wafer has the 1-wafer run's data: only the tree differs.
    EXPECT_NEAR(cycles["projected/" + s + "/4"] - one, 34000.0, 2.0) << "sparsity " << s << "\n" << out;
  }
  std::filesystem::remove_all(dir);
}

TEST(ScalingStudy, RefusesAStudyItCannotRun) {
  std::string out;
  EXPECT_EQ(run_cli("train --scaling-study --model mlp:16,4 --dataset synthetic --steps 1", out), 2) << out;
  EXPECT_NE(out.find("needs --out"), std::string::npos) << out;
  EXPECT_EQ(run_cli("train --scaling-study --scaling-wafers 1,8 --batch 4 --model mlp:16,4 --dataset synthetic "
                    "--steps 1 --out /tmp/wsemu-scaling-refused", out), 2) << out;
  EXPECT_NE(out.find("smaller than 8 wafers"), std::string::npos) << out;
  EXPECT_EQ(run_cli("train --net nope=1 --model mlp:16,4 --dataset synthetic --steps 1", out), 2) << out;
  EXPECT_NE(out.find("--net nope=1"), std::string::npos) << out;
}

}  // namespace
