// The .wstrace format: header fields, event round trip through many chunks, the recorder's
// filters, files cut short, clear errors for files that are not traces, and every flipped bit
// of a recorded trace caught by its checksums.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <boost/crc.hpp>

#include <fstream>

#include "inspect/trace/trace_format.hpp"
#include "inspect/trace/trace_reader.hpp"
#include "inspect/trace/trace_writer.hpp"
#include "tests/trace/trace_test_support.hpp"

namespace wsemu::testing {
namespace {

using trace::TraceError;

// Passes the wafer's events to the writer and keeps a copy of each, as the sink saw them.
struct Tee : emu::EventSink {
  trace::TraceWriter* writer = nullptr;
  std::vector<emu::TraceEvent> all;
  void on_events(std::span<const emu::TraceEvent> events) override {
    all.insert(all.end(), events.begin(), events.end());
    writer->on_events(events);
  }
};

class TraceFormat : public ScratchDir {
 protected:
  // Runs the golden kernel with the options, returns every event the wafer produced (as the
  // sink saw them) so that the file can be compared with an independent record.
  std::vector<emu::TraceEvent> record(const std::string& file, trace::TraceWriterOptions options) {
    Tee tee;
    auto wafer = two_pe_send_wafer();
    trace::TraceWriter writer(file, *wafer, options);
    tee.writer = &writer;
    wafer->set_event_sink(&tee);
    writer.finish(*wafer, wafer->run(1000));
    return tee.all;
  }
};

bool same_event(const emu::TraceEvent& a, const emu::TraceEvent& b) {
  return a.cycle == b.cycle && a.x == b.x && a.y == b.y && a.kind == b.kind && a.color == b.color &&
         a.direction == b.direction && a.task == b.task && a.reason == b.reason && a.aux == b.aux &&
         a.control == b.control && a.payload == b.payload && a.pc == b.pc;
}

// The fields a kind carries (README.md): only those survive the round trip.
emu::TraceEvent carried_fields(emu::TraceEvent e) {
  emu::TraceEvent k;
  k.cycle = e.cycle, k.x = e.x, k.y = e.y, k.kind = e.kind;
  switch (e.kind) {
    case emu::TraceKind::WAVELET_HOP:
    case emu::TraceKind::WAVELET_LANDED:
      k.direction = e.direction, k.color = e.color, k.control = e.control, k.payload = e.payload, k.aux = e.aux;
      break;
    case emu::TraceKind::STALL: k.reason = e.reason, k.aux = e.aux, k.color = e.color, k.task = e.task, k.pc = e.pc; break;
    case emu::TraceKind::SWITCH_CHANGED: k.color = e.color, k.aux = e.aux; break;
    case emu::TraceKind::LINK_STALL: k.direction = e.direction, k.color = e.color, k.control = e.control, k.reason = e.reason; break;
    default: k.task = e.task, k.pc = e.pc; break;
  }
  return k;
}

TEST_F(TraceFormat, HeaderDescribesTheWafer) {
  record(path("t.wstrace"), {});
  trace::TraceReader r(path("t.wstrace"));
  EXPECT_EQ(r.header().version_major, trace::kVersionMajor);
  EXPECT_EQ(r.header().width, 2);
  EXPECT_EQ(r.header().height, 1);
  EXPECT_EQ(r.header().arch, "wse2");
  EXPECT_DOUBLE_EQ(r.header().clock_mhz, 850.0);
  EXPECT_EQ(r.header().start_cycle, 0u);
  ASSERT_TRUE(r.complete());
  EXPECT_EQ(r.end()->status, trace::EndStatus::QUIESCENT);
  EXPECT_EQ(r.end()->end_cycle, 18u);  // tests/trace/golden/two_pe_send.log
  ASSERT_NE(r.programs().at(0, 0), nullptr);
  EXPECT_EQ(r.programs().at(0, 0)->task_name(10), "main");
  EXPECT_EQ(r.programs().at(1, 0)->instruction(2), "st32 [got], r1");
  ASSERT_TRUE(r.stats().has_value());
  EXPECT_EQ((*r.stats())["wafer"]["cycles"], 18);
  // The file starts with the documented magic bytes.
  const std::string bytes = read_file(path("t.wstrace"));
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89WSTR\r\n\x1a", 8));
}

TEST_F(TraceFormat, EveryEventRoundTripsThroughSmallChunks) {
  trace::TraceWriterOptions o;
  o.chunk_bytes = 1024;  // the minimum: forces many EVTS chunks for a longer run
  // A longer run: the same kernel, traced while the host activates `main` again and again.
  Tee tee;
  auto wafer = two_pe_send_wafer();
  trace::TraceWriter writer(path("long.wstrace"), *wafer, o);
  tee.writer = &writer;
  wafer->set_event_sink(&tee);
  emu::RunResult r;
  for (int i = 0; i < 200; ++i) {
    r = wafer->run(1000);
    ASSERT_EQ(r.status, emu::RunResult::Status::QUIESCENT);
    wafer->activate_task(0, 0, 10);
  }
  writer.finish(*wafer, wafer->run(1000));
  EXPECT_GT(writer.bytes_written(), 20u * 1024) << "the run must span many chunks";

  trace::TraceReader reader(path("long.wstrace"));
  EXPECT_EQ(reader.event_count(), tee.all.size());
  size_t i = 0;
  bool all_same = true;
  reader.for_each_event([&](const emu::TraceEvent& e) {
    if (i >= tee.all.size() || !same_event(e, carried_fields(tee.all[i]))) all_same = false;
    ++i;
    return all_same;
  });
  EXPECT_TRUE(all_same) << "event " << i << " differs";
  EXPECT_EQ(i, tee.all.size());
}

TEST_F(TraceFormat, RecorderFiltersKindsRectColorsAndCycles) {
  trace::TraceWriterOptions o;
  o.filter.kinds = trace::parse_kinds("wavelets,tasks");
  o.filter.rect = trace::parse_rect("1,0,1,1");
  o.filter.cycles = trace::parse_cycles("4:14");
  const std::vector<emu::TraceEvent> all = record(path("f.wstrace"), o);
  trace::TraceReader reader(path("f.wstrace"));
  std::vector<emu::TraceEvent> expected;
  for (const emu::TraceEvent& e : all)
    if (e.x == 1 && e.cycle >= 4 && e.cycle < 14 &&
        (e.kind == emu::TraceKind::WAVELET_HOP || e.kind == emu::TraceKind::WAVELET_LANDED ||
         e.kind == emu::TraceKind::TASK_PICKED))
      expected.push_back(carried_fields(e));
  ASSERT_EQ(expected.size(), 6u) << "hops and landings @6 and @8, picks @8 and @13 at P1.0 (tests/trace/golden/two_pe_send.log)";
  std::vector<emu::TraceEvent> got;
  reader.for_each_event([&](const emu::TraceEvent& e) {
    got.push_back(e);
    return true;
  });
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(same_event(got[i], expected[i])) << i;
  EXPECT_EQ(reader.filter().to_string(), "kinds=wavelets,tasks rect=1,0,1,1 cycles=4:14");
  EXPECT_EQ(reader.end()->events_written, 6u);
  EXPECT_EQ(reader.end()->events_filtered_out, all.size() - 6);

  // The color filter drops colored events of other colors but keeps instructions.
  trace::TraceWriterOptions c;
  c.filter.colors = trace::parse_colors("3");
  const std::vector<emu::TraceEvent> all2 = record(path("c.wstrace"), c);
  trace::TraceReader r2(path("c.wstrace"));
  size_t hops = 0, insns = 0;
  r2.for_each_event([&](const emu::TraceEvent& e) {
    hops += e.kind == emu::TraceKind::WAVELET_HOP;
    insns += e.kind == emu::TraceKind::INSTRUCTION;
    return true;
  });
  EXPECT_EQ(hops, 0u);
  EXPECT_EQ(insns, 13u);
}

TEST_F(TraceFormat, AFileCutShortIsReadableUpToItsLastCompleteChunk) {
  record(path("t.wstrace"), {});
  std::string bytes = read_file(path("t.wstrace"));
  // Drop the END chunk (25-byte payload + 8) with its 12-byte CRC chunk, STAT's CRC chunk and a
  // few bytes more: the STAT chunk is cut.
  bytes.resize(bytes.size() - 12 - 33 - 12 - 5);
  std::ofstream(path("cut.wstrace"), std::ios::binary) << bytes;
  trace::TraceReader r(path("cut.wstrace"));
  EXPECT_FALSE(r.complete());
  EXPECT_FALSE(r.warnings().empty());
  // The golden log's 22 events are in one EVTS chunk, which is whole.
  EXPECT_EQ(r.event_count(), 22u);
  size_t n = 0;
  r.for_each_event([&](const emu::TraceEvent&) { return ++n, true; });
  EXPECT_EQ(n, 22u);
}

TEST_F(TraceFormat, FilesThatAreNotTracesGiveClearErrors) {
  std::ofstream(path("text.wstrace")) << "hello, this is not a trace at all, but long enough to have a header of 64 bytes";
  EXPECT_THROW(
      {
        try {
          trace::TraceReader r(path("text.wstrace"));
        } catch (const TraceError& e) {
          EXPECT_NE(std::string(e.what()).find("not a wsemu trace"), std::string::npos) << e.what();
          throw;
        }
      },
      TraceError);
  std::ofstream(path("short.wstrace")) << "x";
  EXPECT_THROW(trace::TraceReader(path("short.wstrace")), TraceError);
  EXPECT_THROW(trace::TraceReader(path("missing.wstrace")), TraceError);

  record(path("t.wstrace"), {});
  std::string bytes = read_file(path("t.wstrace"));
  bytes[8] = 9;  // major version 9
  std::ofstream(path("v9.wstrace"), std::ios::binary) << bytes;
  try {
    trace::TraceReader r(path("v9.wstrace"));
    ADD_FAILURE() << "a newer major version must be refused";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("version 9.{}", trace::kVersionMinor)), std::string::npos) << e.what();
  }
}

