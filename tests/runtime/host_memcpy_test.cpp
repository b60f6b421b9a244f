// The host runtime's memcpy through the fabric and the firmware: round trips of 32- and 16-bit
// data in both orders, sub-rectangles, the cost model (4x the data takes about 4x the cycles),
// the back door, the row and column broadcasts, and the usage errors.
#include <gmock/gmock.h>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::HostError;
using runtime::host::MemcpyDataType;
using runtime::host::MemcpyOptions;
using runtime::host::MemcpyOrder;
using runtime::host::RuntimeOptions;
using runtime::host::SdkRuntime;

compiler::Executable echo(std::map<std::string, int64_t> params = {}) {
  compiler::layout::BuildOptions o;
  o.params = std::move(params);
  o.include_dirs = {firmware::include_dir()};
  auto r = compiler::layout::build_layout_file(source_dir() + "/tests/runtime/host_kernels/echo.wsl", o);
  if (!r.ok()) throw std::runtime_error(compiler::layout::format_diagnostics(r.diagnostics));
  return *r.executable;
}

std::vector<uint32_t> iota_words(size_t n, uint32_t from) {
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = from + uint32_t(i) * 7919u;
  return v;
}

TEST(HostMemcpy, RoundTrip32BitRowMajor) {
  LoadedRuntime rt(echo());
  const std::vector<uint32_t> in = iota_words(2 * 2 * 8, 0x3f800000u);
  rt.memcpy_h2d("words", in, 0, 0, 2, 2, 8);
  std::vector<uint32_t> out(in.size());
  rt.memcpy_d2h(out, "words", 0, 0, 2, 2, 8);
  EXPECT_EQ(out, in);
  // PE (1, 0) of the rectangle holds elements 8..15 (row-major [h][w][elems]).
  const std::vector<uint32_t> pe10 = rt.read_symbol(1, 0, "words");
  EXPECT_EQ(pe10, std::vector<uint32_t>(in.begin() + 8, in.begin() + 16));
}

TEST(HostMemcpy, ColumnMajorPlacesElementsLikeTheSdk) {
  LoadedRuntime rt(echo());
  const std::vector<uint32_t> in = iota_words(2 * 2 * 8, 1);
  MemcpyOptions o;
  o.order = MemcpyOrder::COL_MAJOR;
  rt.memcpy_h2d("words", in, 0, 0, 2, 2, 8, o);
  // Element e of PE (x, y) is in[y + h * (x + w * e)].
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 2; ++x) {
      const std::vector<uint32_t> got = rt.read_symbol(x, y, "words");
      for (int e = 0; e < 8; ++e) EXPECT_EQ(got[size_t(e)], in[size_t(y + 2 * (x + 2 * e))]) << x << "," << y;
    }
  std::vector<uint32_t> out(in.size());
  rt.memcpy_d2h(out, "words", 0, 0, 2, 2, 8, o);
  EXPECT_EQ(out, in);
}

TEST(HostMemcpy, SixteenBitElements) {
  LoadedRuntime rt(echo());
  std::vector<uint32_t> in(4 * 8);
  for (size_t i = 0; i < in.size(); ++i) in[i] = 0xABCD0000u | uint32_t(i * 1000 + 3);  // high half ignored
  MemcpyOptions o;
  o.data_type = MemcpyDataType::MEMCPY_16BIT;
  rt.memcpy_h2d("halfs", in, 0, 0, 2, 2, 8, o);
  std::vector<uint32_t> out(in.size());
  rt.memcpy_d2h(out, "halfs", 0, 0, 2, 2, 8, o);
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(out[i], in[i] & 0xFFFF);
}

// A read past a symbol's end reads the memory after it, as the SDK's memcpy does (its
// benchmarks/25-pt-stencil reads 6 words of the 5-word `maxmin_time`): in echo.wsa `halfs`
// follows the 8 words of `words`, so a 9th word is halfs[0] | halfs[1] << 16. A write past the
// end stays a usage error (UsageErrorsAreClear).
TEST(HostMemcpy, ReadPastASymbolReadsTheWordsAfterIt) {
  LoadedRuntime rt(echo());
  rt.memcpy_h2d("words", iota_words(8, 100), 0, 0, 1, 1, 8);
  MemcpyOptions o;
  o.data_type = MemcpyDataType::MEMCPY_16BIT;
  rt.memcpy_h2d("halfs", {{0x1111, 0x2222, 0, 0, 0, 0, 0, 0}}, 0, 0, 1, 1, 8, o);
  std::vector<uint32_t> out(9);
  rt.memcpy_d2h(out, "words", 0, 0, 1, 1, 9);
  std::vector<uint32_t> want = iota_words(8, 100);
  want.push_back(0x22221111u);
  EXPECT_EQ(out, want);
}

