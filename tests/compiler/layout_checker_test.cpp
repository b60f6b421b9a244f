// The layout checker: per-PE evaluation of program parameters and routes on hand-worked
// layouts, and the configuration errors it must catch. No program is assembled here (the
// checker only needs the program files to exist); layout_build_test covers the linker.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "compiler/layout/checker.hpp"
#include "compiler/layout/parser.hpp"
#include "tests/compiler/layout_scratch_folder.hpp"

namespace wsemu::compiler::layout {
namespace {

namespace fs = std::filesystem;

class LayoutChecker : public LayoutScratchFolder {
 protected:
  LayoutChecker() : LayoutScratchFolder({{"p.wsa", "; placeholder: the checker only needs the file\n"}}) {}

  // Parses and checks; the AST and source stay alive for the plan's pointers.
  CheckResult check(const std::string& text, std::map<std::string, int64_t> params = {}) {
    source_ = std::make_unique<SourceText>("t.wsl", text);
    ParseResult parsed = parse_layout(*source_, text);
    EXPECT_TRUE(parsed.errors.empty()) << format_diagnostics(parsed.errors);
    ast_ = std::make_unique<LayoutAst>(std::move(parsed.ast));
    CheckOptions options;
    options.params = std::move(params);
    options.base_dir = dir_.string();
    return check_layout(*ast_, *source_, options);
  }
  std::string errors(const std::string& text, std::map<std::string, int64_t> params = {}) {
    CheckResult r = check(text, std::move(params));
    std::string out;
    for (const Diagnostic& d : r.diagnostics) {
      if (d.severity != Severity::ERROR) continue;
      out += std::to_string(d.line) + ":" + std::to_string(d.col) + " " + d.message + "\n";
    }
    return out;
  }

  std::unique_ptr<SourceText> source_;
  std::unique_ptr<LayoutAst> ast_;
};

constexpr const char* kRow = R"(
fabric 6 x 4
param M = 8
color c_a = 2
rect r at (1, 1) size 3 x 2 {
  let last = x == width - 1
  program "p.wsa" { M = M / 2, last = last, col = fx }
  route c_a rx [W] tx [RAMP, E] where !last
  route c_a rx [W] tx [RAMP] where last
}
)";

TEST_F(LayoutChecker, EvaluatesParametersAndRoutesPerPe) {
  CheckResult r = check(kRow);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.diagnostics);
  const LayoutPlan& plan = r.plan;
  EXPECT_EQ(plan.arch, "wse2");
  EXPECT_EQ(plan.fabric_width, 6u);
  EXPECT_EQ(plan.fabric_height, 4u);
  ASSERT_EQ(plan.build_params.size(), 1u);
  EXPECT_EQ(plan.build_params[0], (std::pair<std::string, int64_t>{"M", 8}));
  ASSERT_EQ(plan.colors.size(), 1u);
  EXPECT_EQ(plan.colors[0].color, 2);
  ASSERT_EQ(plan.rects.size(), 1u);
  const PlannedRect& rect = plan.rects[0];
  EXPECT_EQ(rect.program_path, (dir_ / "p.wsa").string());
  // Names sorted (ASCII: upper case first); x = 0, 1, 2 is fx = 1, 2, 3; last only at x = 2.
  EXPECT_EQ(rect.param_names, (std::vector<std::string>{"M", "col", "last"}));
  ASSERT_EQ(rect.param_sets.size(), 3u);
  EXPECT_EQ(rect.param_sets[0], (std::vector<int64_t>{4, 1, 0}));
  EXPECT_EQ(rect.param_sets[1], (std::vector<int64_t>{4, 2, 0}));
  EXPECT_EQ(rect.param_sets[2], (std::vector<int64_t>{4, 3, 1}));
  EXPECT_EQ(rect.pe_param_set, (std::vector<uint32_t>{0, 1, 2, 0, 1, 2}));
  ASSERT_EQ(plan.routes.size(), 2u);
  EXPECT_EQ(plan.routes[0].route.color, 2);
  EXPECT_EQ(plan.routes[0].route.positions[0].tx.to_string(), "[RAMP, E]");
  EXPECT_EQ(plan.routes[1].route.positions[0].tx.to_string(), "[RAMP]");
  EXPECT_EQ(rect.route_keys, (std::vector<std::vector<uint32_t>>{{0}, {1}}));
  EXPECT_EQ(rect.pe_route_key, (std::vector<uint32_t>{0, 0, 1, 0, 0, 1}));
}

