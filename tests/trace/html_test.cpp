// The html view in a real browser: headless Chromium loads the page offline, the script draws
// the grid (one rect.pe per PE), the links with traffic and, for the deadlock, the wait-for
// arrows; a screenshot is saved next to the test's files. Skipped (with a message) when
// /usr/bin/chromium is not installed.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>

#include "inspect/trace/trace_reader.hpp"
#include "inspect/trace/trace_views.hpp"
#include "inspect/trace/trace_writer.hpp"
#include "tests/trace/trace_test_support.hpp"

namespace wsemu::testing {
namespace {

constexpr const char* kChromium = "/usr/bin/chromium";

bool have_chromium() { return std::filesystem::exists(kChromium); }

size_t count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
  return n;
}

class HtmlView : public ScratchDir {
 protected:
  std::string make_page(std::unique_ptr<emu::Wafer> wafer, const std::string& name) {
    const std::string file = path(name + ".wstrace");
    record_run(*wafer, file);
    const std::string page = path(name + ".html");
    std::ofstream(page) << trace::html_page(trace::TraceReader(file), {});
    return page;
  }

  // Runs headless Chromium on the page; returns its stdout (the DOM for --dump-dom).
  std::string chromium(const std::string& page, const std::string& mode) {
    const std::string profile = path("chromium-profile-" + std::to_string(runs_++));
    const std::string out = path("chromium-out.txt");
    const std::string cmd = std::string(kChromium) +
                            " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                            " --disable-background-networking --disable-component-update --disable-sync"
                            " --user-data-dir=" + profile + " " + mode + " file://" + page + " > " + out + " 2> " +
                            path("chromium-err.txt");
    const int rc = std::system(cmd.c_str());
    EXPECT_EQ(rc, 0) << cmd << "\n" << read_file(path("chromium-err.txt"));
    return read_file(out);
  }
  int runs_ = 0;
};

TEST_F(HtmlView, PageIsSelfContainedAndOffline) {
  const std::string page = read_file(make_page(two_pe_send_wafer(), "two_pe"));
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find(" src="), std::string::npos);
  EXPECT_EQ(page.find("https:"), std::string::npos);
  EXPECT_EQ(page.find("fetch("), std::string::npos);
  EXPECT_EQ(page.find("XMLHttpRequest"), std::string::npos);
  EXPECT_NE(page.find("id=\"trace-data\""), std::string::npos);
}

TEST_F(HtmlView, ChromiumRendersTheGridAndTheLinks) {
  if (!have_chromium()) GTEST_SKIP() << kChromium << " is not installed: the html page was not rendered (apt-get install chromium)";
  const std::string page = make_page(two_pe_send_wafer(), "two_pe");
  const std::string dom = chromium(page, "--dump-dom");
  EXPECT_NE(dom.find("data-rendered=\"2x1\""), std::string::npos) << "the script did not finish:\n" << dom.substr(0, 2000);
  EXPECT_EQ(count(dom, "class=\"pe"), 2u) << "one rect per PE";
  EXPECT_EQ(count(dom, "class=\"link"), 2u) << "P0.0 E and P1.0 RAMP carried wavelets";
  EXPECT_NE(dom.find("P0.0 E: 2 wavelets in 18 cycles"), std::string::npos);
}

TEST_F(HtmlView, ChromiumDrawsTheDeadlockAsArrows) {
  if (!have_chromium()) GTEST_SKIP() << kChromium << " is not installed: the html page was not rendered (apt-get install chromium)";
  const std::string page = make_page(deadlock_wafer(), "deadlock");
  const std::string dom = chromium(page, "--dump-dom");
  EXPECT_EQ(count(dom, "class=\"wait\""), 2u) << "an arrow per wait-for edge";
  EXPECT_EQ(count(dom, "class=\"pe blocked\""), 2u) << "both PEs outlined as blocked";
  EXPECT_NE(dom.find("deadlock: PE(0,0) -&gt; PE(1,0) -&gt; PE(0,0)"), std::string::npos) << dom.substr(0, 4000);
  EXPECT_NE(dom.find("P0.0 waits for P1.0 on color 2"), std::string::npos);
  const std::string shot = path("deadlock.png");
  chromium(page, "--screenshot=" + shot + " --window-size=1000,700");
  EXPECT_TRUE(std::filesystem::exists(shot));
  const char* bin = std::getenv("WSEMU_BIN_DIR");
  if (bin) std::filesystem::copy_file(shot, std::filesystem::path(bin) / "trace_html_deadlock.png",
                                      std::filesystem::copy_options::overwrite_existing);
}

}  // namespace
}  // namespace wsemu::testing
