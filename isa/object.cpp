#include "isa/object.hpp"

#include <fmt/format.h>

namespace wsemu::isa {

std::string_view elem_type_name(ElemType t) {
  switch (t) {
    case ElemType::I16: return "i16";
    case ElemType::U16: return "u16";
    case ElemType::I32: return "i32";
    case ElemType::U32: return "u32";
    case ElemType::F16: return "f16";
    case ElemType::F32: return "f32";
  }
  return "?";
}

std::optional<ElemType> elem_type_named(std::string_view name) {
  for (const ElemType t : {ElemType::I16, ElemType::U16, ElemType::I32, ElemType::U32, ElemType::F16, ElemType::F32})
    if (elem_type_name(t) == name) return t;
  return std::nullopt;
}

int elem_bytes(ElemType t) {
  switch (t) {
    case ElemType::I16:
    case ElemType::U16:
    case ElemType::F16: return 2;
    default: return 4;
  }
}

const Symbol* ObjectImage::find_symbol(std::string_view name) const { return find_named(symbols, name); }

const Function* ObjectImage::find_function(std::string_view name) const { return find_named(functions, name); }

std::string ObjectImage::source_location(uint32_t pc) const {
  if (pc >= source_locations.size()) return "";
  const SourceLocation& l = source_locations[pc];
  if (l.file == 0 || l.file > source_files.size()) return "";
  return l.col > 0 ? fmt::format("{}:{}:{}", source_files[l.file - 1], l.line, l.col)
                   : fmt::format("{}:{}", source_files[l.file - 1], l.line);
}

}  // namespace wsemu::isa
