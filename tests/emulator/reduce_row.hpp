// The reduce algorithms of the wafer-scale reduce model (Luczynski et al., HPDC'24,
// arXiv:2404.15888) on a 1-D row of P PEs, B fp32 elements each, written from isa/README.md,
// and the model's time for each: shared by tests/emulator/reduce_model_test.cpp (the CI check)
// and tests/bench/calibration.cpp (the table).
//
// The model: T = max(C, E/N + L) + (2 T_R + 1) D, C the wavelets that one PE's ramp must take,
// E the wavelet-hops, N the links used, L the longest path, D the dependent steps. Per
// algorithm (root at the east end for chain and star, at PE 0 for the tree):
//   chain: PE 0 `fmovs` its vector east, every other PE one `fadds` of its west input and its
//          own vector into its east output (the root: into memory). C = B, E/N + L = B + P - 1,
//          D = P - 1: T = B + (2 T_R + 2)(P - 1).
//   star:  every PE sends its vector straight to the root over the row (routers merge the
//          streams), the root adds every arriving wavelet into its vector: one `fadds` over
//          B (P - 1) elements of a descriptor that walks its B elements P - 1 times. C = B (P - 1),
//          E = B P (P - 1) / 2 on N = P - 1 links, L = P - 1, D = 1.
//   tree:  binary, log2 P rounds; in round r each PE i = 2^r mod 2^(r+1) sends its partial sum
//          2^r hops west to i - 2^r, which adds it (`fadds` from its input of that round), one
//          color per round. C = B log2 P (the root takes a vector per round), E = B (P / 2) log2 P,
//          N = P - 1, L = P - 1, D = log2 P. P must be a power of two.
// The routers of the star merge the streams wavelet by wavelet, so the root's wavelets do not
// arrive in element order: the star's check is the sum of all elements (every value is a small
// integer, so any order is exact), the chain's and tree's are element by element.
//
// Contract: builds its own Wafer; every PE starts at cycle 0 (the host activates task 10 on
// all); `start` is PE 0's cycle-counter stamp before its first op, `end` the root's after its
// last. Never changes a profile; throws std::runtime_error when a program does not
// assemble or the run does not end quiescent.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulator/wafer.hpp"
#include "tests/fixed_program.hpp"