TEST_F(LayoutChecker, CommandLineParametersOverrideDefaults) {
  CheckResult r = check(kRow, {{"M", 12}});
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.diagnostics);
  EXPECT_EQ(r.plan.rects[0].param_sets[0][0], 6);
  EXPECT_EQ(r.plan.build_params[0].second, 12);
  EXPECT_NE(errors(kRow, {{"Q", 1}}).find("--param Q=1: the layout has no parameter 'Q' (its "
                                          "parameters: M)"),
            std::string::npos);
  EXPECT_NE(errors(kRow, {{"c_a", 1}}).find("'c_a' is a 'color', not a 'param'"),
            std::string::npos);
}

TEST_F(LayoutChecker, SwitchPositionsAreResolved) {
  CheckResult r = check(R"(
fabric 3 x 1
rect r at (0, 0) size 3 x 1 {
  program "p.wsa"
  route 7 rx [RAMP] tx [E] switch { pos1 tx [W] pos2 rx [E] current 2 ring } where x == 1
  route 7 rx [W] tx [RAMP] where x == 2
  route 7 rx [E] tx [RAMP] where x == 0
})");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.diagnostics);
  const ColorRoute& c = r.plan.routes[0].route;
  ASSERT_EQ(c.positions.size(), 3u);
  EXPECT_EQ(c.positions[0].rx.to_string(), "[RAMP]");
  EXPECT_EQ(c.positions[0].tx.to_string(), "[E]");
  EXPECT_EQ(c.positions[1].rx.to_string(), "[RAMP]");  // pos1 keeps position 0's rx
  EXPECT_EQ(c.positions[1].tx.to_string(), "[W]");
  EXPECT_EQ(c.positions[2].rx.to_string(), "[E]");
  EXPECT_EQ(c.positions[2].tx.to_string(), "[E]");  // pos2 keeps position 0's tx
  EXPECT_EQ(c.current_position, 2);
  EXPECT_TRUE(c.ring_mode);
}

// A counter filter's start may differ per PE (the SDK configures each PE's filter; the FFT
// transposes start each receiver at its brick): one copy of the route per start value, worked
// by hand: (3 - x) * 2 % 6 is 4 at x = 1 and 2 at x = 2; a start past the limit names the PE.
TEST_F(LayoutChecker, CounterFilterStartsPerPe) {
  CheckResult r = check(R"(
fabric 4 x 1
rect r at (0, 0) size 4 x 1 {
  program "p.wsa"
  route 3 rx [RAMP] tx [E] where x == 0
  route 3 rx [W] tx [RAMP, E] counter_filter [(3 - x) * 2 % 6, 1, 5] where x > 0 && x < 3
  route 3 rx [W] tx [RAMP] counter_filter [0, 1, 5] where x == 3
})");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.diagnostics);
  const PlannedRect& rect = r.plan.rects[0];
  auto start_at = [&](size_t x) {
    const ColorRoute& c = r.plan.routes[rect.route_keys[rect.pe_route_key[x]].at(0)].route;
    EXPECT_TRUE(c.counter_filter);
    EXPECT_EQ(c.counter_max, 1);
    EXPECT_EQ(c.counter_limit, 5);
    return int(c.counter_init);
  };
  EXPECT_EQ(start_at(1), 4);
  EXPECT_EQ(start_at(2), 2);
  EXPECT_EQ(start_at(3), 0);
  EXPECT_EQ(errors(R"(
fabric 4 x 1
rect r at (0, 0) size 4 x 1 {
  program "p.wsa"
  route 3 rx [W] tx [RAMP] counter_filter [x * 4, 1, 5] where x > 0
  route 3 rx [RAMP] tx [E] where x == 0
})"),
            "5:46 counter_filter start 8 is outside 0..5 (its limit) at PE (2, 0) (x = 2, y = 0 in "
            "rect 'r')\n");
}

