// The "row chain" test kernel, shared by the multi-PE, determinism, scale tests and benchmarks:
// on every row of a rectangle, PE 0 sends its value (x + 1) east; each PE adds its own value
// to what arrives and sends the sum on; the last PE of the row stores the row's sum in its
// data word `sum` (for a row of n PEs: n (n + 1) / 2). Colors alternate 1, 2 so that no PE
// sends and receives on the same color. With `work` > 0 every PE first runs an fmacs over
// `work` elements.
#pragma once

#include <memory>
#include <string>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {

struct RowChainPrograms {
  std::shared_ptr<const isa::ObjectImage> first, odd, even, last_odd, last_even;
  // Where the last PE of a row keeps the sum: the same in both last programs, which differ
  // only in their color.
  uint32_t sum_address = 0;
};

inline RowChainPrograms row_chain_programs(const char* arch, int work = 0) {
  const bool by_queue = emu::arch_profile(arch).data_task_by_queue;
  // PE 0 runs local task 10; the others a data task on the color they receive, which on wse3
  // is input queue 0 bound to that color.
  auto make = [&](const std::string& body, int data_color, int out_color, bool first) {
    std::string src = std::string(".arch ") + arch + "\n";
    src += ".data\nsum: .u32 [1]\n";
    if (work > 0) {
      src += ".equ WORK, " + std::to_string(work) + "\n";
      src += xy_vectors("WORK");
    }
    src += ".code\n";
    if (first)
      src += ".task main, local, 10\n";
    else if (by_queue)
      src += ".iqinit 0, " + std::to_string(data_color) + "\n.task main, data, queue 0\n";
    else
      src += ".task main, data, color " + std::to_string(data_color) + "\n";
    if (out_color > 0) src += ".oqinit 1, " + std::to_string(out_color) + "\n";
    src += "main:\n";
    if (work > 0) src += "  fmacs yd, yd, xd, xd\n";
    src += "  coord r1, 0\n  addi r1, r1, 1\n" + body + "  exit\n";
    return assemble(src);
  };
  RowChainPrograms r;
  r.first = make("  send 1, r1\n", 0, 1, true);
  r.odd = make("  add r0, r0, r1\n  send 1, r0\n", 1, 2, false);
  r.even = make("  add r0, r0, r1\n  send 1, r0\n", 2, 1, false);
  const std::string store = "  add r0, r0, r1\n  st32 [sum], r0\n";
  r.last_odd = make(store, 1, 0, false);
  r.last_even = make(store, 2, 0, false);
  r.sum_address = addr(*r.last_odd, "sum");
  EXPECT_EQ(addr(*r.last_even, "sum"), r.sum_address);
  return r;
}

// Places the chain on the rectangle [x0, x0 + w) x [y0, y0 + h) of `wafer` and starts it.
inline void place_row_chain(emu::Wafer& wafer, const RowChainPrograms& p, int x0, int y0, int w, int h) {
  for (int y = y0; y < y0 + h; ++y) {
    for (int i = 0; i < w; ++i) {
      const int x = x0 + i;
      const bool last = i == w - 1;
      std::shared_ptr<const isa::ObjectImage> prog =
          i == 0 ? p.first : last ? (i % 2 ? p.last_odd : p.last_even) : (i % 2 ? p.odd : p.even);
      wafer.load_program(x, y, prog, i, y - y0);
      if (i > 0) wafer.set_route(x, y, i % 2 ? 1 : 2, route("W", "R"));
      if (!last) wafer.set_route(x, y, i % 2 ? 2 : 1, route("R", "E"));
    }
    wafer.activate_task(x0, y, 10);
  }
}

}  // namespace wsemu::testing
