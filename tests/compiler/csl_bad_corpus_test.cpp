// The bad-program corpus: every tests/compiler/bad/*.csl is compiled and must fail with the
// diagnostic its first line names: `// expect: LINE:COL: MESSAGE` (position in that file, and a
// substring of the message). A second line `// as: pe` compiles the file as the PE program of a
// one-PE layout; `// note: TEXT` requires TEXT among the notes (the import chain).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "compiler/csl/cslc.hpp"
#include "tests/test_support.hpp"

namespace wsemu::compiler::csl {
namespace {

namespace fs = std::filesystem;

using ::wsemu::testing::source_dir;

std::vector<fs::path> corpus() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(source_dir() + "/tests/compiler/bad"))
    if (e.path().extension() == ".csl") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(CslBadCorpus, HasAtLeastFortyPrograms) { EXPECT_GE(corpus().size(), 40u); }

TEST(CslBadCorpus, EveryProgramFailsWithItsExpectedDiagnostic) {
  const fs::path scratch = fs::temp_directory_path() / ("wsemu-csl-bad-" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  for (const fs::path& file : corpus()) {
    SCOPED_TRACE(file.filename().string());
    std::ifstream in(file);
    std::string first, second;
    std::getline(in, first);
    std::getline(in, second);
    std::smatch m;
    ASSERT_TRUE(std::regex_match(first, m, std::regex(R"(// expect: (\d+):(\d+): (.*))"))) << first;
    const int line = std::stoi(m[1]), col = std::stoi(m[2]);
    const std::string message = m[3];
    CslOptions o;
    o.layout_file = file.string();
    if (second == "// as: pe") {
      const fs::path layout = scratch / (file.stem().string() + "_layout.csl");
      std::ofstream(layout) << "layout {\n  @set_rectangle(1, 1);\n  @set_tile_code(0, 0, \"" << file.string()
                            << "\", .{});\n}\n";
      o.layout_file = layout.string();
    }
    o.out_dir = (scratch / file.stem()).string();
    CslResult r = compile_csl(o);
    EXPECT_FALSE(r.ok());
    if (r.diagnostics.empty()) {
      ADD_FAILURE() << "compiled without an error";
      continue;
    }
    const Diagnostic& d = r.diagnostics[0];
    EXPECT_EQ(fs::path(d.file).filename(), file.filename()) << d.to_string();
    EXPECT_EQ(d.line, line) << d.to_string();
    EXPECT_EQ(d.col, col) << d.to_string();
    EXPECT_NE(d.message.find(message), std::string::npos) << d.to_string();
    // The caret display quotes the offending line (none at the end of the file).
    if (!d.source_line.empty()) {
      EXPECT_NE(d.to_string().find("^"), std::string::npos) << d.to_string();
    }
    std::string rest;
    std::getline(in, rest);
    if (second.rfind("// note: ", 0) == 0) {
      const std::string note = second.substr(9);
      bool found = false;
      for (const Diagnostic& n : r.diagnostics) found = found || (n.severity == Severity::NOTE && n.to_string().find(note) != std::string::npos);
      EXPECT_TRUE(found) << "no note containing '" << note << "' in\n" << layout::format_diagnostics(r.diagnostics);
    }
  }
  std::error_code ec;
  fs::remove_all(scratch, ec);
}

// An error inside an imported module names its position there, then one note per import on the
// way from the layout file.
TEST(CslDiagnostics, ErrorInAnImportedModuleHasTheImportChain) {
  const fs::path dir = fs::temp_directory_path() / ("wsemu-csl-chain-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "layout.csl") << "layout {\n  @set_rectangle(1, 1);\n  @set_tile_code(0, 0, \"pe.csl\", .{});\n}\n";
  std::ofstream(dir / "pe.csl") << "const helper = @import_module(\"helper.csl\", .{ .n = 3 });\nconst k = helper.value;\n";
  std::ofstream(dir / "helper.csl") << "param n: i16;\nconst value = n + missing;\n";
  CslOptions o;
  o.layout_file = (dir / "layout.csl").string();
  o.out_dir = (dir / "out").string();
  const CslResult r = compile_csl(o);
  ASSERT_FALSE(r.ok());
  ASSERT_GE(r.diagnostics.size(), 3u) << layout::format_diagnostics(r.diagnostics);
  EXPECT_EQ(fs::path(r.diagnostics[0].file).filename(), "helper.csl");
  EXPECT_EQ(r.diagnostics[0].line, 2);
  EXPECT_EQ(r.diagnostics[0].col, 19);
  EXPECT_NE(r.diagnostics[0].message.find("undeclared identifier 'missing'"), std::string::npos);
  EXPECT_EQ(r.diagnostics[1].severity, Severity::NOTE);
  EXPECT_NE(r.diagnostics[1].to_string().find("in module helper.csl imported from"), std::string::npos);
  EXPECT_EQ(fs::path(r.diagnostics[1].file).filename(), "pe.csl");
  EXPECT_EQ(r.diagnostics[1].line, 1);
  EXPECT_EQ(fs::path(r.diagnostics[2].file).filename(), "layout.csl");
  EXPECT_EQ(r.diagnostics[2].line, 3);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace wsemu::compiler::csl
