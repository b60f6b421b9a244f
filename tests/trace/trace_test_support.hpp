// Helpers of the trace tests: assemble the small kernels of tests/trace/kernels, place them on
// a wafer with routes, and give each test its own scratch folder.
//
// Contract: test-only. Every failure is a GoogleTest failure or a std::runtime_error naming
// the kernel file; nothing here writes outside the scratch folder.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "emulator/arch_profile.hpp"
#include "emulator/wafer.hpp"
#include "inspect/trace/trace_writer.hpp"
#include "isa/assembler.hpp"
#include "tests/text_checks.hpp"

namespace wsemu::testing {

inline std::filesystem::path source_dir() {
  const char* env = std::getenv("WSEMU_SOURCE_DIR");
  return env ? std::filesystem::path(env) : std::filesystem::path(WSEMU_TRACE_TEST_SOURCE_DIR);
}

inline std::filesystem::path kernel_path(const std::string& name) { return source_dir() / "tests/trace/kernels" / name; }

inline std::shared_ptr<const isa::ObjectImage> assemble_kernel(const std::string& name,
                                                               std::map<std::string, int64_t> params = {}) {
  isa::AssembleOptions options;
  options.params = std::move(params);
  isa::AssembleResult r = isa::assemble_file(kernel_path(name).string(), options);
  if (!r.object) {
    std::string why;
    for (const isa::Diagnostic& d : r.errors) why += d.to_string() + "\n";
    throw std::runtime_error("cannot assemble " + name + ":\n" + why);
  }
  return std::make_shared<const isa::ObjectImage>(std::move(*r.object));
}

inline emu::DirectionMask dirs(std::string_view letters) {
  emu::DirectionMask m = 0;
  for (char c : letters) {
    switch (c) {
      case 'N': m |= emu::bit(emu::Direction::NORTH); break;
      case 'E': m |= emu::bit(emu::Direction::EAST); break;
      case 'S': m |= emu::bit(emu::Direction::SOUTH); break;
      case 'W': m |= emu::bit(emu::Direction::WEST); break;
      case 'R': m |= emu::bit(emu::Direction::RAMP); break;
      default: throw std::runtime_error(std::string("bad direction letter ") + c);
    }
  }
  return m;
}

inline emu::ColorRoute route(std::string_view rx, std::string_view tx) { return emu::ColorRoute::simple(dirs(rx), dirs(tx)); }

// Runs the wafer (at most max_cycles) while a TraceWriter records it into `file`, then ends
// the recording with the run's result and detaches the writer; returns that result.
inline emu::RunResult record_run(emu::Wafer& wafer, const std::string& file, uint64_t max_cycles = 1000) {
  trace::TraceWriter writer(file, wafer);
  wafer.set_event_sink(&writer);
  const emu::RunResult r = wafer.run(max_cycles);
  writer.finish(wafer, r);
  wafer.set_event_sink(nullptr);
  return r;
}

// The golden kernel: PE(0,0) runs sender.wsa (task `main`, id 10, activated by the host),
// PE(1,0) runs accumulator.wsa; color 4 goes from P0.0's ramp east into P1.0's ramp. Another
// `sender` (burst.wsa) runs in the same place.
inline std::unique_ptr<emu::Wafer> two_pe_send_wafer(const std::string& sender = "sender.wsa") {
  auto w = std::make_unique<emu::Wafer>(emu::arch_profile("wse2"), 2, 1);
  w->load_program(0, 0, assemble_kernel(sender));
  w->load_program(1, 0, assemble_kernel("accumulator.wsa"));
  w->set_route(0, 0, 4, route("R", "E"));
  w->set_route(1, 0, 4, route("W", "R"));
  w->activate_task(0, 0, 10);
  return w;
}

// Two PEs that deadlock: each runs wait_then_send.wsa and waits for the other first.
// Color 1 goes P0.0 -> P1.0, color 2 goes P1.0 -> P0.0.
inline std::unique_ptr<emu::Wafer> deadlock_wafer() {
  auto w = std::make_unique<emu::Wafer>(emu::arch_profile("wse2"), 2, 1);
  w->load_program(0, 0, assemble_kernel("wait_then_send.wsa", {{"IN", 2}, {"OUT", 1}}));
  w->load_program(1, 0, assemble_kernel("wait_then_send.wsa", {{"IN", 1}, {"OUT", 2}}));
  w->set_route(0, 0, 1, route("R", "E"));
  w->set_route(1, 0, 1, route("W", "R"));
  w->set_route(1, 0, 2, route("R", "W"));
  w->set_route(0, 0, 2, route("E", "R"));
  w->activate_task(0, 0, 10);
  w->activate_task(1, 0, 10);
  return w;
}

// A fresh folder per test, removed afterwards unless WSEMU_KEEP_TEST_FILES is set.
class ScratchDir : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("wsemu-trace-") + info->test_suite_name() + "-" + info->name() + "-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!std::getenv("WSEMU_KEEP_TEST_FILES")) std::filesystem::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string read_file(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::filesystem::path dir_;
};

}  // namespace wsemu::testing
