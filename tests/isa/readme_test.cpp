// isa/README.md's instruction list is exactly what `wsemu isa --markdown` prints, so the
// reference cannot drift from the table in isa/isa.def.
#include <gtest/gtest.h>

#include "tests/isa/test_support.hpp"

namespace wsemu::isa {
namespace {

constexpr std::string_view kBegin = "<!-- BEGIN GENERATED INSTRUCTION LIST -->\n";
constexpr std::string_view kEnd = "<!-- END GENERATED INSTRUCTION LIST -->";

TEST(IsaReadme, InstructionListMatchesTheTable) {
  const std::string readme = test::read_file(test::source_dir() + "/isa/README.md");
  const size_t begin = readme.find(kBegin);
  const size_t end = readme.find(kEnd);
  ASSERT_NE(begin, std::string::npos) << "isa/README.md lacks the BEGIN marker";
  ASSERT_NE(end, std::string::npos) << "isa/README.md lacks the END marker";
  ASSERT_LT(begin, end);
  const std::string block = readme.substr(begin + kBegin.size(), end - begin - kBegin.size());
  const test::CommandResult r = test::run_command(test::bin_dir() + "/wsemu isa --markdown");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(block, r.out) << "isa/README.md is out of date: replace the block between the markers with the "
                             "output of `wsemu isa --markdown` (see tools/... or run it by hand)";
}

TEST(IsaReadme, EveryMnemonicHasAnExampleInTheReadme) {
  const std::string readme = test::read_file(test::source_dir() + "/isa/README.md");
  const size_t end = readme.find(kEnd);
  ASSERT_NE(end, std::string::npos);
  const std::string prose = readme.substr(end);  // the hand-written part after the list
  for (const InsnInfo& in : instruction_table()) {
    const std::string use = std::string(in.mnemonic);
    bool found = false;
    for (size_t at = prose.find(use); at != std::string::npos && !found; at = prose.find(use, at + 1)) {
      const char before = at ? prose[at - 1] : ' ';
      const char after = at + use.size() < prose.size() ? prose[at + use.size()] : ' ';
      found = (before == ' ' || before == '\n') && (after == ' ' || after == '.' || after == '\n');
    }
    EXPECT_TRUE(found) << "no example of '" << use << "' in isa/README.md after the generated list";
  }
}

}  // namespace
}  // namespace wsemu::isa
