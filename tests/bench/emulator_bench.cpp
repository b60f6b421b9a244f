// Emulator benchmarks: how fast the virtual wafer steps.
//   BM_DenseCompute/<side>/<threads>: every PE loops fmacs over 128 fp32 elements (memory
//     only, executed in bulk); counter pe_cycles/s = simulated cycles x PEs per second.
//   BM_FabricHeavy/<side>/<threads>: every PE streams 256 wavelets to its east neighbour
//     (async fabout) while receiving 256 from the west (async fabin); counters
//     wavelet_hops/s and pe_cycles/s.
//   BM_IdleFullWafer: an idle 762 x 1176 wse3 wafer; counter bytes_per_tile.
// Run: build/bin/emulator_bench [--benchmark_filter=...]. Figures go to the README.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

#include "emulator/wafer.hpp"
#include "isa/assembler.hpp"
#include "tests/bench/bench_wafers.hpp"
#include "tools/cli_conventions.hpp"

namespace {

using namespace wsemu;
using namespace wsemu::bench;  // the shared benchmark programs and direction masks

emu::ColorRoute route(emu::DirectionMask rx, emu::DirectionMask tx) { return emu::ColorRoute::simple(rx, tx); }
std::unique_ptr<emu::Wafer> fabric_wafer(int side, int threads) {
  constexpr uint32_t kLen = 256;
  auto make = [&](bool sends, bool receives, int out_color, int in_color) {
    std::string src = ".arch wse3\n.equ LEN, " + std::to_string(kLen) + R"(
.data
src:    .u32 [LEN]
dst:    .u32 [LEN]
.dsd    srcd = mem1d(src, LEN)
.dsd    dstd = mem1d(dst, LEN)
)";
    if (sends)
      src += ".dsd outq = fabout(" + std::to_string(out_color) + ", 1, LEN)\n.oqinit 1, " + std::to_string(out_color) + "\n";
    if (receives)
      src += ".dsd inq = fabin(" + std::to_string(in_color) + ", 0, LEN)\n.iqinit 0, " + std::to_string(in_color) + "\n";
    src += ".code\n.task main, local, 10\nmain:\n";
    if (sends) src += "  mov32.async outq, srcd, ut=1\n";
    if (receives) src += "  mov32.async dstd, inq, ut=0\n";
    src += "  exit\n";
    return assemble(src);
  };
  auto first = make(true, false, 1, 0);
  auto odd = make(true, true, 2, 1), even = make(true, true, 1, 2);
  auto last_odd = make(false, true, 0, 1), last_even = make(false, true, 0, 2);
  auto w = std::make_unique<emu::Wafer>(emu::arch_profile("wse3"), side, side, emu::WaferOptions{threads, 64});
  for (int y = 0; y < side; ++y)
    for (int i = 0; i < side; ++i) {
      const bool last = i == side - 1;
      w->load_program(i, y, i == 0 ? first : last ? (i % 2 ? last_odd : last_even) : (i % 2 ? odd : even), i, y);
      if (i > 0) w->set_route(i, y, i % 2 ? 1 : 2, route(kW, kR));
      if (!last) w->set_route(i, y, i % 2 ? 2 : 1, route(kR, kE));
      w->activate_task(i, y, 10);
    }
  return w;
}

// Runs a fresh wafer from `make(width, height)` per iteration (building it untimed) and reports
// PE-cycles and wavelet-hops per second and the simulated cycles of one run.
template <class MakeWafer>
void run_wafers(benchmark::State& state, MakeWafer make) {
  uint64_t pe_cycles = 0, hops = 0, cycles = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto w = make(int(state.range(0)), int(state.range(1)));
    state.ResumeTiming();
    const auto r = w->run(1'000'000);
    if (r.status != emu::RunResult::Status::QUIESCENT) state.SkipWithError(r.to_string().c_str());
    const auto t = w->totals();
    pe_cycles += t.pe_cycles;
    hops += t.wavelet_hops;
    cycles = r.cycle;
  }
  state.counters["pe_cycles/s"] = benchmark::Counter(double(pe_cycles), benchmark::Counter::kIsRate);
  state.counters["wavelet_hops/s"] = benchmark::Counter(double(hops), benchmark::Counter::kIsRate);
  state.counters["sim_cycles"] = double(cycles);
}

void BM_DenseCompute(benchmark::State& state) { run_wafers(state, dense_wafer); }

void BM_FabricHeavy(benchmark::State& state) { run_wafers(state, fabric_wafer); }

size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * size_t(sysconf(_SC_PAGESIZE));
}

void BM_IdleFullWafer(benchmark::State& state) {
  double per_tile = 0, rss_per_tile = 0;
  for (auto _ : state) {
    const size_t before = resident_bytes();
    emu::Wafer w(emu::arch_profile("wse3"), 762, 1176);
    const auto r = w.run(10);
    benchmark::DoNotOptimize(r);
    const double tiles = 762.0 * 1176.0;
    per_tile = double(w.host_memory_bytes()) / tiles;
    rss_per_tile = double(resident_bytes() - before) / tiles;
  }
  state.counters["bytes_per_tile"] = per_tile;
  state.counters["rss_bytes_per_tile"] = rss_per_tile;
}

void sizes(benchmark::internal::Benchmark* b) {
  for (int side : {16, 64, 256})
    for (int threads : {1, 2}) b->Args({side, threads});
  b->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
}

BENCHMARK(BM_DenseCompute)->Apply(sizes);
BENCHMARK(BM_FabricHeavy)->Apply(sizes);
BENCHMARK(BM_IdleFullWafer)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

// BENCHMARK_MAIN with the house's --version and exit code 2 for an unknown flag (Google
// Benchmark's own --help already exits 0).
int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::printf("emulator_bench %s\n", wsemu::kVersion);
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return wsemu::cli::kExitUsage;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
