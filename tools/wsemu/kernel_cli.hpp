// Shared by `wsemu run` and `wsemu check`: their common options, loading of the executable and
// the .npy files, the run itself, and the exit codes.
//
// Contract: every user error is one clear line on stderr and a non-zero exit; a fault or a
// hang prints the emulator's report. Exit codes: 0 success, 1 outputs differ (check), 2 bad
// usage or input, 3 kernel fault (or another emulator fault), 4 hang, 5 cycle limit.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/executable/executable_io.hpp"
#include "emulator/pe_core.hpp"
#include "runtime/host/kernel_run.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "runtime/npy/npy.hpp"

namespace wsemu::cli {

constexpr int kExitMismatch = 1, kExitUsage = 2, kExitFault = 3, kExitHang = 4, kExitCycleLimit = 5;

struct KernelCliArgs {
  std::string kernel;
  std::vector<std::string> inputs, outputs;
  std::string launch;
  std::vector<uint32_t> launch_args;
  int threads = 0;
  uint64_t max_cycles = 1'000'000'000;
  std::string stats_path;
  bool backdoor = false;
  int channels = 1;
  bool col_major = false;
  std::vector<std::string> profile;
};

inline void add_kernel_options(CLI::App& app, KernelCliArgs& a) {
  app.add_option("kernel", a.kernel, "Executable built by `wsemu build` (.wsx)")->required();
  app.add_option("--in", a.inputs, "SYMBOL=file.npy: copy the array to the symbol on every PE of its rectangle")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--out", a.outputs, "SYMBOL=file.npy: copy the symbol back after the run and save it")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--launch", a.launch, "Exported function to launch (default: the only one)");
  app.add_option("--arg", a.launch_args, "A u32 argument of the launched function (repeatable, up to 8)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--threads", a.threads,
                 "Emulator threads; 0: the machine's cores, used from 1024 active PEs on (results are identical "
                 "for any count)")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  app.add_option("--max-cycles", a.max_cycles, "Stop with exit code 5 after this many cycles");
  app.add_option("--stats", a.stats_path, "Write the run's statistics as JSON to this file");
  app.add_flag("--backdoor", a.backdoor,
               "Copy through the SRAM back door instead of the fabric (fast; no memcpy cost in the cycles; "
               "labelled in the stats)");
  app.add_option("--channels", a.channels, "Host I/O channels (1..16), each 7 Gbps")->check(CLI::Range(1, 16));
  app.add_flag("--col-major", a.col_major, "The .npy arrays are in the SDK's COL_MAJOR order");
  app.add_option("--profile", a.profile, "Override an architecture profile field: key=value (see `wsemu info`)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

inline bool split_assignment(const std::string& text, const char* option, std::string& name, std::string& path) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    std::fprintf(stderr, "error: %s %s: expected SYMBOL=file.npy\n", option, text.c_str());
    return false;
  }
  name = text.substr(0, eq);
  path = text.substr(eq + 1);
  return true;
}

// Everything a run needs, prepared; nullptr after printing the error.
struct PreparedRun {
  compiler::Executable exe;
  runtime::host::KernelRunRequest request;
  std::vector<std::pair<std::string, std::string>> output_files;  // symbol, path
  runtime::host::RuntimeOptions options;
};

inline std::unique_ptr<PreparedRun> prepare_run(const KernelCliArgs& a, const char* command) {
  auto p = std::make_unique<PreparedRun>();
  try {
    p->exe = compiler::load_executable(a.kernel);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wsemu %s: error: %s\n", command, e.what());
    return nullptr;
  }
  try {
    for (const std::string& in : a.inputs) {
      std::string sym, path;
      if (!split_assignment(in, "--in", sym, path)) return nullptr;
      runtime::host::NamedArray na{sym, runtime::npy::read_npy(path), path};
      runtime::host::check_array_for_symbol(p->exe, sym, na.array, path);
      p->request.inputs.push_back(std::move(na));
    }
    for (const std::string& out : a.outputs) {
      std::string sym, path;
      if (!split_assignment(out, "--out", sym, path)) return nullptr;
      p->output_files.emplace_back(sym, path);
      p->request.outputs.push_back(sym);
    }
    p->request.launch = runtime::host::entry_function(p->exe, a.launch);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wsemu %s: error: %s\n", command, e.what());
    return nullptr;
  }
  p->request.launch_args = a.launch_args;
  p->request.order = a.col_major ? runtime::host::MemcpyOrder::COL_MAJOR : runtime::host::MemcpyOrder::ROW_MAJOR;
  p->options.threads = a.threads;
  p->options.max_cycles = a.max_cycles;
  p->options.backdoor = a.backdoor;
  p->options.channel.channels = a.channels;
  p->options.profile_overrides = a.profile;
  return p;
}

