// The bad-layouts corpus (tests/runtime/bad_layouts/*.wsl): each file is a layout with one
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

namespace {

namespace fs = std::filesystem;

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

fs::path corpus_dir() {
  const char* src = std::getenv("WSEMU_SOURCE_DIR");
  if (src && *src) return fs::path(src) / "tests/runtime/bad_layouts";
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

}  // namespace