TEST(HostMemcpy, SubRectangleAndFewerElements) {
  LoadedRuntime rt(echo({{"W", 3}, {"H", 2}, {"FW", 5}}));
  rt.memcpy_h2d("words", std::vector<uint32_t>(3 * 2 * 8, 0), 0, 0, 3, 2, 8);
  rt.memcpy_h2d("words", {{11, 22, 33}}, 2, 1, 1, 1, 3);
  EXPECT_EQ(rt.read_symbol(2, 1, "words"), (std::vector<uint32_t>{11, 22, 33, 0, 0, 0, 0, 0}));
  EXPECT_EQ(rt.read_symbol(1, 1, "words"), std::vector<uint32_t>(8, 0));
  std::vector<uint32_t> out(2);
  rt.memcpy_d2h(out, "words", 2, 1, 1, 1, 2);
  EXPECT_EQ(out, (std::vector<uint32_t>{11, 22}));
}

uint64_t h2d_cycles(int elems, int channels) {
  RuntimeOptions o;
  o.channel.channels = channels;
  LoadedRuntime rt(echo({{"N", 512}}), o);
  const uint64_t before = rt.cycles();
  rt.memcpy_h2d("words", iota_words(size_t(4 * elems), 5), 0, 0, 2, 2, elems);
  return rt.cycles() - before;
}

TEST(HostMemcpy, FourTimesTheDataTakesAboutFourTimesTheCycles) {
  const uint64_t small = h2d_cycles(64, 1), large = h2d_cycles(256, 1);
  // 7 Gbps at 850 MHz is 0.257 wavelets per cycle: 4 PEs x (64 + 3) wavelets need >= 1040 cycles.
  EXPECT_GE(small, uint64_t(4 * 67 / 0.2574));
  EXPECT_GT(large, 3 * small);
  EXPECT_LT(large, 5 * small);
  // Two channels serve the two rows in parallel: about half the time.
  const uint64_t two = h2d_cycles(256, 2);
  EXPECT_LT(two * 10, large * 6);
}

TEST(HostMemcpy, BackdoorCostsNoCyclesAndIsLabelled) {
  RuntimeOptions o;
  o.backdoor = true;
  LoadedRuntime rt(echo(), o);
  const uint64_t before = rt.cycles();
  const std::vector<uint32_t> in = iota_words(32, 9);
  rt.memcpy_h2d("words", in, 0, 0, 2, 2, 8);
  std::vector<uint32_t> out(32);
  rt.memcpy_d2h(out, "words", 0, 0, 2, 2, 8);
  EXPECT_EQ(out, in);
  EXPECT_EQ(rt.cycles(), before);
  EXPECT_EQ(rt.stats().backdoor_bytes_written, 128u);
  EXPECT_EQ(rt.stats().backdoor_bytes_read, 128u);
  ASSERT_EQ(rt.stats().phases.size(), 2u);
  EXPECT_TRUE(rt.stats().phases[0].backdoor);
  EXPECT_EQ(rt.stats().edge_wavelets_in, 0u);
  EXPECT_EQ(rt.stats().transactions, 2u);
  EXPECT_DOUBLE_EQ(rt.stats().host_overhead_us, 400.0);
}

TEST(HostMemcpy, FabricCopiesUseNoBackdoor) {
  LoadedRuntime rt(echo());
  rt.memcpy_h2d("words", iota_words(32, 9), 0, 0, 2, 2, 8);
  EXPECT_EQ(rt.stats().backdoor_bytes_written, 0u);
  EXPECT_EQ(rt.stats().edge_wavelets_in, 4u * (3 + 8));
  EXPECT_GT(rt.stats().memcpy_cycles, 0u);
}

