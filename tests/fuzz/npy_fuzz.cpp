// libFuzzer target for the .npy reader (tools/fuzz.sh runs it).
//
// Any bytes must parse or be refused with NpyError, never crash, allocate for a size the file
// does not hold, or trip a sanitizer. A parsed array must serialise back and parse to the same
// array (a broken round trip aborts).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "runtime/npy/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wsemu::runtime::npy;
  NpyArray array;
  try {
    array = parse_npy(std::span<const uint8_t>(data, size), "fuzz.npy");
  } catch (const NpyError&) {
    return 0;
  }
  const std::vector<uint8_t> bytes = serialize_npy(array);
  const NpyArray again = parse_npy(bytes, "fuzz-roundtrip.npy");
  if (again.dtype != array.dtype || again.shape != array.shape || again.data != array.data) {
    std::fprintf(stderr, "npy_fuzz: parse(serialize(array)) differs\n");
    std::abort();
  }
  return 0;
}
