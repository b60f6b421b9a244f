// The golden trace: the two-PE kernel's recorded trace, as text, matches the log worked out by
// hand in tests/trace/golden/two_pe_send.log (the cycle reasoning is in its comments).
#include <gtest/gtest.h>

#include <sstream>

#include "inspect/trace/trace_reader.hpp"
#include "inspect/trace/trace_views.hpp"
#include "inspect/trace/trace_writer.hpp"
#include "tests/trace/trace_test_support.hpp"

namespace wsemu::testing {
namespace {

std::vector<std::string> expected_lines() {
  std::ifstream in(source_dir() / "tests/trace/golden/two_pe_send.log");
  EXPECT_TRUE(in) << "golden file missing";
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  return lines;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class GoldenTrace : public ScratchDir {};

TEST_F(GoldenTrace, TwoPeSendMatchesTheHandWorkedLog) {
  auto wafer = two_pe_send_wafer();
  const std::string file = path("two_pe.wstrace");
  const emu::RunResult r = record_run(*wafer, file);

  ASSERT_EQ(r.status, emu::RunResult::Status::QUIESCENT) << r.to_string();
  EXPECT_EQ(r.cycle, 18u) << "the golden log's reasoning ends the run at cycle 18";
  uint32_t got = 0;
  wafer->read_sram(1, 0, wafer->program_at(1, 0)->find_symbol("got")->address,
                   std::span<uint8_t>(reinterpret_cast<uint8_t*>(&got), 4));
  EXPECT_EQ(got, 16u);

  trace::TraceReader reader(file);
  std::ostringstream text;
  trace::write_text(reader, trace::TraceFilter{}, text);
  const std::vector<std::string> actual = split_lines(text.str()), expected = expected_lines();
  EXPECT_EQ(actual, expected) << "actual log:\n" << text.str();
}

TEST_F(GoldenTrace, TextFiltersSelectPeColorKindAndCycles) {
  auto wafer = two_pe_send_wafer();
  const std::string file = path("two_pe.wstrace");
  record_run(*wafer, file);
  trace::TraceReader reader(file);

  // Only the wavelet events (hop, landing) on color 4 at P1.0, between cycles 0 and 7 (exclusive).
  trace::TraceFilter f;
  f.rect = trace::parse_pe("1,0");
  f.colors = trace::parse_colors("4");
  f.kinds = trace::parse_kinds("wavelets");
  f.cycles = trace::parse_cycles(":7");
  std::ostringstream text;
  EXPECT_EQ(trace::write_text(reader, f, text), 2u);
  EXPECT_EQ(text.str(), "@6 P1.0 hop RAMP c4 0x00000007\n@6 P1.0 land c4 slot 0x00000007\n");

  // The expected lines that a filter keeps are exactly the golden lines of that PE and kind.
  trace::TraceFilter tasks;
  tasks.kinds = trace::parse_kinds("tasks");
  std::ostringstream t2;
  trace::write_text(reader, tasks, t2);
  EXPECT_EQ(t2.str(), "@0 P0.0 task picked 10 'main'\n@8 P1.0 task picked 4 'recv'\n@13 P1.0 task picked 4 'recv'\n");
}

}  // namespace
}  // namespace wsemu::testing