// Saves each --out array as .npy; `announce` prints a "wrote" line per file (run does, check
// reports its comparisons instead). False after printing the error.
inline bool write_outputs(const PreparedRun& p, const std::map<std::string, runtime::npy::NpyArray>& outputs,
                          const char* command, bool announce) {
  for (const auto& [sym, path] : p.output_files) {
    try {
      runtime::npy::write_npy(path, outputs.at(sym));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "wsemu %s: error: %s\n", command, e.what());
      return false;
    }
    if (announce) std::printf("wrote %s: %s %s\n", path.c_str(), sym.c_str(), outputs.at(sym).shape_string().c_str());
  }
  return true;
}

// Prints a host error the way a kernel developer wants to read it; returns the exit code.
inline int report_host_error(const runtime::host::HostError& e, const char* command) {
  using Kind = runtime::host::HostError::Kind;
  switch (e.kind()) {
    case Kind::USAGE: std::fprintf(stderr, "wsemu %s: error: %s\n", command, e.what()); return kExitUsage;
    case Kind::FAULT: std::fprintf(stderr, "wsemu %s: %s\n", command, e.what()); return kExitFault;
    case Kind::HANG: std::fprintf(stderr, "wsemu %s: %s", command, e.what()); return kExitHang;
    case Kind::CYCLE_LIMIT: std::fprintf(stderr, "wsemu %s: %s\n", command, e.what()); return kExitCycleLimit;
  }
  return kExitUsage;
}

inline std::string cycles_line(const runtime::host::SdkRuntime& rt) {
  const runtime::host::HostStats& s = rt.stats();
  const compiler::Executable& exe = rt.executable();
  return fmt::format(
      "{} cycles = {:.3f} us at {:.0f} MHz ({} {}x{}; memcpy {} cycles{}, launch {}, run {}); host overhead {:.0f} "
      "us for {} transactions",
      rt.cycles(), double(rt.cycles()) / rt.clock_mhz(), rt.clock_mhz(), exe.arch, exe.fabric_width,
      exe.fabric_height, s.memcpy_cycles, s.phases.empty() || !s.phases.front().backdoor ? "" : " (back door)",
      s.launch_cycles, s.run_cycles, s.host_overhead_us, s.transactions);
}

// The kernel's dprint / dprintr lines: printed to stdout as the wafer emits them ("@cycle
// P<x>.<y>: text", fabric coordinates; so a hang or a fault still shows what came before it) and
// kept for the --stats JSON. Loads the runtime if it is not loaded yet.
struct KernelPrints {
  std::vector<emu::LogLine> lines;
};

inline std::shared_ptr<KernelPrints> show_kernel_prints(runtime::host::SdkRuntime& rt) {
  auto prints = std::make_shared<KernelPrints>();
  if (!rt.loaded()) rt.load();
  rt.wafer().set_log_sink([prints](const emu::LogLine& line) {
    emu::LogLine l = line;
    while (!l.text.empty() && l.text.back() == '\n') l.text.pop_back();  // one line each
    std::printf("%s\n", l.to_string().c_str());
    std::fflush(stdout);
    prints->lines.push_back(std::move(l));
  });
  return prints;
}

inline bool write_stats(const runtime::host::SdkRuntime& rt, const std::string& path, const char* command,
                        const KernelPrints* prints = nullptr) {
  if (path.empty()) return true;
  nlohmann::json j = rt.stats_json();
  if (prints) {
    j["dprint"] = nlohmann::json::array();
    for (const emu::LogLine& l : prints->lines)
      j["dprint"].push_back({{"cycle", l.cycle}, {"x", l.x}, {"y", l.y}, {"text", l.text}});
  }
  std::ofstream f(path);
  f << j.dump(2) << "\n";
  if (!f) {
    std::fprintf(stderr, "wsemu %s: error: cannot write %s\n", command, path.c_str());
    return false;
  }
  return true;
}

}  // namespace wsemu::cli
