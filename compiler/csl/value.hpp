// Types and comptime values of the CSL evaluator. A Value is what an expression evaluates to:
// a comptime constant (integer, float, bool, type, string, struct, color, task id, DSD, module,
// function, reference to a global variable) or, inside generated code, a run-time value held
// in a scalar register.
//
// Contract: plain data with value semantics (shared_ptr for the nested parts, never mutated
// after construction except comptime struct fields by their owner). Nothing here emits code.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/csl/ast.hpp"

namespace wsemu::compiler::csl {

enum class TK {
  VOID, BOOL, INT, FLOAT, COMPTIME_INT, COMPTIME_FLOAT, TYPE, COMPTIME_STRING, COMPTIME_STRUCT,
  COLOR, DATA_TASK_ID, LOCAL_TASK_ID, CONTROL_TASK_ID, DSD, DSR, INPUT_QUEUE, OUTPUT_QUEUE, ARRAY,
  MANY_PTR, PTR, FN, MODULE, STRUCT, ENUM, DIRECTION, UT_ID, NULL_T, UNDEFINED_T,
  ANYTYPE  // a parameter of any comptime value (the SDK's `anytype`)
};

struct Type;
using TypeRef = std::shared_ptr<const Type>;

struct Type {
  TK kind = TK::VOID;
  int bits = 0;             // INT, FLOAT
  bool is_signed = false;   // INT
  TypeRef elem;             // ARRAY, MANY_PTR, PTR
  std::vector<int64_t> dims;  // ARRAY, outermost first
  std::string dsd_kind;     // DSD: mem1d_dsd, mem4d_dsd, fabin_dsd, fabout_dsd, fifo
  std::vector<std::string> field_names;  // STRUCT, ENUM
  std::vector<TypeRef> field_types;      // STRUCT
  std::vector<int64_t> enum_values;      // ENUM
  std::string name;         // STRUCT / ENUM declared name
  std::string str() const;
  int64_t element_count() const;  // ARRAY: product of dims
  int byte_size() const;          // scalars and arrays; 0 when not representable in SRAM
  bool is_numeric() const { return kind == TK::INT || kind == TK::FLOAT || kind == TK::COMPTIME_INT || kind == TK::COMPTIME_FLOAT; }
  bool is_comptime_only() const;
};

TypeRef make_type(TK kind);
TypeRef int_type(int bits, bool is_signed);
TypeRef float_type(int bits);
bool same_type(const TypeRef& a, const TypeRef& b);

struct ModuleInstance;
struct GlobalVar;
struct Value;

struct StructValue {
  std::vector<std::string> names;  // empty names: a tuple
  std::vector<Value> values;
  const Value* find(const std::string& name) const;
};

// A comptime data-structure descriptor.
struct DsdValue {
  std::string kind;           // mem1d_dsd, mem4d_dsd, fabin_dsd, fabout_dsd
  GlobalVar* base = nullptr;  // memory DSDs
  int64_t base_offset = 0;    // elements from the start of `base`
  int elem_bits = 32;
  std::vector<int64_t> extents;  // innermost first (mem4d); extents[0] is the length
  std::vector<int64_t> strides;  // in elements
  int color = -1, queue = -1;
  bool control = false;
  int64_t wavelet_index = -1;
  bool advance_switch = false;
  std::string on_control;  // fabin: "" or "terminate"
  bool index_offset = false;  // .wavelet_index_offset: an op's .index moves the base by that many elements
  std::string priority;       // wse3 fabin or FIFO .priority: the microthread level of the async ops on it ("": none)
  Span span;               // of the @get_dsd, for errors found when the program is written
  std::string key() const;  // identity, to share one template register between equal DSDs
};

struct Value {
  enum class K {
    VOID, INT, FLOAT, BOOL, TYPE, STRING, STRUCT, MODULE, FUNCTION, GLOBAL, POINTER, DSD, COLOR,
    TASK_ID, QUEUE, ENUM, DIRECTION, UT_ID, RUNTIME, DSR_VAR, UNDEFINED, NULL_V, BUILTIN_NAME
  };
  K k = K::VOID;
  TypeRef type;
  int64_t i = 0;       // INT, BOOL, COLOR, TASK_ID, QUEUE, ENUM, DIRECTION, UT_ID, RUNTIME (register)
  double f = 0;        // FLOAT
  std::string s;       // STRING; DSR_VAR: register name; BUILTIN_NAME
  std::shared_ptr<StructValue> st;
  ModuleInstance* mod = nullptr;   // MODULE, FUNCTION (its module)
  const Stmt* fn = nullptr;        // FUNCTION
  GlobalVar* global = nullptr;     // GLOBAL, POINTER
  int64_t offset = 0;              // POINTER: elements
  std::shared_ptr<DsdValue> dsd;   // DSD, DSR_VAR (its current description)
  // RUNTIME: an integer narrower than 32 bits computed by + - * << in a 32-bit register, which
  // may hold bits past its width until it is wrapped to its type (codegen.hpp: wrap_to_type).
  bool unwrapped = false;

  bool is_comptime() const { return k != K::RUNTIME && k != K::DSR_VAR && k != K::GLOBAL; }
  std::string str() const;  // for @comptime_print and canonical keys
};

// The memcpy firmware's host streams (firmware/README.md): H2D arrives on color 23 in input
// queue 1; D2H leaves through the memcpy_d2h_fifo descriptor, named here by a color no route uses.
constexpr int kH2dStreamColor = 23;
constexpr int kD2hStreamColor = 31;
constexpr int kStreamQueue = 1;

// A comptime value of kind `k` numbered `i` (an integer, a color, a queue, a task or microthread
// id) with type `t`.
Value make_numbered(Value::K k, int64_t i, TypeRef t);
Value make_int(int64_t v, TypeRef t = nullptr);
Value make_float(double v, TypeRef t = nullptr);
Value make_bool(bool v);
Value make_void();  // what a statement-like builtin returns
Value make_type_value(TypeRef t);

}  // namespace wsemu::compiler::csl
