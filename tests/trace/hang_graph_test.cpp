// The hang report as a wait-for graph: two PEs that each wait for the other to send first.
// The graph must name both PEs, their task and the colors they wait on, find the cycle, and
// travel through the trace file into the summary and the html page.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "inspect/trace/trace_reader.hpp"
#include "inspect/trace/trace_views.hpp"
#include "inspect/trace/trace_writer.hpp"
#include "inspect/trace/wait_for_graph.hpp"
#include "tests/trace/trace_test_support.hpp"

namespace wsemu::testing {
namespace {

class HangGraph : public ScratchDir {};

TEST_F(HangGraph, DeadlockNamesBothPesTasksAndColors) {
  auto wafer = deadlock_wafer();
  const emu::RunResult r = wafer->run(1000);
  ASSERT_EQ(r.status, emu::RunResult::Status::HANG) << r.to_string();
  ASSERT_TRUE(r.hang);
  const trace::WaitForGraph g = trace::WaitForGraph::build(*r.hang, *wafer);

  ASSERT_EQ(g.nodes.size(), 2u);
  for (const trace::WaitForNode& n : g.nodes) {
    EXPECT_TRUE(n.blocked);
    EXPECT_EQ(n.task, 10);
    EXPECT_EQ(n.task_name, "exchange");
  }
  // P0.0 waits for color 2, which only P1.0 sends; P1.0 waits for color 1 from P0.0.
  ASSERT_EQ(g.edges.size(), 2u);
  EXPECT_EQ(std::tie(g.edges[0].from_x, g.edges[0].to_x, g.edges[0].color), std::make_tuple(0, 1, 2));
  EXPECT_EQ(std::tie(g.edges[1].from_x, g.edges[1].to_x, g.edges[1].color), std::make_tuple(1, 0, 1));
  EXPECT_EQ(g.deadlock, (std::vector<std::pair<int, int>>{{0, 0}, {1, 0}}));

  const std::string text = g.to_text();
  EXPECT_TRUE(holds_all(text, {
      "PE(0,0) task 10 'exchange': blocked",
      "PE(1,0) task 10 'exchange': blocked",
      "-> waits for PE(1,0) task 10 'exchange' on color 2",
      "-> waits for PE(0,0) task 10 'exchange' on color 1",
      "input queue 1 (color 2) is empty",
      "deadlock: PE(0,0) -> PE(1,0) -> PE(0,0)",
  }));

  const std::string dot = g.to_dot();
  EXPECT_TRUE(contains(dot, "\"P0.0\" -> \"P1.0\" [label=\"color 2\"]")) << dot;

  // JSON round trip (the trace's HANG chunk).
  const trace::WaitForGraph back = trace::WaitForGraph::from_json(g.to_json());
  EXPECT_EQ(back.to_text(), text);
}

TEST_F(HangGraph, AnIdlePeThatWillNeverSendIsNamed) {
  // Only P1.0 runs: it waits for color 1 from P0.0, whose task was never started.
  auto lone = std::make_unique<emu::Wafer>(emu::arch_profile("wse2"), 2, 1);
  lone->load_program(0, 0, assemble_kernel("wait_then_send.wsa", {{"IN", 2}, {"OUT", 1}}));
  lone->load_program(1, 0, assemble_kernel("wait_then_send.wsa", {{"IN", 1}, {"OUT", 2}}));
  lone->set_route(0, 0, 1, route("R", "E"));
  lone->set_route(1, 0, 1, route("W", "R"));
  lone->activate_task(1, 0, 10);
  const emu::RunResult r = lone->run(1000);
  ASSERT_EQ(r.status, emu::RunResult::Status::HANG) << r.to_string();
  const trace::WaitForGraph g = trace::WaitForGraph::build(*r.hang, *lone);
  ASSERT_EQ(g.edges.size(), 1u);
  const trace::WaitForNode* idle = g.find(0, 0);
  ASSERT_NE(idle, nullptr);
  EXPECT_FALSE(idle->blocked);
  EXPECT_TRUE(contains(idle->state, "idle")) << idle->state;
  EXPECT_TRUE(g.deadlock.empty());
  EXPECT_TRUE(contains(g.to_text(), "no cycle of waits")) << g.to_text();
}

TEST_F(HangGraph, TheTraceCarriesTheGraphIntoSummaryAndHtml) {
  auto wafer = deadlock_wafer();
  const std::string file = path("deadlock.wstrace");
  record_run(*wafer, file);
  trace::TraceReader reader(file);
  ASSERT_TRUE(reader.hang());
  EXPECT_EQ(reader.end()->status, trace::EndStatus::HANG);
  std::ostringstream summary;
  trace::write_summary(reader, {}, summary);
  EXPECT_TRUE(contains(summary.str(), "deadlock: PE(0,0) -> PE(1,0) -> PE(0,0)")) << summary.str();
  // The stall that caused it is in the trace: both main threads, input queue empty.
  EXPECT_TRUE(contains(summary.str(), "input_queue_empty")) << summary.str();
  std::ostringstream text;
  trace::write_text(reader, trace::TraceFilter{}, text);
  EXPECT_TRUE(contains(text.str(), "@1 P0.0 stall main input_queue_empty c2 pc 0")) << text.str();
  EXPECT_TRUE(contains(text.str(), "@1 P1.0 stall main input_queue_empty c1 pc 0")) << text.str();

  const std::string page = trace::html_page(reader, {});
  EXPECT_TRUE(contains(page, "\"deadlock\":[[0,0],[1,0]]")) << "the page embeds the wait-for graph";
  EXPECT_TRUE(contains(page, "waits for PE(1,0) task 10 'exchange' on color 2"));
}

}  // namespace
}  // namespace wsemu::testing
