// `wsemu cslc`: CSL layout file -> OUT_DIR/out.wsx + out.json + the generated sources
// (compiler/csl/cslc.hpp). Shaped like the SDK's cslc so that commands_wse2.sh lines work.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "compiler/csl/cslc.hpp"
#include "compiler/executable/executable_io.hpp"
#include "firmware/memcpy_protocol.hpp"
#include "tools/wsemu/subcommand.hpp"

namespace wsemu::cli {
namespace {

constexpr const char* kFooter = R"(
CSL as wsemu supports it is described in compiler/README.md. Example (the SDK's command line):

  wsemu cslc layout.csl --arch=wse2 --fabric-dims=8,3 --fabric-offsets=4,1 \
      --params=M:4,N:6 -o out --memcpy --channels 1

writes out/out.wsx (the executable), out/out.json (the compile parameters, as run.py reads them:
json.load(open("out/out.json"))["params"]["M"]) and the generated layout.wsl and pe_*.wsa.

Exit status: 0 when the executable was written; 2 on a usage error or any error in the program
(printed as file:line:col: error: message, with the source line and a caret).
)";

struct CslcArgs {
  std::string layout, out_dir = "out", arch = "wse2", dims, offsets, west_buf, east_buf, channels = "1";
  std::vector<std::string> params, colors, import_paths;
  bool memcpy = false, verbose = false;
};

// The SDK's list options: comma-separated NAME:VALUE items, the option repeatable. With
// `unique`, a name given twice is an error (which of two values a param would get is not
// something a user should have to guess).
bool parse_pairs(const std::vector<std::string>& groups, const std::string& option, const std::string& form,
                 bool unique, std::vector<std::pair<std::string, std::string>>& out, std::string& error) {
  for (const std::string& group : groups) {
    size_t start = 0;
    while (start <= group.size()) {
      size_t end = group.find(',', start);
      if (end == std::string::npos) end = group.size();
      const std::string item = group.substr(start, end - start);
      start = end + 1;
      if (item.empty()) continue;
      const size_t colon = item.find(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == item.size()) {
        error = option + " " + item + ": expected " + form;
        return false;
      }
      const std::string name = item.substr(0, colon);
      for (const auto& [n, v] : out)
        if (unique && n == name) {
          error = option + ": '" + name + "' is given twice";
          return false;
        }
      out.emplace_back(name, item.substr(colon + 1));
    }
  }
  return true;
}

int usage(const std::string& msg) {
  std::fprintf(stderr, "wsemu cslc: error: %s\n", msg.c_str());
  return 2;
}

bool parse_pair(const std::string& text, int& a, int& b) {
  size_t comma = text.find(',');
  if (comma == std::string::npos) return false;
  try {
    size_t p1 = 0, p2 = 0;
    long x = std::stol(text.substr(0, comma), &p1), y = std::stol(text.substr(comma + 1), &p2);
    if (p1 != comma || p2 != text.size() - comma - 1 || x < 0 || y < 0 || x > 100000 || y > 100000) return false;
    a = int(x);
    b = int(y);
    return true;
  } catch (...) {
    return false;
  }
}

bool parse_count(const std::string& text, int& v) {
  try {
    size_t p = 0;
    long x = std::stol(text, &p);
    if (p != text.size() || x < 0 || x > 1000000) return false;
    v = int(x);
    return true;
  } catch (...) {
    return false;
  }
}

int run_cslc(const CslcArgs& a, const std::vector<std::string>& extras) {
  if (!extras.empty()) return usage("unexpected argument '" + extras[0] + "' (see wsemu cslc --help)");
  std::string out_dir = a.out_dir;
  if (!out_dir.empty() && out_dir[0] == '=') out_dir.erase(0, 1);  // `-o=out`, as the SDK's scripts write it
  if (a.layout.empty()) return usage("no layout file given (wsemu cslc layout.csl --fabric-dims=W,H ...)");
  compiler::csl::CslOptions o;
  o.layout_file = a.layout;
  if (a.arch != "wse2" && a.arch != "wse3") return usage("--arch must be wse2 or wse3, not '" + a.arch + "'");
  o.arch = a.arch;
  if (!a.dims.empty() && !parse_pair(a.dims, o.placement.fabric_w, o.placement.fabric_h))
    return usage("--fabric-dims=" + a.dims + ": expected W,H (e.g. --fabric-dims=8,3)");
  if (!a.offsets.empty() && !parse_pair(a.offsets, o.placement.offset_x, o.placement.offset_y))
    return usage("--fabric-offsets=" + a.offsets + ": expected X,Y (e.g. --fabric-offsets=4,1)");
  if (!parse_count(a.channels, o.channels) || o.channels < 1 || o.channels > 16)
    return usage("--channels=" + a.channels + ": expected 1..16");
  if (!a.west_buf.empty() && !parse_count(a.west_buf, o.width_west_buf)) return usage("--width-west-buf: expected a count");
  if (!a.east_buf.empty() && !parse_count(a.east_buf, o.width_east_buf)) return usage("--width-east-buf: expected a count");
  std::string error;
  if (!parse_pairs(a.colors, "--colors", "NAME:COLOR (e.g. --colors=x_in:1)", false, o.colors, error) ||
      !parse_pairs(a.params, "--params", "NAME:VALUE (e.g. --params=M:4,N:6)", true, o.params, error))
    return usage(error);
  o.import_paths = a.import_paths;
  o.memcpy = a.memcpy;
  o.out_dir = out_dir;
  o.asm_include_dirs.push_back(firmware::include_dir());
  compiler::csl::CslResult r = compiler::csl::compile_csl(o);
  for (const std::string& line : r.comptime_prints) std::printf("%s\n", line.c_str());
  for (const auto& d : r.diagnostics) std::fprintf(stderr, "%s\n", d.to_string().c_str());
  if (!r.ok()) {
    std::fprintf(stderr, "wsemu cslc: compilation failed; no executable written\n");
    return 2;
  }
  namespace fs = std::filesystem;
  try {
    compiler::save_executable(*r.executable, (fs::path(out_dir) / "out.wsx").string());
    nlohmann::json j;
    j["params"] = nlohmann::json::object();
    for (const auto& [n, v] : o.params) j["params"][n] = v;
    j["colors"] = nlohmann::json::object();
    for (const auto& [n, v] : o.colors) j["colors"][n] = v;
    j["arch"] = o.arch;
    j["fabric"] = {{"width", o.placement.fabric_w}, {"height", o.placement.fabric_h}, {"offset_x", o.placement.offset_x}, {"offset_y", o.placement.offset_y}};
    std::ofstream out(fs::path(out_dir) / "out.json");
    out << j.dump(2) << "\n";
    if (!out) return usage("cannot write " + (fs::path(out_dir) / "out.json").string());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wsemu cslc: error: %s\n", e.what());
    return 2;
  }
  if (a.verbose)
    std::printf("wsemu cslc: wrote %s/out.wsx in %.3f s: %s\n", out_dir.c_str(), r.seconds, r.summary.c_str());
  else
    std::printf("wsemu cslc: wrote %s/out.wsx (%.3f s)\n", out_dir.c_str(), r.seconds);
  return 0;
}

const Register kCslc{Subcommand{
    "cslc", [](CLI::App& app) -> std::function<int()> {
      auto args = std::make_shared<CslcArgs>();
      app.description("Compile a CSL program (layout file, PE programs, modules) to a wsemu executable");
      app.allow_extras();
      app.add_option("layout", args->layout, "The layout file (layout.csl)");
      app.add_option("-o,--output", args->out_dir, "Output folder (default: out)");
      app.add_option("--arch", args->arch, "wse2 (default) or wse3");
      app.add_option("--fabric-dims", args->dims, "Fabric size W,H (default: the kernel rectangle plus its offsets and one PE)");
      app.add_option("--fabric-offsets", args->offsets, "Position X,Y of the kernel rectangle (default 0,0)");
      app.add_option("--params", args->params, "Layout params NAME:VALUE[,NAME:VALUE...]; repeatable")
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      app.add_option("--colors", args->colors, "Layout params of type color NAME:COLOR[,...]; repeatable")
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      app.add_flag("--memcpy", args->memcpy, "Link the memcpy infrastructure (wsemu always links it where imported)");
      app.add_option("--channels", args->channels, "Host I/O channels 1..16 (default 1)");
      app.add_option("--width-west-buf", args->west_buf, "Accepted for compatibility (wsemu's memcpy has no buffer columns)");
      app.add_option("--width-east-buf", args->east_buf, "Accepted for compatibility");
      app.add_option("--import-path", args->import_paths, "Folder searched by @import_module; repeatable")
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      app.add_flag("-v,--verbose", args->verbose, "Print the link summary");
      app.footer(kFooter);
      return [args, &app]() { return run_cslc(*args, app.remaining()); };
    }}};

}  // namespace
}  // namespace wsemu::cli
