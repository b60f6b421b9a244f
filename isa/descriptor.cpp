#include "isa/descriptor.hpp"

namespace wsemu::isa {

std::string_view dsd_kind_name(DsdKind kind) {
  switch (kind) {
    case DsdKind::NONE: return "none";
    case DsdKind::MEM1D: return "mem1d";
    case DsdKind::MEM4D: return "mem4d";
    case DsdKind::CIRCBUF: return "circbuf";
    case DsdKind::FABIN: return "fabin";
    case DsdKind::FABOUT: return "fabout";
    case DsdKind::FIFO: return "fifo";
  }
  return "?";
}

}  // namespace wsemu::isa
