// The bad-layouts corpus (tests/compiler/bad_layouts/*.wsl): each file is a layout with one
// configuration mistake. Its header comment says what `wsemu build` must print:
//   # expect: LINE:COL: error: MESSAGE    (stderr contains "FILE:LINE:COL: error: MESSAGE")
//   # expect-text: TEXT                   (stderr contains TEXT as is)
//   # args: --param M=0                   (extra command-line arguments)
// Every file must make `wsemu build` exit with status 1 and write no executable.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/executable/executable_io.hpp"

namespace {

namespace fs = std::filesystem;

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

fs::path corpus_dir() {
  const char* src = std::getenv("WSEMU_SOURCE_DIR");
  if (src && *src) return fs::path(src) / "tests/compiler/bad_layouts";
  return WSEMU_BAD_LAYOUTS_DIR;
}

std::vector<std::string> corpus() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(corpus_dir(), ec))
    if (entry.path().extension() == ".wsl") names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

struct Expectation {
  std::vector<std::string> needles;
  std::string args;
};

Expectation read_expectation(const fs::path& file) {
  Expectation e;
  std::ifstream in(file);
  std::string line;
  const std::string name = file.filename().string();
  while (std::getline(in, line)) {
    if (line.rfind("# expect: ", 0) == 0) e.needles.push_back(name + ":" + line.substr(10));
    else if (line.rfind("# expect-text: ", 0) == 0) e.needles.push_back(line.substr(15));
    else if (line.rfind("# args: ", 0) == 0) e.args.append(" ").append(line.substr(8));
  }
  return e;
}

class BadLayout : public ::testing::TestWithParam<std::string> {};

TEST_P(BadLayout, BuildFailsWithTheExpectedMessage) {
  const fs::path dir = corpus_dir();
  const Expectation expect = read_expectation(dir / GetParam());
  ASSERT_FALSE(expect.needles.empty()) << GetParam() << " has no '# expect:' line";
  const fs::path wsemu = fs::path(env_or("WSEMU_BIN_DIR", WSEMU_DEFAULT_BIN_DIR)) / "wsemu";
  const fs::path out = fs::temp_directory_path() /
                       ("wsemu_bad_layout_" + std::to_string(::getpid()) + ".wsx");
  const fs::path log = fs::temp_directory_path() /
                       ("wsemu_bad_layout_" + std::to_string(::getpid()) + ".log");
  fs::remove(out);
  // Run from the corpus folder so that messages carry the bare file name.
  std::string command = "cd '" + dir.string() + "' && '" + wsemu.string() + "' build '" +
                        GetParam() + "' -o '" + out.string() + "'" + expect.args + " > '" +
                        log.string() + "' 2>&1";
  int status = std::system(command.c_str());
  std::stringstream output;
  output << std::ifstream(log).rdbuf();
  fs::remove(log);
  ASSERT_TRUE(WIFEXITED(status)) << command;
  EXPECT_EQ(WEXITSTATUS(status), 1) << output.str();
  EXPECT_FALSE(fs::exists(out)) << "an executable was written despite the error";
  for (const std::string& needle : expect.needles)
    EXPECT_NE(output.str().find(needle), std::string::npos)
        << "expected to find:\n  " << needle << "\nin the output:\n" << output.str();
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = fs::path(info.param).stem().string();
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadLayout, ::testing::ValuesIn(corpus()), test_name);

TEST(BadLayoutCorpus, HasAtLeastFifteenFiles) { EXPECT_GE(corpus().size(), 15u); }

// The good path of the same command: exit 0, a one-line summary, a loadable executable.
TEST(BuildCommand, WritesALoadableExecutable) {
  const fs::path wsemu = fs::path(env_or("WSEMU_BIN_DIR", WSEMU_DEFAULT_BIN_DIR)) / "wsemu";
  const fs::path layout = corpus_dir().parent_path().parent_path().parent_path() /
                          "compiler/layout/examples/gemv_2x2.wsl";
  const fs::path out = fs::temp_directory_path() /
                       ("wsemu_build_command_" + std::to_string(::getpid()) + ".wsx");
  const fs::path log = fs::temp_directory_path() /
                       ("wsemu_build_command_" + std::to_string(::getpid()) + ".log");
  std::string command = "'" + wsemu.string() + "' build '" + layout.string() + "' -o '" +
                        out.string() + "' --param N=5 > '" + log.string() + "' 2>&1";
  int status = std::system(command.c_str());
  std::stringstream output;
  output << std::ifstream(log).rdbuf();
  fs::remove(log);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << output.str();
  EXPECT_NE(output.str().find("wsemu build: wrote " + out.string() +
                              ": fabric 4 x 4 (wse2): 4 PEs in 1 rect, 1 distinct program from 4 "
                              "assemblies, 8 routes, SRAM max "),
            std::string::npos)
      << output.str();
  wsemu::compiler::Executable exe = wsemu::compiler::load_executable(out.string());
  fs::remove(out);
  EXPECT_EQ(exe.fabric_width, 4u);
  EXPECT_EQ(exe.build_params,
            (std::vector<std::pair<std::string, int64_t>>{{"M", 8}, {"N", 5}}));
  EXPECT_EQ(exe.find_symbol("x")->elems_per_pe, 3u);  // NT = (5 + 1) / 2
}

}  // namespace
