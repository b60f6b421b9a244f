// The debugger's command dispatch and the control commands: break, delete, watch, step,
// continue, pe, activate. Inspection commands are in debugger_print.cpp.
#include "inspect/debug/debugger.hpp"
#include "inspect/debug/debugger_internal.hpp"

#include <fmt/format.h>

#include <bit>

#include <algorithm>
#include <charconv>
#include <istream>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "inspect/trace/wait_for_graph.hpp"

namespace wsemu::debug {

namespace {

using detail::CommandError;
using detail::number;

constexpr uint64_t kContinueLimit = 10'000'000;  // cycles per `continue` without a count

std::vector<std::string> tokens(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

uint64_t need_number(std::string_view s, std::string_view what) {
  const auto v = number(s);
  if (!v) throw CommandError(fmt::format("{} '{}' is not a number", what, s));
  return *v;
}

}  // namespace

Debugger::Debugger(emu::Wafer& wafer, std::ostream& out, emu::EventSink* chained)
    : wafer_(wafer), out_(&out), chained_(chained) {
  wafer_.set_event_sink(this);
  for (int y = 0; y < wafer_.height(); ++y)
    for (int x = 0; x < wafer_.width(); ++x)
      if (wafer_.has_core(x, y)) {
        current_ = {x, y};
        return;
      }
}

Debugger::~Debugger() { wafer_.set_event_sink(chained_); }

std::string Debugger::help() {
  return R"(commands (PE arguments are "at X,Y" or "pe X,Y"; without one, the current PE):
  break pc N|LABEL [at X,Y]     stop before the PE executes that instruction (any PE if none)
  break task ID|NAME [at X,Y]   stop when the task is picked
  break cycle N                 stop when the wafer reaches cycle N
  break wavelet COLOR [at X,Y]  stop when a wavelet of that color passes the PE's router
  delete [N]                    remove breakpoint or watchpoint N (all without N)
  watch SYMBOL|ADDRESS [at X,Y] stop when that 32-bit SRAM word changes
  step [N]                      run N cycles (1), ignoring breakpoints
  continue [N]                  run until a breakpoint, a watchpoint, the end of the run, or N cycles
  print SYMBOL[[i]|[i:j]]       an SRAM symbol (typed), e.g. print y[0:4]
  print ADDRESS [COUNT] [TYPE]  SRAM words at a byte address (TYPE u32 i32 f32 u16 i16 f16)
  print rN | dN | DSDNAME       a register or a descriptor register
  info registers|dsds|queues|routes|tasks|breakpoints|hang|pe   state of the current PE
  where [X0,Y0,W,H]             the task of every PE in the rectangle: running, stalled, blocked
  pe X,Y                        make X,Y the current PE
  activate TASK [at X,Y]        activate a local task, as the host would
  cycle                         the wafer's cycle
  help, quit
)";
}

bool Debugger::execute(std::string_view line) {
  const size_t hash = line.find('#');
  if (hash != std::string_view::npos) line = line.substr(0, hash);
  std::vector<std::string> args = tokens(line);
  if (args.empty()) return true;
  const std::string cmd = args[0];
  args.erase(args.begin());
  try {
    if (cmd == "quit" || cmd == "q" || cmd == "exit") return false;
    if (cmd == "help" || cmd == "h") *out_ << help();
    else if (cmd == "break" || cmd == "b") cmd_break(args);
    else if (cmd == "delete" || cmd == "d") cmd_delete(args);
    else if (cmd == "watch") cmd_watch(args);
    else if (cmd == "step" || cmd == "s" || cmd == "stepi" || cmd == "si") cmd_step(args);
    else if (cmd == "continue" || cmd == "c" || cmd == "run" || cmd == "r") cmd_continue(args);
    else if (cmd == "print" || cmd == "p") cmd_print(args);
    else if (cmd == "info" || cmd == "i") cmd_info(args);
    else if (cmd == "where" || cmd == "bt" || cmd == "backtrace") cmd_where(args);
    else if (cmd == "pe") cmd_pe(args);
    else if (cmd == "activate") cmd_activate(args);
    else if (cmd == "cycle") *out_ << fmt::format("cycle {}\n", wafer_.cycle());
    else throw CommandError(fmt::format("unknown command '{}' (try help)", cmd));
  } catch (const CommandError& e) {
    *out_ << "error: " << e.what() << "\n";
    failed_ = true;
  } catch (const emu::FaultError& e) {
    *out_ << "error: " << e.fault().message << "\n";
    failed_ = true;
  } catch (const std::exception& e) {
    *out_ << "error: " << e.what() << "\n";
    failed_ = true;
  }
  out_->flush();
  return true;
}

// ---- argument helpers ----

std::pair<int, int> Debugger::parse_pe(std::string_view text) const {
  const size_t comma = text.find(',');
  const auto x = comma == std::string_view::npos ? std::nullopt : number(text.substr(0, comma));
  const auto y = comma == std::string_view::npos ? std::nullopt : number(text.substr(comma + 1));
  if (!x || !y) throw CommandError(fmt::format("'{}' is not a PE (X,Y)", text));
  if (*x >= uint64_t(wafer_.width()) || *y >= uint64_t(wafer_.height()))
    throw CommandError(fmt::format("PE({},{}) is outside the {}x{} fabric", *x, *y, wafer_.width(), wafer_.height()));
  return {int(*x), int(*y)};
}

std::pair<int, int> Debugger::take_pe(std::vector<std::string>& args) {
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "at" || args[i] == "pe") {
      const auto pe = parse_pe(args[i + 1]);
      args.erase(args.begin() + long(i), args.begin() + long(i) + 2);
      return pe;
    }
  if (!args.empty() && (args.back() == "at" || args.back() == "pe")) throw CommandError("'at' needs a PE: at X,Y");
  return current_;
}

