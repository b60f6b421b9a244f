// What the emulator benchmarks share: assembling their fixed programs, direction masks, and the
// dense-compute wafer (every PE loops `fmacs` over 128 fp32 elements, memory only), so that
// emulator_bench and emulator_speed measure the same kernel.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "emulator/wafer.hpp"
#include "tests/fixed_program.hpp"

namespace wsemu::bench {

// The benchmark programs are fixed text: one that does not assemble is a bug here.
inline std::shared_ptr<const isa::ObjectImage> assemble(const std::string& source) {
  return testing::assemble_or_throw(source, "bench.wsa");
}

inline constexpr emu::DirectionMask kW = emu::bit(emu::Direction::WEST), kE = emu::bit(emu::Direction::EAST),
                                    kR = emu::bit(emu::Direction::RAMP);

inline std::unique_ptr<emu::Wafer> dense_wafer(int side, int threads) {
  auto img = assemble(".arch wse3\n.data\n" + testing::xy_vectors("128") + R"(.code
.task main, local, 10
main:
  li r2, 1.0001
  li r5, 0
  li r6, 8
loop:
  fmacs yd, yd, xd, r2
  addi r5, r5, 1
  bne r5, r6, loop
  exit
)");
  auto w = std::make_unique<emu::Wafer>(emu::arch_profile("wse3"), side, side, emu::WaferOptions{threads, 64});
  for (int y = 0; y < side; ++y)
    for (int x = 0; x < side; ++x) {
      w->load_program(x, y, img, x, y);
      w->activate_task(x, y, 10);
    }
  return w;
}

}  // namespace wsemu::bench
