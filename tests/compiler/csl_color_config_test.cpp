// Color configurations of the layout block as wsemu writes them into layout.wsl: a switch
// position marked `.{ .invalid = true }` (the SDK's spmv-hypersparse ends its two-position
// switches with `.pos3 = .{ .invalid = true }`) is no position, so the layout equals the one that
// leaves it out; an invalid position followed by a valid one is an error naming both.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "compiler/csl/cslc.hpp"

namespace wsemu::compiler::csl {
namespace {

namespace fs = std::filesystem;

// Compiles a 3x1 rectangle: color 4 from PE 0 east to PE 2, PE 1 passing it on with the given .switches.
CslResult compile_switches(const std::string& name, const std::string& switches) {
  const fs::path dir = fs::temp_directory_path() / ("wsemu-csl-color-config-" + name);
  fs::create_directories(dir);
  std::ofstream(dir / "pe.csl") << "fn f() void {}\ncomptime { @export_symbol(f); }\n";
  std::ofstream(dir / "layout.csl")
      << "layout {\n  @set_rectangle(3, 1);\n"
         "  for (@range(u16, 3)) |x| { @set_tile_code(x, 0, \"pe.csl\", .{}); }\n"
         "  @set_color_config(0, 0, @get_color(4), .{ .routes = .{ .rx = .{ RAMP }, .tx = .{ EAST } } });\n"
         "  @set_color_config(2, 0, @get_color(4), .{ .routes = .{ .rx = .{ WEST }, .tx = .{ RAMP } } });\n"
         "  @set_color_config(1, 0, @get_color(4), .{ .routes = .{ .rx = .{ WEST }, .tx = .{ RAMP, EAST } },\n"
         "                                          .switches = .{ "
      << switches << " } });\n}\n";
  CslOptions o;
  o.layout_file = (dir / "layout.csl").string();
  o.out_dir = (dir / "out").string();
  return compile_csl(o);
}

TEST(CslColorConfig, AnInvalidLastPositionIsNoPosition) {
  const CslResult with = compile_switches("invalid", ".pos1 = .{ .tx = EAST }, .pos2 = .{ .rx = RAMP }, .pos3 = .{ .invalid = true }");
  const CslResult without = compile_switches("plain", ".pos1 = .{ .tx = EAST }, .pos2 = .{ .rx = RAMP }");
  ASSERT_TRUE(with.ok()) << (with.diagnostics.empty() ? "" : with.diagnostics[0].to_string());
  ASSERT_TRUE(without.ok());
  auto body = [](const std::string& wsl) { return wsl.substr(wsl.find('\n')); };  // past the header naming the source
  EXPECT_EQ(body(with.layout_wsl), body(without.layout_wsl));
  // Position 1 changes tx only, position 2 rx only; each keeps the other side as it was.
  EXPECT_NE(with.layout_wsl.find("route 4 rx [W] tx [RAMP, E] switch { pos1 rx [W] tx [E] pos2 rx [RAMP] tx [E] }"),
            std::string::npos)
      << with.layout_wsl;
}

TEST(CslColorConfig, AValidPositionAfterAnInvalidOneIsAnError) {
  const CslResult r = compile_switches("gap", ".pos1 = .{ .invalid = true }, .pos2 = .{ .rx = RAMP }");
  ASSERT_FALSE(r.ok());
  ASSERT_FALSE(r.diagnostics.empty());
  EXPECT_NE(r.diagnostics[0].message.find("switch position 2 after the invalid position 1"), std::string::npos)
      << r.diagnostics[0].to_string();
  const CslResult f = compile_switches("false", ".pos1 = .{ .tx = EAST }, .pos2 = .{ .invalid = false }");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.diagnostics[0].message.find(".pos2.invalid must be true"), std::string::npos) << f.diagnostics[0].to_string();
}

}  // namespace
}  // namespace wsemu::compiler::csl