const isa::ObjectImage& Debugger::program(int x, int y) const {
  const isa::ObjectImage* p = wafer_.program_at(x, y);
  if (!p) throw CommandError(fmt::format("PE({},{}) has no program", x, y));
  return *p;
}

uint32_t Debugger::resolve_pc(std::string_view text, int x, int y) const {
  if (const auto n = number(text)) return uint32_t(*n);
  const isa::ObjectImage& p = program(x, y);
  if (const isa::Function* f = p.find_function(text)) return f->entry;
  for (const isa::TaskBinding& t : p.tasks)
    if (t.name == text) return t.entry;
  throw CommandError(fmt::format("'{}' is neither an instruction index nor a label of PE({},{})'s program", text, x, y));
}

int Debugger::resolve_task(std::string_view text, int x, int y) const {
  if (const auto n = number(text)) {
    if (*n > 63) throw CommandError(fmt::format("task id {} (0..63)", *n));
    return int(*n);
  }
  for (const isa::TaskBinding& t : program(x, y).tasks)
    if (t.name == text) return t.id;
  throw CommandError(fmt::format("PE({},{})'s program has no task '{}'", x, y, text));
}

std::string Debugger::task_label(int x, int y, int task) const {
  if (const isa::ObjectImage* p = wafer_.program_at(x, y))
    for (const isa::TaskBinding& t : p->tasks)
      if (t.id == task && t.kind != isa::TaskKind::CONTROL) return fmt::format("{} '{}'", task, t.name);
  return std::to_string(task);
}

uint32_t Debugger::peek32(int x, int y, uint32_t address) const {
  uint32_t v = 0;
  wafer_.peek_sram(x, y, address, std::span<uint8_t>(reinterpret_cast<uint8_t*>(&v), 4));
  return v;
}

// ---- control commands ----

