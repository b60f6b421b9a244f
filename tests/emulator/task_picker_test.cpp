// Task rules: activate / block / unblock, the picker's round-robin rule, data tasks (payload in
// r0, r1 = low 16, r2 = high 16), control tasks, wse2 (color) vs wse3 (queue) triggers, and
// binding at run time. Each task records its position in the run order (r15 counts).
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::Wafer;

// Every program here has a data array `order` of 4 words for the tasks to record into.
const std::string kOrder = ".data\norder: .u32 [4]\n.code\n";

// A task that records the order it ran in at word `slot` of `order`.
std::string order_task(const std::string& label, int slot, const std::string& body = "") {
  return label + ":\n  addi r15, r15, 1\n  st32 [order + " + std::to_string(4 * slot) + "], r15\n" + body + "  exit\n";
}

std::vector<uint32_t> order(Wafer& w, const isa::ObjectImage& p, size_t n) {
  return read<uint32_t>(w, 0, 0, addr(p, "order"), n);
}

// The data of a program whose data task adds up the payloads it gets: one word `sum`.
const std::string kSum = ".data\nsum: .u32 [1]\n.code\n";

// A data task that adds its wavelet's payload (r0) to `sum`.
std::string summing_task(const std::string& label) {
  return label + ":\n  ld32 r5, [sum]\n  add r5, r5, r0\n  st32 [sum], r5\n  exit\n";
}

TEST(TaskPicker, BlockedTaskStaysActivatedUntilUnblocked) {
  auto p = assemble(kOrder + ".task t10, local, 10\n.task t11, local, 11\n.task t12, local, 12\n" +
                    order_task("t10", 0, "  activate 11\n  block 11\n  activate 12\n") + order_task("t11", 1) +
                    order_task("t12", 2, "  unblock 11\n"));
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  start_pe(w, p);
  run_ok(w);
  EXPECT_EQ(order(w, *p, 3), (std::vector<uint32_t>{1, 3, 2}));
}

// A fresh core's scan starts at id 0, so the first pick is the lowest id; each pick then scans
// on from the one after it.
TEST(TaskPicker, FirstPickIsTheLowestIdThenTheScanGoesOn) {
  auto p = assemble(kOrder + ".task t12, local, 12\n.task t15, local, 15\n.task t20, local, 20\n" +
                    order_task("t12", 0) + order_task("t15", 1) + order_task("t20", 2));
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p);
  for (int id : {20, 15, 12}) w.activate_task(0, 0, id);
  run_ok(w);
  EXPECT_EQ(order(w, *p, 3), (std::vector<uint32_t>{1, 2, 3}));
}

// Round robin, not lowest id first: t11 activates 10 and 12; the scan goes on from 12, so 12
// runs before 10 (lowest id first would run 10, then 12). After 12 the scan wraps to 10.
TEST(TaskPicker, ScanGoesOnFromTheLastPickAndWraps) {
  auto p = assemble(kOrder + ".task t10, local, 10\n.task t11, local, 11\n.task t12, local, 12\n" +
                    order_task("t10", 0) + order_task("t11", 1, "  activate 10\n  activate 12\n") +
                    order_task("t12", 2));
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p);
  w.activate_task(0, 0, 11);
  run_ok(w);
  EXPECT_EQ(order(w, *p, 3), (std::vector<uint32_t>{3, 1, 2}));
}

// The SDK's game-of-life depends on this: a data task of a lower id whose wavelet is waiting
// does not overtake a local task activated before it, once the scan is past the data task's id.
// t12 runs (the only task), a wavelet lands for data task 5 meanwhile, t12 activates t13: the
// scan goes on from 13, so t13 runs before on5; lowest id first would run on5 first.
TEST(TaskPicker, WaitingDataTaskOfLowerIdWaitsItsTurn) {
  auto p = assemble(".arch wse2\n" + kOrder + ".task t12, local, 12\n.task t13, local, 13\n.task on5, data, color 5\n" +
                    order_task("t12", 0, "  nop\n  nop\n  nop\n  nop\n  nop\n  nop\n  activate 13\n") +
                    order_task("t13", 1) + order_task("on5", 2));
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  start_pe(w, p, {{5, "W", "R"}}, 12);
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(5, 1)));
  run_ok(w);
  EXPECT_EQ(order(w, *p, 3), (std::vector<uint32_t>{1, 2, 3}));
}

