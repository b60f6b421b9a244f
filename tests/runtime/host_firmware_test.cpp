// The memcpy firmware as assembled: the task ids, descriptor registers, queue bindings and SRAM
// use that firmware/memcpy_protocol.hpp and firmware/README.md promise, for both architectures.
#include <gtest/gtest.h>

#include <set>

#include "emulator/arch_profile.hpp"
#include "firmware/memcpy_protocol.hpp"
#include "isa/assembler.hpp"

namespace wsemu::testing {
namespace {

isa::ObjectImage firmware_object(const std::string& arch) {
  isa::AssembleOptions o;
  o.arch = arch;
  isa::AssembleResult r = isa::assemble("; a program that only includes the firmware\n.include \"memcpy.wsa\"\n",
                                        "fw_test.wsa", [&] {
                                          o.include_dirs = {firmware::include_dir()};
                                          return o;
                                        }());
  std::string errors;
  for (const isa::Diagnostic& d : r.errors) errors += d.to_string() + "\n";
  EXPECT_TRUE(r.object.has_value()) << errors;
  return r.object.value_or(isa::ObjectImage{});
}

class Firmware : public ::testing::TestWithParam<std::string> {};

TEST_P(Firmware, TasksMatchTheProtocol) {
  const isa::ObjectImage fw = firmware_object(GetParam());
  std::map<std::string, std::pair<isa::TaskKind, int>> tasks;
  for (const isa::TaskBinding& t : fw.tasks) tasks[t.name] = {t.kind, t.id};
  using K = isa::TaskKind;
  EXPECT_EQ(tasks.at("memcpy_h2d_cmd"), std::make_pair(K::CONTROL, firmware::kTaskH2D));
  EXPECT_EQ(tasks.at("memcpy_d2h_cmd"), std::make_pair(K::CONTROL, firmware::kTaskD2H));
  EXPECT_EQ(tasks.at("memcpy_launch_cmd"), std::make_pair(K::CONTROL, firmware::kTaskLaunch));
  EXPECT_EQ(tasks.at("memcpy_to_host"), std::make_pair(K::CONTROL, firmware::kTaskToHost));
  EXPECT_EQ(tasks.at("memcpy_h2d_ind_cmd"), std::make_pair(K::CONTROL, firmware::kTaskH2DIndirect));
  EXPECT_EQ(tasks.at("memcpy_d2h_ind_cmd"), std::make_pair(K::CONTROL, firmware::kTaskD2HIndirect));
  EXPECT_EQ(tasks.at("memcpy_resume"), std::make_pair(K::LOCAL, firmware::kTaskResume));
  EXPECT_EQ(tasks.at(firmware::kInitTaskName), std::make_pair(K::LOCAL, firmware::kTaskInit));
  EXPECT_EQ(fw.tasks.size(), 8u);  // and memcpy_flushed, bound at run time in CSL programs only
}

TEST_P(Firmware, StaysInItsResources) {
  const isa::ObjectImage fw = firmware_object(GetParam());
  for (const isa::DescriptorInit& d : fw.descriptors) EXPECT_GE(d.dsr, firmware::kFirstFirmwareDsr) << d.name;
  const isa::DescriptorInit* fifo = nullptr;
  for (const isa::DescriptorInit& d : fw.descriptors)
    if (d.name == "memcpy_d2h_fifo") fifo = &d;
  ASSERT_NE(fifo, nullptr);
  EXPECT_EQ(fifo->value.kind, isa::DsdKind::FIFO);
  EXPECT_EQ(fifo->value.base, firmware::kFifoBase);
  EXPECT_EQ(fifo->value.length, firmware::kFifoCapacity);
  EXPECT_EQ(firmware::kFifoBase + 4 * firmware::kFifoCapacity, 48u * 1024u);  // the FIFO ends the SRAM
  std::set<std::tuple<bool, int, int>> queues;
  for (const isa::QueueBinding& q : fw.queues) queues.insert({q.output, q.queue, q.color});
  // No queue is bound at load: input queue 1 is bound at start-up (but not in a wse2 kernel that
  // binds it itself, as the SDK reserves only queue 0 there), output queue 5 at start-up in
  // assembly programs only, the loop queue (1) per send in CSL programs, so a CSL kernel may use
  // queues 2..7 as the SDK reserves only queues 0 and 1 (wse3).
  EXPECT_TRUE(queues.empty());
  // No data of its own below the reserve: the firmware keeps its state in the top 4 KiB.
  EXPECT_EQ(fw.data_size, 0u);
  // Small enough to link into every kernel.
  EXPECT_LE(fw.code.size() * 8, 2560u);  // 2048 bytes with two host streams and the loop queue
}

// memcpy_flushed resumes the chain after a qflush of the loop queue: it must be the task that a
// flush activates.
TEST_P(Firmware, FlushedTaskIsTheTeardownTask) {
  EXPECT_EQ(emu::arch_profile_with(GetParam(), {}).teardown_task, firmware::kTaskFlushed);
}

INSTANTIATE_TEST_SUITE_P(Arch, Firmware, ::testing::Values("wse2", "wse3"));

}  // namespace
}  // namespace wsemu::testing