void Debugger::cmd_break(const std::vector<std::string>& in) {
  std::vector<std::string> args = in;
  const bool has_pe = std::find(args.begin(), args.end(), "at") != args.end() ||
                      std::find(args.begin(), args.end(), "pe") != args.end();
  const auto [x, y] = take_pe(args);
  if (args.empty()) throw CommandError("break what? break pc|task|cycle|wavelet ... (see help)");
  Breakpoint b;
  b.id = next_id_;
  if (has_pe) b.pe = std::pair(x, y);
  const std::string where = has_pe ? fmt::format(" at PE({},{})", x, y) : std::string(" on any PE");
  std::string kind = args[0];
  std::string value = args.size() > 1 ? args[1] : "";
  if (args.size() == 1 && kind != "pc" && kind != "task" && kind != "cycle" && kind != "wavelet") {
    value = kind;  // `break LABEL` means a pc
    kind = "pc";
  } else if (args.size() != 2) {
    throw CommandError(fmt::format("break {} needs one value (see help)", kind));
  }
  if (kind == "pc") {
    b.kind = Breakpoint::Kind::PC;
    b.pc = resolve_pc(value, x, y);
    if (!has_pe && !number(value)) b.pe = std::pair(x, y);  // a label belongs to one program
    b.spec = fmt::format("pc {}{}{}", b.pc, number(value) ? "" : " (" + value + ")",
                         b.pe ? fmt::format(" at PE({},{})", b.pe->first, b.pe->second) : where);
  } else if (kind == "task") {
    b.kind = Breakpoint::Kind::TASK;
    if (number(value) || has_pe) {
      b.task = resolve_task(value, x, y);
    } else {
      b.task_name = value;  // any PE whose program has a task of that name
      bool known = false;
      for (int py = 0; py < wafer_.height() && !known; ++py)
        for (int px = 0; px < wafer_.width() && !known; ++px)
          if (const isa::ObjectImage* p = wafer_.program_at(px, py))
            for (const isa::TaskBinding& t : p->tasks) known |= t.name == value;
      if (!known) throw CommandError(fmt::format("no program on the wafer has a task '{}'", value));
    }
    b.spec = fmt::format("task {}{}", value, where);
  } else if (kind == "cycle") {
    b.kind = Breakpoint::Kind::CYCLE;
    b.cycle = need_number(value, "cycle");
    b.pe.reset();
    if (b.cycle <= wafer_.cycle()) throw CommandError(fmt::format("cycle {} has passed (now {})", b.cycle, wafer_.cycle()));
    b.spec = fmt::format("cycle {}", b.cycle);
  } else if (kind == "wavelet") {
    b.kind = Breakpoint::Kind::WAVELET;
    const uint64_t c = need_number(value, "color");
    if (c > 31) throw CommandError(fmt::format("color {} (0..31)", c));
    b.color = int(c);
    b.spec = fmt::format("wavelet on color {}{}", c, where);
  } else {
    throw CommandError(fmt::format("unknown breakpoint kind '{}' (pc, task, cycle, wavelet)", kind));
  }
  ++next_id_;
  *out_ << fmt::format("breakpoint {}: {}\n", b.id, b.spec);
  breakpoints_.push_back(std::move(b));
}

void Debugger::cmd_delete(const std::vector<std::string>& args) {
  if (args.empty()) {
    breakpoints_.clear();
    watchpoints_.clear();
    *out_ << "deleted every breakpoint and watchpoint\n";
    return;
  }
  for (const std::string& a : args) {
    const int id = int(need_number(a, "breakpoint number"));
    const size_t before = breakpoints_.size() + watchpoints_.size();
    std::erase_if(breakpoints_, [&](const Breakpoint& b) { return b.id == id; });
    std::erase_if(watchpoints_, [&](const Watchpoint& w) { return w.id == id; });
    if (breakpoints_.size() + watchpoints_.size() == before) throw CommandError(fmt::format("no breakpoint or watchpoint {}", id));
    *out_ << fmt::format("deleted {}\n", id);
  }
}

namespace {
// A watched word as its symbol's type: an f32 array's word as a float, not its bits.
std::string watch_text(const Watchpoint& w, uint32_t v) {
  switch (w.type) {
    case isa::ElemType::F32: return fmt::format("{}", std::bit_cast<float>(v));
    case isa::ElemType::I32: return std::to_string(int32_t(v));
    default: return std::to_string(v);
  }
}
}  // namespace

void Debugger::cmd_watch(const std::vector<std::string>& in) {
  std::vector<std::string> args = in;
  const auto [x, y] = take_pe(args);
  if (args.size() != 1) throw CommandError("watch SYMBOL|ADDRESS [at X,Y]");
  Watchpoint w;
  w.id = next_id_;
  w.x = x;
  w.y = y;
  std::string name = args[0];
  uint32_t index = 0;
  if (const size_t br = name.find('['); br != std::string::npos && name.back() == ']') {
    index = uint32_t(need_number(name.substr(br + 1, name.size() - br - 2), "index"));
    name = name.substr(0, br);
  }
  if (const auto a = number(name)) {
    w.address = uint32_t(*a);
  } else {
    const isa::Symbol* s = program(x, y).find_symbol(name);
    if (!s) throw CommandError(fmt::format("PE({},{})'s program has no symbol '{}'", x, y, name));
    if (index >= s->count) throw CommandError(fmt::format("{}[{}] is past its {} elements", name, index, s->count));
    w.address = s->address + index * uint32_t(isa::elem_bytes(s->type));
    if (isa::elem_bytes(s->type) == 4) w.type = s->type;
  }
  if (w.address % 4) throw CommandError(fmt::format("a watch needs a 4-byte aligned word (address {:#x})", w.address));
  w.what = fmt::format("{} ({:#x}) at PE({},{})", args[0], w.address, x, y);
  w.value = peek32(x, y, w.address);
  ++next_id_;
  *out_ << fmt::format("watchpoint {}: {} = {}\n", w.id, w.what, watch_text(w, w.value));
  watchpoints_.push_back(std::move(w));
}