// Row broadcast: row y's elements land on every PE of row y, and cross the channel once.
TEST(HostMemcpy, RowBroadcastReachesEveryPeOfItsRow) {
  LoadedRuntime rt(echo({{"W", 3}, {"H", 2}, {"FW", 5}}));
  const std::vector<uint32_t> rows = iota_words(2 * 8, 0x40000000u);  // [h][elems]
  rt.memcpy_h2d_rowbcast("words", rows, 0, 0, 3, 2, 8);
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x)
      EXPECT_EQ(rt.read_symbol(x, y, "words"),
                std::vector<uint32_t>(rows.begin() + 8 * y, rows.begin() + 8 * (y + 1)))
          << x << "," << y;
  // One command (3 header wavelets) and one copy of the data per row.
  EXPECT_EQ(rt.stats().edge_wavelets_in, 2u * (3 + 8));
  EXPECT_EQ(rt.stats().h2d_elements, 3u * 2 * 8);
  ASSERT_EQ(rt.stats().phases.size(), 1u);
  EXPECT_EQ(rt.stats().phases[0].what, "memcpy_h2d_rowbcast words");
}

TEST(HostMemcpy, RowBroadcastSubRectangle16BitAndColumnMajor) {
  LoadedRuntime rt(echo({{"W", 4}, {"H", 3}, {"FW", 6}, {"FH", 5}}));
  MemcpyOptions o;
  o.data_type = MemcpyDataType::MEMCPY_16BIT;
  rt.memcpy_h2d("halfs", std::vector<uint32_t>(4 * 3 * 8, 0), 0, 0, 4, 3, 8, o);
  // PEs x = 1..3 of rows y = 1..2, 5 elements each; data in column-major order: [e][row].
  std::vector<uint32_t> rows(2 * 5);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = 0xFFFF0000u | uint32_t(100 + i);  // high half ignored
  o.order = MemcpyOrder::COL_MAJOR;
  rt.memcpy_h2d_rowbcast("halfs", rows, 1, 1, 3, 2, 5, o);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 4; ++x) {
      const std::vector<uint32_t> got = rt.read_symbol(x, y, "halfs");
      for (int e = 0; e < 8; ++e) {
        const bool inside = x >= 1 && y >= 1 && e < 5;
        const uint32_t want = inside ? (rows[size_t((y - 1) + 2 * e)] & 0xFFFF) : 0;
        EXPECT_EQ(got[size_t(e)], want) << x << "," << y << " element " << e;
      }
    }
}

TEST(HostMemcpy, RowBroadcastIsCheaperThanSendingEveryCopy) {
  auto cycles = [](bool bcast) {
    LoadedRuntime rt(echo({{"W", 4}, {"H", 1}, {"FW", 6}, {"FH", 3}, {"N", 256}}));
    const std::vector<uint32_t> row = iota_words(256, 3);
    std::vector<uint32_t> every;
    for (int x = 0; x < 4; ++x) every.insert(every.end(), row.begin(), row.end());
    const uint64_t before = rt.cycles();
    if (bcast)
      rt.memcpy_h2d_rowbcast("words", row, 0, 0, 4, 1, 256);
    else
      rt.memcpy_h2d("words", every, 0, 0, 4, 1, 256);
    for (int x = 0; x < 4; ++x) EXPECT_EQ(rt.read_symbol(x, 0, "words"), row);
    return rt.cycles() - before;
  };
  const uint64_t bcast = cycles(true), copies = cycles(false);
  std::printf("row of 4 PEs, 256 words each: rowbcast %llu cycles, 4 copies %llu cycles\n", (unsigned long long)bcast,
              (unsigned long long)copies);
  // Four copies through the channel take >= 4 x 259 / 0.257 cycles; the broadcast sends one,
  // and the firmware's store-and-pass loop (6 cycles per element) bounds it from below.
  EXPECT_GE(copies, uint64_t(4 * 259 / 0.2574));
  EXPECT_GE(bcast, uint64_t(6 * 256));
  EXPECT_LT(bcast * 2, copies);
}

