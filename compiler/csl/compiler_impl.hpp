// Internal to the CSL front end (not a public interface): the state shared by the evaluator
// (evaluator.cpp: names, modules, comptime expressions), the builtins (builtins.cpp), the code
// generator (codegen.cpp: function bodies to wsemu assembly), the program writer (program.cpp:
// one .wsa per PE class) and the layout evaluation (layout_eval.cpp).
//
// Contract: one Compiler per compilation; errors are CompileError (source.hpp) thrown at the
// offending span and caught by compile_csl (cslc.hpp). Every builtin or construct that is not
// implemented fails with "unsupported" naming it, never generates wrong code silently.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/csl/ast.hpp"
#include "compiler/csl/cslc.hpp"
#include "compiler/csl/value.hpp"

namespace wsemu::compiler::csl {

struct Program;

// Register convention (codegen.hpp): locals and parameters in r8..r12, asynchronous ops'
// scalar operands in r13..r15.
constexpr int kLastLocalReg = 12;
constexpr int kFirstAsyncReg = 13;

struct GlobalVar {
  std::string csl_name, asm_name;
  TypeRef type;
  Value init;               // comptime initial value (INT/FLOAT/BOOL/array STRUCT/POINTER/UNDEFINED)
  bool is_const = false;
  ModuleInstance* mod = nullptr;
  Span span;
  std::string dsr;          // DSD-typed variable: its descriptor register name
  std::shared_ptr<DsdValue> dsd;
  int align = 0;
  // A run-time pointer variable exported to the host (@export_symbol(A_ptr, "A")): an indirect
  // host symbol (the host copies to and from the array it points to at the time), of the element
  // type and count of the array it is initialised with; every array assigned to it must hold
  // that type and at least that count.
  std::string exported_as;
  Span exported_at;  // line 0: not exported
  TypeRef exported_elem;
  int64_t exported_count = 0;
  // Arrays that run-time code assigns to this pointer variable (&a[k]), checked against the
  // export once every program is compiled (the export may come after the code).
  struct ArrayAssignment {
    Span span;
    GlobalVar* array = nullptr;
    int64_t offset = 0;  // elements
  };
  std::vector<ArrayAssignment> assigned_arrays;
  // Exported under the name of the `export var` it points to, which binds the name to that
  // array (line 0: not); a run-time assignment (assigned_at) is then refused.
  Span exported_as_its_array, assigned_at;
};

struct ModuleInstance {
  int id = 0;
  int file = 0;
  std::shared_ptr<Module> ast;
  std::string path;
  bool is_lib = false;
  Program* program = nullptr;  // the PE program it belongs to; null on the layout side
  std::map<std::string, const Stmt*> decls;
  std::map<std::string, Value> values;
  std::set<std::string> in_progress;
  std::shared_ptr<StructValue> params;  // the import's parameter struct
};

struct FnInst {
  ModuleInstance* mod = nullptr;
  const Stmt* fn = nullptr;
  std::string label;
  bool is_task = false;
  std::vector<Value> comptime_args;  // by parameter position (VOID for run-time parameters)
  bool generated = false;
};

struct RouteConfig {
  int x = 0, y = 0, color = 0;
  std::vector<std::string> rx, tx;     // first position
  std::vector<std::vector<std::string>> pos_rx, pos_tx;  // switch positions 1..3 (may be empty)
  bool ring_mode = false;
  int current_switch_pos = 0;
  std::string pop_mode;
  bool has_filter = false;
  int64_t filter_min = 0, filter_max = 0;
  bool has_counter_filter = false;  // .kind = .{ .counter = true }
  bool count_data = true, count_control = false;
  int64_t counter_init = 0, counter_max = 0, counter_limit = 0;
  bool swap_x = false, swap_y = false;
  bool teardown = false;  // .teardown = true: starts torn down, rewritten at run time
  bool host_edge = false;  // .wsemu_host_edge = true: may lead off the fabric, to the host
  Span span;
};

struct Program {
  std::string file;          // resolved path of the tile code
  std::string key;           // file + parameters: one Program per distinct key
  std::string arch;
  std::vector<GlobalVar*> globals;
  std::vector<std::unique_ptr<FnInst>> fns;
  std::map<std::string, std::string> dsd_templates;  // DsdValue::key -> register name
  // Registers with an initial descriptor (templates, DSD vars, DSD locals), in declaration order.
  std::vector<std::pair<std::string, std::shared_ptr<DsdValue>>> dsd_regs;
  std::vector<std::string> plain_dsrs;  // @get_dsr registers: no initial descriptor
  // A DSD variable based at run time at arrays of another element width than its initial
  // description's (a placeholder over an i16 array based at f32 vectors): that width, in bits.
  std::map<std::string, int> dsr_base_bits;
  int next_dsr = 0;
  std::vector<std::string> directives;  // .task, .iqinit, .export, ...
  std::vector<std::string> code;
  std::string last_loc;                 // the .loc in force at the end of `code`
  std::vector<std::string> extra_data;  // compiler-made data (locals, spill slots)
  std::set<std::string> includes;       // assembly files (the memcpy firmware)
  std::map<std::string, std::string> exported_symbols;  // host name -> asm symbol
  std::map<std::string, TypeRef> exported_symbol_types;
  std::map<std::string, int64_t> exported_symbol_counts;
  std::set<std::string> indirect_exports;  // host names bound to a pointer variable (GlobalVar::exported_as)
  std::set<std::string> exported_functions;
  std::map<int, std::string> task_lines;  // id -> "label, local, 5" (a .task directive's operands)
  std::set<int> blocked_tasks;
  std::set<int> unblocked_ids;  // comptime @unblock: an id with no data or local task starts unblocked
  std::map<int, Span> activated_tasks;  // @activate at comptime: id -> where
  // @set_local_color_config: routes of every PE that runs this program (x, y unused).
  std::vector<RouteConfig> local_routes;
  // @set_teardown_handler: color -> the handler, called by the generated teardown task 29.
  std::map<int, FnInst*> teardown_handlers;
  std::map<int, int> input_queue_colors, output_queue_colors;  // queue -> color, bound at load
  // wse3 @initialize_queue(.., .{ .priority = .{ .high = true } }): queue -> the microthread
  // priority ("high", "medium", "low") of the async ops on it.
  std::map<int, std::string> input_queue_priority, output_queue_priority;
  std::set<int> stream_in_queues, stream_out_queues;  // queues the program bound to the host streams
  // Data exported by a standard library module (<debug>'s trace buffers): the host may read it
  // without an @export_name in the layout, as the SDK's debug_util does.
  std::set<std::string> library_exports;
  std::set<std::string> export_vars;  // `export var` globals: host-readable by name like library_exports
  int label_counter = 0;
  // Data may lie above 32 KiB, out of reach of a mem operand's 16-bit offset: addresses then go
  // through a register (`li` + the access), decided from the data size before code generation.
  bool far_data = false;
  int async_reg_turn = 0;  // which of r13..r15 holds the next asynchronous op's scalar
  std::string asm_text;
};

// A run-time local of a function being generated.
struct Binding {
  Value value;              // comptime constant or comptime var
  bool is_comptime_var = false;
  bool constant = false;    // a run-time const or a loop variable: no assignment
  int reg = -1;             // run-time local held in a register
  std::string slot;         // or in a data word
  TypeRef type;
  std::string dsr;          // a DSD local: its register
  std::shared_ptr<DsdValue> dsd;
};

struct Scope {
  std::map<std::string, Binding> names;
  Scope* parent = nullptr;
};

struct FnGen;  // codegen.cpp

struct Ctx {
  ModuleInstance* mod = nullptr;
  Scope* scope = nullptr;
  FnGen* gen = nullptr;      // null: comptime evaluation
  int call_depth = 0;
};

enum class Flow { NORMAL, BREAK, CONTINUE, RETURN };

struct Placement {
  std::string file;
  Value params;
  Span span;
  std::string key;
};


class Compiler;

// One builtin call and the checks every builtin makes of its arguments (builtins.cpp).
struct BuiltinCall {
  Compiler& c;
  const Expr& e;
  Ctx& ctx;
  void argc(size_t lo, size_t hi) const;                      // how many arguments it takes
  Value ct(size_t i, const std::string& what) const;          // argument i, evaluated at comptime
  int64_t ci(size_t i, const std::string& what) const;        // argument i, a comptime integer
};

struct HostExport {
  std::string name;
  TypeRef type;  // MANY_PTR or FN
  bool is_function = false;
  bool is_mutable = true;
  Span span;
};

class Compiler {
 public:
  explicit Compiler(const CslOptions& options);
  CslResult run();

