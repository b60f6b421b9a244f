// The .wso format: exact round trip, and clear rejections of foreign, future and damaged files.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include <unistd.h>

#include "isa/object.pb.h"
#include "isa/object_io.hpp"
#include "tests/isa/test_support.hpp"
#include "tests/test_support.hpp"

namespace wsemu::isa {
namespace {

ObjectImage sample() {
  return test::assemble_ok(R"(
.arch wse2
.data
x: .f32 1.5, 2.5
y: .i16 [3]
.export x
.dsd xd = mem1d(x, 2)
.oqinit 1, 3
.code
.task t, data, color 3
        fmovs xd, xd
        dprint "hello"
        exit
)");
}

std::string message_of(std::string_view bytes) {
  return wsemu::testing::thrown_message<FormatError>([&] { parse_object(bytes, "prog.wso"); }, "(accepted)");
}

// Reproducible builds: `wsemu asm` of the same file in two folders gives the same bytes.
TEST(ObjectIo, SameSourceInTwoFoldersGivesTheSameBytes) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("wsemu_repro_" + std::to_string(::getpid()));
  std::vector<std::string> objects;
  for (const char* folder : {"a", "deeper/b"}) {
    fs::create_directories(root / folder);
    fs::copy_file(test::source_dir() + "/isa/examples/saxpy.wsa", root / folder / "saxpy.wsa",
                  fs::copy_options::overwrite_existing);
    const std::string out = (root / folder / "saxpy.wso").string();
    const test::CommandResult r = test::run_command(test::bin_dir() + "/wsemu asm " + (root / folder / "saxpy.wsa").string() +
                                                    " -o " + out + " --param N=16");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    objects.push_back(test::read_file(out));
  }
  fs::remove_all(root);
  EXPECT_FALSE(objects[0].empty());
  EXPECT_EQ(objects[0], objects[1]);
}

TEST(ObjectIo, RoundTripIsExact) {
  const ObjectImage o = sample();
  const std::string bytes = serialize_object(o);
  EXPECT_TRUE(bytes.starts_with(std::string("\x0a\x0c") + "wsemu-object"));
  EXPECT_EQ(parse_object(bytes, "mem"), o);
}

TEST(ObjectIo, FilesRoundTrip) {
  const auto path = std::filesystem::temp_directory_path() / "wsemu_object_io_test.wso";
  write_object_file(path.string(), sample());
  EXPECT_EQ(read_object_file(path.string()), sample());
  std::filesystem::remove(path);
  EXPECT_THROW(read_object_file(path.string()), FormatError);
}

TEST(ObjectIo, RejectsWhatIsNotAnObject) {
  EXPECT_EQ(message_of("hello world, this is text"), "prog.wso: not a wsemu object (.wso) file (bad magic)");
  EXPECT_EQ(message_of(""), "prog.wso: not a wsemu object (.wso) file (bad magic)");
  EXPECT_EQ(message_of(std::string("\x7f" "ELF\x02\x01\x01", 7)), "prog.wso: not a wsemu object (.wso) file (bad magic)");
  std::string wrong = serialize_object(sample());
  wrong[5] = 'X';  // inside the magic
  EXPECT_NE(message_of(wrong).find("bad magic"), std::string::npos);
}

TEST(ObjectIo, RejectsAnotherFormatVersionNamingTheSupportedOne) {
  pb::Object p;
  to_proto(sample(), p);
  p.set_format_version(7);
  const std::string bytes = p.SerializeAsString();
  EXPECT_EQ(message_of(bytes),
            "prog.wso: object format version 7 is not supported (this wsemu reads versions 1 to 2); "
            "re-assemble the program with this wsemu");
  EXPECT_THROW(from_proto(p, "embedded"), FormatError);
}

TEST(ObjectIo, RejectsEveryTruncation) {
  const std::string bytes = serialize_object(sample());
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::string msg = message_of(std::string_view(bytes).substr(0, n));
    EXPECT_TRUE(msg.find("truncated") != std::string::npos || msg.find("bad magic") != std::string::npos ||
                msg.find("corrupt") != std::string::npos)
        << "prefix of " << n << " bytes: " << msg;
  }
  // Cut at the start of the end marker: everything else parses, the marker says it is cut.
  const std::string cut = bytes.substr(0, bytes.size() - 6);
  EXPECT_EQ(message_of(cut), "prog.wso: truncated wsemu object (the end marker is missing)");
}

TEST(ObjectIo, CorruptFieldsAreRejectedNotTrusted) {
  pb::Object p;
  to_proto(sample(), p);
  p.mutable_symbols(0)->set_address(1);  // before the data
  EXPECT_NE(message_of(p.SerializeAsString()).find("symbol 'x' lies outside the data"), std::string::npos);
  to_proto(sample(), p);
  p.mutable_descriptors(0)->set_dsr(48);
  EXPECT_NE(message_of(p.SerializeAsString()).find("descriptor register = 48"), std::string::npos);
  to_proto(sample(), p);
  p.set_data_base(4);
  EXPECT_NE(message_of(p.SerializeAsString()).find("overlaps the code"), std::string::npos);
}

TEST(ObjectIo, RandomDamageNeverCrashes) {
  const std::string bytes = serialize_object(sample());
  std::mt19937 rng(3);
  for (int k = 0; k < 20000; ++k) {
    std::string damaged = bytes;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) damaged[rng() % damaged.size()] = static_cast<char>(rng());
    try {
      const ObjectImage o = parse_object(damaged, "x");
      EXPECT_LE(o.data_init.size(), o.data_size);
    } catch (const FormatError&) {
    }
  }
}

}  // namespace
}  // namespace wsemu::isa
