// `wsemu info`: prints an architecture profile (every number of the virtual hardware) as text
// or JSON, optionally with overrides applied, so experiments can check what they changed.
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "emulator/arch_profile.hpp"
#include "emulator/fault.hpp"
#include "tools/wsemu/subcommand.hpp"

namespace wsemu::cli {
namespace {

const Register kRegister{{"info", [](CLI::App& app) -> std::function<int()> {
  auto arch = std::make_shared<std::string>("wse2");
  auto sets = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<bool>(false);
  app.description(
      "Print an architecture profile: SRAM size, colors, queue depths, microthreads, task id ranges, "
      "SIMD width of every vector timing class, cycles of every scalar class, latencies, buffer depths "
      "and the clock. Every key can be overridden with --set key=value (the same keys the emulator "
      "accepts), e.g. --set clock_mhz=1100 --set simd.V_FADDS=8.");
  app.add_option("--arch", *arch, "architecture: wse2 or wse3")->capture_default_str();
  app.add_option("--set", *sets, "override one key (key=value); may be repeated");
  app.add_flag("--json", *json, "print JSON instead of text");
  return [arch, sets, json] {
    try {
      const emu::ArchProfile profile = emu::arch_profile_with(*arch, *sets);
      if (*json)
        fmt::print("{}\n", emu::profile_to_json(profile).dump(2));
      else
        fmt::print("{}", emu::profile_to_text(profile));
      return 0;
    } catch (const emu::FaultError& e) {
      std::fprintf(stderr, "wsemu info: %s\n", e.what());
      return 2;
    }
  };
}}};

}  // namespace
}  // namespace wsemu::cli
