// The command line end to end on kernels/gemv-01-single-pe (y = A x + b on PE(1,1) of a 3x3
// fabric, M = 4, N = 6): `wsemu run --trace`, every `wsemu trace` view, and `wsemu debug --batch`
// with a breakpoint, steps and a printed value checked against y computed here.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "inspect/trace/trace_reader.hpp"
#include "runtime/npy/npy.hpp"
#include "tests/trace/trace_test_support.hpp"

namespace wsemu::testing {
namespace {

class TraceCli : public ScratchDir {
 protected:
  void SetUp() override {
    ScratchDir::SetUp();
    const char* bin = std::getenv("WSEMU_BIN_DIR");
    wsemu_ = std::string(bin ? bin : "build/bin") + "/wsemu";
    ASSERT_EQ(sh(wsemu_ + " build " + (source_dir() / "kernels/gemv-01-single-pe/layout.wsl").string() + " -q -o " + path("gemv.wsx")), 0)
        << output_;
    // A = [[i + j]], x = [1..6], b = [10, 20, 30, 40]: y_i = sum_j (i + j)(j + 1) + b_i.
    std::vector<float> a(M * N), x(N), b(M);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) a[size_t(i * N + j)] = float(i + j);
    for (int j = 0; j < N; ++j) x[size_t(j)] = float(j + 1);
    for (int i = 0; i < M; ++i) b[size_t(i)] = float(10 * (i + 1));
    for (int i = 0; i < M; ++i) {
      float y = b[size_t(i)];
      for (int j = 0; j < N; ++j) y += a[size_t(i * N + j)] * x[size_t(j)];
      y_.push_back(y);
    }
    write("A.npy", a);
    write("x.npy", x);
    write("b.npy", b);
    inputs_ = " --in A=" + path("A.npy") + " --in x=" + path("x.npy") + " --in b=" + path("b.npy");
  }
  void write(const std::string& name, const std::vector<float>& v) {
    runtime::npy::NpyArray arr;
    arr.dtype = runtime::npy::DType::F32;
    arr.shape = {v.size()};
    arr.data.resize(v.size() * 4);
    std::memcpy(arr.data.data(), v.data(), arr.data.size());
    runtime::npy::write_npy(path(name), arr);
  }
  // `wsemu debug gemv.wsx` on the inputs with `commands` as its batch file: its exit status.
  int debug_batch(const std::string& commands) {
    std::ofstream(path("cmds.txt")) << commands;
    return sh(wsemu_ + " debug " + path("gemv.wsx") + inputs_ + " --batch " + path("cmds.txt"));
  }
  int sh(const std::string& cmd) {
    const int rc = std::system((cmd + " > " + path("out.txt") + " 2>&1").c_str());
    output_ = read_file(path("out.txt"));
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  static constexpr int M = 4, N = 6;
  std::string wsemu_, inputs_, output_;
  std::vector<float> y_;
};

TEST_F(TraceCli, RunRecordsATraceThatEveryViewReads) {
  const std::string t = path("run.wstrace");
  ASSERT_EQ(sh(wsemu_ + " run " + path("gemv.wsx") + inputs_ + " --out y=" + path("y.npy") + " --trace " + t +
               " --trace-events all"), 0) << output_;
  EXPECT_TRUE(contains(output_, "wrote trace " + t)) << output_;
  trace::TraceReader reader(t);
  EXPECT_TRUE(reader.complete());
  EXPECT_EQ(reader.header().width, 3);
  ASSERT_NE(reader.programs().at(1, 1), nullptr);

  ASSERT_EQ(sh(wsemu_ + " trace " + t + " summary"), 0) << output_;
  EXPECT_TRUE(contains(output_, "ended: quiescent")) << output_;
  EXPECT_TRUE(contains(output_, "hottest links")) << output_;
  ASSERT_EQ(sh(wsemu_ + " trace " + t + " text --pe 1,1 --kinds instructions --max-lines 5"), 0) << output_;
  EXPECT_TRUE(contains(output_, " P1.1 insn ")) << output_;
  ASSERT_EQ(sh(wsemu_ + " trace " + t + " perfetto -o " + path("p.json")), 0) << output_;
  const nlohmann::json perfetto = nlohmann::json::parse(read_file(path("p.json")), nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(perfetto.is_discarded()) << "the perfetto export is not valid JSON";
  ASSERT_EQ(sh(wsemu_ + " trace " + t + " heatmap --cell 8"), 0) << output_;
  EXPECT_TRUE(std::filesystem::exists(path("run.heatmap.png"))) << "written next to the trace";
  ASSERT_EQ(sh(wsemu_ + " trace " + t + " html"), 0) << output_;
  EXPECT_TRUE(std::filesystem::exists(path("run.html")));
  ASSERT_EQ(sh(wsemu_ + " trace " + t + " hang"), 0) << output_;
  EXPECT_TRUE(contains(output_, "did not hang")) << output_;

  // Bad input: a clear error and exit status 2.
  EXPECT_EQ(sh(wsemu_ + " trace " + path("A.npy") + " summary"), 2);
  EXPECT_TRUE(contains(output_, "is not a wsemu trace")) << output_;
  EXPECT_EQ(sh(wsemu_ + " trace " + t + " text --cycles 9:3"), 2);
  EXPECT_EQ(sh(wsemu_ + " run " + path("gemv.wsx") + inputs_ + " --trace " + path("x.wstrace") + " --trace-events bogus"), 2);
  EXPECT_TRUE(contains(output_, "unknown kind 'bogus'")) << output_;
}

TEST_F(TraceCli, DebugBatchBreaksStepsAndPrints) {
  // Stop at the column loop of compute, step, print; run to the end and compare y with the
  // value computed here.
  EXPECT_EQ(debug_batch(R"(# stop at the top of the column loop
break pc column at 1,1
run
step 3
print x[0]
delete
continue
print y
)"),
            0)
      << output_;
  EXPECT_TRUE(contains(output_, "is about to run pc")) << output_;
  EXPECT_TRUE(contains(output_, "(wsemu) print x[0]\nx[0] = 1\n")) << output_;
  std::string expected = "y = [";
  for (size_t i = 0; i < y_.size(); ++i) expected += fmt::format("{}{}", i ? ", " : "", y_[i]);
  EXPECT_TRUE(contains(output_, expected + "]")) << "expected " << expected << "\n" << output_;
}

TEST_F(TraceCli, DebugBatchWaveletBreakWhereWatchAndReplay) {
  // The real `run`: the probe run finds the first stop, a fresh session replays up to it.
  // 1. The launch reaches PE(1,1) as a control wavelet on the firmware's loopback color 23
  //    (firmware/README.md): the first color-23 wavelet its router hands to its core.
  // 2. `watch y`: y[0] is 0 after the copies; `fmovs y, b` makes it b[0] = 10; column 0 adds
  //    A[0][0] * x[0] = 0 * 1, no change; column 1 adds A[0][1] * x[1] = 1 * 2: 12, with
  //    x[1] = 2.0f (0x40000000) in r10, loaded by the `ld32` just before the fmacs.
  // 3. Without stops the run ends quiescent with y as computed here.
  EXPECT_EQ(debug_batch(R"(break wavelet 23 at 1,1
run
where 1,1,1,1
delete
watch y
continue
print y[0]
where 1,1,1,1
continue
print y[0]
print r10
delete
continue
print y
)"),
            0)
      << output_;
  EXPECT_TRUE(holds_all(output_, {
      "PE(1,1)'s router sent a wavelet of color 23 to the core (RAMP)",
      // The wavelet stop comes before the picker has seen the landing: PE(1,1) is still idle.
      "(wsemu) where 1,1,1,1\n* PE(1,1): idle\n",
      // The watch prints an f32 word as a float (10, not its bits 1092616192).
      "y (0x",
      "at PE(1,1) changed from 0 to 10\n",
      "(wsemu) print y[0]\ny[0] = 10\n",
  }));
  EXPECT_TRUE(contains(output_, "(wsemu) where 1,1,1,1\n* PE(1,1): task ")) << "the launched function runs\n" << output_;
  EXPECT_TRUE(holds_all(output_, {
      "changed from 10 to 12\n",
      "(wsemu) print y[0]\ny[0] = 12\n",
      "(0x40000000",
  }));
  std::string expected = "y = [";
  for (size_t i = 0; i < y_.size(); ++i) expected += fmt::format("{}{}", i ? ", " : "", y_[i]);
  EXPECT_TRUE(contains(output_, expected + "]")) << "expected " << expected << "\n" << output_;
}

}  // namespace
}  // namespace wsemu::testing
