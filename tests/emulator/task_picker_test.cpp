// Task rules: activate / block / unblock, the picker's lowest-id rule, data tasks (payload in
// r0, r1 = low 16, r2 = high 16), control tasks, wse2 (color) vs wse3 (queue) triggers, and
// binding at run time. Each task records its position in the run order (r15 counts).
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::Wafer;

// A task that records the order it ran in at `addr`.
std::string order_task(const std::string& label, uint32_t addr, const std::string& body = "") {
  return label + ":\n  addi r15, r15, 1\n  st32 [" + std::to_string(addr) + "], r15\n" + body + "  exit\n";
}

TEST(TaskPicker, BlockedTaskStaysActivatedUntilUnblocked) {
  TestProgram p;
  p.code(order_task("t10", 0x1000, "  activate 11\n  block 11\n  activate 12\n"));
  p.code(order_task("t11", 0x1004));
  p.code(order_task("t12", 0x1008, "  unblock 11\n"));
  p.local_task(10, "t10").local_task(11, "t11").local_task(12, "t12");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p.build());
  w.activate_task(0, 0, 10);
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1000, 3), (std::vector<uint32_t>{1, 3, 2}));
}

TEST(TaskPicker, LowestTaskIdWins) {
  TestProgram p;
  p.code(order_task("t12", 0x1000)).code(order_task("t15", 0x1004)).code(order_task("t20", 0x1008));
  p.local_task(12, "t12").local_task(15, "t15").local_task(20, "t20");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p.build());
  for (int id : {20, 15, 12}) w.activate_task(0, 0, id);
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1000, 3), (std::vector<uint32_t>{1, 2, 3}));
}

TEST(TaskPicker, ActivationIsAFlagNotACounter) {
  TestProgram p;
  p.code(order_task("t10", 0x1000));
  p.local_task(10, "t10");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p.build());
  w.activate_task(0, 0, 10);
  w.activate_task(0, 0, 10);
  run_ok(w);
  EXPECT_EQ(w.core_view(0, 0).stats.tasks_started, 1u);
}

TEST(TaskPicker, DataTaskGetsPayloadAndHalvesWse2) {
  TestProgram p("wse2");
  p.code(R"(
on3:
  st32 [0x1000], r0
  st32 [0x1004], r1
  st32 [0x1008], r2
  exit
)");
  p.data_task(3, "on3");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p.build());
  w.set_route(0, 0, 3, route("W", "R"));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(3, 0xABCD1234)));
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1000, 3), (std::vector<uint32_t>{0xABCD1234, 0x1234, 0xABCD}));
}

TEST(TaskPicker, DataTaskTriggeredByQueueWse3) {
  TestProgram p("wse3");
  p.code(R"(
onq2:
  ld32 r5, [0x1000]
  add r5, r5, r0
  st32 [0x1000], r5
  exit
)");
  p.data_task(2, "onq2", /*by_queue=*/true).iq(2, 5);
  Wafer w(emu::arch_profile("wse3"), 1, 1);
  w.load_program(0, 0, p.build());
  w.set_route(0, 0, 5, route("W", "R"));
  for (uint32_t v : {1u, 2u, 3u}) ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(5, v)));
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1000, 1)[0], 6u);
  EXPECT_EQ(w.core_view(0, 0).stats.tasks_started, 3u);
}

TEST(TaskPicker, BlockedDataTaskHoldsWaveletsUntilUnblocked) {
  // The data task on color 3 starts blocked; local task 10 unblocks it after the wavelets
  // arrived, and the data task then runs once per wavelet.
  TestProgram p("wse2");
  p.code(R"(
on3:
  ld32 r5, [0x1000]
  add r5, r5, r0
  st32 [0x1000], r5
  exit
release:
  unblock 3
  exit
)");
  p.data_task(3, "on3").blocked_at_start();
  p.local_task(10, "release").iq(1, 3);
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p.build());
  w.set_route(0, 0, 3, route("W", "R"));
  for (uint32_t v : {10u, 20u}) ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(3, v)));
  const auto r = w.run(1000);
  ASSERT_EQ(r.status, emu::RunResult::Status::HANG) << r.to_string();  // wavelets nobody takes
  EXPECT_EQ(w.core_view(0, 0).input_queues[1].size(), 2u);
  w.activate_task(0, 0, 10);
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1000, 1)[0], 30u);
}

