// `include "file.wsl"` in layouts (compiler/layout/README.md, "Including files"): an included file's
// statements behave exactly as if written in place of the include, at top level and inside a
// rect or a `where` block; files are found beside the including file, then in the include
// folders; errors inside an included file carry its position and the include sites; cycles and
// missing files are errors at the include statement.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "compiler/layout/build.hpp"
#include "tests/compiler/layout_scratch_folder.hpp"
#include "compiler/layout/parser.hpp"

namespace wsemu::compiler::layout {
namespace {

namespace fs = std::filesystem;

// A module's routes, parameterised by the includer's `C0` and rect let `last` and using the
// rect's x and y: a broadcast east along each row on color C0 and south on color C0 + 1.
constexpr const char* kRoutes = R"(# chain routes
route C0 rx [RAMP] tx [E] where x == 0
route C0 rx [W] tx [RAMP, E] where x > 0 && x < last
route C0 rx [W] tx [RAMP] where x == last
route C0 + 1 rx [RAMP] tx [S] where y == 0
route C0 + 1 rx [N] tx [RAMP] where y == 1
)";

class LayoutInclude : public LayoutScratchFolder {
 protected:
  LayoutInclude() : LayoutScratchFolder({{"q.wsa", kProgram}}) {}
  // Every diagnostic as printed by `wsemu build`, with the temporary folder cut out.
  std::string output(const BuildResult& r) {
    std::string out = format_diagnostics(r.diagnostics);
    const std::string prefix = dir_.string() + "/";
    for (size_t at; (at = out.find(prefix)) != std::string::npos;) out.erase(at, prefix.size());
    return out;
  }
};

std::string chain_layout(const std::string& body) {
  return "fabric 5 x 4\nlet C0 = 2\nrect r at (1, 1) size 3 x 2 {\n  let last = width - 1\n"
         "  program \"q.wsa\" { M = 2, K = 0 }\n" + body + "  export function compute\n}\n";
}

TEST_F(LayoutInclude, ARectIncludeIsTheSameAsTheRoutesWrittenInPlace) {
  BuildResult inline_build = build(chain_layout(kRoutes));
  ASSERT_TRUE(inline_build.ok()) << output(inline_build);
  write("routes.wsl", kRoutes);
  BuildResult included = build(chain_layout("  include \"routes.wsl\"\n"));
  ASSERT_TRUE(included.ok()) << output(included);
  EXPECT_EQ(*included.executable, *inline_build.executable);
  EXPECT_EQ(included.summary.routes, 12u);
}

TEST_F(LayoutInclude, WorksInsideAWhereBlockAndCombinesTheConditions) {
  write("routes.wsl", kRoutes);
  // Only the west two columns get the routes: the chain then ends at x == 1.
  BuildResult r = build(
      "fabric 5 x 4\nlet C0 = 2\nrect r at (1, 1) size 3 x 2 {\n  let last = 1\n"
      "  program \"q.wsa\" { M = 2, K = 0 }\n  where x < 2 { include \"routes.wsl\" }\n}\n");
  ASSERT_TRUE(r.ok()) << output(r);
  EXPECT_EQ(r.summary.routes, 8u);
  const Executable& exe = *r.executable;
  const PeConfig* east = exe.pe_config_at(3, 1);
  ASSERT_NE(east, nullptr);
  EXPECT_TRUE(exe.route_sets[east->route_set].routes.empty());
  const PeConfig* west = exe.pe_config_at(1, 1);
  ASSERT_NE(west, nullptr);
  EXPECT_EQ(exe.route_sets[west->route_set].routes.size(), 2u);
}

TEST_F(LayoutInclude, TopLevelIncludesDeclareNamesAndNestedIncludesAreRelativeToTheirFile) {
  // colors.wsl uses the includer's C0 and includes more/extra.wsl beside itself.
  write("lib/colors.wsl", "color c_a = C0\ninclude \"more/extra.wsl\"\n");
  write("lib/more/extra.wsl", "color c_b = C0 + 1   # beside colors.wsl, not t.wsl\n");
  write("lib/routes.wsl", "route c_a rx [RAMP] tx [E] where x == 0\nroute c_a rx [W] tx [RAMP] where x == 1\n");
  BuildResult r = build(
      "fabric 4 x 3\nlet C0 = 5\ninclude \"lib/colors.wsl\"\nrect r at (1, 1) size 2 x 1 {\n"
      "  program \"q.wsa\" { M = 2, K = c_b }\n  include \"lib/routes.wsl\"\n}\n");
  ASSERT_TRUE(r.ok()) << output(r);
  const Executable& exe = *r.executable;
  EXPECT_EQ(exe.find_color("c_a"), std::optional<uint8_t>(5));
  EXPECT_EQ(exe.find_color("c_b"), std::optional<uint8_t>(6));
  EXPECT_EQ(r.summary.routes, 2u);
}

TEST_F(LayoutInclude, IncludeFoldersAreSearchedAfterTheIncludingFilesFolder) {
  write("inc/routes.wsl", kRoutes);
  BuildResult missing = build(chain_layout("  include \"routes.wsl\"\n"));
  ASSERT_FALSE(missing.ok());
  BuildOptions options;
  options.include_dirs = {(dir_ / "nothing").string(), (dir_ / "inc").string()};
  BuildResult found = build(chain_layout("  include \"routes.wsl\"\n"), options);
  ASSERT_TRUE(found.ok()) << output(found);
  EXPECT_EQ(found.summary.routes, 12u);
  // A file beside the layout wins over the include folders.
  write("routes.wsl", "route C0 rx [RAMP] tx [E] where x == 0\n"
                      "route C0 rx [W] tx [RAMP, E] where x > 0 && x < last\n"
                      "route C0 rx [W] tx [RAMP] where x == last\n");
  BuildResult beside = build(chain_layout("  include \"routes.wsl\"\n"), options);
  ASSERT_TRUE(beside.ok()) << output(beside);
  EXPECT_EQ(beside.summary.routes, 6u);
}

TEST_F(LayoutInclude, TheSameFileMayBeIncludedInSeveralRects) {
  write("routes.wsl", kRoutes);
  BuildResult r = build(
      "fabric 8 x 4\nlet C0 = 2\n"
      "rect a at (1, 1) size 3 x 2 { let last = width - 1  program \"q.wsa\" { M = 2, K = 0 }\n"
      "  include \"routes.wsl\" }\n"
      "rect b at (4, 1) size 3 x 2 { let last = width - 1  program \"q.wsa\" { M = 2, K = 0 }\n"
      "  include \"routes.wsl\" }\n");
  ASSERT_TRUE(r.ok()) << output(r);
  EXPECT_EQ(r.summary.routes, 24u);
}

TEST_F(LayoutInclude, AProgramInAnIncludedFileIsRelativeToThatFile) {
  write("sub/q2.wsa", kProgram);
  write("sub/body.wsl", "program \"q2.wsa\" { M = 3, K = 0 }\n");
  BuildResult r = build("fabric 3 x 3\nrect r at (1, 1) size 1 x 1 { include \"sub/body.wsl\" }\n");
  ASSERT_TRUE(r.ok()) << output(r);
  EXPECT_EQ(fs::path(r.executable->programs.at(0).source_path).filename(), "q2.wsa");
}

TEST_F(LayoutInclude, ErrorsInAnIncludedFileNameItsLineAndTheIncludeSites) {
  write("lib/outer.wsl", "# outer\n  include \"inner.wsl\"\n");
  write("lib/inner.wsl", "route C0 rx [RAMP] tx [E]\nroute c_nope rx [W] tx [RAMP]\n");
  BuildResult r = build(chain_layout("  include \"lib/outer.wsl\"\n"));
  ASSERT_FALSE(r.ok());
  const std::string out = output(r);
  EXPECT_NE(out.find("lib/inner.wsl:2:7: error: unknown color 'c_nope'"), std::string::npos) << out;
  EXPECT_NE(out.find("route c_nope rx [W] tx [RAMP]\n      ^\n"
                     "lib/outer.wsl:2:3: note: included from here\n"
                     "  include \"inner.wsl\"\n  ^\n"
                     "t.wsl:6:3: note: included from here\n"
                     "  include \"lib/outer.wsl\"\n  ^"),
            std::string::npos)
      << out;
  ASSERT_FALSE(r.diagnostics.empty());
  ASSERT_EQ(r.diagnostics[0].included_from.size(), 2u);
  EXPECT_EQ(r.diagnostics[0].included_from[1].line, 6);
}

TEST_F(LayoutInclude, ARouteConflictAcrossFilesNamesTheOtherFile) {
  write("routes.wsl", kRoutes);
  BuildResult r = build(chain_layout("  include \"routes.wsl\"\n  route C0 rx [W] tx [RAMP] where x == 2\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(output(r).find("this one and the one at routes.wsl:4"), std::string::npos) << output(r);
}

TEST_F(LayoutInclude, SyntaxErrorsInsideAnIncludedFileAreReportedThereAndParsingGoesOn) {
  write("bad.wsl", "route 1 rx [RAMP] tx [Q]\nroute 2 rx [RAMP] tx [E]\n}\n");
  BuildResult r = build("fabric 3 x 3\nrect r at (1, 1) size 1 x 1 {\n  include \"bad.wsl\"\n  let z = (\n}\n");
  ASSERT_FALSE(r.ok());
  const std::string out = output(r);
  EXPECT_NE(out.find("bad.wsl:1:23: error: unknown direction 'Q'"), std::string::npos) << out;
  EXPECT_NE(out.find("bad.wsl:3:1: error: '}' without a matching '{' in an included file"),
            std::string::npos)
      << out;
  // The including file's own error after the include is still found.
  EXPECT_NE(out.find("t.wsl:5:1: error: expected an expression"), std::string::npos) << out;
}

TEST_F(LayoutInclude, AMissingFileSaysWhereItLooked) {
  BuildOptions options;
  options.include_dirs = {(dir_ / "inc").string()};
  BuildResult r = build("fabric 3 x 3\ninclude \"nope.wsl\"\n", options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(output(r).find("t.wsl:2:9: error: include file 'nope.wsl' not found (looked for "
                           "nope.wsl, inc/nope.wsl)"),
            std::string::npos)
      << output(r);
}

TEST_F(LayoutInclude, ACycleIsAnErrorThatShowsTheChain) {
  write("a.wsl", "let A = 1\ninclude \"sub/b.wsl\"\n");
  write("sub/b.wsl", "include \"../a.wsl\"\n");
  BuildResult r = build("fabric 3 x 3\ninclude \"a.wsl\"\n");
  ASSERT_FALSE(r.ok());
  const std::string out = output(r);
  EXPECT_NE(out.find("sub/b.wsl:1:9: error: include cycle: a.wsl -> sub/b.wsl -> a.wsl"),
            std::string::npos)
      << out;
  // Including the layout itself is a cycle too.
  BuildResult self = build("fabric 3 x 3\ninclude \"t.wsl\"\n");
  ASSERT_FALSE(self.ok());
  EXPECT_NE(output(self).find("t.wsl:2:9: error: include cycle: t.wsl -> t.wsl"), std::string::npos)
      << output(self);
}

TEST(LayoutIncludeParser, IncludeNeedsAFileName) {
  SourceText source("t.wsl", "include nope\n");
  ParseResult r = parse_layout(source, "include nope\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message,
            "expected the included file's name as a string (include \"file.wsl\"), found 'nope'");
}

}  // namespace
}  // namespace wsemu::compiler::layout