  // ---- evaluator.cpp ----
  ModuleInstance* instantiate(const std::string& path, std::shared_ptr<StructValue> params, Span at,
                              Program* program, bool is_lib, bool has_importer);
  std::string resolve_import(const std::string& spec, int from_file, Span at, bool* is_lib);
  Value eval(const Expr& e, Ctx& ctx);
  Value eval_comptime(const Expr& e, Ctx& ctx, const std::string& what);
  TypeRef eval_type(const Expr& e, Ctx& ctx);
  Value lookup(const std::string& name, Span at, Ctx& ctx);
  Value module_member(ModuleInstance* mod, const std::string& name, Span at);
  Value field(const Value& base, const std::string& name, Span at, Ctx& ctx);
  Value coerce(const Value& v, const TypeRef& t, Span at, Ctx& ctx);
  Value binary(const std::string& op, Value a, Value b, Span at, Ctx& ctx);
  Value unary(const std::string& op, Value a, Span at, Ctx& ctx);
  Flow exec(const Stmt& s, Ctx& ctx, Value* ret);
  Flow exec_block(const std::vector<StmtPtr>& body, Ctx& ctx, Value* ret);
  Flow exec_for_each(const Stmt& s, Ctx& ctx, Value* ret);  // comptime `for (array) |elem, i|`
  Value call(const Value& callee, const std::vector<const Expr*>& args, Span at, Ctx& ctx);
  Value call_comptime(const Value& fn, std::vector<Value> args, Span at, Ctx& ctx);
  void declare_var(const Stmt& s, Ctx& ctx);
  GlobalVar* global_var(ModuleInstance* mod, const Stmt& s);
  void run_comptime_blocks(ModuleInstance* mod);
  int64_t to_int(const Value& v, Span at, const std::string& what);
  bool to_bool(const Value& v, Span at, const std::string& what);
  // (call, call_comptime, exec, exec_block, declare_var: comptime_exec.cpp)
  struct PathStep {  // one step of a comptime assignment target: `[i, j]` or `.name`
    const Expr* at = nullptr;
    std::string field;
    std::vector<int64_t> index;
  };
  Value assign_path(const Value& agg, const std::vector<PathStep>& path, size_t d,
                    const std::function<Value(const Value&, const TypeRef&)>& update);

