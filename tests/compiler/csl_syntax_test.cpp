// The CSL lexer and parser on hand-written snippets: tokens with their positions, the shapes of
// the trees for every construct of the Zig-like syntax, and syntax errors at the right column.
#include <gtest/gtest.h>

#include "compiler/csl/lexer.hpp"
#include "compiler/csl/parser.hpp"

namespace wsemu::compiler::csl {
namespace {

TEST(CslLexer, TokensAndPositions) {
  const auto t = tokenize("const x: i16 = 0x1F_00; // c\n  @get_dsd(.{ .a = 2.5e1 }) \"s\\n\" 'a' <<= ...", 0);
  ASSERT_GE(t.size(), 20u);
  EXPECT_EQ(t[0].kind, Tok::KEYWORD);
  EXPECT_EQ(t[1].kind, Tok::IDENT);
  EXPECT_EQ(t[1].span.col, 7);
  EXPECT_EQ(t[5].kind, Tok::INT);
  EXPECT_EQ(t[5].int_value, 0x1F00u);
  EXPECT_EQ(t[7].kind, Tok::BUILTIN);
  EXPECT_EQ(t[7].text, "get_dsd");
  EXPECT_EQ(t[7].span.line, 2);
  EXPECT_EQ(t[7].span.col, 3);
  EXPECT_EQ(t[9].text, ".{");
  EXPECT_EQ(t[13].kind, Tok::FLOAT);
  EXPECT_DOUBLE_EQ(t[13].float_value, 25.0);
  EXPECT_EQ(t[16].kind, Tok::STRING);
  EXPECT_EQ(t[16].text, "s\n");
  EXPECT_EQ(t[17].kind, Tok::CHAR);
  EXPECT_EQ(t[17].int_value, uint64_t('a'));
  EXPECT_EQ(t[18].text, "<<=");
  EXPECT_EQ(t[19].text, "...");
  EXPECT_EQ(t.back().kind, Tok::END);
}

TEST(CslLexer, ErrorsAreTokensNotCrashes) {
  for (const char* bad : {"\"open", "0x", "1e", "`", "\x01", "'ab'", "\"\\q\"", "99999999999999999999"}) {
    const auto t = tokenize(bad, 0);
    bool error = false;
    for (const Token& k : t) error = error || k.kind == Tok::ERROR;
    EXPECT_TRUE(error) << bad;
    EXPECT_EQ(t.back().kind, Tok::END);
  }
}

TEST(CslParser, DeclarationsOfAPeProgram) {
  const Module m = parse(R"(
param M: i16;
param T: type = f32;
const sys = @import_module("<memcpy/memcpy>", .{ .LAUNCH = @get_color(8) });
var A: [M, 4]f32 align(16) = @zeros([M, 4]f32);
var p: [*]f32 = &A;
pub export fn f(comptime n: i16, x: f32) f32 { return x * 2.0; }
task t(w: f32) void { @fmovs(d, e, .{ .async = true, .activate = id }); }
comptime { @bind_local_task(t, @get_local_task_id(9)); }
)", 0);
  ASSERT_EQ(m.decls.size(), 8u);
  EXPECT_EQ(m.decls[0]->decl_kind, "param");
  EXPECT_EQ(m.decls[1]->value->kind, ExprKind::IDENT);
  EXPECT_EQ(m.decls[2]->value->kind, ExprKind::BUILTIN);
  EXPECT_EQ(m.decls[2]->value->args[1]->kind, ExprKind::ANON_STRUCT);
  EXPECT_EQ(m.decls[2]->value->args[1]->names[0], "LAUNCH");
  EXPECT_EQ(m.decls[3]->type->kind, ExprKind::ARRAY_TYPE);
  EXPECT_EQ(m.decls[3]->type->args.size(), 3u);  // two dims and the element type
  EXPECT_TRUE(m.decls[3]->align);
  EXPECT_EQ(m.decls[4]->type->kind, ExprKind::MANY_PTR_TYPE);
  EXPECT_EQ(m.decls[4]->value->kind, ExprKind::UNARY);
  EXPECT_EQ(m.decls[5]->kind, StmtKind::FN);
  EXPECT_TRUE(m.decls[5]->is_pub && m.decls[5]->is_export);
  EXPECT_TRUE(m.decls[5]->params[0].is_comptime);
  EXPECT_EQ(m.decls[6]->decl_kind, "task");
  EXPECT_EQ(m.decls[7]->kind, StmtKind::COMPTIME);
}

TEST(CslParser, StatementsAndPrecedence) {
  const Module m = parse(R"(
fn f() void {
  var i: i16 = 0;
  while (i < 10) : (i += 1) { if (i == 3) continue; if (i > 8 and i != 9 or false) break; }
  for (@range(i16, 2, 10, 2)) |j| { y[j] = a + b * c - d << 1; }
  const z = if (c) 1 else 2;
  const s = switch (k) { 0, 1 => 5, 2...4 => 6, else => 7 };
  const d = @get_dsd(mem4d_dsd, .{ .tensor_access = |i, j|{M, N} -> A[i * N + j] });
  const e = enum(u16) { a, b = 4 };
  const S = struct { x: i16, y: f32 };
  return;
}
)", 0);
  const Stmt& f = *m.decls[0];
  ASSERT_EQ(f.body.size(), 9u);
  EXPECT_EQ(f.body[1]->kind, StmtKind::WHILE);
  EXPECT_TRUE(f.body[1]->step);
  const Stmt& loop = *f.body[2];
  EXPECT_EQ(loop.kind, StmtKind::FOR);
  EXPECT_EQ(loop.captures[0], "j");
  const Expr& rhs = *loop.body[0]->value;  // (a + (b * c) - d) << 1
  EXPECT_EQ(rhs.text, "<<");
  EXPECT_EQ(rhs.args[0]->text, "-");
  EXPECT_EQ(rhs.args[0]->args[0]->args[1]->text, "*");
  EXPECT_EQ(f.body[3]->value->kind, ExprKind::IF_EXPR);
  EXPECT_EQ(f.body[4]->value->kind, ExprKind::SWITCH);
  EXPECT_EQ(f.body[4]->value->switch_cases.size(), 3u);
  EXPECT_EQ(f.body[4]->value->switch_cases[1].values[0]->kind, ExprKind::RANGE);
  const Expr& ta = *f.body[5]->value->args[1]->args[0];
  EXPECT_EQ(ta.kind, ExprKind::TENSOR_ACCESS);
  EXPECT_EQ(ta.names.size(), 2u);
  EXPECT_EQ(f.body[6]->value->kind, ExprKind::ENUM_TYPE);
  EXPECT_EQ(f.body[7]->value->kind, ExprKind::STRUCT_TYPE);
  EXPECT_EQ(f.body[8]->kind, StmtKind::RETURN);
}

TEST(CslParser, LayoutBlock) {
  const Module m = parse(R"(
layout {
  @set_rectangle(2, 1);
  for (@range(i16, 2)) |x| {
    @set_tile_code(x, 0, "pe.csl", .{ .is_east = x == 1 });
    @set_color_config(x, 0, c, .{ .routes = .{ .rx = .{ WEST }, .tx = .{ RAMP, EAST } } });
  }
  @export_name("y", [*]f32, false);
  @export_name("compute", fn()void);
}
)", 0);
  ASSERT_EQ(m.decls.size(), 1u);
  EXPECT_EQ(m.decls[0]->kind, StmtKind::LAYOUT);
  EXPECT_EQ(m.decls[0]->body.size(), 4u);
}

TEST(CslParser, SyntaxErrorsPointAtTheToken) {
  struct Case {
    const char* src;
    int line, col;
    const char* msg;
  } cases[] = {
      {"const x = ;", 1, 11, "expected an expression"},
      {"const x = 1", 1, 12, "expected ';'"},
      {"fn f() { }", 1, 8, "return type"},
      {"var 3 = 1;", 1, 5, "expected a name"},
      {"fn f() void { param x: i16; }", 1, 15, "top level"},
      {"const a = 1 < 2 < 3;", 1, 17, "chained"},
      {"x = 1;", 1, 1, "expected a declaration"},
  };
  for (const Case& c : cases) {
    try {
      parse(c.src, 0);
      ADD_FAILURE() << "no error for " << c.src;
    } catch (const CompileError& e) {
      EXPECT_EQ(e.span.line, c.line) << c.src;
      EXPECT_EQ(e.span.col, c.col) << c.src << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(c.msg), std::string::npos) << e.what();
    }
  }
}

TEST(CslParser, DeepNestingIsAnErrorNotACrash) {
  std::string deep = "const x = " + std::string(5000, '(') + "1" + std::string(5000, ')') + ";";
  EXPECT_THROW(parse(deep, 0), CompileError);
  std::string blocks = "fn f() void " + std::string(3000, '{') + std::string(3000, '}');
  EXPECT_THROW(parse(blocks, 0), CompileError);
}

}  // namespace
}  // namespace wsemu::compiler::csl
