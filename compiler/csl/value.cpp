#include "compiler/csl/value.hpp"

#include <cstdio>

namespace wsemu::compiler::csl {

TypeRef make_type(TK kind) {
  auto t = std::make_shared<Type>();
  t->kind = kind;
  return t;
}

TypeRef int_type(int bits, bool is_signed) {
  auto t = std::make_shared<Type>();
  t->kind = TK::INT;
  t->bits = bits;
  t->is_signed = is_signed;
  return t;
}

TypeRef float_type(int bits) {
  auto t = std::make_shared<Type>();
  t->kind = TK::FLOAT;
  t->bits = bits;
  return t;
}

bool same_type(const TypeRef& a, const TypeRef& b) {
  if (!a || !b) return a == b;
  if (a == b) return true;
  if (a->kind != b->kind || a->bits != b->bits || a->is_signed != b->is_signed || a->dims != b->dims ||
      a->dsd_kind != b->dsd_kind)
    return false;
  if (a->kind == TK::STRUCT || a->kind == TK::ENUM) return a->name == b->name && a->field_names == b->field_names;
  if (a->elem || b->elem) return same_type(a->elem, b->elem);
  return true;
}

bool Type::is_comptime_only() const {
  switch (kind) {
    case TK::COMPTIME_INT: case TK::COMPTIME_FLOAT: case TK::TYPE: case TK::COMPTIME_STRING:
    case TK::COMPTIME_STRUCT: case TK::MODULE: case TK::ANYTYPE: return true;
    default: return false;
  }
}

int64_t Type::element_count() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int Type::byte_size() const {
  switch (kind) {
    case TK::BOOL: return 2;
    case TK::INT: return bits <= 16 ? 2 : bits == 32 ? 4 : 8;
    case TK::FLOAT: return bits / 8;
    case TK::MANY_PTR: case TK::PTR: return 4;
    case TK::COLOR: case TK::DATA_TASK_ID: case TK::LOCAL_TASK_ID: case TK::CONTROL_TASK_ID: return 2;
    case TK::ENUM: return 2;
    case TK::ARRAY: return elem ? int(element_count()) * elem->byte_size() : 0;
    default: return 0;
  }
}

std::string Type::str() const {
  switch (kind) {
    case TK::VOID: return "void";
    case TK::BOOL: return "bool";
    case TK::INT: return std::string(is_signed ? "i" : "u") + std::to_string(bits);
    case TK::FLOAT: return "f" + std::to_string(bits);
    case TK::COMPTIME_INT: return "comptime_int";
    case TK::COMPTIME_FLOAT: return "comptime_float";
    case TK::TYPE: return "type";
    case TK::COMPTIME_STRING: return "comptime_string";
    case TK::COMPTIME_STRUCT: return "comptime_struct";
    case TK::COLOR: return "color";
    case TK::DATA_TASK_ID: return "data_task_id";
    case TK::LOCAL_TASK_ID: return "local_task_id";
    case TK::CONTROL_TASK_ID: return "control_task_id";
    case TK::DSD: return dsd_kind.empty() ? "dsd" : dsd_kind;
    case TK::DSR: return "dsr";
    case TK::INPUT_QUEUE: return "input_queue";
    case TK::OUTPUT_QUEUE: return "output_queue";
    case TK::ARRAY: {
      std::string s = "[";
      for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
      return s + "]" + (elem ? elem->str() : "?");
    }
    case TK::MANY_PTR: return "[*]" + (elem ? elem->str() : "?");
    case TK::PTR: return "*" + (elem ? elem->str() : "?");
    case TK::FN: return "fn";
    case TK::MODULE: return "imported_module";
    case TK::STRUCT: return name.empty() ? "struct" : name;
    case TK::ENUM: return name.empty() ? "enum" : name;
    case TK::DIRECTION: return "direction";
    case TK::UT_ID: return "ut_id";
    case TK::NULL_T: return "@TypeOf(null)";
    case TK::UNDEFINED_T: return "@TypeOf(undefined)";
    case TK::ANYTYPE: return "anytype";
  }
  return "?";
}

const Value* StructValue::find(const std::string& name) const {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return &values[i];
  return nullptr;
}

std::string DsdValue::key() const {
  std::string k = kind + "|" + std::to_string(reinterpret_cast<uintptr_t>(base)) + "|" + std::to_string(base_offset) +
                  "|" + std::to_string(elem_bits) + "|" + std::to_string(color) + "|" + std::to_string(queue) + "|" +
                  std::to_string(control) + "|" + std::to_string(wavelet_index) + "|" + std::to_string(advance_switch) +
                  "|" + on_control;
  for (int64_t e : extents) k += "|e" + std::to_string(e);
  for (int64_t s : strides) k += "|s" + std::to_string(s);
  return k;
}

std::string Value::str() const {
  switch (k) {
    case K::VOID: return "void";
    case K::INT: return std::to_string(i);
    case K::FLOAT: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", f);
      return buf;
    }
    case K::BOOL: return i ? "true" : "false";
    case K::TYPE: return type ? type->str() : "type";
    case K::STRING: return s;
    case K::STRUCT: {
      std::string out = ".{";
      for (size_t n = 0; n < st->values.size(); ++n) {
        out += n ? ", " : " ";
        if (n < st->names.size() && !st->names[n].empty()) out += "." + st->names[n] + " = ";
        out += st->values[n].str();
      }
      return out + " }";
    }
    case K::MODULE: return "module";
    case K::FUNCTION: return "fn " + (fn ? fn->name : std::string("?"));
    case K::GLOBAL: return "global";
    case K::POINTER: return "&global+" + std::to_string(offset);
    case K::DSD: return "dsd(" + (dsd ? dsd->key() : "") + ")";
    case K::COLOR: return "color(" + std::to_string(i) + ")";
    case K::TASK_ID: return "task_id(" + std::to_string(i) + ")";
    case K::QUEUE: return "queue(" + std::to_string(i) + ")";
    case K::ENUM: return "enum(" + std::to_string(i) + ")";
    case K::DIRECTION: return "direction(" + std::to_string(i) + ")";
    case K::UT_ID: return "ut_id(" + std::to_string(i) + ")";
    case K::RUNTIME: return "runtime";
    case K::DSR_VAR: return "dsr " + s;
    case K::UNDEFINED: return "undefined";
    case K::NULL_V: return "null";
    case K::BUILTIN_NAME: return s;
  }
  return "?";
}

Value make_numbered(Value::K k, int64_t i, TypeRef t) {
  Value x;
  x.k = k;
  x.i = i;
  x.type = std::move(t);
  return x;
}

Value make_int(int64_t v, TypeRef t) { return make_numbered(Value::K::INT, v, t ? t : make_type(TK::COMPTIME_INT)); }

Value make_float(double v, TypeRef t) {
  Value x;
  x.k = Value::K::FLOAT;
  x.f = v;
  x.type = t ? t : make_type(TK::COMPTIME_FLOAT);
  return x;
}

Value make_bool(bool v) { return make_numbered(Value::K::BOOL, v, make_type(TK::BOOL)); }

Value make_void() { return make_numbered(Value::K::VOID, 0, make_type(TK::VOID)); }

Value make_type_value(TypeRef t) {
  Value x;
  x.k = Value::K::TYPE;
  x.type = std::move(t);
  return x;
}

}  // namespace wsemu::compiler::csl
