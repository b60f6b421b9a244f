// Internal to the CSL front end: the state of one function being generated (codegen.cpp).
//
// Register convention of generated code (each function's code follows it; see compiler/README.md):
// r1..r7 hold expression temporaries (r1 also the return value), r8..r12 hold run-time locals and
// loop variables (parameter k arrives in r(8+k)), r13..r15 the scalar operands of asynchronous
// vector ops (read for every element while the task goes on); r0 is the data task's wavelet. A
// call saves the caller's live registers in its spill area and restores them after.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "compiler/csl/compiler_impl.hpp"

namespace wsemu::compiler::csl {

struct FnGen {
  Program* p = nullptr;
  FnInst* fi = nullptr;
  int temp_top = 1;                 // next free temporary r1..r7
  std::array<bool, 16> pool{};      // r8..r12 in use
  struct Loop {
    std::string brk, cont;
  };
  std::vector<Loop> loops;
  std::string ret_label;
  TypeRef ret_type;
  std::string spill;                // name of the spill area
  int spill_words = 0;
  int dsr_temp = 0;                 // expression-temporary descriptor registers used by this statement
};

}  // namespace wsemu::compiler::csl
