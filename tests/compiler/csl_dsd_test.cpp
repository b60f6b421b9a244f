// DSDs beyond the descriptor registers (tests/compiler/programs/many_dsds): the compiler keeps the
// least-used as descriptor images in memory, loads them with dsdld where used and stores a
// changed one back with dsdst; the program's results, worked out here from its formula, are the
// same as if every DSD had its register.
#include <algorithm>
#include <bit>

#include "compiler/csl/cslc.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/compiler/csl_test_support.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::SdkRuntime;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(CslDsdsInMemory, FortyDsdVariablesGiveTheResultsOfTheirFormula) {
  const int N = 4, K = 40;
  std::vector<float> a0(size_t(K * N)), want(size_t(K * N));
  for (int j = 0; j < K * N; ++j) a0[size_t(j)] = 0.5f * float(j) - 3.0f;
  for (int k = 0; k < K; ++k)
    for (int i = 0; i < N; ++i) {
      float v = a0[size_t(k * N + i)] * float(k + 1);
      if (i < 2) v += 1.0f;
      if (k == 1 && (i == 1 || i == 2)) v += 10.0f;
      if (k == 39 && i < 2) v += 100.0f;
      want[size_t(k * N + i)] = v;
    }
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    auto r = compile_test_program("many_dsds", {{"N", std::to_string(N)}}, arch, {3, 3, 1, 1});
    ASSERT_TRUE(r.ok()) << compiler::layout::format_diagnostics(r.diagnostics);
    const std::string& wsa = r.programs.at("pe_0.wsa");
    // 41 DSDs (40 variables and the local copy): 32 in registers, 9 in memory.
    EXPECT_EQ(count(wsa, ": .u16 1, 32, "), 9u) << wsa;
    EXPECT_GT(count(wsa, "dsdld "), 9u) << wsa;
    EXPECT_GT(count(wsa, "dsdst "), 9u) << wsa;
    SdkRuntime rt(*r.executable);
    rt.load();
    std::vector<uint32_t> in;
    for (float v : a0) in.push_back(std::bit_cast<uint32_t>(v));
    rt.memcpy_h2d("a", in, 0, 0, 1, 1, K * N);
    rt.launch("run");
    std::vector<uint32_t> got = read_back(rt, "a", 0, 0, 1, 1, K * N);
    for (int j = 0; j < K * N; ++j) EXPECT_EQ(std::bit_cast<float>(got[size_t(j)]), want[size_t(j)]) << "a[" << j << "]";
  }
}

// @map over DSD variables (tests/compiler/programs/map_var): the element count, base and stride
// come from the descriptor registers at run time; vector ops into a scalar (&x) reduce; a local
// may shadow a global. The reference is the program's formula.
TEST(CslMapOverDsdVariables, BaseLengthAndStrideSetAtRunTime) {
  const int n = 3;
  std::vector<float> x(8), y(8);
  for (int i = 0; i < 8; ++i) {
    x[size_t(i)] = float(i + 1);
    y[size_t(i)] = 10.0f * float(i + 1);
  }
  float dot = 0;
  std::vector<float> out(8, 0.0f);
  for (int i = 0; i < n; ++i) {
    dot = dot + x[size_t(i)] * y[size_t(2 * i)];
    out[size_t(i)] = (x[size_t(i)] * 3.0f + y[size_t(2 * i)]) + x[size_t(i)];
  }
  float peak = -100.0f, local_max = -1000.0f;
  for (int i = 0; i < n; ++i) {
    peak = peak + out[size_t(i)];
    local_max = std::max(local_max, out[size_t(i)]);
  }
  out[7] = 2.5f;  // a local named x
  out[6] = 4.5f;  // @is_same_type(@type_of(no_color), void)
  out[3] = 1.0f + 3.0f + 5.0f;  // .save_address walks col in pairs
  out[4] = 2.0f + 4.0f + 6.0f;
  auto bits = [](const std::vector<float>& v) {
    std::vector<uint32_t> w;
    for (float f : v) w.push_back(std::bit_cast<uint32_t>(f));
    return w;
  };
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    auto r = compile_test_program("map_var", {}, arch, {3, 3, 1, 1});
    ASSERT_TRUE(r.ok()) << compiler::layout::format_diagnostics(r.diagnostics);
    EXPECT_NE(r.programs.at("pe_0.wsa").find("dsdgetstride"), std::string::npos);
    SdkRuntime rt(*r.executable);
    rt.load();
    rt.memcpy_h2d("x", bits(x), 0, 0, 1, 1, 8);
    rt.memcpy_h2d("y", bits(y), 0, 0, 1, 1, 8);
    rt.launch("run");
    std::vector<uint32_t> got_out = read_back(rt, "out", 0, 0, 1, 1, 8);
    std::vector<uint32_t> got_sums = read_back(rt, "sums", 0, 0, 1, 1, 2);
    EXPECT_EQ(got_out, bits(out));
    EXPECT_EQ(std::bit_cast<float>(got_sums[0]), dot);
    EXPECT_EQ(std::bit_cast<float>(got_sums[1]), 7.0f) << "a map over a DSD variable of length 0 ran";
    std::vector<uint32_t> got_red = read_back(rt, "red", 0, 0, 1, 1, 2);
    EXPECT_EQ(std::bit_cast<float>(got_red[0]), local_max) << "@fmaxs into a local";
    EXPECT_EQ(std::bit_cast<float>(got_red[1]), peak) << "@fadds into a global";
  }
}

