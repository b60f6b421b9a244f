// The layout parser: what a layout file turns into, and where syntax errors are reported.
#include <gtest/gtest.h>

#include <string>

#include "compiler/layout/parser.hpp"

namespace wsemu::compiler::layout {
namespace {

ParseResult parse(const std::string& text) {
  static std::vector<std::unique_ptr<SourceText>> keep;  // diagnostics quote the source
  keep.push_back(std::make_unique<SourceText>("t.wsl", text));
  return parse_layout(*keep.back(), text);
}

std::string first_error(const std::string& text) {
  ParseResult r = parse(text);
  if (r.errors.empty()) return "(no error)";
  const Diagnostic& d = r.errors[0];
  return std::to_string(d.line) + ":" + std::to_string(d.col) + " " + d.message;
}

constexpr const char* kLayout = R"(# a comment
arch wse3
fabric 9x4            // "9x4" reads as 9 x 4
param M = 4
let half = M / 2
color c_x = 3
rect compute at (4, 1) size 2 x 2 {
  let east = x == width - 1
  program "pe.wsa" { M = half, is_east = east; row = y }
  route c_x rx [RAMP] tx [e, SOUTH] where y == 0
  where x > 0 {
    route 5 host rx W tx [ramp] switch { pos2 rx [N] pos1 tx [E, W] current 1 ring }
  }
  export symbol y_out = y : f32[M] read
  export symbol A : f16[M * M]
  export function compute
  export function go = start
}
)";

TEST(LayoutParser, ParsesEveryKindOfStatement) {
  ParseResult r = parse(kLayout);
  ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
  const LayoutAst& a = r.ast;
  ASSERT_EQ(a.archs.size(), 1u);
  EXPECT_EQ(a.archs[0].name, "wse3");
  ASSERT_EQ(a.fabrics.size(), 1u);
  EXPECT_EQ(a.fabrics[0].width->value, 9);
  EXPECT_EQ(a.fabrics[0].height->value, 4);
  ASSERT_EQ(a.decls.size(), 3u);
  EXPECT_EQ(a.decls[0].kind, DeclKind::PARAM);
  EXPECT_EQ(a.decls[1].kind, DeclKind::LET);
  EXPECT_EQ(a.decls[1].value->op, ExprOp::DIV);
  EXPECT_EQ(a.decls[2].kind, DeclKind::COLOR);
  EXPECT_EQ(a.decls[2].name, "c_x");
  EXPECT_EQ(a.decls[2].name_loc.line, 6);
  EXPECT_EQ(a.decls[2].name_loc.col, 7);

  ASSERT_EQ(a.rects.size(), 1u);
  const RectAst& rect = a.rects[0];
  EXPECT_EQ(rect.name, "compute");
  EXPECT_EQ(rect.x->value, 4);
  EXPECT_EQ(rect.height->value, 2);
  ASSERT_EQ(rect.lets.size(), 1u);
  EXPECT_EQ(rect.lets[0].name, "east");
  ASSERT_TRUE(rect.program.has_value());
  EXPECT_EQ(rect.program->path, "pe.wsa");
  ASSERT_EQ(rect.program->params.size(), 3u);
  EXPECT_EQ(rect.program->params[1].name, "is_east");
  EXPECT_EQ(rect.program->params[2].name, "row");

  ASSERT_EQ(rect.routes.size(), 2u);
  const RouteAst& r0 = rect.routes[0];
  EXPECT_EQ(r0.color->name, "c_x");
  EXPECT_FALSE(r0.host);
  EXPECT_EQ(r0.rx.bits, 1u << 4);                         // RAMP
  EXPECT_EQ(r0.tx.bits, (1u << 2) | (1u << 1));           // E, S
  ASSERT_EQ(r0.conditions.size(), 1u);
  EXPECT_EQ(r0.conditions[0]->op, ExprOp::EQ);
  EXPECT_FALSE(r0.has_switch);
  const RouteAst& r1 = rect.routes[1];
  EXPECT_EQ(r1.color->value, 5);
  EXPECT_TRUE(r1.host);
  EXPECT_EQ(r1.rx.bits, 1u << 3);  // W without brackets
  EXPECT_TRUE(r1.has_switch);
  ASSERT_EQ(r1.positions.size(), 2u);
  EXPECT_EQ(r1.positions[0].index, 2);
  EXPECT_TRUE(r1.positions[0].rx.has_value());
  EXPECT_FALSE(r1.positions[0].tx.has_value());
  EXPECT_EQ(r1.positions[1].index, 1);
  EXPECT_EQ(r1.positions[1].tx->bits, (1u << 2) | (1u << 3));
  ASSERT_TRUE(r1.current);
  EXPECT_EQ(r1.current->value, 1);
  EXPECT_TRUE(r1.ring);
  ASSERT_EQ(r1.conditions.size(), 1u);  // from the where block
  EXPECT_EQ(r1.conditions[0]->op, ExprOp::GT);

  ASSERT_EQ(rect.symbols.size(), 2u);
  EXPECT_EQ(rect.symbols[0].host_name, "y_out");
  EXPECT_EQ(rect.symbols[0].program_symbol, "y");
  EXPECT_EQ(rect.symbols[0].type, isa::ElemType::F32);
  EXPECT_TRUE(rect.symbols[0].readable);
  EXPECT_FALSE(rect.symbols[0].writable);
  EXPECT_EQ(rect.symbols[1].program_symbol, "A");
  EXPECT_EQ(rect.symbols[1].type, isa::ElemType::F16);
  EXPECT_TRUE(rect.symbols[1].readable);  // no access words: both
  EXPECT_TRUE(rect.symbols[1].writable);
  ASSERT_EQ(rect.functions.size(), 2u);
  EXPECT_EQ(rect.functions[0].program_function, "compute");
  EXPECT_EQ(rect.functions[1].host_name, "go");
  EXPECT_EQ(rect.functions[1].program_function, "start");
}

TEST(LayoutParser, NestedWhereBlocksCombineConditions) {
  ParseResult r = parse(R"(rect a at (0, 0) size 4 x 4 {
    where x > 0 { where y > 0 { route 1 rx [W] tx [E] where x < 3 } route 2 rx [N] tx [S] }
  })");
  ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
  ASSERT_EQ(r.ast.rects[0].routes.size(), 2u);
  EXPECT_EQ(r.ast.rects[0].routes[0].conditions.size(), 3u);
  EXPECT_EQ(r.ast.rects[0].routes[1].conditions.size(), 1u);
  // The outer condition is one shared node.
  EXPECT_EQ(r.ast.rects[0].routes[0].conditions[0], r.ast.rects[0].routes[1].conditions[0]);
}

