// The wafer's run loop (wafer.hpp): run() and step(), what ends them (quiescence, a hang, a
// fault, the cycle limit, edge traffic), the jump over cycles in which every tile with work
// dozes, and a RunResult as text. One cycle of stepping is step_cycle, in wafer.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <string_view>
#include <utility>

#include "emulator/wafer.hpp"

namespace wsemu::emu {

std::string_view run_status_name(RunResult::Status s) {
  switch (s) {
    case RunResult::Status::QUIESCENT: return "quiescent";
    case RunResult::Status::CYCLE_LIMIT: return "cycle limit";
    case RunResult::Status::HANG: return "hang";
    case RunResult::Status::FAULT: return "fault";
  }
  return "?";
}

std::string RunResult::to_string() const {
  std::string s = fmt::format("{} after {} cycles (cycle {})", run_status_name(status), cycles_run, cycle);
  if (fault) s += fmt::format("\n{}", fault->to_string());
  if (hang) s += fmt::format("\n{}", hang->to_string());
  return s;
}

// The waiting tiles are caught up when they wake or someone looks (settle), not here: a host
// that runs the wafer a few cycles at a time would pay for it at every call.
RunResult Wafer::finish(RunResult r, uint64_t start) {
  r.cycles_run = cycle_ - start;
  r.cycle = cycle_;
  return r;
}

uint64_t Wafer::earliest_dozer() {
  while (!dozers_.empty()) {
    const auto [until, s] = dozers_.front();
    if (states_[s].waiting_since != kAwake && clocks_[s].doze_until == until) return until;
    std::pop_heap(dozers_.begin(), dozers_.end(), std::greater<>());
    dozers_.pop_back();
  }
  return kAwake;
}

void Wafer::advance_idle(uint64_t to) {
  cycle_ = to;
  scratch_due_.clear();
  take_due_dozers(cycle_, scratch_due_);
  for (uint32_t s : scratch_due_) activate_state(s);  // caught up to their wake-up cycle
}

RunResult Wafer::run(uint64_t max_cycles, RunStops stops) {
  const uint64_t start = cycle_;
  const uint64_t limit = max_cycles > kAwake - start ? kAwake : start + max_cycles;
  RunResult r;
  while (cycle_ < limit) {
    bool progressed = false;
    edge_traffic_ = false;
    if (!active_.empty()) {
      std::optional<Fault> fault;
      progressed = step_cycle(fault, limit);
      if (fault) {
        r.status = RunResult::Status::FAULT;
        r.fault = std::move(fault);
        return finish(std::move(r), start);
      }
    } else if (dozing_count_ > 0) {
      // Every tile with work dozes: jump to the first wake-up, each cycle one of counting down.
      const uint64_t to = std::min(earliest_dozer(), limit);
      skipped_cycles_ += to - cycle_;
      advance_idle(to);
      progressed = true;
    } else if (waiting_count_ > 0) {
      ++cycle_;  // the waiting tiles' cycle, in which nothing moves
    }
    if (stops.on_edge_traffic && edge_traffic_) {
      r.status = RunResult::Status::CYCLE_LIMIT;
      r.edge_traffic = true;
      return finish(std::move(r), start);
    }
    if (!progressed && !stops.on_idle) {
      // Nothing changes until the host acts; with every tile waiting, not even a tile-step.
      if (active_.empty()) advance_idle(limit);
      continue;
    }
    if (!progressed) {
      if (pending_work()) {
        catch_up_waiting();
        r.status = RunResult::Status::HANG;
        r.hang = hang_report();
      } else {
        r.status = RunResult::Status::QUIESCENT;
      }
      return finish(std::move(r), start);
    }
  }
  r.status = RunResult::Status::CYCLE_LIMIT;
  return finish(std::move(r), start);
}

RunResult Wafer::step() {
  const uint64_t start = cycle_;
  RunResult r;
  r.status = RunResult::Status::CYCLE_LIMIT;
  std::optional<Fault> fault;
  if (active_.empty()) {
    advance_idle(cycle_ + 1);
  } else {
    step_cycle(fault, cycle_ + 1);
  }
  if (fault) {
    r.status = RunResult::Status::FAULT;
    r.fault = std::move(fault);
  }
  return finish(std::move(r), start);
}

void Wafer::settle(uint32_t s) const {
  Wafer& w = const_cast<Wafer&>(*this);  // never a const object: the observers' view is unchanged
  w.catch_up(s);  // a waiting tile's counters, up to cycle_
  TileState& t = w.states_[s];
  if (t.core == kNone || !cores_[t.core].ahead.active) return;
  PeCore& core = w.cores_[t.core];
  PeCore::Context ctx;
  ctx.profile = &profile_;
  ctx.program = &programs_[core.program_index];
  ctx.now = cycle_;
  ctx.x = t.x;
  ctx.y = t.y;
  ctx.router = &t.router;
  if (!core.settle_run_ahead(ctx) || t.waiting_since == kAwake || !clocks_[s].doze_until) return;
  // It dozed until the end of what it ran ahead; now it does until its next issue.
  const uint64_t next = core.main.busy_until;
  if (next <= cycle_) {
    w.activate_state(s);
    return;
  }
  w.clocks_[s].doze_until = next;
  w.dozers_.emplace_back(next, s);
  std::push_heap(w.dozers_.begin(), w.dozers_.end(), std::greater<>());
}

void Wafer::settle_all() const {
  for (uint32_t s = 0; s < states_.size(); ++s) settle(s);
}

bool Wafer::pending_work() const {
  for (const TileState& t : states_) {
    if (t.router.holds_wavelets()) return true;
    if (t.core != kNone && cores_[t.core].holds_pending_work()) return true;
  }
  return false;
}

}  // namespace wsemu::emu
