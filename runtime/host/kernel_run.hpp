// The default run of a kernel, as `wsemu run` and `wsemu check` do it: copy every input .npy
// to its symbol on every PE of the symbol's rectangle, launch the entry function, run until
// quiescent, copy the outputs back; plus the comparison of outputs with references.
//
// Contract: .npy arrays are checked against their symbol before anything runs (dtype equal to
// the symbol's element type; shape (h, w, elems) or any shape with h * w * elems elements,
// e.g. (elems,) on a one-PE rectangle); a mismatch is a HostError(USAGE) naming the file, the
// symbol and what to change. Outputs come back in the shape (elems,) for a one-PE rectangle,
// else (h, w, elems). compare() follows numpy's allclose: |got - expected| <= atol +
// rtol * |expected|, NaN equal to nothing. Nothing here prints.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/host/sdk_runtime.hpp"
#include "runtime/npy/npy.hpp"

namespace wsemu::runtime::host {

struct NamedArray {
  std::string symbol;
  npy::NpyArray array;
  std::string source;  // the file it came from, for messages
};

struct KernelRunRequest {
  std::vector<NamedArray> inputs;
  std::vector<std::string> outputs;  // symbols to copy back
  std::string launch;                // empty: the executable's only exported function
  std::vector<uint32_t> launch_args;
  MemcpyOrder order = MemcpyOrder::ROW_MAJOR;
};

// Checks `array` against host symbol `symbol`; HostError(USAGE) when it does not fit.
void check_array_for_symbol(const Executable& exe, const std::string& symbol, const npy::NpyArray& array,
                            const std::string& source);

// Runs the default sequence on a loaded runtime and returns the outputs by symbol.
std::map<std::string, npy::NpyArray> run_kernel(SdkRuntime& rt, const KernelRunRequest& request);

// The entry function: `requested` if given (must exist), else the only exported function.
std::string entry_function(const Executable& exe, const std::string& requested);

struct Mismatch {
  size_t flat_index = 0;
  std::vector<size_t> index;  // in the expected array's shape
  double got = 0, expected = 0;
};

struct Comparison {
  std::string symbol;
  size_t elements = 0;
  size_t mismatches = 0;
  double max_abs_error = 0;
  std::optional<Mismatch> worst;  // the element furthest outside its tolerance
  bool pass() const { return mismatches == 0; }
};

// Compares an output with its reference; the shapes must hold the same number of elements
// (HostError(USAGE) otherwise, naming both shapes).
Comparison compare(const std::string& symbol, const npy::NpyArray& got, const npy::NpyArray& expected, double rtol,
                   double atol);

}  // namespace wsemu::runtime::host
