// The "row chain" test kernel, shared by the multi-PE, determinism, scale tests and benchmarks:
// on every row of a rectangle, PE 0 sends its value (x + 1) east; each PE adds its own value
// to what arrives and sends the sum on; the last PE of the row stores the row's sum at 0x1000
// (for a row of n PEs: n (n + 1) / 2). Colors alternate 1, 2 so that no PE sends and receives
// on the same color. With `work` > 0 every PE first runs an fmacs over `work` elements.
#pragma once

#include <memory>
#include <string>

#include "tests/emulator/wafer_helpers.hpp"

namespace wsemu::testing {

struct RowChainPrograms {
  std::shared_ptr<const isa::ObjectImage> first, odd, even, last_odd, last_even;
};

inline RowChainPrograms row_chain_programs(const char* arch, int work = 0) {
  const std::string prologue = work > 0 ? "  fmacs d1, d1, d0, d0\n" : "";
  auto make = [&](const std::string& code, int data_color, int out_color, bool first) {
    TestProgram p(arch);
    p.code(code);
    if (work > 0) p.dsd(0, mem1d(0x1100, uint32_t(work))).dsd(1, mem1d(0x1100 + 4 * uint32_t(work), uint32_t(work)));
    if (first)
      p.local_task(10, "main");
    else if (emu::arch_profile(arch).data_task_by_queue)
      p.data_task(0, "main", true).iq(0, data_color);
    else
      p.data_task(data_color, "main");
    if (out_color > 0) p.oq(1, out_color);
    return p.build();
  };
  const std::string add_own = "  coord r1, 0\n  addi r1, r1, 1\n";
  RowChainPrograms r;
  r.first = make("main:\n" + prologue + add_own + "  send 1, r1\n  exit\n", 0, 1, true);
  r.odd = make("main:\n" + prologue + add_own + "  add r0, r0, r1\n  send 1, r0\n  exit\n", 1, 2, false);
  r.even = make("main:\n" + prologue + add_own + "  add r0, r0, r1\n  send 1, r0\n  exit\n", 2, 1, false);
  const std::string store = "main:\n" + prologue + add_own + "  add r0, r0, r1\n  st32 [0x1000], r0\n  exit\n";
  r.last_odd = make(store, 1, 0, false);
  r.last_even = make(store, 2, 0, false);
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
