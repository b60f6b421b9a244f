// The trace views: summary figures against counts worked out from the golden kernel, the
// Perfetto JSON (parses, one track per active PE and per link, flows follow wavelets), and the
// heatmap PNG (decodes, has the documented size, colours the used links).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <sstream>

#include "inspect/markup_escape.hpp"
#include "inspect/trace/trace_reader.hpp"
#include "inspect/trace/trace_views.hpp"
#include "inspect/trace/trace_writer.hpp"
#include "tests/trace/trace_test_support.hpp"

#include "tests/stb_image_read.hpp"

namespace wsemu::testing {
namespace {

using nlohmann::json;

class TraceViews : public ScratchDir {
 protected:
  void SetUp() override {
    ScratchDir::SetUp();
    file_ = path("two_pe.wstrace");
    auto wafer = two_pe_send_wafer();
    record_run(*wafer, file_);
  }
  std::string file_;
};

TEST_F(TraceViews, SummaryCountsWaveletsLinksPesAndStalls) {
  trace::TraceReader reader(file_);
  const json s = trace::summary_json(reader, {});
  EXPECT_EQ(s["cycles"], 18);  // tests/trace/golden/two_pe_send.log works the cycles out
  EXPECT_EQ(s["status"], "quiescent");
  // Two wavelets on color 4: each crosses one link (P0.0 E) and is delivered once.
  ASSERT_EQ(s["colors"].size(), 1u);
  EXPECT_EQ(s["colors"][0]["color"], 4);
  EXPECT_EQ(s["colors"][0]["link_hops"], 2);
  EXPECT_EQ(s["colors"][0]["ramp_deliveries"], 2);
  // Two links carry traffic, two wavelets each: P0.0 E (utilization 2/18) and P1.0 RAMP.
  ASSERT_EQ(s["hottest_links"].size(), 2u);
  EXPECT_EQ(s["hottest_links"][0]["x"], 0);
  EXPECT_EQ(s["hottest_links"][0]["direction"], "E");
  EXPECT_EQ(s["hottest_links"][0]["wavelets"], 2);
  EXPECT_NEAR(s["hottest_links"][0]["utilization"].get<double>(), 2.0 / 18.0, 1e-12);
  EXPECT_EQ(s["hottest_links"][0]["backpressure_cycles"], 0);
  // P1.0: 2 picks + 8 instructions busy = 10 cycles; P0.0: 1 pick + 5 instructions = 6.
  ASSERT_EQ(s["pes"].size(), 2u);
  EXPECT_EQ(s["pes"][0]["x"], 1);
  EXPECT_EQ(s["pes"][0]["busy_cycles"], 10);
  EXPECT_EQ(s["pes"][0]["instructions"], 8);
  EXPECT_EQ(s["pes"][0]["tasks_started"], 2);
  EXPECT_EQ(s["pes"][1]["busy_cycles"], 6);
  EXPECT_EQ(s["pes"][1]["stall_cycles"], 0);
  EXPECT_TRUE(s["stall_reasons"].empty());

  std::ostringstream text;
  trace::write_summary(reader, {}, text);
  EXPECT_NE(text.str().find("P0.0 E"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("11.1%"), std::string::npos) << text.str();
}

TEST_F(TraceViews, PerfettoJsonParsesWithOneTrackPerActivePeAndLink) {
  trace::TraceReader reader(file_);
  std::ostringstream out;
  trace::write_perfetto(reader, {}, out);
  const json j = json::parse(out.str());  // throws (fails the test) when not valid JSON
  ASSERT_TRUE(j.contains("traceEvents"));
  std::set<std::string> pe_tracks, link_tracks;
  std::map<int, std::string> pid_name;
  int task_slices = 0, instruction_slices = 0, flow_starts = 0, flow_ends = 0;
  for (const json& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") pid_name[e["pid"]] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "thread_name") (e["pid"] == 1 ? pe_tracks : link_tracks).insert(e["args"]["name"]);
    if (e["ph"] == "X" && e["cat"] == "task") ++task_slices;
    if (e["ph"] == "X" && e["cat"] == "instruction") ++instruction_slices;
    flow_starts += e["ph"] == "s";
    flow_ends += e["ph"] == "f";
  }
  EXPECT_EQ(pid_name[1], "PEs");
  EXPECT_EQ(pid_name[2], "links");
  EXPECT_EQ(pe_tracks, (std::set<std::string>{"P0.0", "P1.0"}));
  EXPECT_EQ(link_tracks, (std::set<std::string>{"P0.0 E", "P1.0 RAMP"}));
  EXPECT_EQ(task_slices, 3);
  EXPECT_EQ(instruction_slices, 13);
  // Each wavelet's hop into P1.0's RAMP is linked to its hop out of P0.0, and its landing in
  // P1.0's color slot to that RAMP hop: two flows per wavelet.
  EXPECT_EQ(flow_starts, 4);
  EXPECT_EQ(flow_ends, 4);
  // The task slice of P1.0's first `recv` spans its pick (@8) to its exit (@12): 5 cycles.
  int first_recv_slices = 0;
  for (const json& e : j["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "task" && e["args"]["cycle"] == 8) {
      EXPECT_EQ(e["args"]["cycles"], 5);
      ++first_recv_slices;
    }
  EXPECT_EQ(first_recv_slices, 1);
}

TEST_F(TraceViews, HeatmapPngDecodesWithTheDocumentedSize) {
  trace::TraceReader reader(file_);
  trace::HeatmapOptions o;
  o.cell = 10;
  const std::string png = path("heat.png");
  trace::write_png(trace::render_heatmap(reader, o), png);
  int w = 0, h = 0, channels = 0;
  unsigned char* pixels = stbi_load(png.c_str(), &w, &h, &channels, 3);
  ASSERT_NE(pixels, nullptr) << stbi_failure_reason();
  // 2x1 fabric, 10 px per PE: width 12 + 5 * 20 + 6 * 8; two rows (utilization, backpressure)
  // of 16 + 10 + 12 + 8, the margin and the 48-pixel legend.
  EXPECT_EQ(w, 12 + 5 * 20 + 48);
  EXPECT_EQ(h, 8 + 2 * 46 + 48);
  // The E panel (second) colours P0.0's cell (used 2/15 of the cycles), not P1.0's.
  auto pixel = [&](int x, int y) {
    const unsigned char* p = pixels + (size_t(y) * size_t(w) + size_t(x)) * 3;
    return std::array<int, 3>{p[0], p[1], p[2]};
  };
  const int e_left = 12 + 8 + 20 + 8, top = 8 + 16;
  EXPECT_NE(pixel(e_left + 4, top + 4), pixel(e_left + 14, top + 4));
  EXPECT_EQ(pixel(e_left + 14, top + 4), (std::array<int, 3>{44, 44, 52})) << "no traffic on P1.0's east link";
  // The fifth panel (to core): the wavelets enter P1.0's core by its RAMP; P0.0's gets none.
  const int ramp_left = 12 + 8 + 4 * (20 + 8);
  EXPECT_NE(pixel(ramp_left + 14, top + 4), (std::array<int, 3>{44, 44, 52})) << "P1.0's RAMP carries the wavelets";
  EXPECT_EQ(pixel(ramp_left + 4, top + 4), (std::array<int, 3>{44, 44, 52})) << "nothing enters P0.0's core";
  stbi_image_free(pixels);

  // Per color: one row of panels per color asked for.
  o.colors = trace::parse_colors("3,4");
  const trace::Image two_rows = trace::render_heatmap(reader, o);
  EXPECT_EQ(two_rows.height, 8 + 4 * 46 + 48);
}

// Backpressure as events: burst.wsa sends six wavelets back to back into accumulator.wsa,
// which takes one per 5 cycles through a 1-wavelet color slot, so wavelets wait at P1.0's RAMP
// and then at P0.0's east link. The summary built from the link_stall events must give, link
// by link, the same backpressure and contention cycles as the wafer's own counters (the STAT
// chunk), which the emulator keeps independently of any trace.
TEST_F(TraceViews, LinkStallEventsGiveTheWafersBackpressureCounts) {
  auto wafer = two_pe_send_wafer("burst.wsa");
  const std::string file = path("burst.wstrace");
  const emu::RunResult r = record_run(*wafer, file);
  ASSERT_EQ(r.status, emu::RunResult::Status::QUIESCENT) << r.to_string();
  uint32_t got = 0;
  wafer->read_sram(1, 0, wafer->program_at(1, 0)->find_symbol("got")->address, std::span<uint8_t>(reinterpret_cast<uint8_t*>(&got), 4));
  EXPECT_EQ(got, 6u);

  trace::TraceReader reader(file);
  uint64_t landed = 0, ramp_blocked = 0, east_blocked = 0;
  reader.for_each_event([&](const emu::TraceEvent& e) {
    landed += e.kind == emu::TraceKind::WAVELET_LANDED && e.x == 1 && e.aux == 255;
    if (e.kind == emu::TraceKind::LINK_STALL) {
      EXPECT_EQ(e.color, 4);
      EXPECT_EQ(e.reason, uint8_t(emu::LinkStallReason::BACKPRESSURE)) << "one color: nothing to contend with";
      ramp_blocked += e.x == 1 && e.direction == uint8_t(emu::Direction::RAMP);
      east_blocked += e.x == 0 && e.direction == uint8_t(emu::Direction::EAST);
    }
    return true;
  });
  EXPECT_EQ(landed, 6u) << "every wavelet lands in P1.0's color slot";
  EXPECT_GT(ramp_blocked, 0u) << "the slot is full while `recv` runs";

  const json s = trace::summary_json(reader, {});
  EXPECT_EQ(s["link_waiting_source"], "link_stall events");
  std::map<std::pair<int, std::string>, std::pair<uint64_t, uint64_t>> from_events, from_counters;
  for (const json& l : s["hottest_links"])
    from_events[{l["x"].get<int>(), l["direction"].get<std::string>()}] = {l["backpressure_cycles"], l["contention_cycles"]};
  for (const json& l : (*reader.stats())["wafer"]["links"]) {
    std::string d = l["direction"].get<std::string>();
    d = d == "ramp" || d == "RAMP" ? "RAMP" : std::string(1, char(std::toupper(d[0])));
    if (l["backpressure_cycles"].get<uint64_t>() || l["contention_cycles"].get<uint64_t>())
      from_counters[{l["x"].get<int>(), d}] = {l["backpressure_cycles"], l["contention_cycles"]};
  }
  for (auto it = from_events.begin(); it != from_events.end();)
    it = it->second == std::pair<uint64_t, uint64_t>{0, 0} ? from_events.erase(it) : std::next(it);
  EXPECT_EQ(from_events, from_counters);
  EXPECT_EQ((from_events[{1, "RAMP"}].first), ramp_blocked);
  EXPECT_EQ((from_events[{0, "E"}].first), east_blocked);
  EXPECT_EQ(s["colors"][0]["backpressure"].get<uint64_t>(), ramp_blocked + east_blocked);

  // The heatmap's backpressure row (the second) colours P1.0's RAMP, where wavelets waited.
  trace::HeatmapOptions heat;
  heat.cell = 10;
  const trace::Image img = trace::render_heatmap(reader, heat);
  auto pixel = [&](int x, int y) {
    const uint8_t* p = img.rgb.data() + (size_t(y) * size_t(img.width) + size_t(x)) * 3;
    return std::array<int, 3>{p[0], p[1], p[2]};
  };
  const int ramp_left = 12 + 8 + 4 * (20 + 8), waits_top = 8 + 46 + 16;
  EXPECT_NE(pixel(ramp_left + 14, waits_top + 4), (std::array<int, 3>{44, 44, 52}));
  EXPECT_EQ(pixel(ramp_left + 4, waits_top + 4), (std::array<int, 3>{44, 44, 52})) << "P0.0's core never refused one";

  std::ostringstream text;
  trace::TraceFilter stalls;
  stalls.kinds = trace::parse_kinds("stalls");
  trace::write_text(reader, stalls, text);
  EXPECT_NE(text.str().find(" P1.0 blocked RAMP c4 backpressure\n"), std::string::npos) << text.str();
}

// The HTML page's title and wsemu check's JUnit text: worked by hand from the XML 1.0 rules
// (markup characters as entities; C0 controls but tab, LF, CR, and DEL as '?'; UTF-8 kept).
TEST(MarkupEscape, EntitiesForMarkupAndQuestionMarksForForbiddenControls) {
  EXPECT_EQ(inspect::markup_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c'");
  EXPECT_EQ(inspect::markup_escape(std::string("x\x01\x1f\x7f\0y", 6)), "x????y");
  EXPECT_EQ(inspect::markup_escape("tab\tnl\ncr\r"), "tab\tnl\ncr\r");
  EXPECT_EQ(inspect::markup_escape("PE(1,0) \xc3\xa9t\xc3\xa9"), "PE(1,0) \xc3\xa9t\xc3\xa9");
}

}  // namespace
}  // namespace wsemu::testing
