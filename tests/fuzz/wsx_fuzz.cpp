// libFuzzer target for the .wsx loader (tools/fuzz.sh runs it).
//
// The input is the payload of a .wsx file; the target wraps it in a header with the right
// length and checksum, so that mutations reach the decoder and validate() instead of stopping
// at the checksum. Any payload must load or be refused with ExecutableError, never crash or
// trip a sanitizer. A loaded executable must keep the promise `wsemu run` relies on: every
// host symbol resolves in every program of its rect, every PE index is in range (a broken
// promise aborts, which libFuzzer reports like a crash).
#include <boost/crc.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "compiler/executable/executable_io.hpp"

namespace {

void put_le(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

void fail(const std::string& what) {
  std::fprintf(stderr, "wsx_fuzz: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wsemu::compiler;
  const std::string payload(reinterpret_cast<const char*>(data), size);
  boost::crc_32_type crc;
  crc.process_bytes(payload.data(), payload.size());
  std::string file = "WSEMUEXE";
  put_le(file, kExecutableFormatVersion, 4);
  put_le(file, payload.size(), 8);
  put_le(file, crc.checksum(), 4);
  file += payload;
  Executable exe;
  try {
    exe = parse_executable(file, "fuzz.wsx");
  } catch (const ExecutableError&) {
    return 0;
  }
  for (const HostSymbol& s : exe.symbols) {
    const Rect& rect = exe.rects.at(s.rect);
    for (uint32_t config : rect.expand()) {
      const PeConfig& pc = exe.pe_configs.at(config);
      if (pc.program < 0) continue;
      const wsemu::isa::Symbol* sym =
          exe.programs.at(static_cast<size_t>(pc.program)).object.find_symbol(s.program_symbol);
      if (!sym || sym->count < s.elems_per_pe) fail("a loaded host symbol does not resolve");
    }
  }
  for (const HostFunction& f : exe.functions) (void)exe.rects.at(f.rect);
  (void)serialize_executable(exe);
  return 0;
}
