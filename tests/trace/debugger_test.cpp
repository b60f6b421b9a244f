// The debugger engine on the two-PE kernel (cycles as worked out in golden/two_pe_send.log):
// a batch script sets breakpoints, steps, prints values that are checked against the hand
// reasoning; PC breakpoints stop before the instruction; watchpoints; where; the hang.
#include <gtest/gtest.h>

#include <sstream>

#include "inspect/debug/debugger.hpp"
#include "tests/trace/trace_test_support.hpp"

namespace wsemu::testing {
namespace {

// Runs the commands on `wafer` (each must succeed); every needle must stand in what the
// debugger printed.
::testing::AssertionResult session_prints(emu::Wafer& wafer, const std::string& script,
                                          std::initializer_list<std::string_view> needles) {
  std::ostringstream out;
  debug::Debugger dbg(wafer, out);
  std::istringstream in(script);
  debug::run_script(dbg, in, out, /*echo=*/true);
  EXPECT_FALSE(dbg.any_command_failed()) << out.str();
  return holds_all(out.str(), needles);
}

TEST(Debugger, BatchBreakStepPrint) {
  // The first `recv` is picked at cycle 8 (tests/trace/golden/two_pe_send.log) and the run
  // stops there.
  EXPECT_TRUE(session_prints(*two_pe_send_wafer(), R"(# stop when P1.0 starts its data task
break task recv at 1,0
continue
step 3
print got
print r1
continue
print got
delete 1
continue
print got at 1,0
)", {
      "breakpoint 1 at cycle 8: PE(1,0) picked task 4 'recv'",
      "PE(1,0) task 4 'recv' pc 0: ld32 r1, [got]",
      // Three more cycles run ld32 (9), add (10), st32 (11): got = 7, r1 = 7; the clock shows 12.
      "(wsemu) step 3\ncycle 12\n",
      "(wsemu) print got\ngot = 7\n",
      "(wsemu) print r1\nr1 = 7 (0x7",
      // The second wavelet's task is picked at cycle 13; its add has not happened yet.
      "breakpoint 1 at cycle 13: PE(1,0) picked task 4 'recv'",
      "(wsemu) print got\ngot = 7\n(wsemu) delete 1",
      "the wafer is quiescent at cycle 18",
      "(wsemu) print got at 1,0\ngot = 16\n",
  }));
}

TEST(Debugger, PcBreakpointStopsBeforeTheInstruction) {
  // st32 is pc 2 of the accumulator; it runs at cycle 11, so the stop comes after cycle 10.
  EXPECT_TRUE(session_prints(*two_pe_send_wafer(), "break pc 2 at 1,0\ncontinue\nprint got\nprint r1\nstep\nprint got\n", {
      "breakpoint 1 at cycle 10: PE(1,0) is about to run pc 2",
      "PE(1,0) task 4 'recv' pc 2: st32 [got], r1",
      "(wsemu) print got\ngot = 0\n(wsemu) print r1\nr1 = 7",
      "(wsemu) step\ncycle 12\n(wsemu) print got\ngot = 7\n",
  }));
}

TEST(Debugger, WatchWaveletAndCycleBreakpoints) {
  EXPECT_TRUE(session_prints(*two_pe_send_wafer(), R"(break cycle 3
break wavelet 4 at 1,0
watch got at 1,0
continue
continue
continue
continue
info breakpoints
)", {
      "breakpoint 1: the wafer reached cycle 3",
      "breakpoint 2 at cycle 6: PE(1,0)'s router sent a wavelet of color 4 to the core (RAMP): payload 0x00000007",
      "breakpoint 2 at cycle 8: PE(1,0)'s router sent a wavelet of color 4 to the core (RAMP): payload 0x00000009",
      "watchpoint 3 at cycle 11: got (0x",
      "changed from 0 to 7",
      "2 break wavelet on color 4 at PE(1,0) (hit 2 times)",
  }));
}

TEST(Debugger, WhereAndHangOnTheDeadlock) {
  EXPECT_TRUE(session_prints(*deadlock_wafer(), "continue\nwhere\nwhere 1,0,1,1\ninfo queues at 0,0\ninfo routes at 0,0\n", {
      "the run hangs at cycle 2",
      "deadlock: PE(0,0) -> PE(1,0) -> PE(0,0)",
      "PE(0,0): task 10 'exchange' pc 0 `recv r1, 1",
      "stalled: input_queue_empty (color 2)",
      "stalled: input_queue_empty (color 1)",
      "(wsemu) where 1,0,1,1\n  PE(1,0): task 10",
      "input queue 1: color 2, 0 wavelet(s)",
      "color  1: rx RAMP -> tx E",
      "color  2: rx E -> tx RAMP",
  }));
}

TEST(Debugger, BadCommandsSayWhatIsWrongAndDoNotStop) {
  auto wafer = two_pe_send_wafer();
  std::ostringstream out;
  debug::Debugger dbg(*wafer, out);
  EXPECT_TRUE(dbg.execute("frobnicate"));
  EXPECT_TRUE(dbg.execute("print nosuchsymbol at 1,0"));
  EXPECT_TRUE(dbg.execute("break pc nolabel at 1,0"));
  EXPECT_TRUE(dbg.execute("pe 9,9"));
  EXPECT_TRUE(dbg.execute("print got[3] at 1,0"));
  EXPECT_TRUE(dbg.any_command_failed());
  const std::string s = out.str();
  EXPECT_TRUE(holds_all(s, {
      "error: unknown command 'frobnicate'",
      "error: PE(1,0)'s program has no symbol, register or descriptor 'nosuchsymbol'",
      "error: 'nolabel' is neither an instruction index nor a label",
      "error: PE(9,9) is outside the 2x1 fabric",
      "error: got has 1 elements",
  }));
  EXPECT_FALSE(dbg.execute("quit"));
  EXPECT_EQ(wafer->cycle(), 0u) << "inspection never runs the wafer";
}

}  // namespace
}  // namespace wsemu::testing