void Debugger::cmd_step(const std::vector<std::string>& args) {
  const uint64_t n = args.empty() ? 1 : need_number(args[0], "cycle count");
  advance(n, false);
}

void Debugger::cmd_continue(const std::vector<std::string>& args) {
  advance(args.empty() ? kContinueLimit : need_number(args[0], "cycle count"), true);
}

void Debugger::cmd_pe(const std::vector<std::string>& args) {
  if (args.size() != 1) throw CommandError("pe X,Y");
  current_ = parse_pe(args[0]);
  print_location(current_.first, current_.second);
}

void Debugger::cmd_activate(const std::vector<std::string>& in) {
  std::vector<std::string> args = in;
  const auto [x, y] = take_pe(args);
  if (args.size() != 1) throw CommandError("activate TASK [at X,Y]");
  const int task = resolve_task(args[0], x, y);
  wafer_.activate_task(x, y, task);
  *out_ << fmt::format("activated task {} at PE({},{})\n", task_label(x, y, task), x, y);
}

// ---- running ----

void Debugger::on_events(std::span<const emu::TraceEvent> events) {
  if (chained_) chained_->on_events(events);
  for (const emu::TraceEvent& e : events) {
    if (e.kind == emu::TraceKind::STALL && e.aux == 255) last_stall_[{e.x, e.y}] = e;
    if (e.kind == emu::TraceKind::INSTRUCTION || e.kind == emu::TraceKind::TASK_PICKED) {
      if (pes_that_moved_.empty() || pes_that_moved_.back() != std::pair<int, int>(e.x, e.y)) pes_that_moved_.push_back({e.x, e.y});
    }
    for (Breakpoint& b : breakpoints_) {
      if (!b.enabled || (b.pe && *b.pe != std::pair<int, int>(e.x, e.y))) continue;
      bool hit = false;
      std::string why;
      if (b.kind == Breakpoint::Kind::TASK && e.kind == emu::TraceKind::TASK_PICKED) {
        if (!b.task_name.empty()) {
          const isa::ObjectImage* p = wafer_.program_at(e.x, e.y);
          if (p)
            for (const isa::TaskBinding& t : p->tasks) hit |= t.name == b.task_name && t.id == e.task && t.kind != isa::TaskKind::CONTROL;
        } else {
          hit = int(e.task) == b.task;
        }
        why = fmt::format("PE({},{}) picked task {}", e.x, e.y, task_label(e.x, e.y, e.task));
      } else if (b.kind == Breakpoint::Kind::WAVELET && e.color == b.color && e.kind == emu::TraceKind::WAVELET_HOP) {
        // Hops only: a landing always follows its RAMP hop, and one wavelet is one hit.
        hit = true;
        static constexpr std::string_view dirs[] = {"north", "east", "south", "west", "the core (RAMP)"};
        why = fmt::format("PE({},{})'s router sent a wavelet of color {} to {}: payload {:#010x}{}", e.x, e.y, e.color,
                          dirs[e.direction % 5], e.payload, e.control ? " (control)" : "");
      }
      if (!hit) continue;
      ++b.hits;
      if (!pending_stop_.stopped) {
        pending_stop_.stopped = true;
        pending_stop_.why = fmt::format("breakpoint {} at cycle {}: {}", b.id, e.cycle, why);
        if (wafer_.has_core(e.x, e.y)) current_ = {e.x, e.y};
      }
    }
  }
  if (probe_ && !probe_stop_ && !events.empty()) {
    // Inside the cycle (after every core stepped): pcs and SRAM already show its effects.
    const uint64_t cycle = events.front().cycle;
    check_pc_breakpoints(cycle);
    for (Watchpoint& w : watchpoints_)
      if (!pending_stop_.stopped && peek32(w.x, w.y, w.address) != w.value) {
        pending_stop_.stopped = true;
        pending_stop_.why = fmt::format("watchpoint {} at cycle {}: {} changed from {} to {}", w.id, cycle, w.what,
                                        watch_text(w, w.value), watch_text(w, peek32(w.x, w.y, w.address)));
      }
    if (pending_stop_.stopped) probe_stop_ = ProbeStop{cycle, pending_stop_.why};
    pending_stop_ = {};
    pes_that_moved_.clear();
  }
}

std::optional<uint64_t> Debugger::next_cycle_breakpoint() const {
  std::optional<uint64_t> next;
  for (const Breakpoint& b : breakpoints_)
    if (b.enabled && b.kind == Breakpoint::Kind::CYCLE && b.cycle > wafer_.cycle() && (!next || b.cycle < *next)) next = b.cycle;
  return next;
}

void Debugger::report_stop(const std::string& why) {
  *out_ << why << "\n";
  print_location(current_.first, current_.second);
}