TEST_F(LayoutChecker, ReportsPerPeErrorsWithThePe) {
  EXPECT_EQ(errors(R"(
fabric 4 x 4
rect r at (1, 1) size 3 x 3 {
  program "p.wsa" { K = 12 / (x - 2) }
})"),
            "4:28 division by zero at PE (3, 1) (x = 2, y = 0 in rect 'r')\n");
  EXPECT_EQ(errors(R"(
fabric 4 x 1
color c = 1
rect r at (0, 0) size 4 x 1 {
  program "p.wsa"
  route c rx [W] tx [RAMP] where x > 0
  route c rx [RAMP] tx [E] where x < 2
})"),
            "7:3 two routes for color 1 on PE (1, 0) in rect 'r' (x = 1, y = 0): this one and "
            "the one at line 6\n");
}

TEST_F(LayoutChecker, RoutesMustLeadSomewhere) {
  // x = 1 sends east to x = 2, which only listens to the north.
  EXPECT_EQ(errors(R"(
fabric 3 x 2
rect r at (0, 0) size 3 x 1 {
  program "p.wsa"
  route 4 rx [RAMP] tx [E] where x == 0
  route 4 rx [W] tx [E] where x == 1
  route 4 rx [N] tx [RAMP] where x == 2
})"),
            "6:3 the route for color 4 on PE (1, 0) sends east to PE (2, 0), whose route for "
            "color 4 does not receive from the west (its rx: [N])\n"
            "7:3 the route for color 4 on PE (2, 0) receives from the north, beyond the fabric "
            "edge; only a route marked 'host' may cross the edge (host I/O enters and leaves "
            "there)\n");
  // Marked `host`, a route may cross the edge.
  CheckResult ok = check(R"(
fabric 2 x 1
rect r at (0, 0) size 2 x 1 {
  program "p.wsa"
  route 4 host rx [W] tx [RAMP, E] where x == 0
  route 4 host rx [W] tx [RAMP, E] where x == 1
})");
  EXPECT_TRUE(ok.ok()) << format_diagnostics(ok.diagnostics);
}

TEST_F(LayoutChecker, RoutingOnlyRectRelaysBetweenPrograms) {
  CheckResult r = check(R"(
fabric 3 x 1
rect a at (0, 0) size 1 x 1 { program "p.wsa"  route 2 rx [RAMP] tx [E] }
rect relay at (1, 0) size 1 x 1 { route 2 rx [W] tx [E] }
rect b at (2, 0) size 1 x 1 { program "p.wsa"  route 2 rx [W] tx [RAMP] }
)");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.diagnostics);
  ASSERT_EQ(r.plan.rects.size(), 3u);
  EXPECT_EQ(r.plan.rects[1].program, nullptr);
  EXPECT_TRUE(r.plan.rects[1].pe_param_set.empty());
  EXPECT_EQ(r.plan.rects[1].route_keys, (std::vector<std::vector<uint32_t>>{{1}}));
}

TEST_F(LayoutChecker, FullWaferRectangle) {
  CheckResult r = check(R"(
arch wse3
fabric 762 x 1176
color c = 0
rect all at (0, 0) size 762 x 1176 {
  program "p.wsa" { M = 4, first = x == 0 }
  route c host rx [W] tx [RAMP, E] where x < width - 1
  route c rx [W] tx [RAMP] where x == width - 1
})");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.diagnostics);
  EXPECT_EQ(r.plan.rects[0].param_sets.size(), 2u);
  EXPECT_EQ(r.plan.rects[0].route_keys.size(), 2u);
  EXPECT_EQ(r.plan.rects[0].pe_param_set.size(), 762u * 1176u);
  EXPECT_EQ(r.plan.rects[0].pe_param_set[762 * 5], 0u);      // x = 0: first = 1
  EXPECT_EQ(r.plan.rects[0].pe_param_set[762 * 5 + 1], 1u);  // x = 1: first = 0
}

}  // namespace
}  // namespace wsemu::compiler::layout
