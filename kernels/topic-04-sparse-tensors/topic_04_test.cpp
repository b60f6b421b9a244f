// topic-04: seeded (index, value) pairs, duplicates included, are packed as index << 16 | value
// and streamed in; the dense vector must equal the reference scatter-add (mod 2^16), and
// out-of-range indices must be counted, not written.
#include <random>

#include "runtime/host/sdk_runtime.hpp"
#include "tests/e2e/host_calls.hpp"
#include "tests/e2e/kernel_harness.hpp"

namespace wsemu::testing {
namespace {

using runtime::host::MemcpyDataType;
using runtime::host::MemcpyOptions;

void run_case(int n, int nonzeros, int out_of_range, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<uint32_t> wavelets;
  std::vector<uint16_t> expected(size_t(n), 0);
  for (int i = 0; i < nonzeros; ++i) {
    const uint32_t index = gen() % uint32_t(n), value = gen() & 0xFFFF;
    expected[index] = uint16_t(expected[index] + value);
    wavelets.push_back(index << 16 | value);
  }
  for (int i = 0; i < out_of_range; ++i) wavelets.insert(wavelets.begin() + i * 3, uint32_t(n + i) << 16 | 7u);

  LoadedRuntime rt(build_kernel("topic-04-sparse-tensors", {{"N", n}}));
  MemcpyOptions stream;
  stream.streaming = true;
  rt.memcpy_h2d("sparse", wavelets, 0, 0, 1, 1, int(wavelets.size()), stream);
  MemcpyOptions half;
  half.data_type = MemcpyDataType::MEMCPY_16BIT;
  std::vector<uint32_t> dense = read_back(rt, "dense", 0, 0, 1, 1, n, half);
  std::vector<uint32_t> dropped = read_back(rt, "dropped", 0, 0, 1, 1, 1);
  for (int i = 0; i < n; ++i) EXPECT_EQ(dense[size_t(i)], expected[size_t(i)]) << "dense[" << i << "]";
  EXPECT_EQ(dropped[0], uint32_t(out_of_range));
  std::printf("topic-04 N=%d, %zu wavelets: %llu cycles\n", n, wavelets.size(), (unsigned long long)rt.cycles());
}

TEST(Topic04, ScatterAddOfIndexedWavelets) { run_case(16, 40, 0, 41); }
TEST(Topic04, OutOfRangeIndicesAreCountedNotWritten) { run_case(10, 25, 3, 42); }

}  // namespace
}  // namespace wsemu::testing
