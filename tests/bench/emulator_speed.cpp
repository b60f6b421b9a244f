// emulator_speed: how fast the virtual wafer steps, in wall time, per kernel, fabric size and
// thread count (issue #17's table). Each case runs in its own child process, so that the peak
// RSS printed is that case's alone.
//   stream_e   every PE streams LEN wavelets one hop east (async fabout) while draining the
//              stream from the west (async fabin): every eastward link busy, link load 0.25
//   stream_ew2 every PE streams LEN wavelets two hops east and LEN two hops west (the PE between
//              relays them), all east and west links busy: link load 0.5 (the core injects
//              one wavelet per cycle)
//   dense      every PE loops fmacs over 128 fp32 elements from memory (no fabric)
//   stencil    kernels/stencil-2d-5pt (8 x 8 points per PE, 4 iterations), halo exchange in
//              four directions plus compute; the back door loads the data, only launch + run
//              are timed
//   ws_step    one weight-streaming training step of wsemu train's wafer (runtime/wstrain):
//              mlp:784,64,10, 32 samples (one wafer's shard of batch 64 on 2 wafers) on the
//              chosen 8 x 1 PEs, seeded random weights and data, the network in the clock;
//              inputs, forward, loss, backward through the WaferSession (the size is ignored;
//              its hops/s column counts the edge wavelets: weights in, gradients out)
//   idle       the full 762 x 1176 wse3 wafer, nothing loaded: host bytes per tile
// Columns: simulated cycles, wall seconds (median of --repeat runs), CPU seconds of all threads,
// wavelet link-hops/s, PE-cycles/s, tile-steps/s, host ns per tile-step (all per wall second), average
// link load (hops per directed link per cycle), peak RSS. Run: build/bin/emulator_speed [--cases a,b]
// [--sizes 16,64] [--threads 1,2] [--repeat 3]. A benchmark, never a test: it asserts nothing about time.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/layout/build.hpp"
#include "emulator/wafer.hpp"
#include "firmware/memcpy_protocol.hpp"
#include "isa/assembler.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "runtime/wstrain/wafer_session.hpp"
#include "tests/bench/bench_wafers.hpp"
#include "tools/cli_conventions.hpp"

