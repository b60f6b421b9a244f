// The error corpus: every tests/isa/errors/*.wsa is a malformed program whose header says where
// the first error is and what it says:
//     ; expect: LINE:COL: fragment of the message
//     ; expect: other.inc:LINE:COL: fragment        (when the error is in an included file)
//     ; args: --param N=4                              (optional extra arguments)
// `wsemu asm` must exit with 1 and print that diagnostic as FILE:LINE:COL: error: ...
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "tests/isa/test_support.hpp"

namespace wsemu::isa {
namespace {

struct Expectation {
  std::string location;  // "12:5" or "file.inc:12:5"
  std::string fragment;
  std::string args;
};

std::optional<Expectation> read_expectation(const std::string& text) {
  Expectation e;
  bool found = false;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.starts_with("; expect: ")) {
      const std::string rest = line.substr(10);
      // The location ends at the first ": " after the line:col numbers.
      const size_t sep = rest.find(": ");
      if (sep == std::string::npos) return std::nullopt;
      e.location = rest.substr(0, sep);
      e.fragment = rest.substr(sep + 2);
      found = true;
    } else if (line.starts_with("; args: ")) {
      e.args = line.substr(8);
    } else if (!line.starts_with(";")) {
      break;
    }
  }
  return found ? std::optional(e) : std::nullopt;
}

TEST(IsaErrorCorpus, EachMalformedProgramGivesItsDiagnosticAndExitCode1) {
  const std::filesystem::path dir = test::source_dir() + "/tests/isa/errors";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".wsa") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  EXPECT_GE(files.size(), 30u);
  const std::string out = (std::filesystem::temp_directory_path() / "wsemu_error_corpus.wso").string();
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    const std::optional<Expectation> e = read_expectation(test::read_file(file.string()));
    ASSERT_TRUE(e.has_value()) << "missing '; expect: LINE:COL: message' header";
    const test::CommandResult r =
        test::run_command(test::bin_dir() + "/wsemu asm '" + file.string() + "' -o " + out + " " + e->args);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const bool qualified = std::count(e->location.begin(), e->location.end(), ':') == 2;
    const std::string where = (qualified ? "" : file.string() + ":") + e->location + ": error: ";
    const size_t at = r.err.find(where);
    ASSERT_NE(at, std::string::npos) << "expected a diagnostic at " << where << "\ngot:\n" << r.err;
    const size_t line_end = r.err.find('\n', at);
    const std::string message = r.err.substr(at + where.size(), line_end - at - where.size());
    EXPECT_NE(message.find(e->fragment), std::string::npos)
        << "expected '" << e->fragment << "' in: " << message;
    // A caret under the reported column follows the source line.
    EXPECT_NE(r.err.find('^', at), std::string::npos);
  }
  std::filesystem::remove(out);
}

}  // namespace
}  // namespace wsemu::isa
