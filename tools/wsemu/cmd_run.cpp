// `wsemu run`: run a built kernel on the virtual wafer with .npy inputs and outputs.
#include "tools/wsemu/kernel_cli.hpp"
#include "tools/wsemu/subcommand.hpp"
#include "tools/wsemu/trace_options.hpp"

namespace wsemu::cli {
namespace {

constexpr const char* kFooter = R"(
Default sequence: copy every --in array to its symbol on every PE of the symbol's rectangle
(through the fabric edge and the memcpy firmware, unless --backdoor), launch the entry function,
run until nothing is left to do, copy every --out symbol back. Prints the kernel's dprint /
dprintr lines as they come ("@cycle P<x>.<y>: text"; in --stats as "dprint"), then the cycles
and the time they take at the profile's clock; host data costs cycles under the host-channel
model (firmware/README.md), and each host call costs 200 us of host time, reported apart.

An .npy input must have the symbol's dtype and h*w*elems elements (shape (h, w, elems), or
(elems,) on a one-PE rectangle). Outputs are written in that shape.

Exit status: 0 success; 2 bad usage or input; 3 kernel fault (printed with PE, cycle, PC and
instruction); 4 hang (the hang report names each blocked PE, task, queue and color); 5 the
--max-cycles limit.

Example:
  wsemu run gemv.wsx --in A=A.npy --in x=x.npy --in b=b.npy --out y=y.npy --stats stats.json
)";

int run_command(const KernelCliArgs& a, const TraceRecordingOptions& trace) {
  std::unique_ptr<PreparedRun> p = prepare_run(a, "run");
  if (!p) return kExitUsage;
  runtime::host::SdkRuntime rt(p->exe, p->options);
  std::map<std::string, runtime::npy::NpyArray> outputs;
  TraceRecordingPtr recording;
  std::shared_ptr<KernelPrints> prints;
  try {
    recording = start_trace_recording(rt, trace);
    prints = show_kernel_prints(rt);
    outputs = runtime::host::run_kernel(rt, p->request);
    finish_trace_recording(recording, rt, nullptr);
  } catch (const runtime::host::HostError& e) {
    finish_trace_recording(recording, rt, &e);
    write_stats(rt, a.stats_path, "run", prints.get());
    return report_host_error(e, "run");
  }
  if (!write_outputs(*p, outputs, "run", true)) return kExitUsage;
  std::printf("wsemu run: %s\n", cycles_line(rt).c_str());
  return write_stats(rt, a.stats_path, "run", prints.get()) ? 0 : kExitUsage;
}

const Register kRun{Subcommand{"run", [](CLI::App& app) -> std::function<int()> {
                                 auto args = std::make_shared<KernelCliArgs>();
                                 auto trace = std::make_shared<TraceRecordingOptions>();
                                 app.description("Run a built kernel (.wsx) on the virtual wafer: .npy inputs in, "
                                                 ".npy outputs out, cycles and stats");
                                 add_kernel_options(app, *args);
                                 add_trace_options(app, *trace);
                                 app.footer(kFooter);
                                 return [args, trace]() { return run_command(*args, *trace); };
                               }}};

}  // namespace
}  // namespace wsemu::cli
