// Input and output queues of a PE core: the buffers between the core and its router's RAMP.
//
// Contract: an input queue holds wavelets that landed from the router, in arrival order; an
// output queue holds wavelets the core pushed, each usable by the router from its ready cycle
// (push cycle + 1 + profile.ramp_up_latency) on; a wavelet the router delivers in cycle t waits
// in the core's ramp (RampArrival) until t + profile.ramp_down_latency, holding its place in the
// queue (or wse2 slot) it goes to, so the ramp adds latency and never capacity. A queue is bound
// to at most one color (-1: unbound); depths come from the profile. Plain data.
#pragma once

#include <cstdint>

#include "emulator/arch_profile.hpp"
#include "emulator/ring.hpp"
#include "emulator/wavelet.hpp"

namespace wsemu::emu {

struct InputQueue {
  Ring<Wavelet, kMaxQueueDepth> ring;
  int8_t color = -1;
};

struct QueuedWavelet {
  Wavelet wavelet;
  uint64_t ready = 0;
};

// A wavelet on its way down the ramp: delivered, not yet usable.
struct RampArrival {
  Wavelet wavelet;
  uint64_t usable = 0;  // the first cycle the core sees it in its input queue or slot
};

struct OutputQueue {
  Ring<QueuedWavelet, kMaxQueueDepth> ring;
  int8_t color = -1;
  bool flushing = false;  // qflush: unbind (and activate the teardown task) once empty
};

// Why a thread of the core could not make progress this cycle.
enum class StallReason : uint8_t {
  NONE,
  INPUT_QUEUE_EMPTY,
  OUTPUT_QUEUE_FULL,
  FIFO_EMPTY,
  FIFO_FULL,
  COUNT,
};
std::string_view stall_reason_name(StallReason r);

// What a stalled thread waits on (for stats and hang reports).
struct StallInfo {
  StallReason reason = StallReason::NONE;
  int8_t queue = -1;
  int8_t color = -1;
  int8_t dsr = -1;
};

}  // namespace wsemu::emu
