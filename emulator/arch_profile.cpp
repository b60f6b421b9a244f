#include "emulator/arch_profile.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <functional>
#include <utility>
#include <nlohmann/json.hpp>

#include "emulator/fault.hpp"

namespace wsemu::emu {
namespace {

using isa::Timing;

void set(ArchProfile& p, Timing t, int v) { p.timing[static_cast<int>(t)] = v; }

// Cycle counts of the scalar classes are not published; they are the model's assumptions
// (one cycle for simple operations, more for multiply/divide), the same on both generations.
constexpr std::pair<Timing, int> kScalarCycles[] = {
    {Timing::SCALAR, 1}, {Timing::MULDIV, 3}, {Timing::SCALAR_FP, 1}, {Timing::SCALAR_FPDIV, 10},
    {Timing::BRANCH, 1}, {Timing::LOAD, 1},   {Timing::STORE, 1},     {Timing::DSD, 1},
    {Timing::TASK, 1},   {Timing::QUEUE, 1},  {Timing::FABRIC, 1},    {Timing::DEBUG, 1},
};

// SIMD widths from the SDK appendix "SIMD Mode" (reference §4): {wse2, wse3}. fmacs and fmuls
// are not in that table; the reference says to treat them as one element per cycle.
struct Width {
  Timing t;
  int wse2, wse3;
};
constexpr Width kWidths[] = {
    {Timing::V_FMACS, 1, 1},  {Timing::V_FADDS, 2, 4},  {Timing::V_FSUBS, 2, 4},
    {Timing::V_FMULS, 1, 1},  {Timing::V_FMOVS, 2, 4},  {Timing::V_FNEGS, 2, 4},
    {Timing::V_FMAXS, 1, 4},  {Timing::V_FABSS, 2, 4},  {Timing::V_FH2S, 1, 4},
    {Timing::V_FS2H, 1, 4},   {Timing::V_FMACH, 4, 8},  {Timing::V_FMACHS, 2, 4},
    {Timing::V_FADDH, 4, 8},  {Timing::V_FSUBH, 4, 8},  {Timing::V_FMULH, 4, 8},
    {Timing::V_FMOVH, 4, 8},  {Timing::V_FNEGH, 4, 8},  {Timing::V_FMAXH, 1, 8},
    {Timing::V_FABSH, 4, 8},  {Timing::V_MOV16, 4, 8},  {Timing::V_MOV32, 2, 4},
    {Timing::V_ADD16, 4, 8},  {Timing::V_SUB16, 4, 8},  {Timing::V_AND16, 4, 8},
    {Timing::V_OR16, 4, 8},   {Timing::V_XOR16, 4, 8},  {Timing::V_SLL16, 1, 4},
    {Timing::V_SLR16, 1, 4},  {Timing::V_SAR16, 1, 4},  {Timing::V_ADDC16, 1, 8},
};

// What differs between the architectures, one row each; the rest is the same on both (the
// defaults in arch_profile.hpp: 8 microthreads, data tasks from 0, local tasks to 30, 6 range
// filters, which is not published for WSE-3 and assumed equal to WSE-2's).
struct ArchRow {
  const char* name;
  int input_queues, output_queues;
  std::array<int, isa::kNumQueues> input_queue_depth, output_queue_depth;
  bool explicit_microthreads, data_task_by_queue;
  int data_task_last, local_task_first;
  int Width::*simd;  // its column of kWidths
};
// Columns: name, input and output queues, their depths, explicit microthreads, data task by
// queue, last data task, first local task, SIMD widths.
constexpr ArchRow kArchRows[] = {
    {"wse2", 8, 6, {6, 6, 4, 4, 2, 2, 2, 2}, {2, 2, 6, 6, 2, 2, 0, 0}, false, false, 23, 0, &Width::wse2},
    {"wse3", 8, 8, {8, 8, 4, 4, 4, 4, 4, 4}, {8, 8, 8, 8, 8, 8, 8, 8}, true, true, 7, 8, &Width::wse3},
};

ArchProfile make_profile(const ArchRow& row) {
  ArchProfile p{.name = row.name, .num_input_queues = row.input_queues, .num_output_queues = row.output_queues,
                .input_queue_depth = row.input_queue_depth, .output_queue_depth = row.output_queue_depth,
                .explicit_microthreads = row.explicit_microthreads, .data_task_by_queue = row.data_task_by_queue,
                .data_task_last = row.data_task_last, .local_task_first = row.local_task_first};
  for (const auto& [t, cycles] : kScalarCycles) set(p, t, cycles);
  for (const Width& w : kWidths) set(p, w.t, w.*row.simd);
  return p;
}

// One overridable field: its key, how to read it, how to write it, its valid range.
struct Field {
  std::string key;
  std::function<double(const ArchProfile&)> get;
  std::function<void(ArchProfile&, double)> put;
  double lo, hi;
  bool integral = true;
};

std::vector<Field> fields() {
  std::vector<Field> f;
  auto int_field = [&](std::string key, int ArchProfile::*m, int lo, int hi) {
    f.push_back({std::move(key), [m](const ArchProfile& p) { return double(p.*m); },
                 [m](ArchProfile& p, double v) { p.*m = int(v); }, double(lo), double(hi)});
  };
  f.push_back({"sram_bytes", [](const ArchProfile& p) { return double(p.sram_bytes); },
               [](ArchProfile& p, double v) { p.sram_bytes = uint32_t(v); }, 1024, 65536});
  int_field("routable_colors", &ArchProfile::routable_colors, 1, 24);
  int_field("num_input_queues", &ArchProfile::num_input_queues, 1, 8);
  int_field("num_output_queues", &ArchProfile::num_output_queues, 1, 8);
  for (int q = 0; q < isa::kNumQueues; ++q) {
    f.push_back({fmt::format("iq_depth.{}", q),
                 [q](const ArchProfile& p) { return double(p.input_queue_depth[q]); },
                 [q](ArchProfile& p, double v) { p.input_queue_depth[q] = int(v); }, 0,
                 kMaxQueueDepth});
  }
  for (int q = 0; q < isa::kNumQueues; ++q) {
    f.push_back({fmt::format("oq_depth.{}", q),
                 [q](const ArchProfile& p) { return double(p.output_queue_depth[q]); },
                 [q](ArchProfile& p, double v) { p.output_queue_depth[q] = int(v); }, 0,
                 kMaxQueueDepth});
  }
  int_field("microthreads", &ArchProfile::microthreads, 1, 8);
  f.push_back({"explicit_microthreads",
               [](const ArchProfile& p) { return double(p.explicit_microthreads); },
               [](ArchProfile& p, double v) { p.explicit_microthreads = v != 0; }, 0, 1});
  f.push_back({"data_task_by_queue", [](const ArchProfile& p) { return double(p.data_task_by_queue); },
               [](ArchProfile& p, double v) { p.data_task_by_queue = v != 0; }, 0, 1});
  // Task ids, 0..63 each.
  static const std::pair<const char*, int ArchProfile::*> kTaskIdFields[] = {
      {"data_task_first", &ArchProfile::data_task_first}, {"data_task_last", &ArchProfile::data_task_last},
      {"local_task_first", &ArchProfile::local_task_first}, {"local_task_last", &ArchProfile::local_task_last},
      {"control_task_first", &ArchProfile::control_task_first},
      {"control_task_last", &ArchProfile::control_task_last}, {"teardown_task", &ArchProfile::teardown_task}};
  for (const auto& [key, member] : kTaskIdFields) int_field(key, member, 0, 63);
  int_field("num_filters", &ArchProfile::num_filters, 0, 24);
  int_field("call_stack_depth", &ArchProfile::call_stack_depth, 1, 64);
  for (int t = 0; t < isa::kNumTimingClasses; ++t) {
    const auto timing = static_cast<Timing>(t);
    const bool vec = isa::is_vector(timing);
    f.push_back({fmt::format("{}.{}", vec ? "simd" : "cycles", isa::timing_name(timing)),
                 [t](const ArchProfile& p) { return double(p.timing[t]); },
                 [t](ArchProfile& p, double v) { p.timing[t] = int(v); }, 1.0, vec ? 64.0 : 1000.0});
  }
  int_field("vector_startup_cycles", &ArchProfile::vector_startup_cycles, 0, 1000);
  int_field("task_start_cycles", &ArchProfile::task_start_cycles, 1, 1000);
  int_field("task_switch_cycles", &ArchProfile::task_switch_cycles, 0, 1000);
  int_field("queue_to_task_cycles", &ArchProfile::queue_to_task_cycles, 0, 1000);
  int_field("hop_latency", &ArchProfile::hop_latency, 1, 1);
  int_field("ramp_up_latency", &ArchProfile::ramp_up_latency, 0, 64);
  int_field("ramp_down_latency", &ArchProfile::ramp_down_latency, 1, kMaxRampLatency);
  int_field("router_buffer_depth", &ArchProfile::router_buffer_depth, 1, kMaxRouterBufferDepth);
  f.push_back({"clock_mhz", [](const ArchProfile& p) { return p.clock_mhz; },
               [](ArchProfile& p, double v) { p.clock_mhz = v; }, 1, 100000, false});
  return f;
}

const std::vector<Field>& field_table() {
  static const std::vector<Field> table = fields();
  return table;
}

std::string format_value(const Field& f, const ArchProfile& p) {
  const double v = f.get(p);
  return f.integral ? fmt::format("{}", static_cast<long long>(v)) : fmt::format("{}", v);
}

}  // namespace

const ArchProfile& arch_profile(std::string_view name) {
  static const ArchProfile wse2 = make_profile(kArchRows[0]);
  static const ArchProfile wse3 = make_profile(kArchRows[1]);
  if (name == "wse2") return wse2;
  if (name == "wse3") return wse3;
  config_error(fmt::format("unknown architecture '{}' (known: wse2, wse3)", name));
}

std::vector<std::string> arch_names() { return {"wse2", "wse3"}; }

void apply_override(ArchProfile& profile, std::string_view assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string_view::npos)
    config_error(fmt::format("profile override '{}' is not key=value", assignment));
  const std::string_view key = assignment.substr(0, eq);
  const std::string value(assignment.substr(eq + 1));
  for (const Field& f : field_table()) {
    if (f.key != key) continue;
    double v = 0;
    try {
      size_t used = 0;
      v = std::stod(value, &used);
      if (used != value.size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      config_error(fmt::format("profile override {}: '{}' is not a number", key, value));
    }
    if (f.integral && v != std::floor(v))
      config_error(fmt::format("profile override {}: '{}' is not an integer", key, value));
    if (v < f.lo || v > f.hi)
      config_error(fmt::format("profile override {}: {} is out of range [{}, {}]", key, value, f.lo, f.hi));
    ArchProfile copy = profile;
    f.put(copy, v);
    if (copy.data_task_first > copy.data_task_last || copy.local_task_first > copy.local_task_last)
      config_error(fmt::format("profile override {}: task id range would be empty", key));
    profile = std::move(copy);
    return;
  }
  config_error(fmt::format("unknown profile key '{}' (see `wsemu info --arch wse2`)", key));
}

ArchProfile arch_profile_with(std::string_view name, const std::vector<std::string>& overrides) {
  ArchProfile p = arch_profile(name);
  for (const std::string& o : overrides) apply_override(p, o);
  return p;
}

std::vector<std::pair<std::string, std::string>> profile_fields(const ArchProfile& profile) {
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("name", profile.name);
  for (const Field& f : field_table()) out.emplace_back(f.key, format_value(f, profile));
  return out;
}

nlohmann::json profile_to_json(const ArchProfile& profile) {
  nlohmann::json j;
  j["name"] = profile.name;
  for (const Field& f : field_table()) {
    const double v = f.get(profile);
    if (f.integral)
      j[f.key] = static_cast<long long>(v);
    else
      j[f.key] = v;
  }
  return j;
}

std::string profile_to_text(const ArchProfile& p) {
  std::string s = fmt::format("architecture {}\n", p.name);
  s += fmt::format("  SRAM per PE            {} bytes\n", p.sram_bytes);
  s += fmt::format("  routable colors        0..{}\n", p.routable_colors - 1);
  s += "  input queue depths     ";
  for (int q = 0; q < p.num_input_queues; ++q) s += fmt::format("{}{}", q ? " " : "", p.input_queue_depth[q]);
  s += "\n  output queue depths    ";
  for (int q = 0; q < p.num_output_queues; ++q) s += fmt::format("{}{}", q ? " " : "", p.output_queue_depth[q]);
  s += fmt::format("\n  microthreads           {} ({})\n", p.microthreads,
                   p.explicit_microthreads ? "named by the instruction" : "implied by the queue");
  s += fmt::format("  data task ids          {}..{} (one per {})\n", p.data_task_first,
                   p.data_task_last, p.data_task_by_queue ? "input queue" : "color");
  s += fmt::format("  local task ids         {}..{}\n", p.local_task_first, p.local_task_last);
  s += fmt::format("  control task ids       {}..{}\n", p.control_task_first, p.control_task_last);
  s += fmt::format("  range filters          {}\n", p.num_filters);
  s += fmt::format("  clock                  {} MHz\n", p.clock_mhz);
  s += fmt::format("  hop latency            {} cycle\n", p.hop_latency);
  s += fmt::format("  ramp up / down         {} / {} cycles (core -> router / router -> core)\n", p.ramp_up_latency,
                   p.ramp_down_latency);
  s += fmt::format("  router buffer depth    {} wavelets per color per input\n", p.router_buffer_depth);
  s += fmt::format("  vector startup         {} cycles\n", p.vector_startup_cycles);
  s += fmt::format("  task start / switch    {} / {} cycles (+ {} for a wavelet-triggered task)\n",
                   p.task_start_cycles, p.task_switch_cycles, p.queue_to_task_cycles);
  s += "\n  all keys (override with --set key=value):\n";
  for (const auto& [k, v] : profile_fields(p)) s += fmt::format("    {:<28} {}\n", k, v);
  return s;
}

std::string timing_summary(isa::Timing t) {
  const ArchProfile& a = arch_profile("wse2");
  const ArchProfile& b = arch_profile("wse3");
  if (isa::is_vector(t)) return fmt::format("wse2 {}, wse3 {}", a.simd_width(t), b.simd_width(t));
  if (a.cycles(t) == b.cycles(t)) return fmt::format("{} cycle{}", a.cycles(t), a.cycles(t) == 1 ? "" : "s");
  return fmt::format("wse2 {}, wse3 {} cycles", a.cycles(t), b.cycles(t));
}

}  // namespace wsemu::emu
