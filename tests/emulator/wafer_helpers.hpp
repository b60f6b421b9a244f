// Test helpers for driving a Wafer: assembling test programs, route shorthands, the start of a
// single-PE test and typed SRAM reads.
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
#include "isa/assembler.hpp"

namespace wsemu::testing {

using emu::Direction;

// Test programs are written in wsemu assembly and built by the product's assembler. A program
// that does not assemble fails the test with the assembler's diagnostics and throws, so that
// nothing runs a half-built program.
inline std::shared_ptr<const isa::ObjectImage> assemble(std::string_view source,
                                                        std::map<std::string, int64_t> params = {}) {
  isa::AssembleOptions options;
  options.params = std::move(params);
  isa::AssembleResult r = isa::assemble(source, "test.wsa", options);
  if (!r.object) {
    std::string errors;
    for (const isa::Diagnostic& d : r.errors) errors += d.to_string() + "\n";
    ADD_FAILURE() << "the test program does not assemble:\n" << errors;
    throw std::runtime_error("the test program does not assemble");
  }
  return std::make_shared<const isa::ObjectImage>(std::move(*r.object));
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

}  // namespace wsemu::testing