TEST(TaskPicker, LocalTaskBeforeDataTaskOfHigherId) {
  // While task 10 runs, local task 12 is activated and a wavelet for data task 20 lands; at
  // the next pick both are ready and 12 (the lower id) runs first.
  TestProgram p("wse2");
  p.code(order_task("t10", 0x1000, "  activate 12\n  nop\n  nop\n  nop\n  nop\n  nop\n  nop\n"));
  p.code(order_task("t12", 0x1004)).code(order_task("on20", 0x1008));
  p.local_task(10, "t10").local_task(12, "t12").data_task(20, "on20");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p.build());
  w.set_route(0, 0, 20, route("W", "R"));
  w.activate_task(0, 0, 10);
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(20, 1)));
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1000, 3), (std::vector<uint32_t>{1, 2, 3}));
}

TEST(TaskPicker, ControlWaveletRunsItsControlTaskWithData) {
  // Color 6 has a data task, so it is unblocked; the control wavelet names control task 40
  // with data 0x55; the data wavelet after it runs the data task.
  TestProgram p("wse2");
  p.code(order_task("ctl", 0x1000, "  st32 [0x1008], r0\n")).code(order_task("on6", 0x1004, "  st32 [0x100c], r0\n"));
  p.control_task(40, "ctl").data_task(6, "on6");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p.build());
  w.set_route(0, 0, 6, route("W", "R"));
  const uint32_t ctl = emu::make_control_payload({}, 40, true, 0x55);
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, control_wavelet(6, ctl)));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(6, 77)));
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1000, 4), (std::vector<uint32_t>{1, 2, 0x55, 77}));
}

TEST(TaskPicker, ControlTaskNeedsTheColorUnblocked) {
  // No data task on color 6: its id stays blocked and the control wavelet waits, until a
  // local task unblocks id 6.
  TestProgram p("wse2");
  p.code(order_task("ctl", 0x1000)).code("open:\n  unblock 6\n  exit\n");
  p.control_task(40, "ctl").local_task(10, "open");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p.build());
  w.set_route(0, 0, 6, route("W", "R"));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, control_wavelet(6, emu::make_control_payload({}, 40, true, 1))));
  const auto r = w.run(1000);
  ASSERT_EQ(r.status, emu::RunResult::Status::HANG);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1000, 1)[0], 0u);
  w.activate_task(0, 0, 10);
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1000, 1)[0], 1u);
}

TEST(TaskPicker, ControlWaveletWithoutEntryIsDropped) {
  TestProgram p("wse2");
  p.code(order_task("on6", 0x1000));
  p.data_task(6, "on6");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p.build());
  w.set_route(0, 0, 6, route("W", "R"));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, control_wavelet(6, 0)));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(6, 1)));
  run_ok(w);
  const auto v = w.core_view(0, 0);
  EXPECT_EQ(v.stats.control_dropped, 1u);
  EXPECT_EQ(v.stats.tasks_started, 1u);
}

TEST(TaskPicker, BindAtRunTime) {
  TestProgram p;
  p.code(R"(
start:
  bind 14, later
  activate 14
  exit
later:
  li r1, 9
  st32 [0x1000], r1
  exit
)");
  p.local_task(10, "start");
  Wafer w(emu::arch_profile("wse3"), 1, 1);
  w.load_program(0, 0, p.build());
  w.activate_task(0, 0, 10);
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, 0x1000, 1)[0], 9u);
}

TEST(TaskPicker, TaskIdRangesFollowTheArchitecture) {
  TestProgram p("wse3");
  p.code("t:\n  exit\n");
  p.local_task(5, "t");  // wse3 local ids are 8..30
  Wafer w(emu::arch_profile("wse3"), 1, 1);
  try {
    w.load_program(0, 0, p.build());
    FAIL() << "expected a configuration error";
  } catch (const emu::FaultError& e) {
    EXPECT_EQ(e.fault().kind, emu::FaultKind::CONFIGURATION_ERROR);
    EXPECT_NE(e.fault().message.find("8..30"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wsemu::testing
