// `wsemu build` as a library call (compiler/layout/build.hpp): real programs are assembled, so
// these tests cover what needs the objects: deduplication of identical programs, the compact
// placement, exported symbols and functions, SRAM size, and assembler errors carried through.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "compiler/executable/executable_io.hpp"
#include "compiler/layout/build.hpp"
#include "tests/compiler/layout_scratch_folder.hpp"

namespace wsemu::compiler::layout {
namespace {

namespace fs = std::filesystem;

class LayoutBuild : public LayoutScratchFolder {
 protected:
  LayoutBuild() : LayoutScratchFolder({{"q.wsa", kProgram}}) {}
  std::string errors(const std::string& layout, BuildOptions options = {}) {
    BuildResult r = build(layout, options);
    EXPECT_FALSE(r.ok());
    std::string out;
    for (const Diagnostic& d : r.diagnostics)
      out += (d.severity == Severity::ERROR ? "error " : "note ") + fs::path(d.file).filename().string() +
             ":" + std::to_string(d.line) + ":" + std::to_string(d.col) + " " + d.message + "\n";
    return out;
  }
  // The build of `layout` fails with an error that holds `message`.
  ::testing::AssertionResult fails_with(const std::string& layout, const std::string& message) {
    const std::string out = errors(layout);
    if (out.find(message) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "no '" << message << "' in:\n" << out;
  }
  // The routes of a row of three PEs running q.wsa: `colors` declared, `routes` in the rectangle.
  BuildResult build_row_of_three(const std::string& colors, const std::string& routes) {
    return build("fabric 3 x 1\n" + colors + "rect r at (0, 0) size 3 x 1 {\n  program \"q.wsa\" { M = 1, K = 0 }\n" +
                 routes + "}");
  }
};

TEST_F(LayoutBuild, IdenticalObjectsAreStoredOnce) {
  // K alternates with x, so there are two parameter sets and two assemblies, but K is unused:
  // both objects are identical and stored once.
  BuildResult r = build(R"(
fabric 4 x 1
rect r at (0, 0) size 4 x 1 {
  program "q.wsa" { M = 4, K = x % 2 }
})");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.diagnostics);
  const Executable& exe = *r.executable;
  EXPECT_EQ(r.summary.assemblies, 2u);
  EXPECT_EQ(exe.programs.size(), 1u);
  ASSERT_EQ(exe.param_sets.size(), 2u);
  EXPECT_EQ(exe.param_sets[0].values,
            (std::vector<std::pair<std::string, int64_t>>{{"K", 0}, {"M", 4}}));
  EXPECT_EQ(exe.param_sets[1].values,
            (std::vector<std::pair<std::string, int64_t>>{{"K", 1}, {"M", 4}}));
  ASSERT_EQ(exe.pe_configs.size(), 2u);
  EXPECT_EQ(exe.pe_configs[0].program, 0);
  EXPECT_EQ(exe.pe_configs[1].program, 0);
  ASSERT_EQ(exe.rects.size(), 1u);
  EXPECT_EQ(exe.rects[0].expand(), (std::vector<uint32_t>{0, 1, 0, 1}));
}

TEST_F(LayoutBuild, DifferentObjectsAndRuns) {
  BuildResult r = build(R"(
fabric 5 x 3
param M = 4
rect r at (1, 1) size 4 x 2 {
  program "q.wsa" { M = x < 2 ? M : 2 * M, K = 0 }
  export symbol y : f32[M] read
  export symbol count = n : i32[2] write
  export function compute
})");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.diagnostics);
  const Executable& exe = *r.executable;
  ASSERT_EQ(exe.programs.size(), 2u);
  EXPECT_EQ(exe.programs[0].source_path, "q.wsa");
  EXPECT_EQ(exe.programs[0].object.find_symbol("y")->count, 4u);
  EXPECT_EQ(exe.programs[1].object.find_symbol("y")->count, 8u);
  // Row-major runs: x = 0, 1 use program 0, x = 2, 3 program 1, on both rows.
  const Rect& rect = exe.rects[0];
  ASSERT_EQ(rect.runs.size(), 4u);
  EXPECT_EQ(rect.runs[0], (ConfigRun{2, 0}));
  EXPECT_EQ(rect.runs[1], (ConfigRun{2, 1}));
  EXPECT_EQ(rect.runs[2], (ConfigRun{2, 0}));
  EXPECT_EQ(rect.runs[3], (ConfigRun{2, 1}));
  EXPECT_EQ(exe.pe_config_at(3, 2)->program, 1);
  EXPECT_EQ(exe.pe_config_at(2, 2)->program, 0);
  EXPECT_EQ(exe.pe_config_at(0, 0), nullptr);
  // Name, program symbol, type, elements per PE (the layout's M), rect, host readable, writable.
  EXPECT_EQ(exe.symbols, (std::vector<HostSymbol>{{"y", "y", isa::ElemType::F32, 4, 0, true, false},
                                                  {"count", "n", isa::ElemType::I32, 2, 0, false, true}}));
  ASSERT_EQ(exe.functions.size(), 1u);
  EXPECT_EQ(exe.functions[0].name, "compute");
  EXPECT_EQ(exe.functions[0].rect, 0u);
  // code 3 instructions (24 bytes), then y (32 bytes for M = 8) and n (8 bytes).
  EXPECT_EQ(r.summary.max_sram_bytes, exe.programs[1].object.sram_bytes());
  EXPECT_EQ(r.summary.placed_pes, 8u);
}

TEST_F(LayoutBuild, RoutesEndUpPerPe) {
  BuildResult r = build_row_of_three("color c_x = 4\ncolor c_y = 5\n", R"(
  route c_x rx [RAMP] tx [E] where x == 0
  route c_x rx [W] tx [RAMP, E] where x == 1
  route c_x rx [W] tx [RAMP] where x == 2
  route c_y host rx [E] tx [RAMP, W] where x == 2
  route c_y rx [E] tx [RAMP] where x == 1
)");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.diagnostics);
  const Executable& exe = *r.executable;
  const RouteSet& at2 = exe.route_sets[exe.pe_config_at(2, 0)->route_set];
  ASSERT_EQ(at2.routes.size(), 2u);
  EXPECT_EQ(at2.routes[0].color, 4);  // sorted by color
  EXPECT_EQ(at2.routes[0].positions[0].rx.to_string(), "[W]");
  EXPECT_EQ(at2.routes[1].color, 5);
  EXPECT_TRUE(at2.routes[1].host_port);
  EXPECT_EQ(at2.find(5)->positions[0].tx.to_string(), "[RAMP, W]");
  const RouteSet& at0 = exe.route_sets[exe.pe_config_at(0, 0)->route_set];
  ASSERT_EQ(at0.routes.size(), 1u);
  EXPECT_EQ(at0.find(5), nullptr);
  EXPECT_EQ(r.summary.routes, 5u);
  EXPECT_EQ(exe.find_color("c_y"), 5);
}

TEST_F(LayoutBuild, FullWaferIsAFewEntries) {
  BuildResult r = build(R"(
arch wse3
fabric 762 x 1176
rect all at (0, 0) size 762 x 1176 {
  program "q.wsa" { M = 16, K = 0 }
  export symbol y : f32[16]
})");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.diagnostics);
  EXPECT_EQ(r.executable->rects[0].runs.size(), 1u);
  EXPECT_EQ(r.executable->placed_pes(), 762u * 1176u);
  std::string bytes = serialize_executable(*r.executable);
  EXPECT_LT(bytes.size(), 4096u);
}

TEST_F(LayoutBuild, ErrorsThatNeedTheAssembledProgram) {
  const std::string head = "fabric 2 x 1\nrect r at (0, 0) size 2 x 1 {\n  program \"q.wsa\" { M = 4, K = 0 }\n";
  EXPECT_TRUE(fails_with(head + "  export symbol z : f32[4]\n}\n",
                         "error t.wsl:4:17 exported symbol 'z' is not in program 'q.wsa' for rect 'r' "
                         "(PE (0, 0): K = 0, M = 4) (its symbols: y, n)"));
  EXPECT_TRUE(fails_with(head + "  export symbol y : i32[4]\n}\n",
                         "error t.wsl:4:21 symbol 'y' is f32[4] in program 'q.wsa'"));
  EXPECT_TRUE(fails_with(head + "  export symbol y : f32[5]\n}\n",
                         "error t.wsl:4:25 symbol 'y' has 4 elements in program 'q.wsa' for rect 'r' "
                         "(PE (0, 0): K = 0, M = 4), fewer than the 5 per PE the export says"));
  EXPECT_TRUE(fails_with(head + "  export function run\n}\n",
                         "error t.wsl:4:19 exported function 'run' is not in program"));
  EXPECT_TRUE(fails_with(head + "  export function helper\n}\n",
                         "function 'helper' of program 'q.wsa' for rect 'r' (PE (0, 0): K = 0, "
                         "M = 4) is not exported by the program"));
  // 11300 floats: 45200 bytes of data, more than the 45056 a program may use.
  std::string big = errors(
      "fabric 2 x 1\nrect r at (0, 0) size 2 x 1 {\n  program \"q.wsa\" { M = 11300, K = 0 }\n}\n");
  EXPECT_NE(big.find("error t.wsl:3:3 program 'q.wsa' for rect 'r' (PE (0, 0): K = 0, M = 11300) "
                     "is too big for a PE's SRAM"),
            std::string::npos)
      << big;
  EXPECT_NE(big.find("a PE has 45056 bytes for programs (48 KiB minus the 4096 bytes reserved for "
                     "the memcpy firmware)"),
            std::string::npos)
      << big;
}

// `indirect`: the export names a u32 pointer variable, and the host's copies follow it
// (HostSymbol::indirect); an array named so is refused.
TEST_F(LayoutBuild, IndirectSymbolNamesAPointerVariable) {
  write("p.wsa", ".param M\n.data\na:      .f32 [M]\np:      .u32 a\n.export a, p\n");
  BuildResult r = build(R"(
fabric 1 x 1
rect r at (0, 0) size 1 x 1 {
  program "p.wsa" { M = 4 }
  export symbol A = p : f32[4] indirect
  export symbol direct = a : f32[4] read
})");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.diagnostics);
  EXPECT_EQ(r.executable->symbols,
            (std::vector<HostSymbol>{{"A", "p", isa::ElemType::F32, 4, 0, true, true, true},
                                     {"direct", "a", isa::ElemType::F32, 4, 0, true, false, false}}));
  EXPECT_TRUE(fails_with("fabric 1 x 1\nrect r at (0, 0) size 1 x 1 {\n  program \"p.wsa\" { M = 4 }\n"
                         "  export symbol A = a : f32[4] indirect\n}\n",
                         "error t.wsl:4:21 symbol 'a' is f32[4] in program 'p.wsa' for rect 'r' (PE (0, 0): M = 4), "
                         "but an indirect export names a u32 pointer variable"));
}

TEST_F(LayoutBuild, AssemblerErrorsKeepTheirOwnPosition) {
  write("bad.wsa", ".param M\n.code\nstart:\n        bogus r1\n");
  std::string out = errors(R"(
fabric 1 x 1
rect r at (0, 0) size 1 x 1 {
  program "bad.wsa" { M = 3 }
})");
  EXPECT_NE(out.find("error bad.wsa:4:9 "), std::string::npos) << out;
  EXPECT_NE(out.find("note t.wsl:4:3 while assembling 'bad.wsa' for rect 'r' (PE (0, 0): M = 3)"),
            std::string::npos)
      << out;
}

// The documented example (compiler/layout/examples/gemv_2x2.wsl) builds, with the values worked
// out by hand from its expressions.
TEST(LayoutExample, Gemv2x2) {
  const char* env = std::getenv("WSEMU_SOURCE_DIR");
  const fs::path source = env && *env ? fs::path(env) : fs::path(WSEMU_SOURCE_DIR_DEFAULT);
  BuildOptions options;
  options.params["M"] = 7;  // MT = 4: the south row holds 3 rows of A
  BuildResult r =
      build_layout_file((source / "compiler/layout/examples/gemv_2x2.wsl").string(), options);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.diagnostics);
  const Executable& exe = *r.executable;
  EXPECT_EQ(exe.placed_pes(), 4u);
  // The placeholder ignores the flags, so the four parameter sets give one object.
  EXPECT_EQ(r.summary.assemblies, 4u);
  EXPECT_EQ(exe.programs.size(), 1u);
  const PeConfig* se = exe.pe_config_at(2, 2);  // x = 1, y = 1
  ASSERT_NE(se, nullptr);
  EXPECT_EQ(exe.param_sets[se->param_set].values,
            (std::vector<std::pair<std::string, int64_t>>{{"IS_EAST", 1},
                                                          {"IS_NORTH", 0},
                                                          {"MT", 4},
                                                          {"M_HERE", 3},
                                                          {"NT", 3},
                                                          {"N_HERE", 3},
                                                          {"SUM_COLOR", 1},
                                                          {"X_COLOR", 0}}));
  const RouteSet& nw = exe.route_sets[exe.pe_config_at(1, 1)->route_set];
  ASSERT_EQ(nw.routes.size(), 2u);
  EXPECT_EQ(nw.find(0)->positions[0].tx.to_string(), "[S]");
  EXPECT_EQ(nw.find(1)->positions[0].tx.to_string(), "[E]");
  const RouteSet& se_routes = exe.route_sets[se->route_set];
  EXPECT_EQ(se_routes.find(0)->positions[0].rx.to_string(), "[N]");
  EXPECT_EQ(se_routes.find(1)->positions[0].rx.to_string(), "[W]");
  EXPECT_EQ(exe.find_symbol("A")->elems_per_pe, 12u);
  EXPECT_FALSE(exe.find_symbol("y")->host_writable);
  EXPECT_EQ(exe.find_color("c_sum"), 1);
}

TEST_F(LayoutBuild, FilterAndColorSwapReachTheExecutable) {
  // topic-08 and topic-14: route filters and color swap are per-PE route settings; two routes
  // that differ only in them must stay two route sets, and survive a save and load.
  BuildResult r = build_row_of_three("color red = 0\ncolor blue = 1\n", R"(
  route red rx [RAMP] tx [E] where x == 0
  route red rx [W] tx [RAMP, E] filter [0, 2] swap_x where x == 1
  route red rx [W] tx [RAMP] filter [3, 5] swap_x swap_y where x == 2
  route blue rx [W] tx [RAMP] swap_x where x > 0
  route blue rx [RAMP] tx [E] where x == 0
)");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.diagnostics);
  const Executable exe = parse_executable(serialize_executable(*r.executable), "round trip");
  const ColorRoute* mid = exe.route_sets[exe.pe_config_at(1, 0)->route_set].find(0);
  const ColorRoute* end = exe.route_sets[exe.pe_config_at(2, 0)->route_set].find(0);
  const ColorRoute* first = exe.route_sets[exe.pe_config_at(0, 0)->route_set].find(0);
  ASSERT_TRUE(mid && end && first);
  EXPECT_TRUE(mid->filter);
  EXPECT_EQ(mid->filter_min, 0);
  EXPECT_EQ(mid->filter_max, 2);
  EXPECT_TRUE(mid->swap_x);
  EXPECT_FALSE(mid->swap_y);
  EXPECT_EQ(end->filter_min, 3);
  EXPECT_EQ(end->filter_max, 5);
  EXPECT_TRUE(end->swap_y);
  EXPECT_FALSE(first->filter);
  EXPECT_FALSE(first->swap_x);
  EXPECT_TRUE(exe.route_sets[exe.pe_config_at(2, 0)->route_set].find(1)->swap_x);
}

TEST_F(LayoutBuild, FilterRangeMustBeSixteenBitIndices) {
  const std::string e = errors(R"(
fabric 2 x 1
rect r at (0, 0) size 2 x 1 {
  program "q.wsa" { M = 1, K = 0 }
  route 0 rx [RAMP] tx [E] where x == 0
  route 0 rx [W] tx [RAMP] filter [5, 2] where x == 1
})");
  EXPECT_NE(e.find("filter [5, 2] is not a range of 16-bit indices"), std::string::npos) << e;
}

}  // namespace
}  // namespace wsemu::compiler::layout
