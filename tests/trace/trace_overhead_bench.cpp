// trace_overhead_bench: what recording a trace costs on a 16x16 kernel.
//
// The kernel: PE(0,y) streams K wavelets east on color 1 and PE(x,0) streams K wavelets south
// on color 2; every other PE of the row / column takes each wavelet into a data task that
// adds it to a sum (multicast: the route delivers to the RAMP and passes it on). Every PE is
// busy, every link in use, with backpressure. The same run is timed with tracing off (no
// sink), with a sink whose filter keeps nothing (the emulator still builds every event), and
// with full tracing to a file; the best of N repetitions is printed, with events and bytes.
//
// Usage: trace_overhead_bench [K=300] [repetitions=5] [trace file=/tmp/wsemu-bench.wstrace]
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "emulator/arch_profile.hpp"
#include "emulator/wafer.hpp"
#include "inspect/trace/trace_writer.hpp"
#include "isa/assembler.hpp"
#include "tools/cli_conventions.hpp"

namespace {

using namespace wsemu;

constexpr int kSide = 16;

std::shared_ptr<const isa::ObjectImage> program(bool send_east, bool send_south, int k) {
  std::string src = ".arch wse2\n.data\nsum1: .u32 0\nsum2: .u32 0\n.oqinit 2, 1\n.oqinit 3, 2\n.code\n";
  src += ".task on1, data, color 1\n ld32 r5, [sum1]\n add r5, r5, r0\n st32 [sum1], r5\n exit\n";
  src += ".task on2, data, color 2\n ld32 r6, [sum2]\n add r6, r6, r0\n st32 [sum2], r6\n exit\n";
  if (send_east || send_south) {
    src += fmt::format(".task main, local, 10\n li r1, 0\n li r2, {}\nloop:\n", k);
    if (send_east) src += " send 2, r1\n";
    if (send_south) src += " send 3, r1\n";
    src += " addi r1, r1, 1\n blt r1, r2, loop\n exit\n";
  }
  isa::AssembleResult r = isa::assemble(src, fmt::format("bench_{}{}.wsa", int(send_east), int(send_south)));
  if (!r.object) {
    for (const auto& d : r.errors) fmt::print(stderr, "{}\n", d.to_string());
    std::exit(2);
  }
  return std::make_shared<const isa::ObjectImage>(std::move(*r.object));
}

std::unique_ptr<emu::Wafer> build(int k) {
  auto w = std::make_unique<emu::Wafer>(emu::arch_profile("wse2"), kSide, kSide);
  auto corner = program(true, true, k), left = program(true, false, k), top = program(false, true, k), inner = program(false, false, k);
  using emu::Direction;
  const auto R = emu::bit(Direction::RAMP), E = emu::bit(Direction::EAST), W = emu::bit(Direction::WEST),
             S = emu::bit(Direction::SOUTH), N = emu::bit(Direction::NORTH);
  for (int y = 0; y < kSide; ++y)
    for (int x = 0; x < kSide; ++x) {
      w->load_program(x, y, x == 0 && y == 0 ? corner : x == 0 ? left : y == 0 ? top : inner);
      const emu::DirectionMask row_tx = x == 0 ? E : x == kSide - 1 ? R : emu::DirectionMask(R | E);
      const emu::DirectionMask col_tx = y == 0 ? S : y == kSide - 1 ? R : emu::DirectionMask(R | S);
      w->set_route(x, y, 1, emu::ColorRoute::simple(x == 0 ? R : W, row_tx));
      w->set_route(x, y, 2, emu::ColorRoute::simple(y == 0 ? R : N, col_tx));
      if (x == 0 || y == 0) w->activate_task(x, y, 10);
    }
  return w;
}

struct Timing {
  double seconds = 1e30;
  uint64_t cycles = 0, events = 0, bytes = 0;
};

enum class Mode { OFF, FILTERED_OUT, FULL };

Timing measure(Mode mode, int k, int reps, const std::string& file) {
  Timing best;
  for (int i = 0; i < reps; ++i) {
    auto w = build(k);
    std::unique_ptr<trace::TraceWriter> writer;
    if (mode != Mode::OFF) {
      trace::TraceWriterOptions o;
      if (mode == Mode::FILTERED_OUT) o.filter.kinds = 0;
      writer = std::make_unique<trace::TraceWriter>(file, *w, o);
      w->set_event_sink(writer.get());
    }
    const auto t0 = std::chrono::steady_clock::now();
    const emu::RunResult r = w->run(10'000'000);
    if (writer) writer->finish(*w, r);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r.status != emu::RunResult::Status::QUIESCENT) {
      fmt::print(stderr, "unexpected end: {}\n", r.to_string());
      std::exit(3);
    }
    if (s < best.seconds) {
      best.seconds = s;
      best.cycles = r.cycle;
      best.events = writer ? writer->events_written() : 0;
      best.bytes = writer ? writer->bytes_written() : 0;
    }
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int k = 300, reps = 5;
  std::string file = (std::filesystem::temp_directory_path() / "wsemu-bench.wstrace").string();
  CLI::App app{"trace_overhead_bench: what recording a trace costs on a 16x16 kernel"};
  wsemu::cli::add_number(app, "K", k, "wavelets per sender", 0, 1e6);
  wsemu::cli::add_number(app, "repetitions", reps, "runs of each mode (the best is printed)", 1,
                         1e6);
  app.add_option("trace-file", file, "where the full trace is written")->capture_default_str();
  wsemu::cli::add_version_flag(app, "trace_overhead_bench");
  WSEMU_CLI_PARSE(app, argc, argv);
  const Timing off = measure(Mode::OFF, k, reps, file);
  const Timing none = measure(Mode::FILTERED_OUT, k, reps, file);
  const Timing full = measure(Mode::FULL, k, reps, file);
  fmt::print("16x16 kernel, {} wavelets per sender, {} cycles, best of {} runs\n", k, off.cycles, reps);
  fmt::print("  tracing off:                {:8.2f} ms\n", off.seconds * 1e3);
  fmt::print("  sink installed, keeps none: {:8.2f} ms  ({:.2f}x)\n", none.seconds * 1e3, none.seconds / off.seconds);
  fmt::print("  full tracing to a file:     {:8.2f} ms  ({:.2f}x), {} events, {:.1f} MiB, {:.1f} bytes/event\n",
             full.seconds * 1e3, full.seconds / off.seconds, full.events, double(full.bytes) / (1 << 20),
             full.events ? double(full.bytes) / double(full.events) : 0.0);
  std::filesystem::remove(file);
  return 0;
}
