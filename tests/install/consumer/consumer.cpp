// Uses an installed wsemu as a library: assembles a one-task program, runs it on a 1 x 1 wafer
// and prints the word it stored (3 * 14 = 42, worked by hand), and says whether the installed
// firmware (share/wsemu/firmware) is where the host runtime looks for it.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "emulator/wafer.hpp"
#include "firmware/memcpy_protocol.hpp"
#include "isa/assembler.hpp"
#include "runtime/host/sdk_runtime.hpp"

int main() {
  wsemu::isa::AssembleResult r = wsemu::isa::assemble(R"(
.task main, local, 10
.data
out: .u32 0
.code
main:
        li      r1, 3
        li      r2, 14
        mul     r3, r1, r2
        li      r4, out
        st32    [r4], r3
        exit
)",
                                                      "consumer.wsa");
  if (!r.object) {
    for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.to_string().c_str());
    return 1;
  }
  auto program = std::make_shared<const wsemu::isa::ObjectImage>(std::move(*r.object));
  wsemu::emu::Wafer wafer(wsemu::emu::arch_profile("wse2"), 1, 1);
  wafer.load_program(0, 0, program);
  wafer.activate_task(0, 0, 10);
  const wsemu::emu::RunResult run = wafer.run(1000);
  uint32_t out = 0;
  wafer.read_sram(0, 0, program->find_symbol("out")->address,
                  std::span<uint8_t>(reinterpret_cast<uint8_t*>(&out), sizeof out));
  std::printf("out = %u after %llu cycles\n", out, static_cast<unsigned long long>(run.cycle));
  const auto firmware = std::filesystem::path(wsemu::firmware::include_dir());
  std::printf("firmware: %s (%s)\n", firmware.c_str(),
              std::filesystem::exists(firmware / "memcpy.wsa") ? "found" : "missing");
  return out == 42 ? 0 : 1;
}