namespace {

using namespace wsemu;
using namespace wsemu::bench;  // the shared benchmark programs and direction masks

struct Measured {
  uint64_t cycles = 0, hops = 0, pe_cycles = 0, tile_steps = 0;
  double seconds = 0;      // wall
  double cpu_seconds = 0;  // all threads of the process, for a loaded machine
};

double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

Measured run_wafer(emu::Wafer& w) {
  const auto before = w.totals();
  const double c0 = cpu_now();
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = w.run(100'000'000);
  const auto t1 = std::chrono::steady_clock::now();
  const double c1 = cpu_now();
  if (r.status != emu::RunResult::Status::QUIESCENT) throw std::runtime_error(r.to_string());
  const auto after = w.totals();
  return {after.cycles - before.cycles, after.wavelet_hops - before.wavelet_hops,
          after.pe_cycles - before.pe_cycles, after.tile_steps - before.tile_steps,
          std::chrono::duration<double>(t1 - t0).count(), c1 - c0};
}

// Every PE streams LEN wavelets `hops` hops east (and, with `west`, as many west), drained by
// async fabin at the PE `hops` away; the PEs between relay them on static routes. Sender x uses
// color x % (hops + 1) eastward and hops + 1 + x % (hops + 1) westward, so the colors a router
// sees are distinct. Queues: iq0 from the west, iq2 from the east, oq1 east, oq3 west.
std::unique_ptr<emu::Wafer> stream_wafer(int side, int threads, int hops, bool west) {
  constexpr uint32_t kLen = 256;
  const int period = hops + 1;
  std::map<std::string, std::shared_ptr<const isa::ObjectImage>> images;
  auto n = [](int v) { return std::to_string(v); };
  auto program = [&](int ce_out, int ce_in, int cw_out, int cw_in) {  // -1: none
    const std::string key = n(ce_out) + "," + n(ce_in) + "," + n(cw_out) + "," + n(cw_in);
    if (auto it = images.find(key); it != images.end()) return it->second;
    std::string src = ".arch wse3\n.equ LEN, " + n(kLen) + R"(
.data
src:    .u32 [LEN]
dst:    .u32 [LEN]
dst2:   .u32 [LEN]
.dsd    srcd = mem1d(src, LEN)
.dsd    dstd = mem1d(dst, LEN)
.dsd    dst2d = mem1d(dst2, LEN)
)";
    if (ce_out >= 0) src += ".dsd eo = fabout(" + n(ce_out) + ", 1, LEN)\n.oqinit 1, " + n(ce_out) + "\n";
    if (ce_in >= 0) src += ".dsd ei = fabin(" + n(ce_in) + ", 0, LEN)\n.iqinit 0, " + n(ce_in) + "\n";
    if (cw_out >= 0) src += ".dsd wo = fabout(" + n(cw_out) + ", 3, LEN)\n.oqinit 3, " + n(cw_out) + "\n";
    if (cw_in >= 0) src += ".dsd wi = fabin(" + n(cw_in) + ", 2, LEN)\n.iqinit 2, " + n(cw_in) + "\n";
    src += ".code\n.task main, local, 10\nmain:\n";
    if (ce_out >= 0) src += "  mov32.async eo, srcd, ut=1\n";
    if (ce_in >= 0) src += "  mov32.async dstd, ei, ut=0\n";
    if (cw_out >= 0) src += "  mov32.async wo, srcd, ut=3\n";
    if (cw_in >= 0) src += "  mov32.async dst2d, wi, ut=2\n";
    src += "  exit\n";
    return images[key] = assemble(src);
  };
  auto east = [&](int sender) { return sender % period; };
  auto westc = [&](int sender) { return period + sender % period; };
  auto w = std::make_unique<emu::Wafer>(emu::arch_profile("wse3"), side, side, emu::WaferOptions{threads, 64});
  for (int y = 0; y < side; ++y)
    for (int x = 0; x < side; ++x) {
      const bool e_out = x + hops < side, e_in = x - hops >= 0;
      const bool w_out = west && x - hops >= 0, w_in = west && x + hops < side;
      w->load_program(x, y, program(e_out ? east(x) : -1, e_in ? east(x - hops) : -1, w_out ? westc(x) : -1,
                                    w_in ? westc(x + hops) : -1),
                      x, y);
      if (e_out) w->set_route(x, y, east(x), emu::ColorRoute::simple(kR, kE));
      if (e_in) w->set_route(x, y, east(x - hops), emu::ColorRoute::simple(kW, kR));
      for (int k = 1; k < hops; ++k)  // relays of the senders k to the west (east)
        if (x - k >= 0 && x - k + hops < side) w->set_route(x, y, east(x - k), emu::ColorRoute::simple(kW, kE));
      if (w_out) w->set_route(x, y, westc(x), emu::ColorRoute::simple(kR, kW));
      if (w_in) w->set_route(x, y, westc(x + hops), emu::ColorRoute::simple(kE, kR));
      for (int k = 1; west && k < hops; ++k)
        if (x + k < side && x + k - hops >= 0) w->set_route(x, y, westc(x + k), emu::ColorRoute::simple(kE, kW));
      w->activate_task(x, y, 10);
    }
  return w;
}

std::string source_dir() {
  const char* s = std::getenv("WSEMU_SOURCE_DIR");
  return s ? s : WSEMU_DEFAULT_SOURCE_DIR;
}