TEST(TaskPicker, ActivationIsAFlagNotACounter) {
  auto p = assemble(kOrder + ".task t10, local, 10\n" + order_task("t10", 0));
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  start_pe(w, p);
  w.activate_task(0, 0, 10);
  run_ok(w);
  EXPECT_EQ(w.core_view(0, 0).stats.tasks_started, 1u);
}

TEST(TaskPicker, DataTaskGetsPayloadAndHalvesWse2) {
  auto p = assemble(R"(
.arch wse2
.data
got:    .u32 [3]
.code
.task on3, data, color 3
on3:
  st32 [got], r0
  st32 [got + 4], r1
  st32 [got + 8], r2
  exit
)");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p);
  w.set_route(0, 0, 3, route("W", "R"));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(3, 0xABCD1234)));
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, addr(*p, "got"), 3), (std::vector<uint32_t>{0xABCD1234, 0x1234, 0xABCD}));
}

TEST(TaskPicker, DataTaskTriggeredByQueueWse3) {
  auto p = assemble(".arch wse3\n" + kSum + ".iqinit 2, 5\n.task onq2, data, queue 2\n" + summing_task("onq2"));
  Wafer w(emu::arch_profile("wse3"), 1, 1);
  w.load_program(0, 0, p);
  w.set_route(0, 0, 5, route("W", "R"));
  for (uint32_t v : {1u, 2u, 3u}) ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(5, v)));
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, addr(*p, "sum"), 1)[0], 6u);
  EXPECT_EQ(w.core_view(0, 0).stats.tasks_started, 3u);
}

TEST(TaskPicker, BlockedDataTaskHoldsWaveletsUntilUnblocked) {
  // The data task on color 3 starts blocked; local task 10 unblocks it after the wavelets
  // arrived, and the data task then runs once per wavelet.
  auto p = assemble(".arch wse2\n" + kSum + ".iqinit 1, 3\n.task on3, data, color 3, blocked\n.task release, local, 10\n" +
                    summing_task("on3") + "release:\n  unblock 3\n  exit\n");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p);
  w.set_route(0, 0, 3, route("W", "R"));
  for (uint32_t v : {10u, 20u}) ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(3, v)));
  const auto r = w.run(1000);
  ASSERT_EQ(r.status, emu::RunResult::Status::HANG) << r.to_string();  // wavelets nobody takes
  EXPECT_EQ(w.core_view(0, 0).input_queues[1].size(), 2u);
  w.activate_task(0, 0, 10);
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, addr(*p, "sum"), 1)[0], 30u);
}

TEST(TaskPicker, LocalTaskBeforeDataTaskOfHigherId) {
  // While task 10 runs, local task 12 is activated and a wavelet for data task 20 lands; at
  // the next pick both are ready and 12 (the first after 10) runs first.
  auto p = assemble(".arch wse2\n" + kOrder + ".task t10, local, 10\n.task t12, local, 12\n.task on20, data, color 20\n" +
                    order_task("t10", 0, "  activate 12\n  nop\n  nop\n  nop\n  nop\n  nop\n  nop\n") +
                    order_task("t12", 1) + order_task("on20", 2));
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  start_pe(w, p, {{20, "W", "R"}});
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(20, 1)));
  run_ok(w);
  EXPECT_EQ(order(w, *p, 3), (std::vector<uint32_t>{1, 2, 3}));
}

