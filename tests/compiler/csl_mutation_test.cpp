// Robustness of the CSL front end without libFuzzer: the team's kernels and the bad corpus,
// mutated (bytes flipped, inserted, deleted, truncated; seeded, reproducible), compiled as layout
// files. Every result must be an executable or diagnostics with a message; never a crash, an
// exception out of compile_csl or a hang (comptime evaluation is bounded).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "compiler/csl/cslc.hpp"
#include "tests/test_support.hpp"

namespace wsemu::compiler::csl {
namespace {

namespace fs = std::filesystem;

using ::wsemu::testing::source_dir;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(CslMutation, MutatedProgramsGiveDiagnosticsNotCrashes) {
  // (folder to copy, file in it to mutate, layout file to compile)
  struct Seed {
    fs::path folder;
    std::string mutate, layout;
  };
  std::vector<Seed> seeds;
  for (const char* k : {"kernels/gemv-01-single-pe/csl", "kernels/gemv-06-routes-1/csl", "tests/compiler/programs/tasks"}) {
    seeds.push_back({source_dir() + "/" + k, "pe.csl", "layout.csl"});
    seeds.push_back({source_dir() + "/" + k, "layout.csl", "layout.csl"});
  }
  for (const auto& e : fs::directory_iterator(source_dir() + "/tests/compiler/bad"))
    if (e.path().extension() == ".csl") seeds.push_back({"", e.path().string(), "layout.csl"});
  const fs::path dir = fs::temp_directory_path() / ("wsemu-csl-mutation-" + std::to_string(::getpid()));
  std::mt19937 gen(12345);
  const std::string alphabet = "(){}[].,;:|=+-*/<>!&@\"'0123456789abcxyz_ \n";
  int compiled = 0;
  const int rounds = 600;
  for (int round = 0; round < rounds; ++round) {
    const Seed& seed = seeds[size_t(round) % seeds.size()];
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir);
    std::string text;
    if (seed.folder.empty()) {
      text = read(seed.mutate);
    } else {
      for (const auto& e : fs::directory_iterator(seed.folder))
        if (e.path().extension() == ".csl") fs::copy_file(e.path(), dir / e.path().filename());
      text = read(dir / seed.mutate);
    }
    const int edits = 1 + int(gen() % 3);
    for (int k = 0; k < edits && !text.empty(); ++k) {
      const size_t at = gen() % text.size();
      switch (gen() % 4) {
        case 0: text[at] = alphabet[gen() % alphabet.size()]; break;
        case 1: text.insert(at, 1, alphabet[gen() % alphabet.size()]); break;
        case 2: text.erase(at, 1 + gen() % 8); break;
        default: text.resize(at + (text.size() - at) / 2); break;
      }
    }
    std::ofstream(dir / (seed.folder.empty() ? std::string("layout.csl") : seed.mutate), std::ios::binary) << text;
    CslOptions o;
    o.layout_file = (dir / seed.layout).string();
    o.out_dir = (dir / "out").string();
    if (seed.folder.string().find("gemv") != std::string::npos) o.params = {{"M", "4"}, {"N", "6"}};
    if (seed.folder.string().find("tasks") != std::string::npos) o.params = {{"N", "5"}};
    CslResult r;
    ASSERT_NO_THROW(r = compile_csl(o)) << text;
    if (r.ok()) {
      ++compiled;
      continue;
    }
    ASSERT_FALSE(r.diagnostics.empty()) << text;
    for (const Diagnostic& d : r.diagnostics) ASSERT_FALSE(d.message.empty()) << text;
  }
  // Most mutations break the program; some (in comments, names, numbers) do not.
  std::printf("mutation: %d of %d mutated programs still compiled\n", compiled, rounds);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace wsemu::compiler::csl
