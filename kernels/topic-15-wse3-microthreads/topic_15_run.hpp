// What topic-15's two tests share, the assembly kernel's (topic_15_test.cpp) and the CSL
// program's (tests/compiler/csl_gemv_test.cpp): one run of z = x + 2 w on N elements, x and w
// copied in on two explicitly named microthreads, checked against the xtensor reference.
//
// Contract: header-only test support; a mismatch is a GoogleTest failure, a HostError passes
// through to the test. `what` names the version in the printed cycle line.
#pragma once

#include <cstdio>
#include <string>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {

inline void expect_two_transfers_sum(const compiler::Executable& exe, int n, const std::string& what) {
  const xt::xarray<float> x = random_array({size_t(n)}, 1501), w = random_array({size_t(n)}, 1502);
  LoadedRuntime rt(exe);
  rt.memcpy_h2d("x", words(x), 0, 0, 1, 1, n);
  rt.memcpy_h2d("w", words(w), 0, 0, 1, 1, n);
  launch_and_settle(rt, "compute");
  const std::vector<uint32_t> z = read_back(rt, "z", 1, 0, 1, 1, n);
  const xt::xarray<double> want = xt::cast<double>(x) + 2.0 * xt::cast<double>(w);
  expect_close(floats(z, {size_t(n)}), want, 1e-6, 1e-6, "z");
  std::printf("topic-15 N=%d: cycles %s %llu (launch %llu)\n", n, what.c_str(), (unsigned long long)rt.cycles(),
              (unsigned long long)rt.stats().launch_cycles);
}

}  // namespace wsemu::testing
