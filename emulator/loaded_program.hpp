// A program ready to run: the object image plus its instructions decoded once, shared by every
// PE that runs it.
//
// Contract: immutable after construction. Code is never written while the wafer runs (a store
// into the code region is a kernel error), so the decoded copy stays valid. A word that does
// not decode is kept as invalid and is a kernel error only if it is ever executed.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "isa/instruction.hpp"
#include "isa/object.hpp"

namespace wsemu::emu {

struct LoadedProgram {
  std::shared_ptr<const isa::ObjectImage> image;
  std::vector<std::optional<isa::Instruction>> insns;

  explicit LoadedProgram(std::shared_ptr<const isa::ObjectImage> img) : image(std::move(img)) {
    insns.reserve(image->code.size());
    for (uint64_t w : image->code) insns.push_back(isa::decode(w));
  }
  uint32_t code_bytes() const { return uint32_t(image->code.size() * 8); }
  int source_line(uint32_t pc) const {
    return pc < image->source_lines.size() ? int(image->source_lines[pc]) : 0;
  }
};

}  // namespace wsemu::emu
