// The WSE-2 router's configuration registers in the core's address space
// (emulator/fabric_registers.hpp): read and written with ld16 / st16 the way the SDK's
// spmv-hypersparse reconfigures its reduction color in its teardown handler. Every register
// value is worked out by hand from the bit layout in the header.
#include <gtest/gtest.h>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {
namespace {

using emu::ColorRoute;
using emu::FaultKind;
using emu::PopMode;
using emu::RunResult;
using emu::Wafer;

// Color 3: position 0 rx W, tx E; position 1 rx RAMP (tx E, kept from position 0); ring mode,
// pop on advance; it starts torn down, as the SDK's allreduce2R1E sets its color.
ColorRoute reduction_route() {
  ColorRoute r = route("W", "E");
  r.positions[1] = {dirs("R"), dirs("E")};
  r.num_positions = 2;
  r.ring_mode = true;
  r.pop_mode = PopMode::POP_ON_ADVANCE;
  r.teardown = true;
  return r;
}

// Task 10 reads both registers of color 3, then, as allreduce2R1E's configure functions do:
// switch register with the current position cleared (bits 14:13) and position 1 made invalid
// (bits 2:0 = 5, the select bit 3 kept); color register with position 0 cleared (bits 9:0) and
// set to rx N (0x100), tx RAMP (0x10). It reads each back, then makes position 1 rx RAMP again
// (bits 2:0 = 4) and position 0 rx W, tx E again, and ends the teardown.
constexpr const char* kReconfigure = R"(
.arch wse2
.task   cfg, local, 10
cfg:    li      r5, 0xFE46              ; color 3's color configuration: 0xFE40 + 2 * 3
        li      r6, 0xFE86              ; its switch configuration: 0xFE80 + 2 * 3
        ld16    r1, [r5]
        st16    [cc0], r1
        ld16    r2, [r6]
        st16    [sw0], r2
        andi    r2, r2, 0x9FF8
        ori     r2, r2, 5
        st16    [r6], r2
        ld16    r2, [r6]
        st16    [sw1], r2
        andi    r1, r1, 0xFC00
        ori     r1, r1, 0x110
        st16    [r5], r1
        ld16    r1, [r5]
        st16    [cc1], r1
        andi    r2, r2, 0xFFF8
        ori     r2, r2, 4
        st16    [r6], r2
        ld16    r2, [r6]
        st16    [sw2], r2
        andi    r1, r1, 0xFC00
        ori     r1, r1, 0x22
        st16    [r5], r1
        ld16    r2, [r6]
        st16    [sw3], r2
        tdexit  3
        ld16    r1, [r5]
        st16    [cc2], r1
        exit
.data
cc0:    .u16 0
cc1:    .u16 0
cc2:    .u16 0
sw0:    .u16 0
sw1:    .u16 0
sw2:    .u16 0
sw3:    .u16 0
)";

TEST(FabricRegisters, ReadAndRewriteAColorAsTheSdksAllreduceDoes) {
  SinglePe pe(kReconfigure);
  pe.wafer.set_route(0, 0, 3, reduction_route());
  pe.run_ok();
  auto word = [&](const char* name) { return pe.read<uint16_t>(name, 1)[0]; };
  // tx E (bit 1) | rx W (bit 5) | pop on advance (2 << 12) | teardown in progress (bit 14).
  EXPECT_EQ(word("cc0"), 0x0002 | 0x0020 | 0x2000 | 0x4000);
  // Position 1 changes the input to RAMP (8 | 4); positions 2, 3 invalid (5); ring mode (bit 12).
  EXPECT_EQ(word("sw0"), 0xC | 0x50 | 0x500 | 0x1000);
  // Position 1 invalid, its select bit kept as written.
  EXPECT_EQ(word("sw1"), 0xD | 0x50 | 0x500 | 0x1000);
  EXPECT_EQ(word("cc1"), 0x0110 | 0x2000 | 0x4000);
  // Position 1 rx RAMP again; its tx comes from position 0 (RAMP) ...
  EXPECT_EQ(word("sw2"), 0xC | 0x50 | 0x500 | 0x1000);
  // ... and follows position 0 to E when position 0 is rewritten: still "input RAMP".
  EXPECT_EQ(word("sw3"), 0xC | 0x50 | 0x500 | 0x1000);
  EXPECT_EQ(word("cc2"), 0x0022 | 0x2000);  // teardown over
  expect_ring_of_two(*pe.wafer.route(0, 0, 3), "W", "E", "R", "E");
}

RunResult run_store(const ColorRoute& r, const char* store) {
  Wafer w(emu::arch_profile("wse2"), 1, 1);
  w.set_route(0, 0, 3, r);
  w.load_program(0, 0, assemble(std::string(".arch wse2\n.task t, local, 10\nt: li r5, 0xFE46\n li r6, 0xFE86\n") + store +
                                "\n exit\n"));
  w.activate_task(0, 0, 10);
  return w.run(1000);
}

TEST(FabricRegisters, BadWritesAreRefused) {
  ColorRoute flowing = reduction_route();
  flowing.teardown = false;
  RunResult r = run_store(flowing, " li r1, 0x2022\n st16 [r5], r1");
  expect_kernel_error(r, "not in teardown");

  // Bit 11 (the E/W color swap) is not changed this way in wsemu.
  r = run_store(reduction_route(), " li r1, 0x6822\n st16 [r5], r1");
  ASSERT_EQ(r.status, RunResult::Status::FAULT);
  EXPECT_EQ(r.fault->kind, FaultKind::UNSUPPORTED);
  EXPECT_NE(r.fault->message.find("changes bits 15:10"), std::string::npos) << r.fault->message;

  // Position 1 naming direction 6, and the current position past the valid ones.
  for (const char* store : {" li r1, 0x1556\n st16 [r6], r1", " li r1, 0x555C\n st16 [r6], r1"}) {
    r = run_store(reduction_route(), store);
    ASSERT_EQ(r.status, RunResult::Status::FAULT) << store;
    EXPECT_EQ(r.fault->kind, FaultKind::KERNEL_ERROR) << store;
  }
}

}  // namespace
}  // namespace wsemu::testing