namespace wsemu::reduce_row {

enum class Algorithm { CHAIN, STAR, TREE };
inline const char* algorithm_name(Algorithm a) {
  return a == Algorithm::CHAIN ? "chain" : a == Algorithm::STAR ? "star" : "tree";
}

inline double model_cycles(Algorithm a, int P, int B, int t_r) {
  const double p = P, b = B, step = 2.0 * t_r + 1;
  switch (a) {
    case Algorithm::CHAIN: return std::max(b, b + p - 1) + step * (p - 1);
    case Algorithm::STAR: return std::max(b * (p - 1), b * p * (p - 1) / 2 / (p - 1) + p - 1) + step;
    case Algorithm::TREE: {
      const double rounds = std::log2(p);
      return std::max(b * rounds, b * (p / 2) * rounds / (p - 1) + p - 1) + step * rounds;
    }
  }
  return 0;
}

struct Result {
  uint64_t start = 0, end = 0;
  std::vector<float> root_values;  // the root's vector after the reduce
  uint64_t cycles() const { return end - start; }
};

// x_i[k]: small integers, so every sum is exact in fp32 whatever the order.
inline float value(int i, int k) { return float((i % 5) + 1) * float(k % 3 + 1); }

inline emu::ColorRoute route(emu::DirectionMask rx, emu::DirectionMask tx) { return emu::ColorRoute::simple(rx, tx); }

inline Result run(const emu::ArchProfile& profile, Algorithm a, int P, int B) {
  using emu::Direction;
  const emu::DirectionMask W = emu::bit(Direction::WEST), E = emu::bit(Direction::EAST),
                           R = emu::bit(Direction::RAMP);
  if (P < 2) throw std::runtime_error("a reduce needs at least 2 PEs");
  int rounds = 0;
  while ((1 << rounds) < P) ++rounds;
  if (a == Algorithm::TREE && (1 << rounds) != P) throw std::runtime_error("the tree needs a power-of-two row");
  const std::string arch = profile.data_task_by_queue ? "wse3" : "wse2";
  const int root = a == Algorithm::TREE ? 0 : P - 1;
  const std::string b = std::to_string(B), n_star = std::to_string(B * (P - 1)), pm1 = std::to_string(P - 1);

  // Output queue 2 (6 deep on wse2, 8 on wse3) and input queues 2..7, so that no stream is
  // throttled by a queue shallower than the ramp's round trip.
  auto program = [&](int i) {
    std::string s = ".arch " + arch + "\n.data\nx: .f32 [" + b + "]\nres: .f32 [" + b + "]\nt0: .u32 [1]\nt1: .u32 [1]\n";
    s += ".dsd mine = mem1d(x, " + b + ")\n.dsd resd = mem1d(res, " + b + ")\n";
    std::string body;
    if (a == Algorithm::CHAIN) {
      const int in_color = i % 2 ? 1 : 2, out_color = i % 2 ? 2 : 1;
      if (i > 0) s += ".dsd in = fabin(" + std::to_string(in_color) + ", 3, " + b + ")\n";
      if (i < P - 1) s += ".dsd out = fabout(" + std::to_string(out_color) + ", 2, " + b + ")\n";
      body = i == 0 ? "  fmovs out, mine\n" : i < P - 1 ? "  fadds out, in, mine\n" : "  fadds resd, in, mine\n";
    } else if (a == Algorithm::STAR) {
      if (i < P - 1) {
        s += ".dsd out = fabout(1, 2, " + b + ")\n";
        body = "  fmovs out, mine\n";
      } else {
        // res starts as the root's own vector (the host writes it); B (P - 1) wavelets are
        // added into it, walking its B elements P - 1 times (stride 0 in dimension 1).
        s += ".dsd in = fabin(1, 3, " + n_star + ")\n.dsd acc = mem4d(res, [" + b + ", " + pm1 + "], [1, 0])\n";
        body = "  fadds acc, acc, in\n";
      }
    } else {
      // Round r: colour r + 1, input queue r + 2.
      for (int r = 0; r < rounds; ++r) {
        const int span = 1 << r;
        if (i % (2 * span) == 0 && i + span < P) {
          s += ".dsd in" + std::to_string(r) + " = fabin(" + std::to_string(r + 1) + ", " + std::to_string(r + 2) +
               ", " + b + ")\n";
          body += "  fadds resd, resd, in" + std::to_string(r) + "\n";
        } else if (i % (2 * span) == span) {
          s += ".dsd out = fabout(" + std::to_string(r + 1) + ", 2, " + b + ")\n";
          body += "  fmovs out, resd\n";
          break;
        }
      }
    }
    s += ".code\n.task main, local, 10\nmain:\n";
    if (i == 0) s += "  tsc r5\n  st32 [t0], r5\n";
    s += body;
    if (i == root) s += "  tsc r5\n  st32 [t1], r5\n";
    return testing::assemble_or_throw(s + "  exit\n", "reduce.wsa");
  };

  emu::Wafer w(profile, P, 1);
  std::vector<std::shared_ptr<const isa::ObjectImage>> images;
  for (int i = 0; i < P; ++i) {
    images.push_back(program(i));
    const isa::ObjectImage& img = *images.back();
    w.load_program(i, 0, images.back(), i, 0);
    std::vector<float> x(static_cast<size_t>(B));
    for (int k = 0; k < B; ++k) x[size_t(k)] = value(i, k);
    const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(x.data()), x.size() * 4);
    w.write_sram(i, 0, img.find_symbol("x")->address, bytes);
    if (a != Algorithm::CHAIN) w.write_sram(i, 0, img.find_symbol("res")->address, bytes);
  }
  // Routes.
  for (int i = 0; i < P; ++i) {
    if (a == Algorithm::CHAIN) {
      if (i > 0) w.set_route(i, 0, i % 2 ? 1 : 2, route(W, R));
      if (i < P - 1) w.set_route(i, 0, i % 2 ? 2 : 1, route(R, E));
    } else if (a == Algorithm::STAR) {
      w.set_route(i, 0, 1, i == 0 ? route(R, E) : i < P - 1 ? route(W | R, E) : route(W, R));
    }
  }
  if (a == Algorithm::TREE)
    for (int r = 0; r < rounds; ++r) {
      const int span = 1 << r;
      for (int j = 0; j + span < P; j += 2 * span) {
        w.set_route(j, 0, r + 1, route(E, R));
        for (int m = j + 1; m < j + span; ++m) w.set_route(m, 0, r + 1, route(E, W));
        w.set_route(j + span, 0, r + 1, route(R, W));
      }
    }
  for (int i = 0; i < P; ++i) w.activate_task(i, 0, 10);
  const emu::RunResult r = w.run(50'000'000);
  if (r.status != emu::RunResult::Status::QUIESCENT)
    throw std::runtime_error(std::string(algorithm_name(a)) + " reduce did not end quiescent: " + r.to_string());
  auto read_u32 = [&](int x, const char* sym) {
    uint32_t v = 0;
    w.read_sram(x, 0, images[size_t(x)]->find_symbol(sym)->address, std::span<uint8_t>(reinterpret_cast<uint8_t*>(&v), 4));
    return v;
  };
  Result out;
  out.start = read_u32(0, "t0");
  out.end = read_u32(root, "t1");
  out.root_values.resize(size_t(B));
  w.read_sram(root, 0, images[size_t(root)]->find_symbol("res")->address,
              std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.root_values.data()), size_t(B) * 4));
  return out;
}

}  // namespace wsemu::reduce_row
