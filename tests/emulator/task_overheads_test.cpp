// The per-operation overheads of the profile (emulator/README.md "Per-operation overheads"):
// task_start_cycles (the picker), task_switch_cycles (after a task ends), queue_to_task_cycles
// (a wavelet-triggered task's extra start) and vector_startup_cycles (DSD set-up). Each key must
// move exactly the step it names by exactly its value, and nothing else. Expected cycles are
// worked out by hand in the comments from the timing model's table.
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::Wafer;

struct Stamps {
  uint32_t first, second;
};

// Local task 10 stamps, activates local task 11 and exits; task 11 stamps again.
//   pick 0, tsc 1, st32 2, activate 3, exit 4 (+ switch), pick 5 + switch (+ start - 1),
//   tsc of task 11 one cycle after its pick.
Stamps local_to_local(const std::vector<std::string>& overrides) {
  const auto prog = assemble(R"(
.data
t:      .u32 [2]
.export t
.code
.task   first, local, 10
.task   second, local, 11
first:
  tsc r1
  st32 [t], r1
  activate 11
  exit
second:
  tsc r2
  st32 [t + 4], r2
  exit
)");
  Wafer w(emu::arch_profile_with("wse2", overrides), 1, 1);
  w.load_program(0, 0, prog);
  w.activate_task(0, 0, 10);
  run_ok(w);
  const std::vector<uint32_t> t = read<uint32_t>(w, 0, 0, addr(*prog, "t"), 2);
  return {t[0], t[1]};
}

TEST(TaskOverheads, DefaultsAreTheModelsAndTheOldRule) {
  for (const char* arch : {"wse2", "wse3"}) {
    const emu::ArchProfile& p = emu::arch_profile(arch);
    EXPECT_EQ(p.task_start_cycles, 1) << arch;
    EXPECT_EQ(p.task_switch_cycles, 0) << arch;
    EXPECT_EQ(p.queue_to_task_cycles, 0) << arch;
    EXPECT_EQ(p.vector_startup_cycles, 2) << arch;
  }
  EXPECT_THROW(emu::arch_profile_with("wse2", {"task_switch_cycles=-1"}), emu::FaultError);
  EXPECT_THROW(emu::arch_profile_with("wse2", {"queue_to_task_cycles=1001"}), emu::FaultError);
}

TEST(TaskOverheads, TaskSwitchDelaysTheNextPickByItsCycles) {
  const Stamps base = local_to_local({});
  EXPECT_EQ(base.first, 1u);
  EXPECT_EQ(base.second, 6u);  // exit at 4, pick at 5, tsc at 6
  for (int s : {1, 3, 17}) {
    const Stamps t = local_to_local({"task_switch_cycles=" + std::to_string(s)});
    EXPECT_EQ(t.first, 1u) << s;  // the first task's pick is not a switch
    EXPECT_EQ(t.second, 6u + uint32_t(s)) << s;
  }
}

TEST(TaskOverheads, TaskStartDelaysEveryTasksFirstInstruction) {
  for (int s : {2, 5}) {
    const Stamps t = local_to_local({"task_start_cycles=" + std::to_string(s)});
    EXPECT_EQ(t.first, uint32_t(s)) << s;              // pick at 0, first instruction at s
    EXPECT_EQ(t.second, uint32_t(s) + 4u + uint32_t(s)) << s;  // exit at s + 3, pick at s + 4
  }
}

TEST(TaskOverheads, QueueToTaskChargesOnlyWaveletTriggeredTasks) {
  // Local tasks do not pay it.
  const Stamps local = local_to_local({"queue_to_task_cycles=9"});
  EXPECT_EQ(local.first, 1u);
  EXPECT_EQ(local.second, 6u);
  // A data task on color 4 fed from the west edge: the wavelet pushed before cycle 0 is in the
  // router's buffer, forwarded to RAMP in cycle 0, usable after the ramp down (2) in cycle 2,
  // picked in cycle 2; `tsc` runs at 3 + queue_to_task_cycles. A control wavelet naming control
  // task 7 (entry bit) pays the same.
  auto data_task_stamp = [](const std::vector<std::string>& overrides, bool control) {
    const auto prog = assemble(R"(
.data
t:      .u32 [1]
.export t
.code
.task   on_data, data, color 4
.task   on_control, control, 7
on_data:
on_control:
  tsc r3
  st32 [t], r3
  exit
)");
    Wafer w(emu::arch_profile_with("wse2", overrides), 1, 1);
    w.load_program(0, 0, prog);
    w.set_route(0, 0, 4, route("W", "R"));
    const emu::Wavelet wv = control ? control_wavelet(4, emu::make_control_payload({}, 7, 0))
                                    : data_wavelet(4, 42);
    EXPECT_TRUE(w.push_edge(0, 0, Direction::WEST, wv));
    run_ok(w);
    return read<uint32_t>(w, 0, 0, addr(*prog, "t"), 1)[0];
  };
  for (bool control : {false, true}) {
    EXPECT_EQ(data_task_stamp({}, control), 3u) << control;
    for (int q : {1, 4, 11})
      EXPECT_EQ(data_task_stamp({"queue_to_task_cycles=" + std::to_string(q)}, control), 3u + uint32_t(q))
          << control << " " << q;
  }
}

TEST(TaskOverheads, VectorStartupIsChargedOncePerOperation) {
  // fadds over 8 fp32 elements at wse2's width 2: startup + 4 cycles, then `tsc`.
  //   pick 0, tsc 1, fadds 2 .. 2 + startup + 3, tsc after it.
  auto span = [](int startup) {
    const auto prog = assemble(R"(
.data
a:      .f32 [8]
t:      .u32 [2]
.export t
.dsd    ad = mem1d(a, 8)
.code
.task   main, local, 10
main:
  tsc r1
  fadds ad, ad, ad
  tsc r2
  st32 [t], r1
  st32 [t + 4], r2
  exit
)");
    Wafer w(emu::arch_profile_with("wse2", {"vector_startup_cycles=" + std::to_string(startup)}), 1, 1);
    w.load_program(0, 0, prog);
    w.activate_task(0, 0, 10);
    run_ok(w);
    const std::vector<uint32_t> t = read<uint32_t>(w, 0, 0, addr(*prog, "t"), 2);
    return t[1] - t[0];
  };
  EXPECT_EQ(span(2), 1u + 2u + 4u);
  EXPECT_EQ(span(0), 1u + 0u + 4u);
  EXPECT_EQ(span(9), 1u + 9u + 4u);
}

}  // namespace
}  // namespace wsemu::testing