// @load_to_dsr's .ut_id and .activate go to the async op on the DSR (tests/compiler/programs/
// dsr_ut, wse3): it runs on microthread 4 and its completion runs the task, worked by hand.
TEST(CslLoadToDsr, MicrothreadAndActivationOfTheOpOnTheDsr) {
  auto r = compile_test_program("dsr_ut", {}, "wse3", {3, 3, 1, 1});
  ASSERT_TRUE(r.ok()) << compiler::layout::format_diagnostics(r.diagnostics);
  EXPECT_NE(r.programs.at("pe_0.wsa").find(".async dsd0, dsd1, ut=4, activate=12"), std::string::npos) << r.programs.at("pe_0.wsa");
  const std::vector<float> src = {1.5f, -2.0f, 3.0f, 41.0f};
  std::vector<uint32_t> in;
  for (float v : src) in.push_back(std::bit_cast<uint32_t>(v));
  SdkRuntime rt(*r.executable);
  rt.load();
  rt.memcpy_h2d("src", in, 0, 0, 1, 1, 4);
  launch_and_settle(rt, "run");
  std::vector<uint32_t> dst = read_back(rt, "dst", 0, 0, 1, 1, 4);
  std::vector<uint32_t> done = read_back(rt, "done", 0, 0, 1, 1, 1);
  EXPECT_EQ(dst, in);
  EXPECT_EQ(done[0], 42u);
}

// The priority programs' run: `src` into PE (0,0)'s "src", then launch `run`.
// The priority programs' run: `src` copied into PE (0, 0), `run` launched, and the async ops
// must have moved it unchanged to dst of PE (dst_x, 0), as plain copies do.
void expect_copied_through(SdkRuntime& rt, const std::vector<uint32_t>& src, int dst_x) {
  rt.load();
  rt.memcpy_h2d("src", src, 0, 0, 1, 1, int(src.size()));
  launch_and_settle(rt, "run");
  EXPECT_EQ(read_back(rt, "dst", dst_x, 0, 1, 1, int(src.size())), src);
}

// A compile that must fail, first at `line` of its PE program, saying `text`.
void expect_refused(const compiler::csl::CslResult& r, int line, const std::string& text) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.diagnostics[0].line, line) << r.diagnostics[0].to_string();
  EXPECT_NE(r.diagnostics[0].message.find(text), std::string::npos) << r.diagnostics[0].to_string();
}