Measured run_stencil(int side, int threads) {
  constexpr int kM = 8, kN = 8, kIters = 4;
  compiler::layout::BuildOptions options;
  options.params = {{"kx", side}, {"ky", side}, {"M", kM}, {"N", kN}, {"ITERS", kIters}};
  options.include_dirs = {firmware::include_dir()};
  compiler::layout::BuildResult built =
      compiler::layout::build_layout_file(source_dir() + "/kernels/stencil-2d-5pt/layout.wsl", options);
  if (!built.ok()) throw std::runtime_error("stencil-2d-5pt does not build");
  runtime::host::RuntimeOptions ro;
  ro.threads = threads;
  ro.backdoor = true;
  runtime::host::SdkRuntime rt(*built.executable, ro);
  rt.load();
  const size_t tile = size_t(kM + 2) * size_t(kN + 2);
  std::vector<uint32_t> u0(size_t(side) * size_t(side) * tile, 0x3f800000u), coeff;
  for (int p = 0; p < side * side; ++p)
    for (float v : {0.1f, 0.1f, 0.1f, 0.6f, 0.1f}) coeff.push_back(std::bit_cast<uint32_t>(v));
  rt.memcpy_h2d("u0", u0, 0, 0, side, side, int(tile));
  rt.memcpy_h2d("coeff", coeff, 0, 0, side, side, 5);
  emu::Wafer& w = rt.wafer();
  w.set_parallel_min_tiles(64);
  const auto before = w.totals();
  const double c0 = cpu_now();
  const auto t0 = std::chrono::steady_clock::now();
  rt.launch("compute");
  rt.run_until_quiescent();
  const auto t1 = std::chrono::steady_clock::now();
  const double c1 = cpu_now();
  const auto after = w.totals();
  return {after.cycles - before.cycles, after.wavelet_hops - before.wavelet_hops,
          after.pe_cycles - before.pe_cycles, after.tile_steps - before.tile_steps,
          std::chrono::duration<double>(t1 - t0).count(), c1 - c0};
}

Measured run_ws_step(int threads) {
  const train::ModelSpec spec = train::ModelSpec::parse("mlp:784,64,10");
  constexpr size_t kSamples = 32;
  const wstrain::WaferPlan plan(spec, kSamples, wstrain::WaferPlan::choose_shape(spec, kSamples, 0, 0));
  wstrain::SessionOptions options;
  options.threads = threads;
  wstrain::WaferSession session(plan, options);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-0.1f, 0.1f);
  const size_t layers = spec.num_layers();
  std::vector<std::vector<float>> weights(layers), biases(layers), dw(layers), db(layers);
  for (size_t l = 0; l < layers; ++l) {
    weights[l].resize(spec.sizes[l] * spec.sizes[l + 1]);
    biases[l].resize(spec.sizes[l + 1]);
    for (float& v : weights[l]) v = uniform(rng);
    for (float& v : biases[l]) v = uniform(rng);
    dw[l].assign(weights[l].size(), 0.0f);
    db[l].assign(biases[l].size(), 0.0f);
  }
  std::vector<float> inputs(kSamples * spec.input_dim());
  for (float& v : inputs) v = uniform(rng) + 0.1f;
  std::vector<uint32_t> labels(kSamples);
  for (uint32_t& label : labels) label = uint32_t(rng() % spec.num_classes());
  const wstrain::WaferCounters before = session.counters();
  const double c0 = cpu_now();
  const auto t0 = std::chrono::steady_clock::now();
  session.load_micro_batch(inputs, labels, kSamples);
  for (size_t l = 0; l < layers; ++l) session.forward_layer(l, weights[l], biases[l], {});
  session.loss();
  for (size_t l = layers; l-- > 0;) session.backward_layer(l, weights[l], biases[l], {}, dw[l], db[l]);
  session.finish_step();
  const auto t1 = std::chrono::steady_clock::now();
  const double c1 = cpu_now();
  const wstrain::WaferCounters after = session.counters();
  const uint64_t cycles = after.cycles - before.cycles;
  const uint64_t pes = uint64_t(plan.columns()) * uint64_t(plan.rows());
  const uint64_t hops = (after.weight_wavelets_in - before.weight_wavelets_in) +
                        (after.gradient_wavelets_out - before.gradient_wavelets_out);  // edge wavelets only
  return {cycles, hops, cycles * pes, after.tile_steps - before.tile_steps,
          std::chrono::duration<double>(t1 - t0).count(), c1 - c0};
}

Measured run_case(const std::string& name, int side, int threads) {
  if (name == "ws_step") return run_ws_step(threads);
  if (name == "dense") return run_wafer(*dense_wafer(side, threads));
  if (name == "stream_e") return run_wafer(*stream_wafer(side, threads, 1, false));
  if (name == "stream_ew2") return run_wafer(*stream_wafer(side, threads, 2, true));
  if (name == "stencil") return run_stencil(side, threads);
  throw std::runtime_error("unknown case " + name);
}