TEST(TaskPicker, ControlWaveletRunsItsControlTaskWithData) {
  // Color 6 has a data task, so it is unblocked; the control wavelet names control task 40
  // with data 0x55; the data wavelet after it runs the data task.
  auto p = assemble(".arch wse2\n" + kOrder + ".task ctl, control, 40\n.task on6, data, color 6\n" +
                    order_task("ctl", 0, "  st32 [order + 8], r0\n") + order_task("on6", 1, "  st32 [order + 12], r0\n"));
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p);
  w.set_route(0, 0, 6, route("W", "R"));
  const uint32_t ctl = emu::make_control_payload({}, 40, 0x55);
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, control_wavelet(6, ctl)));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(6, 77)));
  run_ok(w);
  EXPECT_EQ(order(w, *p, 4), (std::vector<uint32_t>{1, 2, 0x55, 77}));
}

TEST(TaskPicker, ControlTaskNeedsTheColorUnblocked) {
  // No data task on color 6: its id stays blocked and the control wavelet waits, until a
  // local task unblocks id 6.
  auto p = assemble(".arch wse2\n" + kOrder + ".task ctl, control, 40\n.task open, local, 10\n" + order_task("ctl", 0) +
                    "open:\n  unblock 6\n  exit\n");
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p);
  w.set_route(0, 0, 6, route("W", "R"));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, control_wavelet(6, emu::make_control_payload({}, 40, 1))));
  const auto r = w.run(1000);
  ASSERT_EQ(r.status, emu::RunResult::Status::HANG);
  EXPECT_EQ(order(w, *p, 1)[0], 0u);
  w.activate_task(0, 0, 10);
  run_ok(w);
  EXPECT_EQ(order(w, *p, 1)[0], 1u);
}

TEST(TaskPicker, ControlWaveletNamingNoTaskIsDropped) {
  auto p = assemble(".arch wse2\n" + kOrder + ".task on6, data, color 6\n" + order_task("on6", 0));
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.load_program(0, 0, p);
  w.set_route(0, 0, 6, route("W", "R"));
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, control_wavelet(6, 31u << 16)));  // task 31: none
  ASSERT_TRUE(w.push_edge(0, 0, Direction::WEST, data_wavelet(6, 1)));
  run_ok(w);
  const auto v = w.core_view(0, 0);
  EXPECT_EQ(v.stats.control_dropped, 1u);
  EXPECT_EQ(v.stats.tasks_started, 1u);
}

TEST(TaskPicker, BindAtRunTime) {
  // Only task 10 is bound at load time; 14 gets its code from `bind`.
  auto p = assemble(R"(
.data
v:      .u32 [1]
.code
.task start, local, 10
start:
  bind 14, later
  activate 14
  exit
later:
  li r1, 9
  st32 [v], r1
  exit
)");
  Wafer w(emu::arch_profile("wse3"), 1, 1);
  start_pe(w, p);
  run_ok(w);
  EXPECT_EQ(read<uint32_t>(w, 0, 0, addr(*p, "v"), 1)[0], 9u);
}

TEST(TaskPicker, TaskIdRangesFollowTheArchitecture) {
  // wse3 local ids are 8..30. The assembler enforces that itself under `.arch wse3`, so the
  // program is assembled without `.arch` (WSE-2 ranges) and marked wse3 afterwards: what is
  // tested is the loader's own check.
  auto assembled = assemble(".task t, local, 5\nt:\n  exit\n");
  auto p = std::make_shared<isa::ObjectImage>(*assembled);
  p->arch = "wse3";
  Wafer w(emu::arch_profile("wse3"), 1, 1);
  try {
    w.load_program(0, 0, p);
    FAIL() << "expected a configuration error";
  } catch (const emu::FaultError& e) {
    EXPECT_EQ(e.fault().kind, emu::FaultKind::CONFIGURATION_ERROR);
    EXPECT_NE(e.fault().message.find("8..30"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wsemu::testing
