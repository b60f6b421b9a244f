// `wsemu build`, `wsemu run` and `wsemu check` as a user runs them: gemv-01 end to end with
// .npy files; a reference wrong by one element makes check exit 1 and name the element; bad
// .npy files, faults and hangs give their exit codes and messages.
#include <gmock/gmock.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "runtime/npy/npy.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

struct Result {
  int code = -1;
  std::string output;
};

Result sh(const std::string& command) {
  Result r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("wsemu_cli_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    wsemu_ = bin_dir() + "/wsemu";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string build(const std::string& layout, const std::string& params = "") {
    const Result r = sh(wsemu_ + " build " + layout + " -o " + path("k.wsx") +
                        " -q " + params);
    EXPECT_EQ(r.code, 0) << r.output;
    return path("k.wsx");
  }
  // gemv-01 with M = 4, N = 6 and its inputs and reference in dir_.
  std::string gemv() {
    const std::string exe = build(source_dir() + "/kernels/gemv-01-single-pe/layout.wsl");
    const xt::xarray<float> A = random_array({4, 6}, 7), x = random_array({6}, 8), b = random_array({4}, 9);
    runtime::npy::write_npy(path("A.npy"), runtime::npy::NpyArray::from_xarray<float>(xt::flatten(A)));
    runtime::npy::write_npy(path("x.npy"), runtime::npy::NpyArray::from_xarray<float>(x));
    runtime::npy::write_npy(path("b.npy"), runtime::npy::NpyArray::from_xarray<float>(b));
    xt::xarray<float> ref = xt::cast<float>(gemv_reference(A, x, b));
    runtime::npy::write_npy(path("y_ref.npy"), runtime::npy::NpyArray::from_xarray<float>(ref));
    ref(2) += 1.0f;
    runtime::npy::write_npy(path("y_wrong.npy"), runtime::npy::NpyArray::from_xarray<float>(ref));
    return exe;
  }
  std::string ins() const {
    return " --in A=" + path("A.npy") + " --in x=" + path("x.npy") + " --in b=" + path("b.npy");
  }
  fs::path dir_;
  std::string wsemu_;
};

TEST_F(Cli, RunWritesOutputsAndPrintsCycles) {
  const std::string exe = gemv();
  const Result r = sh(wsemu_ + " run " + exe + ins() + " --out y=" + path("y.npy") + " --stats " + path("s.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("cycles = "));
  EXPECT_THAT(r.output, HasSubstr("us at 850 MHz"));
  const runtime::npy::NpyArray y = runtime::npy::read_npy(path("y.npy"));
  EXPECT_EQ(y.shape, std::vector<size_t>{4});
  std::ifstream stats(path("s.json"));
  const std::string text((std::istreambuf_iterator<char>(stats)), {});
  EXPECT_THAT(text, HasSubstr("\"memcpy_cycles\""));
}

TEST_F(Cli, CheckPassesAndFailsNamingTheWorstElement) {
  const std::string exe = gemv();
  Result ok = sh(wsemu_ + " check " + exe + ins() + " --expect y=" + path("y_ref.npy") + " --atol 1e-5 --junit " +
                 path("ok.xml"));
  EXPECT_EQ(ok.code, 0) << ok.output;
  EXPECT_THAT(ok.output, HasSubstr("PASS"));
  Result bad = sh(wsemu_ + " check " + exe + ins() + " --expect y=" + path("y_wrong.npy") + " --atol 1e-5 --junit " +
                  path("bad.xml"));
  EXPECT_EQ(bad.code, 1) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("1 of 4 elements differ"));
  EXPECT_THAT(bad.output, HasSubstr("worst y[2]: got"));
  std::ifstream junit(path("bad.xml"));
  const std::string xml((std::istreambuf_iterator<char>(junit)), {});
  // The common JUnit schema's attributes on both levels; the run itself passed, y failed.
  EXPECT_THAT(xml, HasSubstr("<testsuites name=\"wsemu check\" tests=\"2\" failures=\"1\" errors=\"0\" time=\""));
  EXPECT_THAT(xml, HasSubstr("tests=\"2\" failures=\"1\" errors=\"0\" time=\""));
  EXPECT_THAT(xml, HasSubstr("skipped=\"0\""));
  EXPECT_THAT(xml, HasSubstr("<testcase classname=\"k\" name=\"run\" time=\""));
  EXPECT_THAT(xml, HasSubstr("<failure type=\"mismatch\" message=\"1 of 4 elements differ"));
}

TEST_F(Cli, BackdoorGivesTheSameAnswer) {
  const std::string exe = gemv();
  const Result r =
      sh(wsemu_ + " check " + exe + ins() + " --backdoor --expect y=" + path("y_ref.npy") + " --atol 1e-5");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("(back door)"));
}

