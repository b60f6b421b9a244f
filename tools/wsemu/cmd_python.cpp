// `wsemu python SCRIPT [ARGS...]`: the counterpart of the SDK's `cs_python`. Runs the host
// script with Debian's python3 and the `wsemu` package (and its cerebras.sdk shims) on
// PYTHONPATH, so that an unmodified SDK run.py imports SdkRuntime and runs on the virtual
// wafer. The recording options reach the module through the environment (WSEMU_TRACE,
// WSEMU_STATS, ...; runtime/python/README.md). The process becomes the interpreter (exec), so
// the script's exit status is wsemu's.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/python/python_paths.hpp"
#include "tools/wsemu/subcommand.hpp"
#include "tools/wsemu/trace_options.hpp"

namespace wsemu::cli {
namespace {

constexpr int kExitUsage = 2;

constexpr const char* kFooter = R"(
Runs SCRIPT with python3, the `wsemu` module importable, and the SDK's module names served by
it (cerebras.sdk.runtime.sdkruntimepybind, cerebras.sdk.sdk_utils, cerebras.sdk.debug), so that
an SDK run script works unchanged. wsemu's options come before SCRIPT; everything after it goes
to the script.

With --profile key=value (as for `wsemu run`), every SdkRuntime of the script runs on the
profile with that override (after any the script passes as profile=).

With --stats or --trace, every SdkRuntime the script opens records its session (the first into
FILE, later ones into FILE.1, FILE.2, ...): the trace from load() to stop(), the stats JSON
(that of `wsemu run --stats`) at stop(). At stop() the cycles line of `wsemu run` is printed on
stderr. An uncaught wsemu error ends the script with wsemu run's exit codes: 2 usage, 3 fault,
4 hang (the report is printed), 5 cycle limit; otherwise the exit status is the script's.

Example:
  wsemu cslc layout.csl --fabric-dims=8,3 --fabric-offsets=4,1 --params=M:4,N:6 --memcpy -o out
  wsemu python run.py --name out
)";

struct PythonArgs {
  std::string stats;
  int threads = 0;
  uint64_t max_cycles = 0;
  std::vector<std::string> profile;  // key=value overrides, as `wsemu run --profile`
  TraceRecordingOptions trace;
};

std::filesystem::path wsemu_binary_dir() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : self.parent_path();
}

void set_env(const char* name, const std::string& value) {
  if (!value.empty()) ::setenv(name, value.c_str(), 1);
}

int run_python(const PythonArgs& a, const std::vector<std::string>& rest) {
  if (rest.empty()) {
    std::fprintf(stderr, "wsemu python: error: no SCRIPT given (wsemu python [OPTIONS] SCRIPT [ARGS...])\n");
    return kExitUsage;
  }
  if (!python::kModuleBuilt) {
    std::fprintf(stderr, "wsemu python: error: this wsemu was built without the Python module "
                         "(WSEMU_PYTHON=OFF, or a sanitizer build)\n");
    return kExitUsage;
  }
  std::filesystem::path package;
  const std::filesystem::path bin = wsemu_binary_dir();
  for (const char* rel : python::kPackageDirs) {
    const std::filesystem::path dir = (bin / rel).lexically_normal();
    if (std::filesystem::exists(dir / "wsemu" / "__init__.py")) {
      package = dir;
      break;
    }
  }
  if (package.empty()) {
    std::fprintf(stderr, "wsemu python: error: the wsemu Python package is not next to %s (looked in %s/../python "
                         "and %s/../lib/wsemu/python); build the `_wsemu` target or install wsemu\n",
                 bin.c_str(), bin.c_str(), bin.c_str());
    return kExitUsage;
  }
  std::string path = package.string();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) path += std::string(":") + old;
  ::setenv("PYTHONPATH", path.c_str(), 1);
  ::setenv("WSEMU_PYTHON_CLI", "1", 1);
  ::setenv("WSEMU_EXE", (bin / "wsemu").c_str(), 1);  // SdkLayout.compile runs `wsemu cslc`
  ::setenv("WSEMU_REPORT", "1", 1);
  set_env("WSEMU_STATS", a.stats);
  set_env("WSEMU_TRACE", a.trace.path);
  if (!a.trace.path.empty()) {
    set_env("WSEMU_TRACE_EVENTS", a.trace.events);
    set_env("WSEMU_TRACE_RECT", a.trace.rect);
    set_env("WSEMU_TRACE_COLORS", a.trace.colors);
    set_env("WSEMU_TRACE_CYCLES", a.trace.cycles);
  }
  if (a.threads > 0) set_env("WSEMU_THREADS", std::to_string(a.threads));
  if (a.max_cycles > 0) set_env("WSEMU_MAX_CYCLES", std::to_string(a.max_cycles));
  std::string profile;
  for (const std::string& o : a.profile) profile += (profile.empty() ? "" : ",") + o;
  set_env("WSEMU_PROFILE", profile);

  std::vector<std::string> argv_strings{python::kInterpreter};
  argv_strings.insert(argv_strings.end(), rest.begin(), rest.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  ::execv(python::kInterpreter, argv.data());
  std::fprintf(stderr, "wsemu python: error: cannot run %s: %s\n", python::kInterpreter, std::strerror(errno));
  return kExitUsage;
}

const Register kPython{Subcommand{"python", [](CLI::App& app) -> std::function<int()> {
  auto args = std::make_shared<PythonArgs>();
  app.description("wsemu python [OPTIONS] SCRIPT [ARGS...]: run an SDK host script (run.py) on the virtual wafer, "
                  "the counterpart of cs_python");
  app.prefix_command();  // SCRIPT and everything after it belong to the script
  app.add_option("--stats", args->stats, "Write each runtime's statistics as JSON to this file at stop()");
  app.add_option("--threads", args->threads, "Emulator threads (results are identical for any count)")
      ->check(CLI::Range(1, 256));
  app.add_option("--max-cycles", args->max_cycles, "Fail a runtime with exit code 5 after this many cycles");
  app.add_option("--profile", args->profile,
                 "Override an architecture profile field of every runtime: key=value (see `wsemu info`); may "
                 "be repeated")
      ->allow_extra_args(false);  // one key=value per --profile: SCRIPT must not be taken for a second
  add_trace_options(app, args->trace);
  app.footer(kFooter);
  return [args, &app]() { return run_python(*args, app.remaining()); };
}}};

}  // namespace
}  // namespace wsemu::cli