TEST(HostMemcpy, ColumnBroadcastReachesEveryPeOfItsColumn) {
  RuntimeOptions backdoor;
  backdoor.backdoor = true;
  for (const RuntimeOptions& options : {RuntimeOptions{}, backdoor}) {
    LoadedRuntime rt(echo({{"W", 3}, {"H", 2}, {"FW", 5}}), options);
    const std::vector<uint32_t> cols = iota_words(3 * 4, 77);  // [w][elems]
    rt.memcpy_h2d_colbcast("words", cols, 0, 0, 3, 2, 4);
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 3; ++x) {
        const std::vector<uint32_t> got = rt.read_symbol(x, y, "words");
        EXPECT_EQ(std::vector<uint32_t>(got.begin(), got.begin() + 4),
                  std::vector<uint32_t>(cols.begin() + 4 * x, cols.begin() + 4 * (x + 1)))
            << x << "," << y << (options.backdoor ? " (back door)" : "");
      }
  }
}

std::string usage_error(const std::function<void(SdkRuntime&)>& call) {
  LoadedRuntime rt(echo());
  try {
    call(rt);
  } catch (const HostError& e) {
    EXPECT_EQ(e.kind(), HostError::Kind::USAGE) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

// The usage error of a memcpy_h2d of `words` zeros into `symbol` on the w x h PEs at (x0, y0),
// n elements per PE.
std::string h2d_error(const std::string& symbol, size_t words, int x0, int y0, int w, int h, int n) {
  return usage_error([&](SdkRuntime& rt) { rt.memcpy_h2d(symbol, std::vector<uint32_t>(words), x0, y0, w, h, n); });
}

TEST(HostMemcpy, UsageErrorsAreClear) {
  using ::testing::HasSubstr;
  EXPECT_THAT(h2d_error("nope", 8, 0, 0, 1, 1, 8),
              HasSubstr("no exported symbol 'nope' (the executable exports: words, halfs, result)"));
  EXPECT_THAT(h2d_error("words", 8, 1, 1, 2, 1, 4), HasSubstr("outside rectangle 'echo' (2 x 2)"));
  EXPECT_THAT(h2d_error("words", 7, 0, 0, 1, 1, 8),
              HasSubstr("1 x 1 PEs x 8 elements = 8 elements, but the data holds 7"));
  EXPECT_THAT(h2d_error("words", 9, 0, 0, 1, 1, 9), HasSubstr("9 elements per PE, but symbol 'words' holds 8 per PE"));
  EXPECT_THAT(h2d_error("halfs", 8, 0, 0, 1, 1, 8), HasSubstr("holds u16 (16-bit) elements; use MEMCPY_16BIT"));
  EXPECT_THAT(h2d_error("result", 4, 0, 0, 1, 1, 4), HasSubstr("symbol 'result' is not host-writable"));
  EXPECT_THAT(
      usage_error([](SdkRuntime& rt) { rt.memcpy_h2d_rowbcast("words", std::vector<uint32_t>(8), 0, 0, 2, 2, 8); }),
      HasSubstr("memcpy_h2d_rowbcast: 2 rows x 8 elements = 16 elements, but the data holds 8"));
  EXPECT_THAT(usage_error([](SdkRuntime& rt) { rt.launch("missing"); }),
              HasSubstr("no exported function 'missing'"));
  EXPECT_THAT(usage_error([](SdkRuntime& rt) { rt.read_symbol(2, 0, "words"); }), HasSubstr("outside rectangle"));
}

TEST(HostMemcpy, ProgramWithoutFirmwareIsNamed) {
  compiler::layout::BuildOptions o;
  auto r = compiler::layout::build_layout_file(source_dir() + "/tests/runtime/host_kernels/plain.wsl", o);
  ASSERT_TRUE(r.ok()) << compiler::layout::format_diagnostics(r.diagnostics);
  LoadedRuntime rt(*r.executable);
  try {
    rt.memcpy_h2d("v", std::vector<uint32_t>(4), 0, 0, 1, 1, 4);
    ADD_FAILURE() << "no error";
  } catch (const HostError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("PE(1,1) does not run the memcpy firmware"));
  }
  // The back door still works.
  RuntimeOptions bo;
  bo.backdoor = true;
  LoadedRuntime rb(*r.executable, bo);
  rb.memcpy_h2d("v", {{1, 2, 3, 4}}, 0, 0, 1, 1, 4);
  EXPECT_EQ(rb.read_symbol(0, 0, "v"), (std::vector<uint32_t>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace wsemu::testing
