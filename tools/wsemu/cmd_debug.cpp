// `wsemu debug kernel.wsx`: the debugger (inspect/debug/debugger.hpp) on a kernel loaded by the
// host runtime, with its inputs copied in.
//
// Why `run` replays: the host runtime drives the launch itself (it pushes the launch through the
// fabric edge cycle by cycle and runs until the wafer settles), so a breakpoint cannot pause it.
// `run` therefore launches once with the debugger in probe mode, which notes the first cycle at
// which a breakpoint or watchpoint would stop; the emulator being deterministic, a second, fresh
// session is then run with the cycle limit set just past that cycle, and the debugger takes over
// from there, stepping the wafer itself.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "inspect/debug/debugger.hpp"
#include "inspect/debug/line_editor.hpp"
#include "tools/wsemu/kernel_cli.hpp"
#include "tools/wsemu/subcommand.hpp"

namespace wsemu::cli {
namespace {

constexpr const char* kFooter = R"(
The kernel is loaded and the --in arrays are copied to their symbols; the prompt then waits
before the launch: set breakpoints, then `run` launches the entry function (--launch, or the
only exported one) and stops at the first breakpoint. Type `help` for the commands. With
--batch FILE the commands come from FILE (each echoed), and the exit status is 1 if one failed.

Example:
  wsemu debug gemv.wsx --in A=A.npy --in x=x.npy --in b=b.npy
  (wsemu) break task compute at 0,0
  (wsemu) run
  (wsemu) step 10
  (wsemu) print y[0:4]
  (wsemu) where
)";

struct DebugArgs {
  KernelCliArgs kernel;
  std::string batch;
};

class DebugSession {
 public:
  DebugSession(PreparedRun& p, std::ostream& out) : p_(p), out_(out) {
    rt_ = fresh(p_.options.max_cycles);
    attach();
  }

  // false once the user quits.
  bool execute(const std::string& line) {
    std::istringstream in(line);
    std::string cmd;
    in >> cmd;
    if (cmd == "run" || cmd == "r" || ((cmd == "continue" || cmd == "c") && !launched_)) {
      run();
      return true;
    }
    const bool stop_command = cmd == "break" || cmd == "b" || cmd == "watch" || cmd == "delete" || cmd == "d";
    const bool failed_before = dbg_->any_command_failed();
    const bool go_on = dbg_->execute(line);
    if (stop_command && !dbg_->any_command_failed()) stop_commands_.push_back(line);
    failed_ |= dbg_->any_command_failed() && !failed_before;
    return go_on;
  }
  bool failed() const { return failed_ || dbg_->any_command_failed(); }

 private:
  std::unique_ptr<runtime::host::SdkRuntime> fresh(uint64_t max_cycles) {
    runtime::host::RuntimeOptions o = p_.options;
    o.max_cycles = max_cycles;
    auto rt = std::make_unique<runtime::host::SdkRuntime>(p_.exe, o);
    rt->load();
    rt->wafer().set_log_sink([this](const emu::LogLine& line) {  // dprint / dprintr
      std::string text = line.to_string();
      while (!text.empty() && text.back() == '\n') text.pop_back();
      if (holding_prints_)
        held_prints_.push_back(std::move(text));
      else
        out_ << text << "\n";
    });
    runtime::host::MemcpyOptions m;
    m.order = p_.request.order;
    for (const runtime::host::NamedArray& in : p_.request.inputs) {
      const compiler::HostSymbol* s = p_.exe.find_symbol(in.symbol);
      const compiler::Rect& rect = p_.exe.rects[s->rect];
      const int bytes = isa::elem_bytes(s->type);
      m.data_type = bytes == 2 ? runtime::host::MemcpyDataType::MEMCPY_16BIT : runtime::host::MemcpyDataType::MEMCPY_32BIT;
      std::vector<uint32_t> words(in.array.data.size() / size_t(bytes));
      for (size_t i = 0; i < words.size(); ++i)
        for (int b = 0; b < bytes; ++b) words[i] |= uint32_t(in.array.data[i * size_t(bytes) + size_t(b)]) << (8 * b);
      rt->memcpy_h2d(in.symbol, words, 0, 0, int(rect.width), int(rect.height), int(s->elems_per_pe), m);
    }
    return rt;
  }

  // A new session (the old debugger first: it refers to the old wafer).
  void restart(uint64_t max_cycles) {
    dbg_.reset();
    rt_ = fresh(max_cycles);
  }

  // A debugger on the current wafer with the breakpoints and watchpoints set so far.
  void attach(bool probe = false) {
    dbg_.reset();
    std::ostringstream replayed;
    dbg_ = std::make_unique<debug::Debugger>(rt_->wafer(), replayed);
    for (const std::string& line : stop_commands_) dbg_->execute(line);
    dbg_->clear_failure();  // a replayed `break cycle N` may have passed: not the user's mistake now
    dbg_->set_output(probe ? static_cast<std::ostream&>(quiet_) : out_);
    if (probe) dbg_->set_probe(true);
  }

  // Launch and run to the end, the host driving; returns the error that ended it, if any.
  std::optional<runtime::host::HostError> launch_and_run() {
    try {
      if (!p_.request.launch.empty()) rt_->launch(p_.request.launch, p_.request.launch_args);
      rt_->run_until_quiescent();
    } catch (const runtime::host::HostError& e) {
      return e;
    }
    return std::nullopt;
  }

