// `wsemu info`: the profile as text and JSON, overrides, and a clear error for bad input.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

namespace {

struct Output {
  int status = -1;
  std::string out;
};

Output wsemu(const std::string& args) {
  const char* bin = std::getenv("WSEMU_BIN_DIR");
  const std::string cmd = std::string(bin ? bin : "build/bin") + "/wsemu " + args + " 2>&1";
  Output o;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) o.out.append(buf.data(), n);
  const int rc = pclose(p);
  o.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return o;
}

TEST(CliInfo, PrintsTheProfileAsJsonWithOverrides) {
  const Output o = wsemu("info --arch wse3 --set clock_mhz=1100 --set simd.V_FADDS=8 --json");
  ASSERT_EQ(o.status, 0) << o.out;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["name"], "wse3");
  EXPECT_EQ(j["clock_mhz"], 1100.0);
  EXPECT_EQ(j["simd.V_FADDS"], 8);
  EXPECT_EQ(j["simd.V_FMACH"], 8);
  EXPECT_EQ(j["iq_depth.0"], 8);
}

TEST(CliInfo, PrintsText) {
  const Output o = wsemu("info --arch wse2");
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("architecture wse2"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("input queue depths     6 6 4 4 2 2 2 2"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("850 MHz"), std::string::npos) << o.out;
}

TEST(CliInfo, BadInputGivesAClearErrorAndNonZeroExit) {
  Output o = wsemu("info --arch wse9");
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.out.find("unknown architecture 'wse9'"), std::string::npos) << o.out;
  o = wsemu("info --set bogus=1");
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.out.find("unknown profile key 'bogus'"), std::string::npos) << o.out;
}

}  // namespace
