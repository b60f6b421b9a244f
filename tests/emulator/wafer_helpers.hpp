// Test helpers for driving a Wafer: assembling test programs, route shorthands, the start of a
// single-PE test (start_pe, or the SinglePe fixture that also makes the wafer), typed SRAM
// reads and the check of a kernel error.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <initializer_list>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/wafer.hpp"
#include "tests/fixed_program.hpp"

namespace wsemu::testing {

using emu::Direction;

// Test programs are written in wsemu assembly and built by the product's assembler
// (assemble_or_throw); one that does not assemble also fails the test with the diagnostics.
inline std::shared_ptr<const isa::ObjectImage> assemble(std::string_view source,
                                                        std::map<std::string, int64_t> params = {}) {
  try {
    return assemble_or_throw(source, "test.wsa", std::move(params));
  } catch (const std::runtime_error& e) {
    ADD_FAILURE() << e.what();
    throw;
  }
}

// The SRAM address of a data symbol: the assembler places data right after the code, so tests
// find their buffers by name rather than at fixed addresses.
inline uint32_t addr(const isa::ObjectImage& program, std::string_view symbol) {
  const isa::Symbol* s = program.find_symbol(symbol);
  if (!s) throw std::runtime_error("no data symbol " + std::string(symbol));
  return s->address;
}

// "NESWR" letters to a direction mask: N, E, S, W, R (RAMP).
inline emu::DirectionMask dirs(std::string_view letters) {
  emu::DirectionMask m = 0;
  for (char c : letters) {
    switch (c) {
      case 'N': m |= emu::bit(Direction::NORTH); break;
      case 'E': m |= emu::bit(Direction::EAST); break;
      case 'S': m |= emu::bit(Direction::SOUTH); break;
      case 'W': m |= emu::bit(Direction::WEST); break;
      case 'R': m |= emu::bit(Direction::RAMP); break;
      default: ADD_FAILURE() << "bad direction letter " << c;
    }
  }
  return m;
}

inline emu::ColorRoute route(std::string_view rx, std::string_view tx) {
  return emu::ColorRoute::simple(dirs(rx), dirs(tx));
}

// Checks that `now` is a ring of two positions, rx0 -> tx0 then rx1 -> tx1, back at position 0.
inline void expect_ring_of_two(const emu::ColorRoute& now, std::string_view rx0, std::string_view tx0,
                               std::string_view rx1, std::string_view tx1) {
  EXPECT_EQ(now.positions[0], (emu::RoutePosition{dirs(rx0), dirs(tx0)}));
  EXPECT_EQ(now.positions[1], (emu::RoutePosition{dirs(rx1), dirs(tx1)}));
  EXPECT_EQ(now.num_positions, 2);
  EXPECT_TRUE(now.ring_mode);
  EXPECT_EQ(now.current, 0);
}

// A route of a single-PE test: color, receive letters, transmit letters (see dirs()).
struct PeRoute {
  int color;
  std::string_view rx, tx;
};

// How most single-PE tests begin: `program` at PE (0,0), `routes` set there, local task
// `task` activated.
inline void start_pe(emu::Wafer& w, std::shared_ptr<const isa::ObjectImage> program,
                     std::initializer_list<PeRoute> routes = {}, int task = 10) {
  w.load_program(0, 0, std::move(program));
  for (const PeRoute& r : routes) w.set_route(0, 0, r.color, route(r.rx, r.tx));
  w.activate_task(0, 0, task);
}

template <typename T>
std::vector<T> read(emu::Wafer& w, int x, int y, uint32_t address, size_t n) {
  std::vector<T> out(n);
  w.read_sram(x, y, address, std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.data()), n * sizeof(T)));
  return out;
}

// The entry of most single-PE test programs: `main`, local task 10.
inline const std::string kMainTask = ".task main, local, 10\n";

// A single-PE test: `source` assembled and started as start_pe() does on a 1 x 1 wafer of the
// program's .arch (wse2 when it names none); reads go by symbol name.
struct SinglePe {
  explicit SinglePe(std::string_view source, std::initializer_list<PeRoute> routes = {}, int task = 10)
      : program(assemble(source)), wafer(emu::arch_profile(program->arch.empty() ? "wse2" : program->arch), 1, 1) {
    start_pe(wafer, program, routes, task);
  }

  template <typename T>
  std::vector<T> read(std::string_view symbol, size_t n) {
    return testing::read<T>(wafer, 0, 0, addr(*program, symbol), n);
  }
  uint32_t word(std::string_view symbol) { return read<uint32_t>(symbol, 1)[0]; }
  emu::RunResult run_ok(uint64_t max_cycles = 100000);

  const std::shared_ptr<const isa::ObjectImage> program;
  emu::Wafer wafer;
};

// The fp32 bit pattern of `f`, for wavelet payloads that carry floats.
inline uint32_t fbits(float f) { return std::bit_cast<uint32_t>(f); }

inline emu::Wavelet data_wavelet(uint8_t color, uint32_t payload) { return {payload, color, false, false}; }
inline emu::Wavelet control_wavelet(uint8_t color, uint32_t payload) { return {payload, color, true, false}; }

// Pushes every wavelet into the edge port, stepping the wafer while the port is full.
inline void push_all(emu::Wafer& w, int x, int y, Direction side, const std::vector<emu::Wavelet>& in,
                     int max_cycles = 10000) {
  size_t next = 0;
  for (int c = 0; c < max_cycles && next < in.size(); ++c) {
    while (next < in.size() && w.push_edge(x, y, side, in[next])) ++next;
    if (next < in.size()) w.step();
  }
  ASSERT_EQ(next, in.size()) << "the edge port did not take every wavelet";
}

// Pops every wavelet waiting at the edge port; their payloads in order.
inline std::vector<uint32_t> drain(emu::Wafer& w, int x, int y, Direction side) {
  std::vector<uint32_t> out;
  while (auto wavelet = w.pop_edge(x, y, side)) out.push_back(wavelet->payload);
  return out;
}

inline emu::RunResult run_ok(emu::Wafer& w, uint64_t max_cycles = 100000) {
  emu::RunResult r = w.run(max_cycles);
  EXPECT_EQ(r.status, emu::RunResult::Status::QUIESCENT) << r.to_string();
  return r;
}

inline emu::RunResult SinglePe::run_ok(uint64_t max_cycles) { return testing::run_ok(wafer, max_cycles); }

// `r` ended in a kernel error whose message holds `text`.
inline void expect_kernel_error(const emu::RunResult& r, std::string_view text) {
  ASSERT_EQ(r.status, emu::RunResult::Status::FAULT) << r.to_string();
  EXPECT_EQ(r.fault->kind, emu::FaultKind::KERNEL_ERROR) << r.to_string();
  EXPECT_NE(r.fault->message.find(text), std::string::npos) << r.fault->to_string();
}

// A row of a table of programs that must fail: the code that ends the table's program, and the
// text its kernel error holds.
struct KernelErrorCase {
  std::string code, message;
};

// Runs `program` + each case's code on one PE (SinglePe) for at most `max_cycles`: each must end
// in its kernel error, which `also(fault)` checks further.
template <class Check>
void expect_kernel_errors(const std::string& program, std::initializer_list<KernelErrorCase> cases,
                          uint64_t max_cycles, Check also) {
  for (const KernelErrorCase& c : cases) {
    SCOPED_TRACE(c.code);
    SinglePe pe(program + c.code);
    const emu::RunResult r = pe.wafer.run(max_cycles);
    ASSERT_NO_FATAL_FAILURE(expect_kernel_error(r, c.message));
    also(*r.fault);
  }
}

}  // namespace wsemu::testing
