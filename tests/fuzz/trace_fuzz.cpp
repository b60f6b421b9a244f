// libFuzzer target for the .wstrace reader (tools/fuzz.sh runs it).
//
// The first input byte chooses how the rest is used: even, as the file it is; odd, with every
// checksum (the header's, each CRC chunk's) recomputed first, so that mutations also reach the
// chunk and event decoders behind the checksums. Either way the reader must read the file or
// refuse it with TraceError, never crash, hang or trip a sanitizer; so must the views it feeds.
#include <unistd.h>

#include <boost/crc.hpp>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>

#include "inspect/trace/trace_format.hpp"
#include "inspect/trace/trace_reader.hpp"
#include "inspect/trace/trace_views.hpp"

namespace {

uint32_t u32_at(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(uint8_t(s[at + i])) << (8 * i);
  return v;
}

void put_u32_at(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = char((v >> (8 * i)) & 0xFF);
}

// Makes every checksum of a 1.2 file match what it covers, as the writer would have.
void fix_checksums(std::string& file) {
  using namespace wsemu::trace;
  if (file.size() < kFileHeaderBytes) return;
  put_u32_at(file, kHeaderChecksumOffset, 0);
  boost::crc_32_type header;
  header.process_bytes(file.data(), kFileHeaderBytes);
  put_u32_at(file, kHeaderChecksumOffset, header.checksum());
  size_t at = kFileHeaderBytes;
  while (at + 8 <= file.size()) {
    const uint64_t size = u32_at(file, at + 4);
    const uint64_t check = at + 8 + size;
    if (check + 12 > file.size()) return;
    boost::crc_32_type crc;
    crc.process_bytes(file.data() + at, 8 + size);
    if (u32_at(file, check) == kChunkChecksum && u32_at(file, check + 4) == 4)
      put_u32_at(file, check + 8, crc.checksum());
    at = check + 12;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string file(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) fix_checksums(file);
  // The reader takes a path; one file per fuzzing process.
  static const std::string path = "/tmp/wsemu-trace-fuzz-" + std::to_string(::getpid()) + ".wstrace";
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(file.data(), 1, file.size(), f);
    std::fclose(f);
  } else {
    return 0;
  }
  try {
    wsemu::trace::TraceReader reader(path);
    uint64_t n = 0;
    reader.for_each_event([&](const wsemu::emu::TraceEvent&) { return ++n < 100000; });
    std::ostringstream out;
    wsemu::trace::write_summary(reader, wsemu::trace::SummaryOptions{}, out);
  } catch (const wsemu::trace::TraceError&) {
  }
  return 0;
}