  // ---- builtins.cpp ----
  Value builtin(const Expr& e, Ctx& ctx);
  // ---- dsd_mutation_builtins.cpp: @increment_dsd_offset, @set_dsd_base_addr / _length / _stride,
  // @get_dsr, @load_to_dsr; nothing for another builtin ----
  std::optional<Value> dsd_mutation_builtin(const BuiltinCall& call);
  // ---- dsd_builtins.cpp ----
  Value make_dsd(const Expr& e, Ctx& ctx);
  GlobalVar* comptime_array_storage(const Value& array, const std::string& name, Span at, Ctx& ctx);
  std::map<std::pair<Program*, const StructValue*>, GlobalVar*> array_storage_;
  std::shared_ptr<DsdValue> tensor_access_dsd(const Expr& ta, const std::string& kind, Ctx& ctx);

  // ---- codegen.cpp ----
  void generate_functions(Program& p);
  Value gen_call(const Value& fn, const std::vector<const Expr*>& args, Span at, Ctx& ctx);
  Value gen_binary(const std::string& op, Value a, Value b, Span at, Ctx& ctx);
  Value gen_unary(const std::string& op, Value a, Span at, Ctx& ctx);
  Value gen_convert(const Value& v, const TypeRef& t, Span at, Ctx& ctx);
  Value gen_element_address(const Value& array, const std::vector<Value>& idx, Span at, const TypeRef& ptr_type, Ctx& ctx);
  Value gen_if_expr(const Expr& e, const Value& cond, Ctx& ctx);
  Value gen_switch(const Expr& e, const Value& x, Ctx& ctx);  // statements.cpp: a run-time switch
  Value switch_case(const SwitchCase& c, Ctx& ctx);           // expression.cpp
  void gen_vector_op(const Expr& e, Ctx& ctx);
  int64_t completion_task_id(const Value& v, const std::string& what, Span at, Ctx& ctx);
  void gen_map(const Expr& e, Ctx& ctx);            // map.cpp: @map
  Value map_operand(const Expr& e, Ctx& ctx);       // map.cpp: a DSD operand's element in the loop
  void gen_stmt(const Stmt& s, Ctx& ctx);
  Value load_global(GlobalVar* g, Span at, Ctx& ctx);
  Value rvalue(const Value& v, Span at, Ctx& ctx);
  std::string dsd_operand(const Value& v, Span at, Ctx& ctx);
  // @increment_dsd_offset(d, n, T) counts n in elements of T: n in the DSD's own elements, as
  // an integer (comptime `n`) or the dsdinc operand (emitting the conversion for a run-time n).
  int64_t dsd_offset_in_elements(int64_t n, const Expr& type_arg, int elem_bits, Ctx& ctx);
  std::string dsd_offset_operand(const Value& n, const Expr& type_arg, int elem_bits, Span at, Ctx& ctx);
  // `d = @set_dsd_base_addr(d, base)` on a DSD variable's register: the element width of the
  // array `base` points into, which the variable's descriptor takes (vector_ops.cpp).
  void note_dsd_var_base(Program& p, const std::string& dsr, const Value& base, Span at);
  void emit(Ctx& ctx, const std::string& line, Span at);
  FnInst* function_instance(ModuleInstance* mod, const Stmt* fn, std::vector<Value> comptime_args, Span at);