TEST_F(Cli, BadNpyFilesAreRejectedClearly) {
  const std::string exe = gemv();
  runtime::npy::write_npy(path("x_int.npy"), runtime::npy::NpyArray::from_xarray<int32_t>(xt::xarray<int32_t>({1, 2, 3, 4, 5, 6})));
  runtime::npy::write_npy(path("x_short.npy"), runtime::npy::NpyArray::from_xarray<float>(xt::xarray<float>({1, 2, 3})));
  Result r = sh(wsemu_ + " run " + exe + " --in x=" + path("x_int.npy"));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("dtype int32 does not match symbol 'x', which holds f32 elements (save the array "
                                  "with dtype float32)"));
  r = sh(wsemu_ + " run " + exe + " --in x=" + path("x_short.npy"));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("shape (3,) does not fit symbol 'x'"));
  r = sh(wsemu_ + " run " + exe + " --in z=" + path("x_short.npy"));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("exports no symbol 'z'"));
  r = sh(wsemu_ + " run " + exe + " --in x=" + path("missing.npy"));
  EXPECT_EQ(r.code, 2);
  r = sh(wsemu_ + " check " + exe + ins());
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("nothing to check"));
}

TEST_F(Cli, HangAndFaultHaveTheirReportsAndExitCodes) {
  const std::string exe = build(source_dir() + "/tests/runtime/host_kernels/broken.wsl");
  Result r = sh(wsemu_ + " run " + exe + " --launch hang");
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_THAT(r.output, HasSubstr("hang at cycle"));
  EXPECT_THAT(r.output, HasSubstr("PE(1,1)"));
  // In JUnit a hang is an <error> (the check could not be carried out), not a <failure>, and
  // the multi-line report is the element's text, its first line the message.
  runtime::npy::write_npy(path("v_ref.npy"),
                          runtime::npy::NpyArray::from_xarray<float>(xt::xarray<float>(xt::zeros<float>({4}))));
  r = sh(wsemu_ + " check " + exe + " --launch hang --expect v=" + path("v_ref.npy") + " --junit " + path("hang.xml"));
  EXPECT_EQ(r.code, 4) << r.output;
  std::ifstream junit(path("hang.xml"));
  const std::string xml((std::istreambuf_iterator<char>(junit)), {});
  EXPECT_THAT(xml, HasSubstr("tests=\"1\" failures=\"0\" errors=\"1\""));
  EXPECT_THAT(xml, HasSubstr("<error type=\"hang\" message=\"run: hang at cycle"));
  EXPECT_THAT(xml, HasSubstr("PE(1,1)"));
  EXPECT_THAT(xml, Not(HasSubstr("<failure")));
  r = sh(wsemu_ + " run " + exe + " --launch fault");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_THAT(r.output, HasSubstr("kernel error at PE(1,1)"));
  r = sh(wsemu_ + " run " + exe);
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.output, HasSubstr("name the entry with --launch"));
}

}  // namespace
}  // namespace wsemu::testing