// A priority program, where the priority belongs to the op on wse2 and to the queue on wse3:
// compiled for `arch`, which must succeed (it throws with the diagnostics otherwise), after
// checking that for `other_arch` it is refused at `line` saying `text`.
compiler::csl::CslResult compile_refused_elsewhere(const std::string& program, CslPlacement at, const std::string& arch,
                                                   const std::string& other_arch, int line, const std::string& text) {
  expect_refused(compile_test_program(program, {}, other_arch, at), line, text);
  compiler::csl::CslResult r = compile_test_program(program, {}, arch, at);
  if (!r.ok()) throw std::runtime_error("cslc failed:\n" + compiler::layout::format_diagnostics(r.diagnostics));
  return r;
}

// `.priority` of async ops (tests/compiler/programs/priority, the form of the SDK's WSE-2
// spmv-hypersparse): the ops carry their level to the ISA and compute what plain copies do,
// done = src[0] + src[3] = 7 + 40. On wse3 the priority is the queue's, so the op's option is an
// error at its options.
TEST(CslPriority, AsyncOpsCarryTheirLevelOnWse2AndAreRefusedOnWse3) {
  const auto r = compile_refused_elsewhere("priority", {3, 3, 1, 1}, "wse2", "wse3", 25,
                                           "on wse3 the microthread priority is the queue's");
  const std::string& code = r.programs.at("pe_0.wsa");
  EXPECT_EQ(count(code, "priority=high, activate=11"), 1u) << code;
  EXPECT_EQ(count(code, "priority=medium, activate=12"), 1u) << code;
  SdkRuntime rt(*r.executable);
  expect_copied_through(rt, {7, 20, 30, 40}, 0);
  EXPECT_EQ(read_back(rt, "done", 0, 0, 1, 1, 1)[0], 47u);
}

// wse3 priorities (tests/compiler/programs/queue_priority): the async ops carry to the ISA their
// fabin DSD's .priority, else their queue's from @initialize_queue (PE 0's send on output queue 2:
// medium; PE 1's first receive through a high DSD, its second on input queue 3: low) and move the
// data as plain copies do; each PE's completion task runs once. On wse2 the priority belongs to
// the op, so the field is an error at @initialize_queue's configuration.
TEST(CslPriority, InitializeQueueGivesItsOpsTheQueuesLevelOnWse3) {
  const auto r = compile_refused_elsewhere("queue_priority", {4, 3, 1, 1}, "wse3", "wse2", 48,
                                           "on wse2 the microthread priority is an option of the async operation");
  EXPECT_EQ(count(r.programs.at("pe_0.wsa"), "activate=12, priority=medium"), 1u) << r.programs.at("pe_0.wsa");
  EXPECT_EQ(count(r.programs.at("pe_1.wsa"), "activate=13, priority=high"), 1u) << r.programs.at("pe_1.wsa");
  EXPECT_EQ(count(r.programs.at("pe_1.wsa"), "activate=12, priority=low"), 1u) << r.programs.at("pe_1.wsa");
  SdkRuntime rt(*r.executable);
  expect_copied_through(rt, {5, 6, 7, 8}, 1);
  EXPECT_EQ(read_back(rt, "got", 0, 0, 2, 1, 1), (std::vector<uint32_t>{1, 1}));
}

// A FIFO's .priority on wse3 (tests/compiler/programs/fifo_priority): both async ops on the
// FIFO, the push and the pop, carry it; the data come out as they went in. On wse2 the option is
// an error at @allocate_fifo's options (the op's .priority is the place there).
TEST(CslPriority, AFifosPriorityGoesToTheOpsOnItOnWse3) {
  const auto r =
      compile_refused_elsewhere("fifo_priority", {3, 3, 1, 1}, "wse3", "wse2", 9,
                                "on wse2 the microthread priority is an option of the async operation, not of @allocate_fifo");
  EXPECT_EQ(count(r.programs.at("pe_0.wsa"), "priority=high"), 2u) << r.programs.at("pe_0.wsa");
  SdkRuntime rt(*r.executable);
  expect_copied_through(rt, {9, 8, 7, 6}, 0);
}

