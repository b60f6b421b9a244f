// A fixed-capacity FIFO of plain values: the storage of router buffers, queues and edge ports.
//
// Contract: plain data (no heap, no pointers), so that a wafer can be copied as a snapshot.
// The usable capacity is chosen at run time (the profile's depth) up to the compile-time
// bound N; push on a full ring or pop on an empty one is a precondition violation that the
// callers check first (they turn it into backpressure or a stall), never undefined behaviour
// here: both are guarded and ignored.
#pragma once

#include <array>
#include <cstdint>

namespace wsemu::emu {

template <typename T, int N>
struct Ring {
  // The counters first: the front item of a shallow ring then shares their cache line.
  uint8_t head = 0;
  uint8_t count = 0;
  uint8_t capacity = N;
  std::array<T, N> items{};

  bool empty() const { return count == 0; }
  bool full() const { return count >= capacity; }
  int size() const { return count; }
  int space() const { return capacity - count; }
  const T& front() const { return items[head]; }
  T& front() { return items[head]; }
  const T& at(int i) const { return items[(head + i) % N]; }
  void push(const T& v) {
    if (count >= capacity) return;
    items[(head + count) % N] = v;
    ++count;
  }
  T pop() {
    T v = items[head];
    if (count == 0) return v;
    head = uint8_t((head + 1) % N);
    --count;
    return v;
  }
  void clear() { head = count = 0; }
};

}  // namespace wsemu::emu
