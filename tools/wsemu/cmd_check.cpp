// `wsemu check`: run a built kernel and compare its outputs with reference .npy files (CI).
#include <chrono>
#include <filesystem>
#include <cmath>

#include "inspect/markup_escape.hpp"
#include "tools/wsemu/kernel_cli.hpp"
#include "tools/wsemu/subcommand.hpp"

namespace wsemu::cli {
namespace {

constexpr const char* kFooter = R"(
Runs like `wsemu run` (same options), then compares every --expect symbol with its reference as
numpy's allclose does: |got - expected| <= atol + rtol * |expected| (NaN matches nothing).
For each symbol it prints the number of elements, the largest absolute error and PASS, or the
number of mismatches and the worst element (its index, the value got, the value expected).

Exit status: 0 only when every output matches; 1 some output differs; 2 bad usage or input
(also a reference whose element count differs from the symbol's); 3 kernel fault; 4 hang;
5 the --max-cycles limit. --junit writes a JUnit XML report in every case: a test case `run`
(an <error> when the run faulted, hung, hit the cycle limit or had bad input, with the whole
report as the element's text) and one test case per --expect symbol (a <failure> when it
differs), with counts and wall times as the common JUnit schema wants them.

Example:
  wsemu check gemv.wsx --in A=A.npy --in x=x.npy --in b=b.npy --expect y=y_ref.npy --atol 1e-4
)";

struct CheckArgs {
  KernelCliArgs run;
  std::vector<std::string> expects;
  double rtol = 1e-5, atol = 1e-6;
  std::string junit;
};

std::string index_string(const std::vector<size_t>& index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

// One JUnit test case: a `run` case for the kernel run itself, one case per --expect symbol.
// A wrong output is a <failure>; a run that could not finish (fault, hang, cycle limit, bad
// input) is an <error>, as JUnit means it: the test could not be carried out.
struct CaseResult {
  enum class Outcome { PASS, FAILURE, ERROR };
  std::string name;
  Outcome outcome = Outcome::PASS;
  std::string type;     // failure/error type: "mismatch", "fault", "hang", "cycle_limit", "usage"
  std::string message;  // may be several lines (a hang report); the attribute gets the first
  double seconds = 0;
};

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// The layout Jenkins' and the common JUnit schema (junit-10.xsd) accept: counts and times on
// both levels, the message's first line in the attribute and the whole text in the element.
void write_junit(const std::string& path, const std::string& kernel, const std::vector<CaseResult>& cases,
                 uint64_t cycles) {
  if (path.empty()) return;
  size_t failures = 0, errors = 0;
  double seconds = 0;
  for (const CaseResult& c : cases) {
    failures += c.outcome == CaseResult::Outcome::FAILURE;
    errors += c.outcome == CaseResult::Outcome::ERROR;
    seconds += c.seconds;
  }
  const std::string name = inspect::markup_escape(std::filesystem::path(kernel).stem().string());
  const std::string counts =
      fmt::format("tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\"", cases.size(), failures, errors, seconds);
  std::ofstream f(path);
  f << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  f << fmt::format("<testsuites name=\"wsemu check\" {}>\n", counts);
  f << fmt::format("  <testsuite name=\"{}\" {} skipped=\"0\">\n", name, counts);
  f << fmt::format("    <properties><property name=\"cycles\" value=\"{}\"/></properties>\n", cycles);
  for (const CaseResult& c : cases) {
    f << fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"", name, inspect::markup_escape(c.name), c.seconds);
    if (c.outcome == CaseResult::Outcome::PASS) {
      f << "/>\n";
      continue;
    }
    const char* element = c.outcome == CaseResult::Outcome::FAILURE ? "failure" : "error";
    f << fmt::format(">\n      <{} type=\"{}\" message=\"{}\">{}</{}>\n    </testcase>\n", element, c.type,
                     inspect::markup_escape(first_line(c.message)), inspect::markup_escape(c.message), element);
  }
  f << "  </testsuite>\n</testsuites>\n";
  if (!f) std::fprintf(stderr, "wsemu check: error: cannot write %s\n", path.c_str());
}

std::string error_type(const runtime::host::HostError& e) {
  using Kind = runtime::host::HostError::Kind;
  switch (e.kind()) {
    case Kind::USAGE: return "usage";
    case Kind::FAULT: return "fault";
    case Kind::HANG: return "hang";
    case Kind::CYCLE_LIMIT: return "cycle_limit";
  }
  return "error";
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int check_command(CheckArgs& a) {
  std::vector<std::pair<std::string, std::string>> expects;
  for (const std::string& e : a.expects) {
    std::string sym, path;
    if (!split_assignment(e, "--expect", sym, path)) return kExitUsage;
    expects.emplace_back(sym, path);
  }
  std::unique_ptr<PreparedRun> p = prepare_run(a.run, "check");
  if (!p) return kExitUsage;
  std::map<std::string, runtime::npy::NpyArray> references;
  try {
    for (const auto& [sym, path] : expects) {
      references[sym] = runtime::npy::read_npy(path);
      const compiler::HostSymbol* s = p->exe.find_symbol(sym);
      if (!s) throw runtime::host::HostError(runtime::host::HostError::Kind::USAGE,
                                             fmt::format("--expect {}: the executable exports no symbol '{}'", sym, sym));
      if (!s->host_readable)
        throw runtime::host::HostError(runtime::host::HostError::Kind::USAGE,
                                       fmt::format("--expect {}: symbol '{}' is not host-readable", sym, sym));
      bool listed = false;
      for (const std::string& o : p->request.outputs) listed |= o == sym;
      if (!listed) p->request.outputs.push_back(sym);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wsemu check: error: %s\n", e.what());
    return kExitUsage;
  }
  if (expects.empty()) {
    std::fprintf(stderr, "wsemu check: error: nothing to check: give at least one --expect SYMBOL=ref.npy\n");
    return kExitUsage;
  }
  runtime::host::SdkRuntime rt(p->exe, p->options);
  std::map<std::string, runtime::npy::NpyArray> outputs;
  const auto run_start = std::chrono::steady_clock::now();
  std::shared_ptr<KernelPrints> prints;
  try {
    prints = show_kernel_prints(rt);
    outputs = runtime::host::run_kernel(rt, p->request);
  } catch (const runtime::host::HostError& e) {
    write_stats(rt, a.run.stats_path, "check", prints.get());
    write_junit(a.junit, a.run.kernel,
                {{"run", CaseResult::Outcome::ERROR, error_type(e), e.what(), seconds_since(run_start)}}, rt.cycles());
    return report_host_error(e, "check");
  }
  std::vector<CaseResult> cases{{"run", CaseResult::Outcome::PASS, "", cycles_line(rt), seconds_since(run_start)}};
  if (!write_outputs(*p, outputs, "check", false)) return kExitUsage;
  bool all = true;
  for (const auto& [sym, path] : expects) {
    const auto compare_start = std::chrono::steady_clock::now();
    runtime::host::Comparison c;
    try {
      c = runtime::host::compare(sym, outputs.at(sym), references.at(sym), a.rtol, a.atol);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "wsemu check: error: %s (reference %s)\n", e.what(), path.c_str());
      cases.push_back({sym, CaseResult::Outcome::ERROR, "usage", e.what(), seconds_since(compare_start)});
      write_junit(a.junit, a.run.kernel, cases, rt.cycles());
      return kExitUsage;
    }
    CaseResult r{sym, c.pass() ? CaseResult::Outcome::PASS : CaseResult::Outcome::FAILURE, c.pass() ? "" : "mismatch", "",
                 0};
    if (c.pass()) {
      std::printf("%s: %zu elements match %s (max abs error %.3g; rtol %g, atol %g): PASS\n", sym.c_str(), c.elements,
                  path.c_str(), c.max_abs_error, a.rtol, a.atol);
    } else {
      all = false;
      r.message = fmt::format("{} of {} elements differ from {}; worst {}{}: got {:.9g}, expected {:.9g}", c.mismatches,
                              c.elements, path, sym, index_string(c.worst->index), c.worst->got, c.worst->expected);
      std::printf("%s: FAIL: %s (rtol %g, atol %g)\n", sym.c_str(), r.message.c_str(), a.rtol, a.atol);
    }
    r.seconds = seconds_since(compare_start);
    cases.push_back(r);
  }
  std::printf("wsemu check: %s: %s\n", all ? "PASS" : "FAIL", cycles_line(rt).c_str());
  write_junit(a.junit, a.run.kernel, cases, rt.cycles());
  if (!write_stats(rt, a.run.stats_path, "check", prints.get())) return kExitUsage;
  return all ? 0 : kExitMismatch;
}

const Register kCheck{Subcommand{
    "check", [](CLI::App& app) -> std::function<int()> {
      auto args = std::make_shared<CheckArgs>();
      app.description("Run a built kernel and compare its outputs with reference .npy files; exit 0 only when "
                      "every output matches");
      add_kernel_options(app, args->run);
      app.add_option("--expect", args->expects, "SYMBOL=ref.npy: the reference for that output (repeatable)")
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      app.add_option("--rtol", args->rtol, "Relative tolerance (default 1e-5)")->check(CLI::NonNegativeNumber);
      app.add_option("--atol", args->atol, "Absolute tolerance (default 1e-6)")->check(CLI::NonNegativeNumber);
      app.add_option("--junit", args->junit, "Write a JUnit XML report to this file");
      app.footer(kFooter);
      return [args]() { return check_command(*args); };
    }}};

}  // namespace
}  // namespace wsemu::cli
