// The hang report: what every blocked PE waits on, and the cycle of waits if there is one.
//
// Contract: built by the wafer when a cycle passes in which nothing could make progress while
// work is still pending (a running or activated task, a stalled stream, wavelets in buffers or
// queues). Plain data plus a readable rendering; building it never changes the wafer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "emulator/queues.hpp"

namespace wsemu::emu {

struct Wait {
  enum class Kind : uint8_t {
    MAIN_THREAD,       // the running task's instruction or synchronous vector op is stalled
    MICROTHREAD,       // an asynchronous vector op is stalled
    TASK_BLOCKED,      // a local task is activated but blocked
    INPUT_UNCONSUMED,  // wavelets sit in an input queue / color slot that no task or op takes
    OUTPUT_PENDING,    // wavelets sit in an output queue that the router cannot take
    ROUTER,            // wavelets sit in a router buffer and cannot move on
    TEARDOWN,          // a color is torn down at this router and nothing has ended it (tdexit)
  };
  Kind kind = Kind::MAIN_THREAD;
  StallReason reason = StallReason::NONE;
  int task = -1;
  int queue = -1;
  int color = -1;
  int dsr = -1;
  int microthread = -1;
  int waiting = 0;           // wavelets held
  std::string source;        // the stalled instruction's place in the generated-from source ("pe.csl:12:5"), or ""
  std::string text;          // one readable line
};

struct BlockedPe {
  int x = 0, y = 0;
  int task = -1;              // the running task, -1 when none
  std::string task_name;
  std::vector<Wait> waits;
};

struct HangReport {
  uint64_t cycle = 0;
  std::vector<BlockedPe> pes;  // in fabric order (y, then x)
  // A cycle of PEs each waiting on the next (the wait-for graph), empty when there is none.
  std::vector<std::pair<int, int>> wait_cycle;
  // Pending work that waits on the host: edge ports full of output, inputs fed from the edge.
  std::vector<std::string> host_waits;

  const BlockedPe* find(int x, int y) const;
  std::string to_string() const;
  nlohmann::json to_json() const;
};

}  // namespace wsemu::emu