  // ---- program.cpp ----
  Program* program_for(const Placement& placement);
  std::string dsd_template(Program& p, const DsdValue& d, Span at);
  DsdValue resolve_fabric(const Program& p, const DsdValue& d) const;
  std::string alloc_dsr(Program& p, Span at);
  std::string write_program(Program& p);
  // dsd_placement.cpp: the DSDs that live in memory (their image lines into `image_data`), the
  // code rewritten to load them where used; none while they fit in the registers.
  std::set<std::string> place_dsds(Program& p, std::vector<std::string>& image_data);
  std::string dsd_image_line(const Program& p, const std::string& name, const DsdValue& d);
  std::string asm_value(const Value& v, const TypeRef& t, Span at);

  // ---- layout_eval.cpp ----
  void layout_builtin(const Expr& e, const std::string& name, std::vector<Value>& args, Ctx& ctx, Value* result);
  void parse_color_config(const Value& cfg, Span at, RouteConfig& rc);
  void write_teardown_task(Program& p);
  std::string write_layout();
  void finish_executable(Executable& exe);

  const CslOptions& opt;
  SourceMap sources;
  std::vector<std::unique_ptr<ModuleInstance>> modules;
  std::vector<std::unique_ptr<GlobalVar>> globals;
  std::vector<std::unique_ptr<Program>> programs;
  std::map<std::string, Program*> programs_by_key;
  std::map<std::string, int> file_ids;  // path -> SourceMap file (parsed once)
  std::map<int, std::shared_ptr<Module>> parsed;
  std::vector<std::unique_ptr<Scope>> scopes;

  // Layout results
  bool in_layout = false;
  int rect_w = 0, rect_h = 0;
  bool rect_set = false;
  std::map<std::pair<int, int>, Placement> tiles;
  std::vector<RouteConfig> routes;
  std::vector<HostExport> host_exports;
  std::vector<std::string> comptime_prints;
  int64_t comptime_steps = 0;

  // The @map loop being generated (map.cpp): its counter register and its DSD operands, which
  // the callback's synthetic arguments read.
  struct MapLoop {
    int counter = -1;
    std::vector<std::shared_ptr<DsdValue>> dsds;  // by operand position (null: not a DSD)
    std::vector<std::string> dsrs;                // a DSD variable's register (its base and stride read at run time)
    std::vector<TypeRef> dsr_types;               // and its element type: the callback's parameter (result) type
    MapLoop* outer = nullptr;
  };
  MapLoop* map_loop_ = nullptr;
};

}  // namespace wsemu::compiler::csl