// Files of 1.1 writers carry no CRC chunks and no header checksum: still read as they are.
TEST_F(TraceFormat, AVersion11FileWithoutChecksumsIsStillRead) {
  record(path("t.wstrace"), {});
  const std::string bytes = read_file(path("t.wstrace"));
  auto u32_at = [&](size_t at) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t(uint8_t(bytes[at + i])) << (8 * i);
    return v;
  };
  std::string old = bytes.substr(0, 64);
  old[10] = 1, old[11] = 0;                      // version 1.1
  for (int i = 48; i < 52; ++i) old[i] = 0;      // reserved again
  size_t at = 64, dropped = 0;
  while (at + 8 <= bytes.size()) {
    const uint32_t type = u32_at(at), size = u32_at(at + 4);
    if (type == trace::kChunkChecksum)
      ++dropped;
    else
      old += bytes.substr(at, 8 + size);
    at += 8 + size;
  }
  EXPECT_GE(dropped, 6u);  // FILT, PROG, PEMP, EVTS, STAT, END
  std::ofstream(path("v11.wstrace"), std::ios::binary) << old;
  trace::TraceReader r(path("v11.wstrace"));
  EXPECT_TRUE(r.complete());
  EXPECT_TRUE(r.warnings().empty());
  EXPECT_EQ(r.event_count(), 22u);
}

