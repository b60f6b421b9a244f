// Architecture profiles: every number of the virtual hardware (wse2, wse3) as one data table.
//
// Contract: an ArchProfile is plain data. The emulator reads all sizes, queue depths, task ID
// ranges, SIMD widths, instruction cycle counts, latencies and the clock from it and never
// hard-codes them elsewhere. Profiles are looked up by name; any field can be overridden with
// a "key=value" string (the keys are the ones `wsemu info` prints). Unknown names, unknown
// keys and values out of their range throw FaultError(CONFIGURATION_ERROR); nothing here
// prints or exits.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "isa/instruction.hpp"

namespace wsemu::emu {

// Upper bounds of the plain-data buffers (the profile may choose any depth up to these).
constexpr int kMaxQueueDepth = 8;          // the deepest queue of either generation
constexpr int kMaxRouterBufferDepth = 8;
constexpr int kMaxRampLatency = 8;          // bound of the router -> core delay line

struct ArchProfile {
  std::string name;
  uint32_t sram_bytes = 48 * 1024;
  int routable_colors = 24;
  int num_input_queues = 8;
  int num_output_queues = 8;
  // Depth in wavelets of each queue; 0 for a queue the architecture does not have.
  std::array<int, isa::kNumQueues> input_queue_depth{};
  std::array<int, isa::kNumQueues> output_queue_depth{};
  int microthreads = 8;
  bool explicit_microthreads = false;  // wse3: the instruction names the ut; wse2: the queue does
  bool data_task_by_queue = false;     // wse3: data task id = input queue; wse2: = color
  int data_task_first = 0, data_task_last = 23;
  int local_task_first = 0, local_task_last = 30;
  int control_task_first = 0, control_task_last = 63;
  int teardown_task = 29;
  int num_filters = 6;     // range filters per router on the wavelet's upper 16 bits
  int call_stack_depth = 16;
  // Per isa::Timing: cycles for a scalar class, elements per cycle for a vector class.
  std::array<int, isa::kNumTimingClasses> timing{};
  int vector_startup_cycles = 2;  // added to every vector operation's ceil(len / width)
  int task_start_cycles = 1;      // the picker's cycle: a picked task's first instruction runs next
  // Per-operation overheads (emulator/README.md "Per-operation overheads" gives the source of
  // each default): cycles the main thread stays busy after a task ends before the picker may
  // pick the next one, and the extra cycles a wavelet-triggered (data or control) task takes to
  // start beyond the picker's, for moving the wavelet from its queue into registers.
  int task_switch_cycles = 0;
  int queue_to_task_cycles = 0;
  int hop_latency = 1;            // cycles per link hop (the model supports exactly 1)
  // The ramp between the core and its router, each way: T_R of the wafer-scale reduce model
  // (Luczynski et al., HPDC'24), emulator/README.md "Timing model" says where each is charged.
  int ramp_up_latency = 2;        // core -> router: a push in cycle t is taken from t + 1 + this
  int ramp_down_latency = 2;      // router -> core: a delivery in cycle t is usable from t + this
  int router_buffer_depth = 3;    // wavelets per color per router input (and per host edge port)
  double clock_mhz = 850.0;

  int cycles(isa::Timing t) const { return timing[static_cast<int>(t)]; }
  int simd_width(isa::Timing t) const { return timing[static_cast<int>(t)]; }
  bool is_local_task_id(int id) const { return id >= local_task_first && id <= local_task_last; }
  bool is_data_task_id(int id) const { return id >= data_task_first && id <= data_task_last; }
};

// The built-in profiles ("wse2", "wse3"). Throws FaultError(CONFIGURATION_ERROR) when unknown.
const ArchProfile& arch_profile(std::string_view name);
std::vector<std::string> arch_names();

// Applies "key=value" (e.g. "clock_mhz=1100", "simd.V_FADDS=8", "iq_depth.0=4",
// "router_buffer_depth=2"). Throws FaultError(CONFIGURATION_ERROR) on an unknown key or a
// value out of range; `profile` is unchanged then.
void apply_override(ArchProfile& profile, std::string_view assignment);
ArchProfile arch_profile_with(std::string_view name, const std::vector<std::string>& overrides);

// Every overridable key with its current value, in a stable order (for `wsemu info`).
std::vector<std::pair<std::string, std::string>> profile_fields(const ArchProfile& profile);
nlohmann::json profile_to_json(const ArchProfile& profile);
std::string profile_to_text(const ArchProfile& profile);

// A short per-architecture summary of a timing class for the ISA reference:
// vector classes "wse2 2, wse3 4" (elements per cycle), scalar classes "1 cycle" when both
// architectures agree, else "wse2 1, wse3 2 cycles".
std::string timing_summary(isa::Timing t);

}  // namespace wsemu::emu
