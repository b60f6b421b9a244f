// The .wsx executable format: a save/load round trip gives back an equal Executable, and every
// kind of damaged or foreign file is rejected with a message that says what is wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <zlib.h>

#include "compiler/executable/executable_io.hpp"
#include "tests/test_support.hpp"

namespace wsemu::compiler {
namespace {

// The .wsx file of an earlier wsemu: the same header and payload with `version` in both.
std::string as_version(const Executable& exe, char version) {
  std::string file = serialize_executable(exe);
  std::string payload = file.substr(24);
  // proto3 writes field 1 (format_version) first: tag 0x08, then the varint.
  EXPECT_EQ(payload.substr(0, 2), std::string("\x08\x04", 2));
  payload[1] = version;
  const uint32_t crc = static_cast<uint32_t>(
      ::crc32_z(::crc32_z(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(payload.data()), payload.size()));
  file[8] = version;
  for (int i = 0; i < 4; ++i) file[20 + i] = static_cast<char>((crc >> (8 * i)) & 0xFF);
  return file.substr(0, 24) + payload;
}

isa::ObjectImage sample_object(uint32_t words) {
  isa::ObjectImage o;
  o.source_name = "pe.wsa";
  o.arch = "wse2";
  for (uint32_t i = 0; i < words; ++i) o.code.push_back(0x0100);  // nop
  o.data_base = words * 8;
  o.data_size = 16;
  o.data_init = {1, 2, 3, 4};
  o.symbols.push_back({"y", o.data_base, isa::ElemType::F32, 4, true});
  o.functions.push_back({"compute", 0, true});
  o.source_lines.assign(words, 7);
  o.source_files = {"pe.csl", "lib.csl"};
  for (uint32_t i = 0; i < words; ++i) o.source_locations.push_back({i % 3, 10 + i, 4});
  return o;
}

Executable sample() {
  Executable exe;
  exe.arch = "wse3";
  exe.fabric_width = 9;
  exe.fabric_height = 4;
  exe.layout_file = "gemv.wsl";
  exe.build_params = {{"M", 4}, {"N", -6}};
  exe.colors = {{"c_x", 3}, {"c_sum", 20}};
  exe.programs.push_back({"pe.wsa", sample_object(2)});
  exe.programs.push_back({"pe.wsa", sample_object(3)});
  exe.param_sets.push_back({{{"M", 2}, {"last", 0}}});
  exe.param_sets.push_back({{{"M", 2}, {"last", 1}}});
  ColorRoute a;
  a.color = 3;
  a.positions = {{DirectionSet{1u << 4}, DirectionSet{(1u << 2) | (1u << 4)}},
                 {DirectionSet{1u << 4}, DirectionSet{1u << 3}}};
  a.current_position = 1;
  a.ring_mode = true;
  ColorRoute b;
  b.color = 20;
  b.positions = {{DirectionSet{1u << 3}, DirectionSet{1u << 4}}};
  b.host_port = true;
  exe.route_sets.push_back({{a}});
  exe.route_sets.push_back({{a, b}});
  exe.pe_configs = {{0, 0, 0}, {1, 1, 1}, {-1, -1, 0}};
  exe.rects.push_back({"compute", 4, 1, 2, 2, {{1, 0}, {1, 1}, {2, 0}}});
  exe.rects.push_back({"relay", 6, 1, 1, 2, {{2, 2}}});
  exe.symbols.push_back({"y", "y", isa::ElemType::F32, 4, 0, true, false});
  exe.functions.push_back({"go", "compute", 0});
  return exe;
}

std::string load_error(const std::string& bytes) {
  return wsemu::testing::thrown_message<ExecutableError>([&] { parse_executable(bytes, "k.wsx"); });
}

TEST(Executable, RoundTripIsExact) {
  Executable exe = sample();
  ASSERT_TRUE(validate(exe).empty()) << validate(exe).front();
  Executable back = parse_executable(serialize_executable(exe));
  EXPECT_EQ(back, exe);
  auto path = std::filesystem::temp_directory_path() / "wsemu_executable_test.wsx";
  save_executable(exe, path.string());
  EXPECT_EQ(load_executable(path.string()), exe);
  std::filesystem::remove(path);
}

// The line table round-trips; files of formats 1 and 2 (wsemu's earlier control-wavelet layout)
// are refused, naming their version and asking for a rebuild; format 3 (no indirect symbols) is
// read.
TEST(Executable, LineTableRoundTripsAndEarlierFormatsAreRefused) {
  const Executable exe = sample();
  const Executable back = parse_executable(serialize_executable(exe));
  EXPECT_EQ(back.programs[1].object.source_location(1), "pe.csl:11:4");
  EXPECT_EQ(back.programs[1].object.source_location(2), "lib.csl:12:4");
  EXPECT_EQ(back.programs[1].object.source_location(0), "");  // file 0: no location
  for (char version : {1, 2}) {
    try {
      parse_executable(as_version(exe, version), "old.wsx");
      ADD_FAILURE() << "version " << int(version) << " was read";
    } catch (const ExecutableError& e) {
      EXPECT_NE(std::string(e.what()).find("old.wsx: executable format version " + std::to_string(version) +
                                           ", but this wsemu reads versions 3 to 4; rebuild it"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(parse_executable(as_version(exe, 3), "old.wsx"), exe);
}

// An indirect host symbol (format 4) round-trips, and must name a u32 pointer word.
TEST(Executable, IndirectSymbolRoundTripsAndNamesAPointerWord) {
  Executable exe = sample();
  for (Program& p : exe.programs) {
    p.object.symbols.push_back({"y_ptr", p.object.data_base + 16, isa::ElemType::U32, 1, true});
    p.object.data_size = 20;
    p.object.data_init = {1, 2, 3, 4, 5};
  }
  exe.symbols.push_back({"z", "y_ptr", isa::ElemType::F32, 4, 0, true, true, true});
  ASSERT_TRUE(validate(exe).empty()) << validate(exe).front();
  const Executable back = parse_executable(serialize_executable(exe));
  EXPECT_EQ(back, exe);
  EXPECT_TRUE(back.find_symbol("z")->indirect);
  EXPECT_FALSE(back.find_symbol("y")->indirect);
  exe.symbols.back().program_symbol = "y";  // an f32 array, not a pointer
  const std::vector<std::string> problems = validate(exe);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems.front().find("symbol 'z' is indirect, but 'y' of program 0 ('pe.wsa') is f32[4], not a u32 "
                                  "pointer word"),
            std::string::npos)
      << problems.front();
}

TEST(Executable, Lookups) {
  Executable exe = sample();
  EXPECT_EQ(exe.rect_at(5, 2), 0);
  EXPECT_EQ(exe.rect_at(6, 1), 1);
  EXPECT_EQ(exe.rect_at(3, 1), -1);
  // Runs of rect "compute" (2 x 2, row-major): config 0, 1, 0, 0.
  EXPECT_EQ(exe.pe_config_at(4, 1)->program, 0);
  EXPECT_EQ(exe.pe_config_at(5, 1)->program, 1);
  EXPECT_EQ(exe.pe_config_at(4, 2)->program, 0);
  EXPECT_EQ(exe.pe_config_at(6, 2)->program, -1);
  EXPECT_EQ(exe.pe_config_at(0, 0), nullptr);
  EXPECT_EQ(exe.placed_pes(), 6u);
  EXPECT_EQ(exe.route_sets[1].find(20)->host_port, true);
  EXPECT_EQ(exe.route_sets[1].find(4), nullptr);
  EXPECT_EQ(exe.find_symbol("y")->elems_per_pe, 4u);
  EXPECT_EQ(exe.find_function("go")->program_function, "compute");
  EXPECT_EQ(exe.find_color("c_sum"), 20);
  EXPECT_FALSE(exe.find_color("nope").has_value());
}

TEST(Executable, RejectsForeignAndDamagedFiles) {
  const std::string good = serialize_executable(sample());
  EXPECT_EQ(load_error("hello world, this is not an executable"),
            "k.wsx: not a wsemu executable (it does not start with \"WSEMUEXE\"; build one with "
            "`wsemu build`)");
  EXPECT_EQ(load_error(""), "k.wsx: truncated executable (0 bytes)");
  EXPECT_EQ(load_error(good.substr(0, 5)), "k.wsx: truncated executable (5 bytes)");
  EXPECT_EQ(load_error(good.substr(0, 20)),
            "k.wsx: truncated executable: 20 bytes, shorter than the 24-byte header");
  std::string future = good;
  future[8] = 5;  // format version 5
  EXPECT_EQ(load_error(future),
            "k.wsx: executable format version 5, but this wsemu reads versions 3 to 4; rebuild it with "
            "this wsemu's `wsemu build`");
  std::string cut = good.substr(0, good.size() - 10);
  EXPECT_NE(load_error(cut).find("k.wsx: truncated executable: the header announces"),
            std::string::npos);
  EXPECT_EQ(load_error(good + "xx"), "k.wsx: corrupted executable: 2 unexpected bytes after the payload");
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x40;
  EXPECT_EQ(load_error(flipped),
            "k.wsx: corrupted executable: checksum mismatch (the file was damaged)");
  EXPECT_THROW(load_executable("/nonexistent/k.wsx"), ExecutableError);
}

// The load error of the sample executable after `damage`.
template <class Damage>
std::string damaged_error(Damage damage) {
  Executable bad = sample();
  damage(bad);
  return load_error(serialize_executable(bad));
}

TEST(Executable, RejectsInconsistentContents) {
  // The runs cover 7 PEs of a 2 x 2 rect.
  EXPECT_EQ(damaged_error([](Executable& e) { e.rects[0].runs.back().count = 5; }),
            "k.wsx: corrupted executable: rect 'compute': its runs cover 7 PEs, not 4");
  EXPECT_EQ(damaged_error([](Executable& e) { e.pe_configs[1].program = 7; }),
            "k.wsx: corrupted executable: PE configuration 1 names program 7 of 2");
  EXPECT_EQ(damaged_error([](Executable& e) { e.rects[1].x = 4; }),
            "k.wsx: corrupted executable: rect 'relay' overlaps rect 'compute'");
  EXPECT_EQ(damaged_error([](Executable& e) {
              e.symbols.push_back({"go", "y", isa::ElemType::F32, 1, 0, true, true});
            }),
            "k.wsx: corrupted executable: host name 'go' appears twice");
  // Cross references into the programs: `wsemu run` looked these up without checking.
  EXPECT_EQ(damaged_error([](Executable& e) { e.symbols[0].program_symbol = "missing"; }),
            "k.wsx: corrupted executable: symbol 'y' names 'missing', which no program of its rect "
            "defines");
  EXPECT_EQ(damaged_error([](Executable& e) { e.symbols[0].elems_per_pe = 5; }),
            "k.wsx: corrupted executable: symbol 'y' says 5 f32 per PE, but 'y' of program 0 "
            "('pe.wsa') is f32[4]");
  EXPECT_EQ(damaged_error([](Executable& e) { e.functions[0].program_function = "nowhere"; }),
            "k.wsx: corrupted executable: function 'go' names 'nowhere', which program 0 "
            "('pe.wsa') does not define");
}

}  // namespace
}  // namespace wsemu::compiler
