// The builtins (`@name(...)`): comptime ones evaluated here (@get_dsd in dsd_builtins.cpp, the DSD
// changes and DSRs in dsd_mutation_builtins.cpp), layout ones handed to layout_eval.cpp, run-time
// ones (vector operations, task control) to codegen.cpp.
#include <cstring>
#include <filesystem>

#include "isa/asm/lexer.hpp"
#include "isa/fp16.hpp"

#include "compiler/csl/codegen.hpp"
#include "compiler/csl/compiler_impl.hpp"

namespace wsemu::compiler::csl {

namespace {

const std::set<std::string>& vector_ops() {
  static const std::set<std::string> ops = {
      "fmacs", "fadds", "fsubs", "fmuls", "fmovs", "fnegs", "fmaxs", "fabss", "fh2s", "fs2h",
      "fmach", "fmachs", "faddh", "fsubh", "fmulh", "fmovh", "fnegh", "fmaxh", "fabsh",
      "mov16", "mov32", "add16", "sub16", "and16", "or16", "xor16", "sll16", "slr16", "sar16", "addc16"};
  return ops;
}

const std::set<std::string>& layout_builtins() {
  static const std::set<std::string> b = {"set_rectangle", "set_tile_code", "set_color_config", "export_name",
                                          "get_rectangle"};
  return b;
}

Value task_id(int64_t id, TK kind) { return make_numbered(Value::K::TASK_ID, id, make_type(kind)); }

}  // namespace

bool is_vector_builtin(const std::string& name) { return vector_ops().count(name) != 0; }

void BuiltinCall::argc(size_t lo, size_t hi) const {
  if (e.args.size() < lo || e.args.size() > hi)
    fail(e.span, "@" + e.text + " takes " + (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
                     " argument" + (hi == 1 ? "" : "s") + ", " + std::to_string(e.args.size()) + " given");
}

Value BuiltinCall::ct(size_t i, const std::string& what) const {
  return c.eval_comptime(*e.args[i], ctx, "the " + what + " of @" + e.text);
}

int64_t BuiltinCall::ci(size_t i, const std::string& what) const {
  return c.to_int(ct(i, what), e.args[i]->span, "the " + what + " of @" + e.text);
}

Value Compiler::builtin(const Expr& e, Ctx& ctx) {
  using K = Value::K;
  const std::string& n = e.text;
  const BuiltinCall call{*this, e, ctx};
  auto argc = [&](size_t lo, size_t hi) { call.argc(lo, hi); };
  auto ct = [&](size_t i, const std::string& what) { return call.ct(i, what); };
  auto ci = [&](size_t i, const std::string& what) { return call.ci(i, what); };
  if (std::optional<Value> v = dsd_mutation_builtin(call)) return *v;
  const Value none = make_void();

  if (vector_ops().count(n)) {
    if (!ctx.gen) fail(e.span, "@" + n + " is a run-time operation; call it inside a function or task");
    gen_vector_op(e, ctx);
    return none;
  }
  if (layout_builtins().count(n)) {
    // @get_rectangle also answers in PE programs (as in the SDK), once the layout has set it.
    if (!in_layout && !(n == "get_rectangle" && rect_set))
      fail(e.span, "@" + n + " is only allowed in the layout block of the layout file");
    std::vector<Value> args;
    for (const ExprPtr& a : e.args) args.push_back(eval_comptime(*a, ctx, "an argument of @" + n));
    Value result = none;
    layout_builtin(e, n, args, ctx, &result);
    return result;
  }
  if (n == "as") {
    argc(2, 2);
    TypeRef t = eval_type(*e.args[0], ctx);
    Value v = rvalue(eval(*e.args[1], ctx), e.args[1]->span, ctx);
    if (!v.is_comptime()) return gen_convert(v, t, e.span, ctx);
    if (t->kind == TK::INT && v.k == K::FLOAT) return coerce(make_int(int64_t(v.f)), t, e.span, ctx);
    if (t->kind == TK::FLOAT && v.k == K::INT) return make_float(double(v.i), t);
    if (t->kind == TK::INT && v.k == K::INT && v.type->kind == TK::INT) {
      if (!(v.i >= 0 || t->is_signed)) fail(e.span, "@as cannot convert " + std::to_string(v.i) + " to " + t->str());
    }
    if (t->kind == TK::INT && v.k == K::BOOL) return make_int(v.i, t);
    if (t->kind == TK::ENUM && v.k == K::INT) {
      // An integer as an enum's member (sdklayout-02's `switch (@as(mode, select))`).
      for (size_t i = 0; i < t->field_names.size(); ++i)
        if (t->enum_values[i] == v.i) {
          Value m;
          m.k = K::ENUM;
          m.i = v.i;
          m.s = t->field_names[i];
          m.type = t;
          return m;
        }
      fail(e.span, "@as: " + std::to_string(v.i) + " is no member of " + t->str());
    }
    return coerce(v, t, e.span, ctx);
  }
  if (n == "import_module") {
    argc(1, 2);
    Value path = ct(0, "path");
    if (path.k != K::STRING) fail(e.args[0]->span, "@import_module needs a path string, e.g. \"<memcpy/memcpy>\"");
    std::shared_ptr<StructValue> params;
    if (e.args.size() == 2) {
      Value p = ct(1, "parameters");
      if (p.k != K::STRUCT) fail(e.args[1]->span, "the parameters of @import_module must be a struct literal .{ ... }");
      params = p.st;
    }
    bool is_lib = false;
    const std::string file = resolve_import(path.s, e.span.file, e.args[0]->span, &is_lib);
    Program* prog = ctx.mod ? ctx.mod->program : nullptr;
    ModuleInstance* m = instantiate(file, params, e.span, prog, is_lib, true);
    if (prog) run_comptime_blocks(m);
    Value v;
    v.k = K::MODULE;
    v.mod = m;
    v.type = make_type(TK::MODULE);
    return v;
  }
  if (n == "get_color") {
    argc(1, 1);
    int64_t c = ci(0, "color");
    if (c < 0 || c > 23) fail(e.args[0]->span, "color " + std::to_string(c) + " is out of range (0..23)");
    return make_numbered(K::COLOR, c, make_type(TK::COLOR));
  }
  if (n == "get_local_task_id") {
    argc(1, 1);
    int64_t id = ci(0, "id");
    const int lo = opt.arch == "wse3" ? 8 : 0;
    if (id < lo || id > 30) fail(e.args[0]->span, "local task id " + std::to_string(id) + " is out of range (" + std::to_string(lo) + "..30 on " + opt.arch + ")");
    return task_id(id, TK::LOCAL_TASK_ID);
  }
  if (n == "get_control_task_id") {
    argc(1, 1);
    int64_t id = ci(0, "id");
    if (id < 0 || id > 63) fail(e.args[0]->span, "control task id " + std::to_string(id) + " is out of range (0..63)");
    return task_id(id, TK::CONTROL_TASK_ID);
  }
  if (n == "get_data_task_id") {
    argc(1, 1);
    Value x = ct(0, "color or input queue");
    if (x.k == K::COLOR || x.k == K::QUEUE) return task_id(x.i, TK::DATA_TASK_ID);
    fail(e.args[0]->span, "@get_data_task_id needs a color (wse2) or an input queue (wse3)");
  }
  if (n == "get_input_queue" || n == "get_output_queue") {
    argc(1, 1);
    int64_t q = ci(0, "queue");
    const int hi = n == "get_input_queue" || opt.arch == "wse3" ? 7 : 5;  // wse2: 8 input, 6 output queues
    if (q < 0 || q > hi) fail(e.args[0]->span, "queue " + std::to_string(q) + " is out of range (0.." + std::to_string(hi) + " on " + opt.arch + ")");
    return make_numbered(K::QUEUE, q, make_type(n == "get_input_queue" ? TK::INPUT_QUEUE : TK::OUTPUT_QUEUE));
  }
  if (n == "get_ut_id") {
    argc(1, 1);
    // wsemu: a queue names the microthread of its number (a library handed only queues, as
    // <message_passing> is, runs its async ops where the SDK's implied-microthread rule would).
    const Value q = ct(0, "microthread");
    int64_t u = q.k == K::QUEUE ? q.i : ci(0, "microthread");
    if (u < 0 || u > 7) fail(e.args[0]->span, "microthread " + std::to_string(u) + " is out of range (0..7)");
    return make_numbered(K::UT_ID, u, make_type(TK::UT_ID));
  }
  if (n == "is_arch") {
    argc(1, 1);
    Value a = ct(0, "architecture");
    if (a.k != K::STRING || (a.s != "wse2" && a.s != "wse3")) fail(e.args[0]->span, "@is_arch takes \"wse2\" or \"wse3\"");
    return make_bool(a.s == opt.arch);
  }
  if (n == "comptime_assert") {
    argc(1, 2);
    if (!to_bool(ct(0, "condition"), e.args[0]->span, "the condition of @comptime_assert")) {
      std::string msg = "comptime assertion failed";
      if (e.args.size() == 2) msg += ": " + ct(1, "message").str();
      fail(e.span, msg);
    }
    return none;
  }
  if (n == "assert") {
    // A run-time assertion is a debugging aid: wsemu checks it when it is known at comptime and
    // compiles nothing for a run-time condition (documented in compiler/README.md).
    argc(1, 2);
    Value c = rvalue(eval(*e.args[0], ctx), e.args[0]->span, ctx);
    // In run-time code a false one may sit in a branch that never runs (the SDK's allreduce
    // asserts in its unknown-state branch): like a run-time condition, it compiles to nothing.
    if (!ctx.gen && c.is_comptime() && !to_bool(c, e.args[0]->span, "the condition of @assert")) fail(e.span, "assertion failed");
    return none;
  }
  if (n == "comptime_print") {
    std::string line;
    for (size_t i = 0; i < e.args.size(); ++i) line += (i ? " " : "") + ct(i, "argument").str();
    comptime_prints.push_back(sources.where(e.span) + ": " + line);
    return none;
  }
  if (n == "concat_structs") {
    argc(2, 2);
    Value a = ct(0, "first struct"), b = ct(1, "second struct");
    if (a.k != K::STRUCT || b.k != K::STRUCT) fail(e.span, "@concat_structs takes two structs");
    Value v = a;
    v.st = std::make_shared<StructValue>(*a.st);
    for (size_t i = 0; i < b.st->values.size(); ++i) {
      if (!b.st->names[i].empty() && v.st->find(b.st->names[i]))
        fail(e.span, "@concat_structs: both structs have a field '" + b.st->names[i] + "'");
      v.st->names.push_back(b.st->names[i]);
      v.st->values.push_back(b.st->values[i]);
    }
    return v;
  }
  if (n == "type_of") {
    argc(1, 1);
    Value v = eval(*e.args[0], ctx);
    return make_type_value(v.type ? v.type : make_type(TK::VOID));
  }
  if (n == "is_same_type") {  // comptime: whether two types are the same (void for a param left at `{}`)
    argc(2, 2);
    return make_bool(same_type(eval_type(*e.args[0], ctx), eval_type(*e.args[1], ctx)));
  }
  if (n == "zeros" || n == "constants") {
    argc(n == "zeros" ? 1 : 2, n == "zeros" ? 1 : 2);
    TypeRef t = eval_type(*e.args[0], ctx);
    if (t->kind != TK::ARRAY) fail(e.args[0]->span, "@" + n + " needs an array type, e.g. [N]f32");
    Value v;
    v.k = K::STRUCT;
    v.type = t;
    v.i = 1;  // splat: one value for every element
    v.st = std::make_shared<StructValue>();
    v.st->values.push_back(n == "zeros" ? coerce(make_int(0), t->elem, e.span, ctx) : coerce(ct(1, "value"), t->elem, e.args[1]->span, ctx));
    return v;
  }
  if (n == "get_dsd") return make_dsd(e, ctx);
  if (n == "export_symbol") {
    argc(1, 2);
    if (!ctx.mod || !ctx.mod->program) fail(e.span, "@export_symbol belongs in a PE program");
    Program& p = *ctx.mod->program;
    Value x = eval(*e.args[0], ctx);
    std::string name;
    if (e.args.size() == 2) {
      Value s = ct(1, "name");
      if (s.k != K::STRING) fail(e.args[1]->span, "the export name must be a string");
      name = s.s;
    }
    if (x.k == K::FUNCTION) {
      if (name.empty()) name = x.fn->name;
      if (p.exported_functions.count(name)) fail(e.span, "'" + name + "' is exported twice");
      FnInst* f = function_instance(x.mod, x.fn, {}, e.span);
      if (x.fn->params.size() > 8) fail(e.span, "an exported function takes at most 8 arguments (the memcpy firmware passes 8 words)");
      f->label = name;
      p.exported_functions.insert(name);
      return none;
    }
    GlobalVar* g = nullptr;
    // A run-time pointer variable: the host name binds to the variable and the host follows it
    // at each copy, as the SDK does; g is the array it starts at (its type and count).
    GlobalVar* pointer_var = nullptr;
    // A host symbol names a whole array, so a pointer into its middle would give the host the
    // array's start.
    const auto refuse_inner_pointer = [&](const GlobalVar& array, int64_t element) {
      fail(e.args[0]->span, "@export_symbol of a pointer into the middle of '" + array.csl_name + "' (element " +
                                std::to_string(element) + "): a host symbol names a whole array; export '" +
                                array.csl_name + "' itself");
    };
    if (x.k == K::POINTER && x.global && x.offset != 0) refuse_inner_pointer(*x.global, x.offset);
    if (x.k == K::POINTER && x.offset == 0) g = x.global;
    else if (x.k == K::GLOBAL && x.global->type->kind == TK::ARRAY) g = x.global;
    else if (x.k == K::GLOBAL && x.global->init.k == K::POINTER) {
      g = x.global->init.global;
      if (!x.global->is_const) pointer_var = x.global;
      else if (x.global->init.offset != 0) refuse_inner_pointer(*g, x.global->init.offset);
    }
    if (!g) fail(e.args[0]->span, "@export_symbol needs a pointer to a global array (e.g. 'const y_ptr: [*]f32 = &y;') or a function");
    if (name.empty()) fail(e.span, "@export_symbol of data needs the host name: @export_symbol(y_ptr, \"y\")");
    // (an `export var` exported again under its own name, as histogram-torus does through a
    // pointer variable it never assigns, is one export: the array's; cslc.cpp refuses a run-time
    // assignment to such a pointer)
    if (p.export_vars.count(name) && g->asm_name == name) {
      if (pointer_var) pointer_var->exported_as_its_array = e.span;
      return none;
    }
    GlobalVar* const bound = pointer_var ? pointer_var : g;
    if (p.exported_symbols.count(name)) fail(e.span, "'" + name + "' is exported twice");
    for (const GlobalVar* other : p.globals)
      if (other != bound && other->asm_name == name) fail(e.span, "the export name '" + name + "' is already used");
    bound->asm_name = name;
    const TypeRef elem = g->type->kind == TK::ARRAY ? g->type->elem : g->type;
    const int64_t count = (g->type->kind == TK::ARRAY ? g->type->element_count() : 1) - (pointer_var ? pointer_var->init.offset : 0);
    p.exported_symbols[name] = name;
    p.exported_symbol_types[name] = elem;
    p.exported_symbol_counts[name] = count;
    if (pointer_var) {
      pointer_var->exported_as = name;
      pointer_var->exported_at = e.span;
      pointer_var->exported_elem = elem;
      pointer_var->exported_count = count;
      p.indirect_exports.insert(name);
    }
    if (ctx.mod->is_lib) p.library_exports.insert(name);
    return none;
  }
  if (n == "rpc") {
    argc(1, 1);
    Value id = ct(0, "task id");
    if (id.k != K::TASK_ID) fail(e.args[0]->span, "@rpc needs a data task id (@get_data_task_id(sys_mod.LAUNCH))");
    return none;  // the memcpy firmware dispatches host launches itself (firmware/README.md)
  }
  if (n == "bind_local_task" || n == "bind_data_task" || n == "bind_control_task") {
    argc(2, 2);
    if (!ctx.mod || !ctx.mod->program) fail(e.span, "@" + n + " belongs in a PE program");
    Program& p = *ctx.mod->program;
    Value f = ct(0, "task");
    if (f.k != K::FUNCTION || f.fn->decl_kind != "task") fail(e.args[0]->span, "@" + n + " needs a task (declared with 'task')");
    Value id = ct(1, "task id");
    const TK want = n == "bind_local_task" ? TK::LOCAL_TASK_ID : n == "bind_data_task" ? TK::DATA_TASK_ID : TK::CONTROL_TASK_ID;
    if (id.k != K::TASK_ID || id.type->kind != want)
      fail(e.args[1]->span, "@" + n + " needs a " + make_type(want)->str() + " (from @get_" +
                                (want == TK::LOCAL_TASK_ID ? "local" : want == TK::DATA_TASK_ID ? "data" : "control") + "_task_id)");
    if (p.task_lines.count(int(id.i))) fail(e.args[1]->span, "task id " + std::to_string(id.i) + " is bound twice");
    FnInst* fi = function_instance(f.mod, f.fn, {}, e.span);
    fi->is_task = true;
    std::string spec = want == TK::LOCAL_TASK_ID ? "local, " + std::to_string(id.i)
                       : want == TK::CONTROL_TASK_ID ? "control, " + std::to_string(id.i)
                       : opt.arch == "wse3" ? "data, queue " + std::to_string(id.i)
                                            : "data, color " + std::to_string(id.i);
    p.task_lines[int(id.i)] = fi->label + ", " + spec;
    return none;
  }
  if (n == "set_local_color_config") {
    // The PE program configures its own router: every PE running it gets the route (written
    // into the generated layout with the layout's own routes).
    argc(2, 2);
    if (!ctx.mod || !ctx.mod->program || ctx.gen) fail(e.span, "@set_local_color_config belongs in a comptime block of a PE program");
    const Value c = ct(0, "color");
    if (c.k != K::COLOR) fail(e.args[0]->span, "@set_local_color_config needs a color");
    RouteConfig rc;
    rc.color = int(c.i);
    rc.span = e.span;
    if (rc.color >= 21) fail(e.args[0]->span, "colors 21..23 are reserved by wsemu's memcpy firmware");
    parse_color_config(ct(1, "configuration"), e.args[1]->span, rc);
    for (const RouteConfig& o : ctx.mod->program->local_routes)
      if (o.color == rc.color) fail(e.span, "color " + std::to_string(rc.color) + " is configured twice by this program");
    ctx.mod->program->local_routes.push_back(rc);
    return none;
  }
  if (n == "set_teardown_handler") {
    // The generated teardown task 29 calls `handler` when a TEARDOWN command has torn `color`
    // down at this PE's router (program.cpp, write_teardown_task).
    argc(2, 2);
    if (!ctx.mod || !ctx.mod->program || ctx.gen) fail(e.span, "@set_teardown_handler belongs in a comptime block of a PE program");
    Program& p = *ctx.mod->program;
    const Value f = ct(0, "handler");
    if (f.k != K::FUNCTION || f.fn->decl_kind == "task" || !f.fn->params.empty())
      fail(e.args[0]->span, "@set_teardown_handler needs a function without parameters (fn handler() void)");
    const Value c = ct(1, "color");
    if (c.k != K::COLOR) fail(e.args[1]->span, "@set_teardown_handler needs a color");
    if (p.teardown_handlers.count(int(c.i))) fail(e.span, "color " + std::to_string(c.i) + " has a teardown handler already");
    if (p.task_lines.count(29) && p.teardown_handlers.empty())
      fail(e.span, "task id 29 (the teardown task) is bound by this program; @set_teardown_handler needs it");
    p.teardown_handlers[int(c.i)] = function_instance(f.mod, f.fn, {}, e.span);
    p.task_lines[29] = "wsemu$teardown, local, 29";
    return none;
  }
  if (n == "wsemu_insn") {
    // Library-only (<tile_config>): one instruction with comptime operands (integers, colors,
    // queue and task ids), e.g. @wsemu_insn("rtcfg", c, 3, mask).
    if (!ctx.mod || !ctx.mod->is_lib) fail(e.span, "@" + n + " is reserved for the standard library");
    if (!ctx.gen) fail(e.span, "@" + n + " is a run-time operation");
    if (e.args.empty()) fail(e.span, "@wsemu_insn needs a mnemonic");
    const Value m = ct(0, "mnemonic");
    if (m.k != K::STRING) fail(e.args[0]->span, "@wsemu_insn needs the mnemonic as a string");
    std::string line = m.s;
    for (size_t i = 1; i < e.args.size(); ++i) {
      const Value v = ct(i, "operand");
      int64_t x = 0;
      if (v.k == K::COLOR || v.k == K::QUEUE || v.k == K::TASK_ID) x = v.i;
      else x = to_int(v, e.args[i]->span, "an operand of @wsemu_insn");
      line += (i == 1 ? " " : ", ") + std::to_string(x);
    }
    emit(ctx, line, e.span);
    return none;
  }
  if (n == "activate" || n == "block" || n == "unblock") {
    argc(1, 1);
    Value id = ct(0, "task id");
    // A data task may be named by its trigger: its color (wse2) or its input queue (wse3).
    if (id.k == K::COLOR || (id.k == K::QUEUE && id.type->kind == TK::INPUT_QUEUE)) id.k = K::TASK_ID;
    if (id.k != K::TASK_ID) fail(e.args[0]->span, "@" + n + " needs a task id");
    if (!ctx.gen) {
      if (!ctx.mod || !ctx.mod->program) fail(e.span, "@" + n + " belongs in a PE program");
      if (n == "block") {
        ctx.mod->program->blocked_tasks.insert(int(id.i));
        ctx.mod->program->unblocked_ids.erase(int(id.i));
      } else if (n == "unblock") {
        ctx.mod->program->blocked_tasks.erase(int(id.i));
        ctx.mod->program->unblocked_ids.insert(int(id.i));
      } else if (id.type->kind != TK::LOCAL_TASK_ID)
        fail(e.args[0]->span, "@activate at comptime needs a local task id (a data task is activated by its wavelets)");
      else ctx.mod->program->activated_tasks.emplace(int(id.i), e.span);  // activated when the program loads
      return none;
    }
    int64_t task = id.i;
    if (opt.arch == "wse3" && ctx.mod && ctx.mod->program && ctx.mod->program->stream_in_queues.count(int(task))) task = kStreamQueue;
    emit(ctx, n + " " + std::to_string(task), e.span);
    return none;
  }
  if (n == "initialize_queue") {
    argc(2, 2);
    if (!ctx.mod || !ctx.mod->program) fail(e.span, "@initialize_queue belongs in a PE program");
    Value q = ct(0, "queue"), cfg = ct(1, "configuration");
    if (q.k != K::QUEUE) fail(e.args[0]->span, "@initialize_queue needs a queue (@get_input_queue / @get_output_queue)");
    const Value* c = cfg.k == K::STRUCT ? cfg.st->find("color") : nullptr;
    if (!c || c->k != K::COLOR) fail(e.args[1]->span, "@initialize_queue needs .{ .color = some_color }");
    Program& p = *ctx.mod->program;
    for (const std::string& field : cfg.st->names)
      if (field != "color" && field != "priority")
        fail(e.args[1]->span, "unknown field ." + field + " of @initialize_queue's configuration (color, priority)");
    if (const Value* pr = cfg.st->find("priority")) {
      // On wse3 a queue's microthread priority is the queue's (the SDK's DSDs page); on wse2 it is
      // an option of each async op.
      if (opt.arch != "wse3")
        fail(e.args[1]->span, "on wse2 the microthread priority is an option of the async operation (.priority), "
                              "not of @initialize_queue");
      auto& levels = q.type->kind == TK::INPUT_QUEUE ? p.input_queue_priority : p.output_queue_priority;
      levels[int(q.i)] = microthread_priority(*pr, e.args[1]->span);
    }
    if (c->i == kH2dStreamColor && q.type->kind == TK::INPUT_QUEUE) {
      p.stream_in_queues.insert(int(q.i));  // the host stream lands in the firmware's queue 1
      return none;
    }
    if (c->i == kD2hStreamColor && q.type->kind == TK::OUTPUT_QUEUE) {
      p.stream_out_queues.insert(int(q.i));
      return none;
    }
    if (c->i == kH2dStreamColor || c->i == kD2hStreamColor)
      fail(e.args[1]->span, "MEMCPYH2D_1 needs an input queue, MEMCPYD2H_1 an output queue");
    auto& m = q.type->kind == TK::INPUT_QUEUE ? p.input_queue_colors : p.output_queue_colors;
    auto it = m.find(int(q.i));
    if (it != m.end() && it->second != int(c->i))
      fail(e.span, "queue " + std::to_string(q.i) + " is already bound to color " + std::to_string(it->second));
    m[int(q.i)] = int(c->i);
    return none;
  }
  if (n == "wsemu_include_asm") {
    argc(1, 1);
    if (!ctx.mod || !ctx.mod->is_lib) fail(e.span, "@wsemu_include_asm is reserved for the standard library");
    if (ctx.mod->program) ctx.mod->program->includes.insert(ct(0, "file").s);
    return none;
  }
  if (n == "wsemu_d2h_stream") {
    if (!ctx.mod || !ctx.mod->is_lib) fail(e.span, "@" + n + " is reserved for the standard library");
    argc(0, 0);
    return make_numbered(K::COLOR, kD2hStreamColor, make_type(TK::COLOR));
  }
  if (n == "get_int") {
    // The number behind a comptime task id, color or queue (e.g. to encode it into a wavelet,
    // as <control> does).
    argc(1, 1);
    Value v = ct(0, "value");
    if (v.k != K::TASK_ID && v.k != K::COLOR && v.k != K::QUEUE)
      fail(e.args[0]->span, "@get_int needs a task id, color or queue");
    return make_int(v.i);
  }
  if (n == "wsemu_dprint" || n == "wsemu_dprintr") {
    // Library-only (<simprint>): one line into the run log; dprintr substitutes a run-time value
    // for each %d %u %x %f %h of the text.
    if (!ctx.mod || !ctx.mod->is_lib) fail(e.span, "@" + n + " is reserved for the standard library");
    if (!ctx.gen) fail(e.span, "@" + n + " is a run-time operation");
    const size_t want = n == "wsemu_dprint" ? 1 : 2;
    argc(want, want);
    const Value text = ct(0, "text");
    if (text.k != K::STRING) fail(e.args[0]->span, "@" + n + " needs a string");
    const std::string quoted = isa::assembler::quote_string(text.s);
    if (want == 1) {
      emit(ctx, "dprint " + quoted, e.span);
      return none;
    }
    const Value v = rvalue(eval(*e.args[1], ctx), e.args[1]->span, ctx);
    if (v.k != K::RUNTIME) fail(e.args[1]->span, "@wsemu_dprintr needs a run-time value (a function parameter)");
    emit(ctx, "dprintr " + quoted + ", r" + std::to_string(v.i), e.span);
    return none;
  }
  if (n == "wsemu_string_words" || n == "wsemu_string_word_count") {
    // Library-only (<debug>): a comptime string as a [N]u32 array, four bytes a word, least
    // significant first, NUL-padded (at least one NUL), for a trace buffer the host decodes;
    // or that N.
    if (!ctx.mod || !ctx.mod->is_lib) fail(e.span, "@" + n + " is reserved for the standard library");
    argc(1, 1);
    const Value text = ct(0, "text");
    if (text.k != K::STRING) fail(e.args[0]->span, "@" + n + " needs a string");
    const size_t words = text.s.size() / 4 + 1;
    if (n == "wsemu_string_word_count") return make_int(int64_t(words));
    auto t = std::make_shared<Type>();
    t->kind = TK::ARRAY;
    t->dims = {int64_t(words)};
    t->elem = int_type(32, false);
    Value out;
    out.k = K::STRUCT;
    out.type = t;
    out.st = std::make_shared<StructValue>();
    for (size_t w = 0; w < words; ++w) {
      uint32_t word = 0;
      for (size_t b = 0; b < 4 && 4 * w + b < text.s.size(); ++b) word |= uint32_t(uint8_t(text.s[4 * w + b])) << (8 * b);
      out.st->values.push_back(make_int(int64_t(word), t->elem));
    }
    return out;
  }
  if (n == "wsemu_dir_mask") {
    // Library-only (<tile_config>): a direction or an array of directions as the ISA's mask
    // (bit 0 N, 1 E, 2 S, 3 W, 4 RAMP; isa/README.md, route writes).
    if (!ctx.mod || !ctx.mod->is_lib) fail(e.span, "@" + n + " is reserved for the standard library");
    argc(1, 1);
    const Value v = ct(0, "directions");
    static const int bit_of[] = {0, 2, 1, 3, 4};  // Value's N, S, E, W, RAMP -> the ISA's bits
    int64_t mask = 0;
    auto one = [&](const Value& d) {
      if (d.k != K::DIRECTION) fail(e.args[0]->span, "@wsemu_dir_mask needs directions (NORTH, SOUTH, EAST, WEST, RAMP)");
      mask |= int64_t(1) << bit_of[d.i];
    };
    if (v.k == K::STRUCT) {
      for (const Value& d : v.st->values) one(d);
    } else {
      one(v);
    }
    return make_int(mask);
  }
  if (n == "wsemu_coord" || n == "wsemu_tsc" || n == "wsemu_tsch" || n == "wsemu_tdmask") {
    // Library-only run-time reads: this PE's coordinate in the kernel rectangle, the cycle counter.
    if (!ctx.mod || !ctx.mod->is_lib) fail(e.span, "@" + n + " is reserved for the standard library");
    if (!ctx.gen) fail(e.span, "@" + n + " is a run-time operation");
    argc(n == "wsemu_coord" ? 1 : 0, n == "wsemu_coord" ? 1 : 0);
    Value out;
    out.k = K::BUILTIN_NAME;
    out.s = "__" + n;
    out.st = std::make_shared<StructValue>();
    if (n == "wsemu_coord") out.st->values.push_back(make_int(ci(0, "axis")));
    return gen_call(out, {}, e.span, ctx);
  }
  if (n == "bitcast") {
    argc(2, 2);
    TypeRef t = eval_type(*e.args[0], ctx);
    Value v = rvalue(eval(*e.args[1], ctx), e.args[1]->span, ctx);
    if (t->kind == TK::PTR || t->kind == TK::MANY_PTR) {
      // A pointer made from an address, as the SDK's spmv-hypersparse reaches its router's
      // configuration registers (@bitcast(*u16, byte_address).*): the register holds the address.
      if (v.k != K::RUNTIME || v.type->kind != TK::INT || v.type->byte_size() != 2)
        fail(e.args[1]->span, "unsupported: @bitcast to a pointer needs a run-time u16 or i16 address, found " +
                                  (v.type ? v.type->str() : v.str()));
      Value r = v;
      r.type = t;
      return r;
    }
    const int tb = t->byte_size();
    if ((t->kind != TK::INT && t->kind != TK::FLOAT) || (tb != 2 && tb != 4))
      fail(e.args[0]->span, "@bitcast converts between 16- and 32-bit integer and float types, or makes a pointer of a 16-bit address");
    if (v.k == K::RUNTIME) {
      if (v.type->byte_size() != tb) fail(e.span, "@bitcast from " + v.type->str() + " to " + t->str() + ": the sizes differ");
      Value r = v;
      r.type = t;  // the register holds the bits either way
      return r;
    }
    if (!v.type || (v.type->kind != TK::INT && v.type->kind != TK::FLOAT) || v.type->byte_size() != tb)
      fail(e.args[1]->span, "@bitcast needs a value of a sized type (" + std::to_string(tb * 8) + " bits), e.g. @as(f32, 1.0)");
    uint64_t bits = 0;
    if (v.k == K::FLOAT) {
      if (tb == 4) {
        float f = float(v.f);
        uint32_t u;
        std::memcpy(&u, &f, 4);
        bits = u;
      } else {
        bits = isa::fp32_to_fp16(float(v.f));
      }
    } else {
      bits = uint64_t(v.i) & (tb == 4 ? 0xFFFFFFFFull : 0xFFFFull);
    }
    if (t->kind == TK::FLOAT) {
      if (tb == 4) {
        uint32_t u = uint32_t(bits);
        float f;
        std::memcpy(&f, &u, 4);
        return make_float(f, t);
      }
      return make_float(isa::fp16_to_fp32(uint16_t(bits)), t);
    }
    int64_t x = int64_t(bits);
    if (t->is_signed && (bits >> (tb * 8 - 1)) & 1) x -= int64_t(1) << (tb * 8);
    return make_int(x, t);
  }
  if (n == "ptrcast") {
    argc(2, 2);
    TypeRef t = eval_type(*e.args[0], ctx);
    if (t->kind != TK::PTR && t->kind != TK::MANY_PTR) fail(e.args[0]->span, "@ptrcast converts to a pointer type");
    // A run-time pointer (a parameter, a pointer variable) keeps its register: only its type changes.
    Value v = ctx.gen ? eval(*e.args[1], ctx) : eval_comptime(*e.args[1], ctx, "the pointer of @ptrcast");
    if (v.k != K::POINTER && ctx.gen) v = rvalue(v, e.args[1]->span, ctx);
    const bool runtime_pointer = v.k == K::RUNTIME && (v.type->kind == TK::PTR || v.type->kind == TK::MANY_PTR);
    if (v.k != K::POINTER && !runtime_pointer) fail(e.args[1]->span, "@ptrcast needs a pointer");
    Value r = v;
    r.type = t;
    return r;
  }
  if (n == "allocate_fifo") {
    argc(1, 2);
    Value b = eval(*e.args[0], ctx);
    if (b.k != K::GLOBAL || b.global->type->kind != TK::ARRAY || b.global->type->dims.size() != 1)
      fail(e.args[0]->span, "@allocate_fifo needs a one-dimensional global array (its buffer)");
    auto d = std::make_shared<DsdValue>();
    const Value options = e.args.size() == 2 ? ct(1, "options") : make_void();
    for (size_t i = 0; options.k == K::STRUCT && i < options.st->names.size(); ++i) {
      const std::string& k = options.st->names[i];
      // wse3: the microthread priority of the async ops on the FIFO; on wse2 it is the op's.
      if (k != "priority") fail(e.args[1]->span, "unsupported: option ." + k + " of @allocate_fifo");
      if (opt.arch != "wse3") fail(e.args[1]->span, "on wse2 the microthread priority is an option of the async operation, not of @allocate_fifo");
      d->priority = microthread_priority(options.st->values[i], e.args[1]->span);
    }
    d->kind = "fifo";
    d->span = e.span;
    d->base = b.global;
    d->elem_bits = b.global->type->elem->byte_size() == 2 ? 16 : 32;
    d->extents = {b.global->type->dims[0]};
    d->strides = {1};
    Value v;
    v.k = K::DSD;
    v.dsd = d;
    auto t = std::make_shared<Type>();
    t->kind = TK::DSD;
    t->dsd_kind = "fifo";
    v.type = t;
    return v;
  }
  if (n == "map") {
    gen_map(e, ctx);
    return none;
  }
  if (n == "wsemu$map_operand") return map_operand(e, ctx);
  if (n == "range") fail(e.span, "@range is only allowed as the range of a 'for' loop");
  fail(e.span, "unsupported builtin '@" + n + "'");
}

}  // namespace wsemu::compiler::csl
