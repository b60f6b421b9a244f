// DSDs beyond the descriptor registers (tests/compiler/programs/many_dsds): the compiler keeps the
// least-used as descriptor images in memory, loads them with dsdld where used and stores a
// changed one back with dsdst; the program's results, worked out here from its formula, are the
// same as if every DSD had its register.
#include <bit>

#include "compiler/csl/cslc.hpp"
#include "runtime/host/sdk_runtime.hpp"
#include "tests/compiler/csl_test_support.hpp"
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
    auto r = compile_csl_kernel(source_dir() + "/tests/compiler/programs/many_dsds/layout.csl", {{"N", std::to_string(N)}},
                                arch, {3, 3, 1, 1}, "wsemu-csl-many-dsds-" + arch);
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
    std::vector<uint32_t> got(size_t(K * N));
    rt.memcpy_d2h(got, "a", 0, 0, 1, 1, K * N);
    for (int j = 0; j < K * N; ++j) EXPECT_EQ(std::bit_cast<float>(got[size_t(j)]), want[size_t(j)]) << "a[" << j << "]";
  }
}

}  // namespace
}  // namespace wsemu::testing