// A header whose checksum is right but whose fabric no wafer has (the fuzzer's out-of-memory:
// 65535 x 65535 sized the PE tables) is refused before anything is allocated for it.
TEST_F(TraceFormat, AFabricLargerThanAnyWaferIsRefused) {
  record(path("t.wstrace"), {});
  std::string bytes = read_file(path("t.wstrace"));
  bytes[16] = char(0xFF), bytes[17] = char(0xFF);  // width 65535
  bytes[18] = char(0xFF), bytes[19] = char(0xFF);  // height 65535
  for (int i = 0; i < 4; ++i) bytes[trace::kHeaderChecksumOffset + i] = 0;
  boost::crc_32_type crc;
  crc.process_bytes(bytes.data(), trace::kFileHeaderBytes);
  for (int i = 0; i < 4; ++i) bytes[trace::kHeaderChecksumOffset + i] = char((crc.checksum() >> (8 * i)) & 0xFF);
  std::ofstream(path("huge.wstrace"), std::ios::binary) << bytes;
  try {
    trace::TraceReader r(path("huge.wstrace"));
    ADD_FAILURE() << "a 65535 x 65535 fabric was accepted";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("larger than any wafer"), std::string::npos) << e.what();
  }
}

// A bit flipped anywhere in a trace is an error or, where it makes a chunk look longer than the
// file, a warning that the rest is ignored; never a file read as if it were intact.
TEST_F(TraceFormat, EveryFlippedBitIsCaught) {
  record(path("t.wstrace"), {});
  const std::string original = read_file(path("t.wstrace"));
  ASSERT_GT(original.size(), 200u);
  size_t errors = 0, warnings = 0;
  for (size_t byte = 0; byte < original.size(); ++byte) {
    std::string bytes = original;
    bytes[byte] = char(bytes[byte] ^ (1 << (byte % 8)));
    std::ofstream(path("flip.wstrace"), std::ios::binary | std::ios::trunc) << bytes;
    try {
      trace::TraceReader r(path("flip.wstrace"));
      r.for_each_event([](const emu::TraceEvent&) { return true; });
      if (r.warnings().empty()) {
        ADD_FAILURE() << "bit " << byte % 8 << " of byte " << byte << " flipped, read without a warning";
        continue;
      }
      ++warnings;
    } catch (const TraceError& e) {
      ++errors;
      const std::string what = e.what();
      EXPECT_TRUE(what.find("byte") != std::string::npos || what.find("version") != std::string::npos ||
                  what.find("header") != std::string::npos)
          << "flip at byte " << byte << ": " << what;
    }
  }
  EXPECT_GT(errors, original.size() * 9 / 10);  // warnings: only a chunk length pointing past the end
  SUCCEED() << errors << " errors, " << warnings << " warnings of " << original.size() << " flips";
}