TEST(LayoutParser, DirectionNames) {
  EXPECT_EQ(direction_from_name("N"), 0);
  EXPECT_EQ(direction_from_name("south"), 1);
  EXPECT_EQ(direction_from_name("EAST"), 2);
  EXPECT_EQ(direction_from_name("w"), 3);
  EXPECT_EQ(direction_from_name("Ramp"), 4);
  EXPECT_EQ(direction_from_name("up"), -1);
}

TEST(LayoutParser, SyntaxErrorsArePrecise) {
  EXPECT_EQ(first_error("fabric 4 y 4"),
            "1:10 expected 'x' between the fabric's width and height (fabric W x H), found 'y'");
  EXPECT_EQ(first_error("param = 3"), "1:7 expected a name after 'param', found '='");
  EXPECT_EQ(first_error("paramm M = 3"),
            "1:1 unknown statement 'paramm' (expected arch, fabric, param, let, color, rect or include)");
  EXPECT_EQ(first_error("rect r at 1, 1 size 2 x 2 {}"),
            "1:11 expected '(' before the origin (at (X, Y)), found number 1");
  EXPECT_EQ(first_error("rect r at (0, 0) size 2 x 2 {\n  route 1 rx [W] tx [Q]\n}"),
            "2:22 unknown direction 'Q' (expected N, S, E, W or RAMP)");
  EXPECT_EQ(first_error("rect r at (0, 0) size 2 x 2 {\n  route 1 rx [W, W] tx [E]\n}"),
            "2:18 direction 'W' listed twice");
  EXPECT_EQ(first_error("rect r at (0, 0) size 2 x 2 {\n  route 1 tx [E]\n}"),
            "3:1 expected 'rx' in the route (route COLOR rx [..] tx [..]), found '}'");
  EXPECT_EQ(first_error("rect r at (0, 0) size 2 x 2 {\n  export symbol y : f64[4]\n}"),
            "2:21 unknown element type 'f64' (expected f32, f16, i32, u32, i16 or u16)");
  EXPECT_EQ(first_error("rect r at (0, 0) size 2 x 2 {\n  program pe.wsa\n}"),
            "2:11 expected the program's file name as a string (program \"pe.wsa\"), found 'pe'");
  EXPECT_EQ(first_error("rect r at (0, 0) size 2 x 2 {\n  program \"a.wsa\"\n  program \"b.wsa\"\n}"),
            "3:3 rect 'r' already has a program (line 2)");
  EXPECT_EQ(first_error("rect r at (0, 0) size 2 x 2 {\n  route 1 rx [W] tx [E] switch { pos1 }\n}"),
            "2:39 pos1 needs 'rx [..]' and/or 'tx [..]'");
  EXPECT_EQ(first_error("rect r at (0, 0) size 2 x 2 {\n  route 1 rx [W] tx [E]\n"),
            "3:1 missing '}' to close rect 'r'");
  EXPECT_EQ(first_error("param s = \"text"),
            "1:11 unterminated string (a string ends with \" on the same line)");
  EXPECT_EQ(first_error("param M = 12ab"), "1:11 malformed number");
}

TEST(LayoutParser, RecoversAndReportsSeveralErrors) {
  ParseResult r = parse(
      "param = 1\n"
      "param N = 2\n"
      "rect r at (0, 0) size 2 x 2 {\n"
      "  route 1 rx [Q] tx [E]\n"
      "  export symbol y : f32[N]\n"
      "  export thing\n"
      "}\n"
      "fabric 2 x\n");
  ASSERT_EQ(r.errors.size(), 4u);
  EXPECT_EQ(r.errors[0].line, 1);
  EXPECT_EQ(r.errors[1].line, 4);
  EXPECT_EQ(r.errors[2].line, 6);
  EXPECT_EQ(r.errors[3].line, 9);
  // The statements between the errors were still parsed.
  ASSERT_EQ(r.ast.decls.size(), 1u);
  EXPECT_EQ(r.ast.decls[0].name, "N");
  ASSERT_EQ(r.ast.rects.size(), 1u);
  EXPECT_EQ(r.ast.rects[0].symbols.size(), 1u);
}

TEST(LayoutParser, DiagnosticsQuoteTheLineWithACaret) {
  ParseResult r = parse("param M = 4\n\tfabric 4 y 4\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].to_string(),
            "t.wsl:2:11: error: expected 'x' between the fabric's width and height "
            "(fabric W x H), found 'y'\n"
            "\tfabric 4 y 4\n"
            "\t         ^");
}

}  // namespace
}  // namespace wsemu::compiler::layout
