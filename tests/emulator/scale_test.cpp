// Scale: a full WSE-3-size fabric (762 x 1176 tiles) with a small kernel in one corner loads
// and runs, and an idle tile costs only a few bytes of host memory.
#include <gtest/gtest.h>

#include "tests/emulator/row_chain.hpp"

namespace wsemu::testing {
namespace {

using emu::Wafer;

TEST(Scale, FullWse3FabricWithAKernelInOneCorner) {
  Wafer w(emu::arch_profile("wse3"), 762, 1176);
  const size_t empty = w.host_memory_bytes();
  const double tiles = 762.0 * 1176.0;
  EXPECT_LT(empty / tiles, 8.0) << "bytes per idle tile";
  const RowChainPrograms chain = row_chain_programs("wse3");
  place_row_chain(w, chain, 757, 1172, 5, 4);  // the SE corner
  const auto r = run_ok(w);
  for (int y = 1172; y < 1176; ++y) EXPECT_EQ(read<uint32_t>(w, 761, y, chain.sum_address, 1)[0], 15u);
  EXPECT_LT(r.cycle, 100u);
  EXPECT_EQ(w.allocated_tiles(), 20u);
  const size_t loaded = w.host_memory_bytes();
  EXPECT_LT(double(loaded) / tiles, 16.0) << "bytes per tile with the kernel loaded";
  RecordProperty("bytes_per_idle_tile", std::to_string(double(empty) / tiles));
}

}  // namespace
}  // namespace wsemu::testing
