// The interactive debugger of `wsemu debug`: a gdb-like command language over a loaded wafer.
//
// Contract:
// - The engine works on any emu::Wafer, however it was loaded (the host runtime, a test that
//   placed programs itself): symbols, tasks and labels come from Wafer::program_at, state
//   from Wafer::core_view / peek_sram / route. Reading state never changes the wafer or its
//   statistics.
// - It installs itself as the wafer's event sink for its lifetime (and passes every event on
//   to `chained`, e.g. a trace recorder) and uninstalls itself when destroyed.
// - Time advances only through step / continue, one cycle at a time with Wafer::run(1), so a
//   stop lands exactly after the cycle that triggered it and the run ends (quiescent, hang,
//   fault) exactly as Wafer::run would end it.
// - execute() runs one command line, writes its output to `out`, and never throws for a bad
//   command (it prints "error: ..." and remembers that a command failed). The command
//   language is documented in help() and inspect/trace/README.md ("The debugger").
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/trace.hpp"
#include "emulator/wafer.hpp"

namespace wsemu::debug {

struct Breakpoint {
  enum class Kind : uint8_t { PC, TASK, CYCLE, WAVELET };
  int id = 0;
  Kind kind = Kind::PC;
  std::optional<std::pair<int, int>> pe;  // none: any PE
  uint32_t pc = 0;
  int task = -1;
  std::string task_name;  // when given by name (resolved per PE's program)
  uint64_t cycle = 0;
  int color = -1;
  bool enabled = true;
  uint64_t hits = 0;
  std::string spec;  // as the user wrote it, for `info breakpoints`
};

struct Watchpoint {
  int id = 0;
  int x = 0, y = 0;
  uint32_t address = 0;
  std::string what;  // "got at PE(1,0)"
  uint32_t value = 0;
  isa::ElemType type = isa::ElemType::U32;  // how values are printed (a symbol's type, if 32-bit)
};

class Debugger final : public emu::EventSink {
 public:
  Debugger(emu::Wafer& wafer, std::ostream& out, emu::EventSink* chained = nullptr);
  ~Debugger() override;
  Debugger(const Debugger&) = delete;
  Debugger& operator=(const Debugger&) = delete;

  // Runs one command line; false once the user asked to quit.
  bool execute(std::string_view line);
  bool any_command_failed() const { return failed_; }
  void set_output(std::ostream& out) { out_ = &out; }
  void clear_failure() { failed_ = false; }
  // The last run status seen (quiescent / hang / fault / cycle limit), for exit codes.
  std::optional<emu::RunResult> last_result() const { return last_result_; }
  std::pair<int, int> current_pe() const { return current_; }
  static std::string help();

  void on_events(std::span<const emu::TraceEvent> events) override;

  // Probe mode, for a run that someone else drives (the host runtime's launch): the debugger
  // cannot stop it, so it only notes the first cycle after which it would have stopped (a
  // breakpoint, a PC breakpoint, a watchpoint seen at an event) and why. A caller replays the
  // run up to that cycle, then debugs from there.
  void set_probe(bool on) { probe_ = on; }
  struct ProbeStop {
    uint64_t cycle = 0;  // the cycle whose end is the stop (the wafer then shows cycle + 1)
    std::string why;
  };
  const std::optional<ProbeStop>& probe_stop() const { return probe_stop_; }
  // The earliest `break cycle N` still ahead: N.
  std::optional<uint64_t> next_cycle_breakpoint() const;
  // After a replay stopped at a probe's stop: print it as a stop of this debugger.
  void report_stop(const std::string& why);

 private:
  struct Stop {
    bool stopped = false;
    std::string why;
  };
  // Command handlers (debugger.cpp: control; debugger_print.cpp: inspection).
  void cmd_break(const std::vector<std::string>& args);
  void cmd_delete(const std::vector<std::string>& args);
  void cmd_watch(const std::vector<std::string>& args);
  void cmd_step(const std::vector<std::string>& args);
  void cmd_continue(const std::vector<std::string>& args);
  void cmd_pe(const std::vector<std::string>& args);
  void cmd_activate(const std::vector<std::string>& args);
  void cmd_info(const std::vector<std::string>& args);
  void cmd_print(const std::vector<std::string>& args);
  void cmd_where(const std::vector<std::string>& args);
  void print_registers(int x, int y);
  void print_dsds(int x, int y);
  void print_queues(int x, int y);
  void print_routes(int x, int y);
  void print_tasks(int x, int y);
  void print_breakpoints();
  void print_hang();
  void print_location(int x, int y);

  // Advances up to `cycles` cycles; stops at breakpoints and watchpoints when `honour_stops`.
  void advance(uint64_t cycles, bool honour_stops);
  void check_pc_breakpoints(uint64_t cycle);  // `cycle`: the cycle just run
  bool check_watchpoints();
  bool report_end(const emu::RunResult& r);

  // Argument helpers: "X,Y" after "at"/"pe"; symbols, labels and numbers at a PE.
  std::pair<int, int> take_pe(std::vector<std::string>& args);  // removes "at X,Y" / "pe X,Y"
  std::pair<int, int> parse_pe(std::string_view text) const;
  const isa::ObjectImage& program(int x, int y) const;
  uint32_t resolve_pc(std::string_view text, int x, int y) const;
  int resolve_task(std::string_view text, int x, int y) const;
  std::string task_label(int x, int y, int task) const;
  std::string instruction_at(int x, int y, uint32_t pc) const;
  uint32_t peek32(int x, int y, uint32_t address) const;

  emu::Wafer& wafer_;
  std::ostream* out_;
  emu::EventSink* chained_;
  std::pair<int, int> current_{0, 0};
  std::vector<Breakpoint> breakpoints_;
  std::vector<Watchpoint> watchpoints_;
  int next_id_ = 1;
  bool failed_ = false;
  std::optional<emu::RunResult> last_result_;
  // Per cycle: what the events of the cycle just run triggered.
  Stop pending_stop_;
  std::vector<std::pair<int, int>> pes_that_moved_;  // PEs whose pc may have changed
  // The last cycle each PE's main thread stalled, and why (for `where`).
  std::map<std::pair<int, int>, emu::TraceEvent> last_stall_;
  bool probe_ = false;
  std::optional<ProbeStop> probe_stop_;
};

// Runs commands read from `in` (one per line, '#' starts a comment) until `quit` or the end
// of input, echoing each as "(wsemu) command" when `echo`. Returns 0, or 1 when a command
// failed.
int run_script(Debugger& debugger, std::istream& in, std::ostream& out, bool echo);

}  // namespace wsemu::debug
