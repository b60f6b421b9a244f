// The task table of a PE core and the task picker's priority rule.
//
// Contract: 64 task ids. Data and local tasks share one table (bound, activated, blocked, and
// an entry in TaskEntries); control tasks have their own entries. All ids start blocked; binding a
// data or local task unblocks it (unless the binding says it starts blocked), so an unbound
// data task id stays blocked, which lets a fabin stream own that color or queue. An unbound id
// the object lists as unblocked (CSL's comptime @unblock of it) starts unblocked with no task:
// its control wavelets run their control tasks, and a data wavelet there waits (no task to run).
//
// The picker's rule (fixed, documented in emulator/README.md): round robin. When the main
// thread is free, it picks, among
//   - local tasks that are bound, activated and unblocked, and
//   - unblocked trigger ids (color on wse2, input queue on wse3) whose input holds a wavelet
//     that can be consumed: a data wavelet with a data task bound to that id, or a control
//     wavelet (which runs the control task it names, or is dropped if it names none),
// the first id at or after `scan_from` (one past the id it picked last; 0 at load), wrapping
// past 63 to 0. At one id, a runnable local task goes before that id's input. (The SDK leaves
// the order open; why round robin: emulator/README.md.) Plain data.
#pragma once

#include <array>
#include <cstdint>

namespace wsemu::emu {

struct TaskTable {
  uint64_t local = 0;    // bound as local tasks
  uint64_t data = 0;     // bound as data tasks
  uint64_t control = 0;  // bound as control tasks
  uint64_t activated = 0;
  uint64_t blocked = ~uint64_t{0};
  uint8_t scan_from = 0;  // 0..63

  static constexpr uint64_t bit(int id) { return uint64_t{1} << id; }
  uint64_t runnable_local() const { return local & activated & ~blocked; }
  // The winning id, or -1. `inputs_ready` has a bit per trigger id whose input head can be
  // consumed (see the rule above).
  int pick(uint64_t inputs_ready) const {
    const uint64_t m = runnable_local() | (inputs_ready & ~blocked);
    if (!m) return -1;
    const uint64_t ahead = m >> scan_from;
    return ahead ? scan_from + __builtin_ctzll(ahead) : __builtin_ctzll(m);
  }
  void picked(int id) { scan_from = uint8_t((id + 1) & 63); }
};

// Where each bound task starts (instruction index): read only when a task starts, so kept
// apart from the masks that the picker reads every cycle.
struct TaskEntries {
  std::array<uint32_t, 64> entry{};          // data and local tasks
  std::array<uint32_t, 64> control_entry{};  // control tasks
};

}  // namespace wsemu::emu
