// What the gemv-09 tests share (the assembly kernel's and the CSL version's in
// tests/compiler/csl_kernels_test.cpp): one run through the kernel's host calls. A is copied to
// every PE, `init` is launched, each column's block of x is streamed into its north PE and each
// row's block of b into its east PE, and y is streamed out of the east column, one PE at a
// time (block sizes differ when M or N do not divide).
//
// Contract: header-only test support; HostError passes through to the test. Nothing here
// compares a value.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "tests/e2e/gemv_tiles.hpp"
#include "tests/e2e/host_calls.hpp"

namespace wsemu::testing {

struct StreamingRun : TiledRun {
  double clock_mhz = 0;  // the profile's clock, for the test's microseconds
};

// `rect`: the rectangle the streams name (the assembly layout's `gemv`, a CSL kernel's `kernel`).
inline StreamingRun run_streaming_gemv(const compiler::Executable& exe, const xt::xarray<float>& A, const xt::xarray<float>& x,
                                      const xt::xarray<float>& b, size_t kx, size_t ky, const std::string& rect) {
  const size_t M = b.size(), N = x.size();
  const Blocks rows = split(M, ky), cols = split(N, kx);
  LoadedRuntime rt(exe);
  rt.memcpy_h2d("A", a_tiles(A, rows, cols, fp32_word), 0, 0, int(kx), int(ky), int(rows.max * cols.max));
  rt.launch("init");
  runtime::host::MemcpyOptions stream;
  stream.streaming = true;
  for (size_t px = 0; px < kx; ++px) {
    const xt::xarray<float> block = xt::view(x, xt::range(cols.start[px], cols.start[px] + cols.size[px]));
    rt.memcpy_h2d(rect, words(block), int(px), 0, 1, 1, int(cols.size[px]), stream);
  }
  for (size_t py = 0; py < ky; ++py) {
    const xt::xarray<float> block = xt::view(b, xt::range(rows.start[py], rows.start[py] + rows.size[py]));
    rt.memcpy_h2d(rect, words(block), int(kx) - 1, int(py), 1, 1, int(rows.size[py]), stream);
  }
  StreamingRun r;
  r.y = xt::zeros<float>({M});
  for (size_t py = 0; py < ky; ++py) {
    std::vector<uint32_t> out = read_back(rt, rect, int(kx) - 1, int(py), 1, 1, int(rows.size[py]), stream);
    for (size_t i = 0; i < out.size(); ++i) r.y(rows.start[py] + i) = std::bit_cast<float>(out[i]);
  }
  rt.run_until_quiescent();
  r.cycles = rt.cycles();
  r.memcpy_cycles = rt.stats().memcpy_cycles;
  r.launch_cycles = rt.stats().launch_cycles;
  r.clock_mhz = rt.clock_mhz();
  return r;
}

}  // namespace wsemu::testing