// In the child: run `repeat` times, print one row with the median wall time.
void child(const std::string& name, int side, int threads, int repeat) {
  std::vector<Measured> runs;
  for (int i = 0; i < repeat; ++i) runs.push_back(run_case(name, side, threads));
  std::sort(runs.begin(), runs.end(), [](const Measured& a, const Measured& b) { return a.seconds < b.seconds; });
  const Measured& m = runs[runs.size() / 2];
  const int fabric = name == "stencil" ? side + 2 : side;  // the stencil's layout adds a ring
  const double links = 2.0 * (fabric - 1) * fabric * 2.0;
  std::printf("%-10s %5d %2d %9llu %9.3f %8.3f %11.3e %11.3e %11.3e %9.1f %6.3f", name.c_str(), side, threads,
              static_cast<unsigned long long>(m.cycles), m.seconds, m.cpu_seconds, double(m.hops) / m.seconds,
              double(m.pe_cycles) / m.seconds, double(m.tile_steps) / m.seconds,
              m.tile_steps ? m.seconds * 1e9 / double(m.tile_steps) : 0.0,
              m.cycles && name != "ws_step" ? double(m.hops) / (links * double(m.cycles)) : 0.0);
  std::fflush(stdout);
}

void idle_child() {
  emu::Wafer w(emu::arch_profile("wse3"), 762, 1176);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = w.run(1000);
  const auto t1 = std::chrono::steady_clock::now();
  std::printf("%-10s %5s %2d %9llu %9.6f  host bytes/tile %.2f", "idle", "full", 1,
              static_cast<unsigned long long>(r.cycles_run), std::chrono::duration<double>(t1 - t0).count(),
              double(w.host_memory_bytes()) / (762.0 * 1176.0));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> cases = {"stream_e", "stream_ew2", "dense", "stencil", "ws_step", "idle"};
  std::vector<int> sizes = {16, 64, 256}, thread_counts = {1, 2};
  int repeat = 3;
  CLI::App app{
      "emulator_speed: wall time of the virtual wafer per kernel, fabric size and thread count "
      "(each case in its own child process; see the head of tests/bench/emulator_speed.cpp)"};
  app.add_option("--cases", cases, "cases to run")
      ->delimiter(',')
      ->check(CLI::IsMember({"stream_e", "stream_ew2", "dense", "stencil", "ws_step", "idle"}))
      ->capture_default_str();
  wsemu::cli::add_number(app, "--sizes", sizes, "fabric sides in PEs", 1, 1176)->delimiter(',');
  wsemu::cli::add_number(app, "--threads", thread_counts, "thread counts", 1, 1024)->delimiter(',');
  wsemu::cli::add_number(app, "--repeat", repeat, "runs per case (the median is printed)", 1, 1e6);
  wsemu::cli::add_version_flag(app, "emulator_speed");
  WSEMU_CLI_PARSE(app, argc, argv);
  std::printf("%-10s %5s %2s %9s %9s %8s %11s %11s %11s %9s %6s %s\n", "case", "side", "th", "cycles", "wall_s", "cpu_s",
              "hops/s", "pe_cyc/s", "tsteps/s", "ns/tstep", "load", "peak_rss_MiB");
  for (const std::string& name : cases) {
    std::vector<int> case_sizes = name == "idle" ? std::vector<int>{0} : name == "ws_step" ? std::vector<int>{8} : sizes;
    for (int side : case_sizes)
      for (int threads : name == "idle" ? std::vector<int>{1} : thread_counts) {
        std::fflush(stdout);
        const pid_t pid = fork();
        if (pid == 0) {
          try {
            if (name == "idle")
              idle_child();
            else
              child(name, side, threads, side >= 256 ? 1 : repeat);
          } catch (const std::exception& e) {
            std::printf("%-10s %5d %2d error: %s", name.c_str(), side, threads, e.what());
            std::fflush(stdout);
            _exit(1);
          }
          _exit(0);
        }
        int status = 0;
        rusage usage{};
        wait4(pid, &status, 0, &usage);
        std::printf(" %8.1f\n", double(usage.ru_maxrss) / 1024.0);
      }
  }
  return 0;
}