// A wse2 kernel may receive on input queue 1, which the SDK's memcpy leaves free there
// (tests/compiler/programs/queue1, as spmv-hypersparse's kernel does): PE 1 gets {11, 22, 33}
// from PE 0 through queue 1 and its completion task sets got[3] = 1; a second launch, arriving
// while the kernel owns queue 1, adds 40 to got[4] on both PEs. Before, the firmware bound queue
// 1 to color 23 at load and the program did not assemble ("input queue 1 is already bound").
TEST(CslQueues, AWse2KernelReceivesOnInputQueue1AndIsStillLaunched) {
  LoadedRuntime rt = test_program_runtime("queue1", {}, "wse2", {4, 3, 1, 1});
  launch_and_settle(rt, "run");
  launch_and_settle(rt, "again");
  EXPECT_EQ(read_back(rt, "got", 0, 0, 2, 1, 5), (std::vector<uint32_t>{0, 0, 0, 0, 40, 11, 22, 33, 1, 40}));
}

// @load_to_dsr's .activate stays with the DSR for the async op of either branch (tests/compiler/
// programs/dsr_branches, the SDK allreduce's @fadds / @fmaxs on one loaded DSR): acc {1, 5} max
// in {3, 2} = {3, 5}, then + in = {6, 7}; the task ran after each op (done 2). Before, only the
// first op in the code (@fmaxs) carried it, so run_add never ran the task.
TEST(CslLoadToDsr, TheActivationStaysWithTheDsrInEveryBranch) {
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    LoadedRuntime rt = test_program_runtime("dsr_branches", {}, arch, {3, 3, 1, 1});
    launch_and_settle(rt, "run_max");
    EXPECT_EQ(read_back(rt, "done", 0, 0, 1, 1, 1)[0], 1u);
    launch_and_settle(rt, "run_add");
    const std::vector<uint32_t> acc = read_back(rt, "acc", 0, 0, 1, 1, 2);
    EXPECT_EQ(std::bit_cast<float>(acc[0]), 6.0f);
    EXPECT_EQ(std::bit_cast<float>(acc[1]), 7.0f);
    EXPECT_EQ(read_back(rt, "done", 0, 0, 1, 1, 1)[0], 2u);
  }
}

// .wavelet_index_offset (tests/compiler/programs/index_offset): each wavelet's index moves the
// window of `tab` that the east PE adds up; worked by hand.
TEST(CslWaveletIndexOffset, TheWaveletIndexMovesTheDsdBase) {
  for (const std::string arch : {"wse2", "wse3"}) {
    SCOPED_TRACE(arch);
    LoadedRuntime rt = test_program_runtime("index_offset", {}, arch, {4, 3, 1, 1});
    runtime::host::MemcpyOptions half;
    half.data_type = runtime::host::MemcpyDataType::MEMCPY_16BIT;
    const std::vector<uint32_t> tab = {1, 10, 100, 1000, 1, 10, 100, 1000};
    rt.memcpy_h2d("tab", tab, 0, 0, 2, 1, 4, half);
    std::vector<uint32_t> tabf;
    for (const uint32_t v : tab) tabf.push_back(std::bit_cast<uint32_t>(float(v)));
    rt.memcpy_h2d("tabf", tabf, 0, 0, 2, 1, 4);
    launch_and_settle(rt, "send");
    std::vector<uint32_t> acc = read_back(rt, "acc", 0, 0, 2, 1, 3, half);
    for (auto& v : acc) v &= 0xFFFFu;
    EXPECT_EQ(acc, (std::vector<uint32_t>{0, 0, 0, 111, 1110, 18}));
    // the f32 window moved by 2 * index 16-bit words: the same elements
    const std::vector<uint32_t> accf = read_back(rt, "accf", 0, 0, 2, 1, 2);
    EXPECT_EQ(accf, (std::vector<uint32_t>{0, 0, std::bit_cast<uint32_t>(111.0f), std::bit_cast<uint32_t>(1110.0f)}));
  }
}

}  // namespace
}  // namespace wsemu::testing