void Debugger::check_pc_breakpoints(uint64_t cycle) {
  // A PE that retired an instruction or started a task this cycle may now stand at a PC of a
  // breakpoint: stop before that instruction runs.
  for (const auto& [x, y] : pes_that_moved_) {
    const emu::CoreView v = wafer_.core_view(x, y);
    if (!v.running) continue;
    for (Breakpoint& b : breakpoints_) {
      if (!b.enabled || b.kind != Breakpoint::Kind::PC || b.pc != v.pc) continue;
      if (b.pe && *b.pe != std::pair(x, y)) continue;
      ++b.hits;
      if (!pending_stop_.stopped) {
        pending_stop_.stopped = true;
        pending_stop_.why = fmt::format("breakpoint {} at cycle {}: PE({},{}) is about to run pc {}", b.id, cycle, x, y, v.pc);
        current_ = {x, y};
      }
    }
  }
}

bool Debugger::check_watchpoints() {
  bool hit = false;
  for (Watchpoint& w : watchpoints_) {
    const uint32_t now = peek32(w.x, w.y, w.address);
    if (now == w.value) continue;
    *out_ << fmt::format("watchpoint {} at cycle {}: {} changed from {} to {}\n", w.id, wafer_.cycle() - 1, w.what,
                         watch_text(w, w.value), watch_text(w, now));
    w.value = now;
    hit = true;
  }
  return hit;
}

bool Debugger::report_end(const emu::RunResult& r) {
  last_result_ = r;
  switch (r.status) {
    case emu::RunResult::Status::CYCLE_LIMIT: return false;
    case emu::RunResult::Status::QUIESCENT:
      *out_ << fmt::format("the wafer is quiescent at cycle {}: every task has ended and nothing is in flight\n", r.cycle);
      return true;
    case emu::RunResult::Status::FAULT:
      *out_ << fmt::format("the run stopped on a fault: {}\n", r.fault ? r.fault->to_string() : std::string("?"));
      if (r.fault && r.fault->x && r.fault->y && wafer_.has_core(*r.fault->x, *r.fault->y)) current_ = {*r.fault->x, *r.fault->y};
      return true;
    case emu::RunResult::Status::HANG:
      *out_ << fmt::format("the run hangs at cycle {}: nothing can make progress\n", r.cycle);
      if (r.hang) *out_ << trace::WaitForGraph::build(*r.hang, wafer_).to_text();
      return true;
  }
  return true;
}

void Debugger::advance(uint64_t cycles, bool honour_stops) {
  const uint64_t start = wafer_.cycle();
  std::optional<uint64_t> cycle_stop;
  if (honour_stops)
    for (const Breakpoint& b : breakpoints_)
      if (b.enabled && b.kind == Breakpoint::Kind::CYCLE && b.cycle > start && (!cycle_stop || b.cycle < *cycle_stop)) cycle_stop = b.cycle;
  for (uint64_t i = 0; i < cycles; ++i) {
    if (cycle_stop && wafer_.cycle() >= *cycle_stop) {
      for (Breakpoint& b : breakpoints_)
        if (b.kind == Breakpoint::Kind::CYCLE && b.cycle == *cycle_stop) {
          ++b.hits;
          *out_ << fmt::format("breakpoint {}: the wafer reached cycle {}\n", b.id, b.cycle);
          break;
        }
      return;
    }
    pending_stop_ = {};
    pes_that_moved_.clear();
    const emu::RunResult r = wafer_.run(1);
    if (report_end(r)) return;
    if (!honour_stops) continue;
    check_pc_breakpoints(wafer_.cycle() - 1);
    const bool watched = check_watchpoints();
    if (pending_stop_.stopped) *out_ << pending_stop_.why << "\n";
    if (pending_stop_.stopped || watched) {
      print_location(current_.first, current_.second);
      return;
    }
  }
  if (honour_stops && cycles == kContinueLimit)
    *out_ << fmt::format("still running after {} cycles (continue again to go on)\n", cycles);
  *out_ << fmt::format("cycle {}\n", wafer_.cycle());
}

int run_script(Debugger& debugger, std::istream& in, std::ostream& out, bool echo) {
  for (std::string line; std::getline(in, line);) {
    const std::string_view code = std::string_view(line).substr(0, line.find('#'));
    if (code.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (echo) out << "(wsemu) " << code.substr(0, code.find_last_not_of(" \t\r") + 1) << "\n";
    if (!debugger.execute(line)) break;
  }
  return debugger.any_command_failed() ? 1 : 0;
}

}  // namespace wsemu::debug