TEST(TraceFilterParsing, AcceptsTheDocumentedSpellingsAndRefusesOthers) {
  EXPECT_EQ(trace::parse_kinds("wavelets,stalls"), trace::kWaveletKinds | trace::kStallKinds);
  EXPECT_EQ(trace::parse_kinds("all"), trace::kAllKinds);
  EXPECT_EQ(trace::parse_kinds("instruction"), trace::kInstructionKinds);
  EXPECT_THROW(trace::parse_kinds("wavelets,bogus"), TraceError);
  const trace::PeRect r = trace::parse_rect("1,2,3,4");
  EXPECT_TRUE(r.contains(1, 2));
  EXPECT_TRUE(r.contains(3, 5));
  EXPECT_FALSE(r.contains(4, 5));
  EXPECT_FALSE(r.contains(0, 2));
  EXPECT_THROW(trace::parse_rect("1,2,3"), TraceError);
  EXPECT_THROW(trace::parse_rect("1,2,0,4"), TraceError);
  EXPECT_THROW(trace::parse_rect("a,2,3,4"), TraceError);
  EXPECT_EQ(trace::parse_colors("1,2,5-7"), 0b11100110u);
  EXPECT_THROW(trace::parse_colors("32"), TraceError);
  EXPECT_THROW(trace::parse_colors("5-3"), TraceError);
  const trace::CycleRange c = trace::parse_cycles("10:20");
  EXPECT_TRUE(c.contains(10));
  EXPECT_TRUE(c.contains(19));
  EXPECT_FALSE(c.contains(20));
  EXPECT_EQ(trace::parse_cycles("7").end, 8u);
  EXPECT_EQ(trace::parse_cycles("5:").first, 5u);
  EXPECT_THROW(trace::parse_cycles("20:10"), TraceError);
  EXPECT_THROW(trace::parse_cycles("x:10"), TraceError);
}

}  // namespace
}  // namespace wsemu::testing