  void run() {
    if (launched_) {
      out_ << "error: the kernel was launched already (restart wsemu debug to run it again; `continue` goes on)\n";
      failed_ = true;
      return;
    }
    if (p_.request.launch.empty()) out_ << "note: the executable exports no function: running the wafer as loaded\n";
    launched_ = true;
    const std::optional<uint64_t> cycle_stop = dbg_->next_cycle_breakpoint();
    // 1. Probe: the whole run, noting where the first stop would be.
    restart(p_.options.max_cycles);
    attach(true);
    held_prints_.clear();
    holding_prints_ = true;  // the probe's prints are shown only if it turns out to be the run
    std::optional<runtime::host::HostError> error = launch_and_run();
    holding_prints_ = false;
    std::optional<debug::Debugger::ProbeStop> stop = dbg_->probe_stop();
    std::optional<uint64_t> limit;
    if (stop) limit = stop->cycle + 1;
    if (cycle_stop && (!limit || *cycle_stop < *limit) && *cycle_stop <= rt_->cycles()) {
      limit = *cycle_stop;
      stop = debug::Debugger::ProbeStop{*cycle_stop, fmt::format("the wafer reached cycle {}", *cycle_stop)};
    }
    if (!limit) {
      // No stop: this run is the run.
      attach();
      for (const std::string& text : held_prints_) out_ << text << "\n";
      if (!error) {
        out_ << fmt::format("the kernel ran to the end: quiescent at cycle {}\n", rt_->cycles());
      } else if (error->kind() == runtime::host::HostError::Kind::HANG && error->hang()) {
        out_ << fmt::format("the run hangs at cycle {}\n", rt_->cycles());
        dbg_->execute("info hang");
      } else {
        out_ << error->what() << "\n";
      }
      return;
    }
    // 2. Replay up to the stop, then debug from there.
    restart(*limit);
    std::optional<runtime::host::HostError> replay = launch_and_run();
    attach();
    if (replay && replay->kind() == runtime::host::HostError::Kind::CYCLE_LIMIT &&
        std::string(replay->what()).find("host data") != std::string::npos)
      out_ << "warning: the stop came while the host was still sending the launch; stepping on from here does not "
              "send the rest\n";
    dbg_->report_stop(stop->why);
  }

  PreparedRun& p_;
  std::ostream& out_;
  std::ostringstream quiet_;
  std::unique_ptr<runtime::host::SdkRuntime> rt_;
  std::unique_ptr<debug::Debugger> dbg_;
  std::vector<std::string> stop_commands_;
  bool launched_ = false, failed_ = false;
  bool holding_prints_ = false;
  std::vector<std::string> held_prints_;
};

int debug_command(DebugArgs& a) {
  std::unique_ptr<PreparedRun> p = prepare_run(a.kernel, "debug");
  if (!p) return kExitUsage;
  std::unique_ptr<DebugSession> session;
  try {
    session = std::make_unique<DebugSession>(*p, std::cout);
  } catch (const runtime::host::HostError& e) {
    return report_host_error(e, "debug");
  }
  if (!a.batch.empty()) {
    std::ifstream in(a.batch);
    if (!in) {
      std::fprintf(stderr, "wsemu debug: error: cannot read %s\n", a.batch.c_str());
      return kExitUsage;
    }
    for (std::string line; std::getline(in, line);) {
      const std::string code = line.substr(0, line.find('#'));
      if (code.find_first_not_of(" \t\r") == std::string::npos) continue;
      std::cout << "(wsemu) " << code.substr(0, code.find_last_not_of(" \t\r") + 1) << "\n";
      if (!session->execute(line)) break;
    }
    return session->failed() ? 1 : 0;
  }
  debug::LineEditor editor;
  if (editor.interactive()) std::cout << "wsemu debug: " << a.kernel.kernel << " loaded; `help` lists the commands\n";
  while (std::optional<std::string> line = editor.read_line("(wsemu) ")) {
    if (!session->execute(*line)) break;
  }
  return 0;
}

const Register kDebug{Subcommand{"debug", [](CLI::App& app) -> std::function<int()> {
                                   auto a = std::make_shared<DebugArgs>();
                                   app.description("Debug a built kernel (.wsx) at a gdb-like prompt: breakpoints on "
                                                   "pc, task, cycle or wavelet, step, print SRAM / registers / DSDs / "
                                                   "queues / routes, where, watch");
                                   app.add_option("kernel", a->kernel.kernel, "Executable built by `wsemu build` (.wsx)")->required();
                                   app.add_option("--in", a->kernel.inputs, "SYMBOL=file.npy: copied to the symbol before the prompt")
                                       ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
                                   app.add_option("--launch", a->kernel.launch, "Exported function `run` launches (default: the only one)");
                                   app.add_option("--arg", a->kernel.launch_args, "A u32 argument of the launched function (repeatable)")
                                       ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
                                   app.add_option("--batch", a->batch, "Run the commands of this file instead of prompting");
                                   app.add_option("--max-cycles", a->kernel.max_cycles, "Cycle limit of the session");
                                   app.add_flag("--backdoor", a->kernel.backdoor, "Copy inputs through the SRAM back door");
                                   app.add_flag("--col-major", a->kernel.col_major, "The .npy arrays are in COL_MAJOR order");
                                   app.add_option("--profile", a->kernel.profile, "Override an architecture profile field: key=value")
                                       ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
                                   app.footer(kFooter);
                                   return [a]() { return debug_command(*a); };
                                 }}};

}  // namespace
}  // namespace wsemu::cli
