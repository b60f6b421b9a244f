// Run-time statements, calls, array elements, DSD changes and vector operations (see codegen.hpp).
#include <cstring>

#include "compiler/csl/codegen.hpp"

namespace wsemu::compiler::csl {

bool is_vector_builtin(const std::string& name);

namespace {

std::string reg(int r) { return "r" + std::to_string(r); }
bool is_temp(int r) { return r >= 1 && r <= 7; }

int alloc_temp(Ctx& ctx, Span at) {
  FnGen& g = *ctx.gen;
  if (g.temp_top > 7) fail(at, "unsupported: expression needs more than 7 live temporaries; split it into statements");
  return g.temp_top++;
}

void free_temp(Ctx& ctx, int r) {
  if (is_temp(r) && r == ctx.gen->temp_top - 1) --ctx.gen->temp_top;
}

int alloc_pool(Ctx& ctx, Span at, const std::string& what) {
  for (int r = 8; r <= kLastLocalReg; ++r)
    if (!ctx.gen->pool[size_t(r)]) {
      ctx.gen->pool[size_t(r)] = true;
      return r;
    }
  fail(at, "unsupported: more than 5 run-time locals live at once in a function (" + what + ")");
}

std::string new_label(Ctx& ctx, const std::string& hint) {
  return "L$" + std::to_string(ctx.gen->p->label_counter++) + "_" + hint;
}

Value runtime(int r, TypeRef t) {
  Value v;
  v.k = Value::K::RUNTIME;
  v.i = r;
  v.type = std::move(t);
  return v;
}

uint32_t f32_bits(double v) {
  float f = float(v);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%X", v);
  return buf;
}

// Loads a value into a register (a temporary unless it is one already).
int value_reg(Compiler& c, const Value& v0, const TypeRef& t, Span at, Ctx& ctx) {
  Value v = c.rvalue(v0, at, ctx);
  if (v.k == Value::K::RUNTIME) return int(v.i);
  Value cv = t ? c.coerce(v, t, at, ctx) : v;
  const int r = alloc_temp(ctx, at);
  uint32_t imm = 0;
  if (cv.k == Value::K::FLOAT) imm = f32_bits(cv.f);
  else if (cv.k == Value::K::POINTER) {
    const int eb = cv.global->type->kind == TK::ARRAY ? cv.global->type->elem->byte_size() : cv.global->type->byte_size();
    c.emit(ctx, "li " + reg(r) + ", " + cv.global->asm_name + " + " + std::to_string(cv.offset * eb), at);
    return r;
  } else if (cv.k == Value::K::INT || cv.k == Value::K::BOOL || cv.k == Value::K::COLOR || cv.k == Value::K::TASK_ID ||
             cv.k == Value::K::ENUM)
    imm = uint32_t(cv.i);
  else
    fail(at, "cannot use " + (cv.type ? cv.type->str() : cv.str()) + " as a run-time value");
  c.emit(ctx, "li " + reg(r) + ", " + hex(imm), at);
  return r;
}

// dst = v: `li` for a comptime value, `mov` for a run-time one.
void load_into(Compiler& c, int dst, const Value& v, const TypeRef& t, Span at, Ctx& ctx) {
  Value r = c.rvalue(v, at, ctx);
  if (r.k == Value::K::RUNTIME) {
    if (int(r.i) != dst) c.emit(ctx, "mov " + reg(dst) + ", " + reg(int(r.i)), at);
    return;
  }
  Value cv = t ? c.coerce(r, t, at, ctx) : r;
  if (cv.k == Value::K::FLOAT) c.emit(ctx, "li " + reg(dst) + ", " + hex(f32_bits(cv.f)), at);
  else if (cv.k == Value::K::INT || cv.k == Value::K::BOOL || cv.k == Value::K::COLOR || cv.k == Value::K::TASK_ID || cv.k == Value::K::ENUM)
    c.emit(ctx, "li " + reg(dst) + ", " + std::to_string(int64_t(int32_t(uint32_t(cv.i)))), at);
  else {
    int x = value_reg(c, cv, t, at, ctx);
    c.emit(ctx, "mov " + reg(dst) + ", " + reg(x), at);
    free_temp(ctx, x);
  }
}

}  // namespace

FnInst* Compiler::function_instance(ModuleInstance* mod, const Stmt* fn, std::vector<Value> comptime_args, Span at) {
  Program& p = *mod->program;
  for (auto& f : p.fns)
    if (f->mod == mod && f->fn == fn) {
      bool same = f->comptime_args.size() == comptime_args.size();
      for (size_t i = 0; same && i < comptime_args.size(); ++i) same = f->comptime_args[i].str() == comptime_args[i].str();
      if (same) return f.get();
    }
  if (p.fns.size() > 10000) fail(at, "more than 10000 function instances");
  auto f = std::make_unique<FnInst>();
  f->mod = mod;
  f->fn = fn;
  f->comptime_args = std::move(comptime_args);
  f->is_task = fn->decl_kind == "task";
  f->label = (mod->is_lib ? "lib" : "m") + std::to_string(mod->id) + "_" + fn->name +
             (f->comptime_args.empty() ? "" : "$" + std::to_string(p.fns.size()));
  p.fns.push_back(std::move(f));
  return p.fns.back().get();
}

void Compiler::generate_functions(Program& p) {
  int64_t data_bytes = 0;
  for (const GlobalVar* g : p.globals) data_bytes += g->type->byte_size();
  p.far_data = data_bytes + 12 * 1024 > 32 * 1024;
  for (size_t n = 0; n < p.fns.size(); ++n) {
    FnInst* fi = p.fns[n].get();
    if (fi->generated) continue;
    fi->generated = true;
    const Stmt& fn = *fi->fn;
    FnGen g;
    g.p = &p;
    g.fi = fi;
    g.ret_label = "L$ret_" + fi->label;
    g.spill = fi->label + "$spill";
    Scope scope;
    Ctx ctx;
    ctx.mod = fi->mod;
    ctx.scope = &scope;
    ctx.gen = &g;
    g.ret_type = eval_type(*fn.type, ctx);
    p.code.push_back("");
    p.code.push_back(fi->label + ":                 ; " + std::string(fi->is_task ? "task " : "fn ") + fn.name + " (" + sources.where(fn.span) + ")");
    int runtime_params = 0;
    for (size_t i = 0; i < fn.params.size(); ++i) {
      const FnParam& prm = fn.params[i];
      TypeRef t = eval_type(*prm.type, ctx);
      Binding b;
      if (prm.is_comptime || t->is_comptime_only()) {
        if (i >= fi->comptime_args.size() || fi->comptime_args[i].k == Value::K::VOID)
          fail(prm.span, "comptime parameter '" + prm.name + "' has no value here");
        b.value = fi->comptime_args[i];
      } else {
        if (8 + runtime_params > kLastLocalReg) fail(prm.span, "unsupported: more than 5 run-time parameters");
        b.reg = 8 + runtime_params++;
        g.pool[size_t(b.reg)] = true;
        b.type = t;
        b.constant = true;  // parameters are immutable in CSL
      }
      scope.names[prm.name] = b;
    }
    if (!fi->is_task && runtime_params > 0 && p.exported_functions.count(fi->label)) {
      // A launched function's arguments: the memcpy firmware stores them at MEMCPY_ARGS.
      if (!p.includes.count("memcpy.wsa")) fail(fn.span, "an exported function with parameters needs <memcpy/memcpy> (it passes the arguments)");
      for (int k = 0; k < runtime_params; ++k)
        {
          // MEMCPY_ARGS is above 32 KiB: out of reach of a mem operand's offset.
          const std::string r = "r" + std::to_string(8 + k);
          emit(ctx, "li " + r + ", MEMCPY_ARGS + " + std::to_string(4 * k), fn.span);
          emit(ctx, "ld32 " + r + ", [" + r + "]", fn.span);
        }
    }
    if (fi->is_task && runtime_params > 0) {
      // A data task receives its wavelet in r0 (32 bits) or r1/r2 (the two 16-bit halves). The
      // parameters stay there (generated code never writes r0, and r1/r2 only as temporaries,
      // so those are copied to r8/r9 only when the body needs temporaries: always, to be safe).
      if (runtime_params > 2) fail(fn.span, "a data task takes one 32-bit or two 16-bit parameters");
      Binding& b0 = scope.names[fn.params[0].name];
      if (runtime_params == 1 && b0.type->byte_size() == 4) {
        g.pool[size_t(b0.reg)] = false;
        b0.reg = 0;
        b0.constant = true;
      } else if (runtime_params == 1) {
        emit(ctx, "mov r8, r1", fn.span);
      } else {
        emit(ctx, "mov r8, r1", fn.span);
        emit(ctx, "mov r9, r2", fn.span);
      }
    }
    for (const StmtPtr& s : fn.body) {
      gen_stmt(*s, ctx);
      g.temp_top = 1;
    }
    p.code.push_back(g.ret_label + ":");
    emit(ctx, fi->is_task ? "exit" : "ret", fn.span);
    if (g.spill_words > 0) p.extra_data.push_back(g.spill + ": .u32 [" + std::to_string(g.spill_words) + "]");
  }
}

// Branch to `target` when the condition's truth equals `when`.
static void gen_cond(Compiler& c, const Expr& e, const std::string& target, bool when, Ctx& ctx) {
  if (e.kind == ExprKind::UNARY && e.text == "!") return gen_cond(c, *e.args[0], target, !when, ctx);
  if (e.kind == ExprKind::BINARY && (e.text == "and" || e.text == "or")) {
    const bool is_and = e.text == "and";
    if (is_and != when) {  // and/false, or/true: either operand decides
      gen_cond(c, *e.args[0], target, when, ctx);
      gen_cond(c, *e.args[1], target, when, ctx);
    } else {
      const std::string skip = new_label(ctx, "skip");
      gen_cond(c, *e.args[0], skip, !when, ctx);
      gen_cond(c, *e.args[1], target, when, ctx);
      ctx.gen->p->code.push_back(skip + ":");
    }
    return;
  }
  static const std::set<std::string> cmps = {"<", ">", "<=", ">=", "==", "!="};
  if (e.kind == ExprKind::BINARY && cmps.count(e.text)) {
    Value a = c.rvalue(c.eval(*e.args[0], ctx), e.args[0]->span, ctx);
    Value b = c.rvalue(c.eval(*e.args[1], ctx), e.args[1]->span, ctx);
    const bool ints = (a.type && a.type->kind == TK::INT) || (b.type && b.type->kind == TK::INT);
    if (!a.is_comptime() || !b.is_comptime()) {
      if (ints && (a.k == Value::K::RUNTIME || a.k == Value::K::INT) && (b.k == Value::K::RUNTIME || b.k == Value::K::INT)) {
        TypeRef t = a.k == Value::K::RUNTIME ? a.type : b.type;
        const bool sgn = t->is_signed;
        int x = value_reg(c, a, t, e.span, ctx), y = value_reg(c, b, t, e.span, ctx);
        std::string op = e.text;
        if (!when) op = op == "<" ? ">=" : op == ">" ? "<=" : op == "<=" ? ">" : op == ">=" ? "<" : op == "==" ? "!=" : "==";
        std::string m;
        int s1 = x, s2 = y;
        if (op == "==") m = "beq";
        else if (op == "!=") m = "bne";
        else if (op == "<") m = sgn ? "blt" : "bltu";
        else if (op == ">=") m = sgn ? "bge" : "bgeu";
        else if (op == ">") m = sgn ? "blt" : "bltu", s1 = y, s2 = x;
        else m = sgn ? "bge" : "bgeu", s1 = y, s2 = x;
        c.emit(ctx, m + " " + reg(s1) + ", " + reg(s2) + ", " + target, e.span);
        free_temp(ctx, y);
        free_temp(ctx, x);
        return;
      }
    }
    Value v = c.binary(e.text, a, b, e.span, ctx);
    if (v.is_comptime()) {
      if (c.to_bool(v, e.span, "the condition") == when) c.emit(ctx, "jmp " + target, e.span);
      return;
    }
    int z = alloc_temp(ctx, e.span);
    c.emit(ctx, "li " + reg(z) + ", 0", e.span);
    c.emit(ctx, std::string(when ? "bne " : "beq ") + reg(int(v.i)) + ", " + reg(z) + ", " + target, e.span);
    free_temp(ctx, z);
    free_temp(ctx, int(v.i));
    return;
  }
  Value v = c.rvalue(c.eval(e, ctx), e.span, ctx);
  if (v.is_comptime()) {
    if (c.to_bool(v, e.span, "the condition") == when) c.emit(ctx, "jmp " + target, e.span);
    return;
  }
  if (v.type->kind != TK::BOOL) fail(e.span, "the condition must be a bool, found " + v.type->str());
  int z = alloc_temp(ctx, e.span);
  c.emit(ctx, "li " + reg(z) + ", 0", e.span);
  c.emit(ctx, std::string(when ? "bne " : "beq ") + reg(int(v.i)) + ", " + reg(z) + ", " + target, e.span);
  free_temp(ctx, z);
  free_temp(ctx, int(v.i));
}

namespace {

struct ElementRef {
  GlobalVar* g = nullptr;  // a global array, or null: an array at the address in base_reg
  int base_reg = -1;
  int addr_reg = -1;       // byte offset register (relative to the array), or -1
  int64_t const_bytes = 0;
  TypeRef elem;
};

ElementRef element_ref(Compiler& c, const Value& base, const std::vector<Value>& idx, const std::vector<Span>& spans, Span at, Ctx& ctx) {
  const bool place = base.k == Value::K::RUNTIME &&
                     (base.type->kind == TK::ARRAY || base.type->kind == TK::MANY_PTR);
  if (!place && (base.k != Value::K::GLOBAL || base.global->type->kind != TK::ARRAY))
    fail(at, "only arrays and pointers to arrays can be indexed at run time");
  GlobalVar* g = place ? nullptr : base.global;
  const TypeRef& at_type = place ? base.type : g->type;
  const std::vector<int64_t> dims = at_type->kind == TK::MANY_PTR ? std::vector<int64_t>{INT32_MAX} : at_type->dims;
  const std::string name = g ? g->csl_name : "the pointed-to array";
  if (idx.size() != dims.size()) fail(at, name + " has " + std::to_string(dims.size()) + " dimension" + (dims.size() == 1 ? "" : "s"));
  ElementRef r;
  r.g = g;
  r.base_reg = place ? int(base.i) : -1;
  r.elem = at_type->elem;
  const int eb = r.elem->byte_size();
  // flat = ((i0 * d1 + i1) * d2 + i2) ...; comptime parts fold.
  Value flat;
  for (size_t d = 0; d < idx.size(); ++d) {
    Value i = c.rvalue(idx[d], at, ctx);
    if (i.k == Value::K::INT && (i.i < 0 || i.i >= dims[d]))
      fail(d < spans.size() ? spans[d] : at, "index " + std::to_string(i.i) + " is out of bounds for '" + name + "' (0.." + std::to_string(dims[d] - 1) + ")");
    if (i.k == Value::K::RUNTIME && i.type->kind != TK::INT) fail(at, "an index must be an integer, found " + i.type->str());
    if (i.k != Value::K::RUNTIME && i.k != Value::K::INT) fail(at, "an index must be an integer");
    if (d == 0) {
      flat = i;
      continue;
    }
    flat = c.binary("*", flat, make_int(dims[d]), at, ctx);
    flat = c.binary("+", flat, i, at, ctx);
  }
  if (flat.k == Value::K::INT) {
    r.const_bytes = flat.i * eb;
    if (g && ctx.gen->p->far_data) {
      r.base_reg = alloc_temp(ctx, at);
      c.emit(ctx, "li " + reg(r.base_reg) + ", " + g->asm_name + " + " + std::to_string(r.const_bytes), at);
      r.const_bytes = 0;
      r.g = nullptr;
    }
    return r;
  }
  Value bytes = c.binary("*", flat, make_int(eb), at, ctx);
  r.addr_reg = int(bytes.i);
  if (!is_temp(r.addr_reg)) {  // a local used directly as the index: copy, the address is scratch
    int t = alloc_temp(ctx, at);
    c.emit(ctx, "mov " + reg(t) + ", " + reg(r.addr_reg), at);
    r.addr_reg = t;
  }
  if (!g) c.emit(ctx, "add " + reg(r.addr_reg) + ", " + reg(r.addr_reg) + ", " + reg(r.base_reg), at);
  if (g && ctx.gen->p->far_data) {
    const int t = alloc_temp(ctx, at);
    c.emit(ctx, "li " + reg(t) + ", " + g->asm_name, at);
    c.emit(ctx, "add " + reg(r.addr_reg) + ", " + reg(r.addr_reg) + ", " + reg(t), at);
    free_temp(ctx, t);
    r.g = nullptr;
  }
  return r;
}

std::string mem_operand(const ElementRef& r) {
  if (!r.g) {
    if (r.addr_reg >= 0) return "[" + reg(r.addr_reg) + "]";
    return "[" + reg(r.base_reg) + (r.const_bytes ? " + " + std::to_string(r.const_bytes) : "") + "]";
  }
  if (r.addr_reg < 0) return "[" + r.g->asm_name + (r.const_bytes ? " + " + std::to_string(r.const_bytes) : "") + "]";
  return "[" + reg(r.addr_reg) + " + " + r.g->asm_name + "]";
}

std::string load_mnemonic(const TypeRef& t, Span at) {
  const int eb = t->byte_size();
  if (eb == 4) return "ld32 ";
  if (eb == 2) return t->kind == TK::INT && t->is_signed ? "ld16s " : "ld16 ";
  fail(at, "unsupported: run-time access to a " + t->str());
}

}  // namespace

Value Compiler::gen_call(const Value& fn, const std::vector<const Expr*>& args, Span at, Ctx& ctx) {
  if (!ctx.gen) fail(at, "a run-time call in a comptime context");
  FnGen& g = *ctx.gen;
  if (fn.k == Value::K::BUILTIN_NAME && fn.s == "__index_load") {
    std::vector<Value> idx(fn.st->values.begin() + 1, fn.st->values.end());
    ElementRef r = element_ref(*this, fn.st->values[0], idx, {}, at, ctx);
    const int rd = r.addr_reg >= 0 ? r.addr_reg : alloc_temp(ctx, at);
    emit(ctx, load_mnemonic(r.elem, at) + reg(rd) + ", " + mem_operand(r), at);
    return runtime(rd, r.elem);
  }
  if (fn.k == Value::K::BUILTIN_NAME && (fn.s == "__wsemu_coord" || fn.s == "__wsemu_tsc" || fn.s == "__wsemu_tsch")) {
    const int rd = alloc_temp(ctx, at);
    if (fn.s == "__wsemu_coord") emit(ctx, "coord " + reg(rd) + ", " + std::to_string(fn.st->values[0].i), at);
    else emit(ctx, std::string(fn.s == "__wsemu_tsc" ? "tsc " : "tsch ") + reg(rd), at);
    return runtime(rd, fn.s == "__wsemu_tsc" ? int_type(32, false) : int_type(16, false));
  }
  if (fn.k == Value::K::BUILTIN_NAME && fn.s == "__deref_load") {
    const Value& p = fn.st->values[0];
    const int rd = is_temp(int(p.i)) ? int(p.i) : alloc_temp(ctx, at);
    emit(ctx, load_mnemonic(p.type->elem, at) + reg(rd) + ", [" + reg(int(p.i)) + "]", at);
    return runtime(rd, p.type->elem);
  }
  if (fn.k == Value::K::BUILTIN_NAME) {
    // A DSD changed by @increment_dsd_offset / @set_dsd_* used as an operand: a scratch register.
    const Expr& e = *reinterpret_cast<const Expr*>(fn.offset);
    Value src = eval(*e.args.at(0), ctx);
    if (g.dsr_temp >= 4) fail(at, "unsupported: more than 4 modified DSDs in one statement");
    const std::string t = "dsd_scratch" + std::to_string(g.dsr_temp++);
    emit(ctx, "dsdcopy " + t + ", " + dsd_operand(src, e.args[0]->span, ctx), at);
    Value arg = rvalue(eval(*e.args.at(1), ctx), e.args[1]->span, ctx);
    std::string operand;
    if (fn.s == "set_dsd_base_addr") {
      if (arg.k != Value::K::POINTER) fail(e.args[1]->span, "@set_dsd_base_addr needs a pointer to a global (&array)");
      const int eb = arg.global->type->kind == TK::ARRAY ? arg.global->type->elem->byte_size() : arg.global->type->byte_size();
      operand = arg.global->asm_name + " + " + std::to_string(arg.offset * eb);
    } else if (arg.k == Value::K::INT) {
      operand = std::to_string(arg.i);
    } else if (arg.k == Value::K::RUNTIME) {
      operand = reg(int(arg.i));
    } else {
      fail(e.args[1]->span, "expected an integer");
    }
    const char* m = fn.s == "increment_dsd_offset" ? "dsdinc" : fn.s == "set_dsd_base_addr" ? "dsdbase" : fn.s == "set_dsd_length" ? "dsdlen" : "dsdstride";
    emit(ctx, std::string(m) + " " + t + ", " + operand, at);
    Value v;
    v.k = Value::K::DSR_VAR;
    v.s = t;
    v.dsd = src.dsd;
    v.type = src.type;
    return v;
  }
  // A call of a CSL function: arguments in temporaries, live registers saved around the call.
  const Stmt& f = *fn.fn;
  std::vector<Value> ct_args(f.params.size());
  std::vector<int> arg_regs;
  const int live_temps = g.temp_top;
  Ctx fctx;
  fctx.mod = fn.mod;
  for (size_t i = 0; i < f.params.size(); ++i) {
    TypeRef t = eval_type(*f.params[i].type, fctx);
    if (f.params[i].is_comptime || t->is_comptime_only()) {
      ct_args[i] = coerce(eval_comptime(*args[i], ctx, "comptime argument '" + f.params[i].name + "'"), t, args[i]->span, ctx);
      continue;
    }
    Value a = coerce(eval(*args[i], ctx), t, args[i]->span, ctx);
    int r = value_reg(*this, a, t, args[i]->span, ctx);
    if (!is_temp(r) || r < live_temps) {
      int tr = alloc_temp(ctx, at);
      emit(ctx, "mov " + reg(tr) + ", " + reg(r), at);
      r = tr;
    }
    arg_regs.push_back(r);
  }
  bool any_ct = false;
  for (const Value& v : ct_args) any_ct = any_ct || v.k != Value::K::VOID;
  FnInst* callee = function_instance(fn.mod, fn.fn, any_ct ? ct_args : std::vector<Value>{}, at);
  std::vector<int> saved;
  for (int r = 1; r < live_temps; ++r) saved.push_back(r);
  for (int r = 8; r <= kLastLocalReg; ++r)
    if (g.pool[size_t(r)]) saved.push_back(r);
  g.spill_words = std::max(g.spill_words, int(saved.size()));
  for (size_t k = 0; k < saved.size(); ++k)
    emit(ctx, "st32 [" + g.spill + " + " + std::to_string(4 * k) + "], " + reg(saved[k]), at);
  for (size_t k = 0; k < arg_regs.size(); ++k) emit(ctx, "mov " + reg(int(8 + k)) + ", " + reg(arg_regs[k]), at);
  emit(ctx, "call " + callee->label, at);
  g.temp_top = live_temps;
  const TypeRef rt = eval_type(*f.type, fctx);
  Value result;
  result.k = Value::K::VOID;
  result.type = rt;
  if (rt->kind != TK::VOID) {
    const int rd = alloc_temp(ctx, at);
    if (rd != 1) emit(ctx, "mov " + reg(rd) + ", r1", at);
    result = runtime(rd, rt);
  }
  for (size_t k = 0; k < saved.size(); ++k)
    emit(ctx, "ld32 " + reg(saved[k]) + ", [" + g.spill + " + " + std::to_string(4 * k) + "]", at);
  return result;
}

std::string Compiler::dsd_operand(const Value& v, Span at, Ctx& ctx) {
  if (v.k == Value::K::DSD) return dsd_template(*ctx.gen->p, *v.dsd, at);
  if (v.k == Value::K::DSR_VAR) return v.s;
  fail(at, "expected a DSD, found " + (v.type ? v.type->str() : v.str()));
}

bool Compiler::options_async(const Expr* options) {
  if (!options || options->kind != ExprKind::ANON_STRUCT) return false;
  for (size_t i = 0; i < options->names.size(); ++i)
    if (options->names[i] == "async" && options->args[i]->kind == ExprKind::BOOL && options->args[i]->int_value) return true;
  return false;
}

void Compiler::gen_vector_op(const Expr& e, Ctx& ctx) {
  const std::string& n = e.text;
  std::vector<const Expr*> operands;
  const Expr* options = nullptr;
  for (const ExprPtr& a : e.args) operands.push_back(a.get());
  if (!operands.empty() && operands.back()->kind == ExprKind::ANON_STRUCT) {
    options = operands.back();
    operands.pop_back();
  }
  static const std::map<std::string, size_t> three = {{"fmacs", 4}, {"fmach", 4}, {"fmachs", 4}};
  const bool unary_op = n == "fmovs" || n == "fnegs" || n == "fabss" || n == "fh2s" || n == "fs2h" || n == "fmovh" ||
                        n == "fnegh" || n == "fabsh" || n == "mov16" || n == "mov32";
  const size_t want = three.count(n) ? 4 : unary_op ? 2 : 3;
  if (operands.size() != want)
    fail(e.span, "@" + n + " takes " + std::to_string(want) + " operands" + " (and an optional .{ ... } of options), " +
                     std::to_string(operands.size()) + " given");
  const bool fp32 = n[0] == 'f' && n.back() == 's' && n != "fmachs";
  const bool fp16 = n[0] == 'f' && n.back() == 'h';
  // The element width each operand has (a fabric DSD takes it from the operation, as in CSL).
  auto width = [&](size_t i) {
    if (n == "fmachs") return i >= 2 ? 16 : 32;
    if (n == "fh2s") return i == 1 ? 16 : 32;
    if (n == "fs2h") return i == 0 ? 16 : 32;
    return fp16 || n.find("16") != std::string::npos ? 16 : 32;
  };
  std::vector<std::string> ops;
  for (size_t i = 0; i < operands.size(); ++i) {
    Value v = eval(*operands[i], ctx);
    if (v.k == Value::K::DSD && v.dsd && (v.dsd->kind == "fabin_dsd" || v.dsd->kind == "fabout_dsd") &&
        v.dsd->elem_bits != width(i)) {
      auto d = std::make_shared<DsdValue>(*v.dsd);
      d->elem_bits = width(i);
      v.dsd = d;
    }
    if (v.k == Value::K::DSD || v.k == Value::K::DSR_VAR) {
      ops.push_back(dsd_operand(v, operands[i]->span, ctx));
      continue;
    }
    if (i == 0 && v.k != Value::K::GLOBAL) fail(operands[i]->span, "the destination of @" + n + " must be a DSD");
    v = rvalue(v, operands[i]->span, ctx);
    if (v.k == Value::K::GLOBAL) fail(operands[i]->span, "an array is not an operand of @" + n + "; make a DSD of it with @get_dsd");
    if (i == 0) fail(operands[i]->span, "the destination of @" + n + " must be a DSD");
    TypeRef t = fp32 ? float_type(32) : fp16 ? float_type(16) : int_type(n.find("16") != std::string::npos ? 16 : 32, true);
    if (fp16 && v.k == Value::K::FLOAT) fail(operands[i]->span, "unsupported: a comptime f16 scalar operand; load it from an f16 variable");
    if (v.k == Value::K::RUNTIME && v.type->kind == TK::FLOAT && !fp32 && !fp16 && n != "fmachs")
      fail(operands[i]->span, "@" + n + " takes integer scalars");
    int r = value_reg(*this, v, v.k == Value::K::RUNTIME ? nullptr : t, operands[i]->span, ctx);
    if (options_async(options)) {
      // The op reads a register source for every element while the task goes on (and the
      // firmware clobbers r0..r7): the scalar lives in one of r13..r15, in turn.
      const int keep = kFirstAsyncReg + ctx.gen->p->async_reg_turn++ % 3;
      emit(ctx, "mov " + reg(keep) + ", " + reg(r), operands[i]->span);
      r = keep;
    }
    ops.push_back(reg(r));
  }
  std::string suffix;
  bool is_async = false;
  if (options) {
    Value o = eval_comptime(*options, ctx, "the options of @" + n);
    for (size_t i = 0; i < o.st->names.size(); ++i) {
      const std::string& k = o.st->names[i];
      const Value& v = o.st->values[i];
      if (k == "async") is_async = to_bool(v, options->span, ".async");
      else if (k == "activate" || k == "unblock") {
        int64_t id = -1;
        if (v.k == Value::K::TASK_ID) id = v.i;
        if (v.k == Value::K::FUNCTION && v.fn->decl_kind == "task") {
          // A task named directly: the id it is bound to.
          const FnInst* fi = function_instance(v.mod, v.fn, {}, options->span);
          for (const auto& [tid, line] : ctx.gen->p->task_lines)
            if (line.rfind(fi->label + ", ", 0) == 0) id = tid;
          if (id < 0) fail(options->span, "." + k + " names task '" + v.fn->name + "', which is not bound to a task id");
        }
        if (id < 0) fail(options->span, "." + k + " needs a task id (or a bound task)");
        suffix += ", " + k + "=" + std::to_string(id);
      } else if (k == "ut_id") {
        if (v.k != Value::K::UT_ID) fail(options->span, ".ut_id needs a microthread id (@get_ut_id)");
        suffix = ", ut=" + std::to_string(v.i) + suffix;
      } else if (k == "priority" || k == "on_control") {
        fail(options->span, "unsupported: option ." + k + " of @" + n);
      } else {
        fail(options->span, "unknown option ." + k + " of @" + n + " (async, activate, unblock, ut_id)");
      }
    }
    if (!is_async && !suffix.empty()) fail(options->span, ".activate, .unblock and .ut_id need .async = true");
  }
  if (!ops.empty() && ops[0] == "memcpy_d2h_fifo" && width(0) == 16)
    fail(e.span, "unsupported: a 16-bit stream to the host (@" + n + " into MEMCPYD2H_1): wsemu's memcpy FIFO holds 32-bit words");
  std::string line = n + (is_async ? ".async " : " ");
  for (size_t i = 0; i < ops.size(); ++i) line += (i ? ", " : "") + ops[i];
  emit(ctx, line + suffix, e.span);
}

namespace {

// Frees the pool registers a scope's locals held.
void release_scope(Scope& s, Ctx& ctx) {
  for (auto& [name, b] : s.names)
    if (b.reg >= 8) ctx.gen->pool[size_t(b.reg)] = false;
}

Binding* find_binding(Ctx& ctx, const std::string& name) {
  for (Scope* s = ctx.scope; s; s = s->parent) {
    auto it = s->names.find(name);
    if (it != s->names.end()) return &it->second;
  }
  return nullptr;
}

}  // namespace

void Compiler::gen_stmt(const Stmt& s, Ctx& ctx) {
  FnGen& g = *ctx.gen;
  g.dsr_temp = 0;
  auto body = [&](const std::vector<StmtPtr>& stmts) {
    Scope sc;
    sc.parent = ctx.scope;
    Ctx inner = ctx;
    inner.scope = &sc;
    for (const StmtPtr& st : stmts) {
      gen_stmt(*st, inner);
      g.temp_top = 1;
    }
    release_scope(sc, inner);
  };
  switch (s.kind) {
    case StmtKind::VAR: {
      if (s.decl_kind == "param") fail(s.span, "'param' is only allowed at the top level of a file");
      if (find_binding(ctx, s.name)) fail(s.span, "'" + s.name + "' shadows a local of the same name");
      if (ctx.mod->decls.count(s.name)) fail(s.span, "local '" + s.name + "' shadows a declaration of the file");
      TypeRef t = s.type ? eval_type(*s.type, ctx) : nullptr;
      Value init;
      init.k = Value::K::UNDEFINED;
      if (s.value) init = eval(*s.value, ctx);
      if ((t && t->kind == TK::ARRAY) || (!t && init.k == Value::K::STRUCT && init.type && init.type->kind == TK::ARRAY)) {
        // A local array lives in static storage of its function (no recursion in CSL); each
        // execution of the declaration stores its initial elements again.
        TypeRef at = t ? t : init.type;
        if (init.k != Value::K::UNDEFINED) init = coerce(init, at, s.value->span, ctx);
        if (init.k != Value::K::UNDEFINED && init.k != Value::K::STRUCT) fail(s.span, "a local array needs an array initial value");
        auto gv = std::make_unique<GlobalVar>();
        gv->csl_name = s.name;
        gv->asm_name = g.fi->label + "$" + s.name + std::to_string(g.p->label_counter++);
        gv->type = at;
        gv->mod = ctx.mod;
        gv->span = s.span;
        gv->init = init;
        if (at->element_count() * at->elem->byte_size() > 48 * 1024) fail(s.span, "the local array does not fit in a PE's memory");
        GlobalVar* raw = gv.get();
        globals.push_back(std::move(gv));
        g.p->globals.push_back(raw);
        if (init.k == Value::K::STRUCT) {
          const int64_t n = at->element_count();
          if (n > 256) fail(s.span, "unsupported: a local array with more than 256 initialised elements (declare it at the top level)");
          const int eb = at->elem->byte_size();
          for (int64_t i = 0; i < n; ++i) {
            const Value& v = init.st->values.size() == 1 && init.i == 1 ? init.st->values[0] : init.st->values[size_t(i)];
            int r = value_reg(*this, v, at->elem, s.span, ctx);
            if (g.p->far_data) {
              const int a = alloc_temp(ctx, s.span);
              emit(ctx, "li " + reg(a) + ", " + raw->asm_name + " + " + std::to_string(i * eb), s.span);
              emit(ctx, std::string(eb == 4 ? "st32 [" : "st16 [") + reg(a) + "], " + reg(r), s.span);
              free_temp(ctx, a);
            } else {
              emit(ctx, std::string(eb == 4 ? "st32 [" : "st16 [") + raw->asm_name + " + " + std::to_string(i * eb) + "], " + reg(r), s.span);
            }
            free_temp(ctx, r);
          }
        }
        Binding b;
        b.value.k = Value::K::GLOBAL;
        b.value.global = raw;
        b.value.type = at;
        ctx.scope->names[s.name] = b;
        return;
      }
      if (init.k == Value::K::GLOBAL && init.global->type->kind != TK::ARRAY) init = rvalue(init, s.span, ctx);
      if (!t) t = init.type;
      if (!t) fail(s.span, "'" + s.name + "' needs a type");
      Binding b;
      if (t->kind == TK::DSD) {
        if (init.k != Value::K::DSD && init.k != Value::K::DSR_VAR) fail(s.span, "a DSD local needs a DSD initial value");
        if (s.decl_kind == "const" && init.k == Value::K::DSD) {
          b.value = init;
        } else {
          b.dsr = alloc_dsr(*g.p, s.span);
          b.dsd = init.dsd;
          b.type = t;
          g.p->dsd_regs.push_back({b.dsr, init.dsd});
          emit(ctx, "dsdcopy " + b.dsr + ", " + dsd_operand(init, s.span, ctx), s.span);
        }
        ctx.scope->names[s.name] = b;
        return;
      }
      if (t->is_comptime_only() || (s.decl_kind == "const" && init.is_comptime() && init.k != Value::K::UNDEFINED)) {
        if (s.decl_kind == "var" && t->is_comptime_only())
          fail(s.span, "a run-time var needs a run-time type, e.g. 'var " + s.name + ": i32 = ...' (or make it const)");
        b.value = s.type ? coerce(init, t, s.span, ctx) : init;
        ctx.scope->names[s.name] = b;
        return;
      }
      b.reg = -1;
      for (int r = 8; r <= kLastLocalReg && b.reg < 0; ++r)
        if (!g.pool[size_t(r)]) b.reg = r;
      if (b.reg < 0) {
        // No register left: the local lives in a data word of its function (no recursion in
        // CSL), read and written with loads and stores.
        if (t->byte_size() != 2 && t->byte_size() != 4) fail(s.span, "unsupported: a " + t->str() + " local");
        auto gv = std::make_unique<GlobalVar>();
        gv->csl_name = s.name;
        gv->asm_name = g.fi->label + "$" + s.name + std::to_string(g.p->label_counter++);
        gv->type = t;
        gv->mod = ctx.mod;
        gv->span = s.span;
        gv->init.k = Value::K::UNDEFINED;
        GlobalVar* raw = gv.get();
        globals.push_back(std::move(gv));
        g.p->globals.push_back(raw);
        if (init.k != Value::K::UNDEFINED) {
          Value v = coerce(init, t, s.value->span, ctx);
          const int r = value_reg(*this, v, t, s.span, ctx);
          std::string where = raw->asm_name;
          if (g.p->far_data) {
            const int a = alloc_temp(ctx, s.span);
            emit(ctx, "li " + reg(a) + ", " + raw->asm_name, s.span);
            where = reg(a);
          }
          emit(ctx, std::string(t->byte_size() == 4 ? "st32 [" : "st16 [") + where + "], " + reg(r), s.span);
        }
        b.value.k = Value::K::GLOBAL;
        b.value.global = raw;
        b.value.type = t;
        b.constant = s.decl_kind == "const";
        ctx.scope->names[s.name] = b;
        return;
      }
      g.pool[size_t(b.reg)] = true;
      b.type = t;
      b.constant = s.decl_kind == "const";
      if (init.k != Value::K::UNDEFINED) {
        load_into(*this, b.reg, coerce(init, t, s.value->span, ctx), t, s.span, ctx);
      }
      ctx.scope->names[s.name] = b;
      return;
    }
    case StmtKind::FN: fail(s.span, "functions can only be declared at the top level");
    case StmtKind::LAYOUT: fail(s.span, "a layout block is only allowed at the top level of the layout file");
    case StmtKind::COMPTIME: {
      Ctx c = ctx;
      c.gen = nullptr;
      Value ret;
      exec_block(s.body, c, &ret);
      return;
    }
    case StmtKind::BLOCK: body(s.body); return;
    case StmtKind::EXPR: {
      Value v = eval(*s.value, ctx);
      (void)v;
      return;
    }
    case StmtKind::ASSIGN: {
      const Expr& t = *s.target;
      const std::string op = s.assign_op == "=" ? "" : s.assign_op.substr(0, s.assign_op.size() - 1);
      if (t.kind == ExprKind::IDENT && t.text == "_") {
        eval(*s.value, ctx);
        return;
      }
      if (t.kind == ExprKind::IDENT) {
        Binding* b = find_binding(ctx, t.text);
        if (b && b->is_comptime_var) fail(t.span, "cannot assign to comptime var '" + t.text + "' in run-time code (use a comptime block)");
        if (b && (b->constant || (b->reg < 0 && b->dsr.empty() && b->value.k != Value::K::GLOBAL)))
          fail(t.span, "cannot assign to constant '" + t.text + "'");
        Value target = b ? lookup(t.text, t.span, ctx) : lookup(t.text, t.span, ctx);
        if (target.k == Value::K::DSR_VAR) {
          if (!op.empty()) fail(s.span, "'" + s.assign_op + "' cannot be applied to a DSD");
          const Expr& rhs = *s.value;
          if (rhs.kind == ExprKind::BUILTIN && (rhs.text == "increment_dsd_offset" || rhs.text == "set_dsd_base_addr" ||
                                                rhs.text == "set_dsd_length" || rhs.text == "set_dsd_stride")) {
            const size_t want = rhs.text == "increment_dsd_offset" ? 3 : 2;
            if (rhs.args.size() != want) fail(rhs.span, "@" + rhs.text + " takes " + std::to_string(want) + " arguments");
            Value src = eval(*rhs.args[0], ctx);
            const std::string so = dsd_operand(src, rhs.args[0]->span, ctx);
            if (so != target.s) emit(ctx, "dsdcopy " + target.s + ", " + so, s.span);
            Value arg = rvalue(eval(*rhs.args[1], ctx), rhs.args[1]->span, ctx);
            std::string operand;
            if (rhs.text == "set_dsd_base_addr") {
              if (arg.k == Value::K::POINTER) {
                const int eb = arg.global->type->kind == TK::ARRAY ? arg.global->type->elem->byte_size() : arg.global->type->byte_size();
                operand = arg.global->asm_name + " + " + std::to_string(arg.offset * eb);
              } else if (arg.k == Value::K::RUNTIME) {
                operand = reg(int(arg.i));
              } else {
                fail(rhs.args[1]->span, "@set_dsd_base_addr needs a pointer (&array)");
              }
            } else if (arg.k == Value::K::INT) {
              operand = std::to_string(arg.i);
            } else if (arg.k == Value::K::RUNTIME && arg.type->kind == TK::INT) {
              operand = reg(int(arg.i));
            } else {
              fail(rhs.args[1]->span, "expected an integer");
            }
            const char* m = rhs.text == "increment_dsd_offset" ? "dsdinc" : rhs.text == "set_dsd_base_addr" ? "dsdbase" : rhs.text == "set_dsd_length" ? "dsdlen" : "dsdstride";
            emit(ctx, std::string(m) + " " + target.s + ", " + operand, s.span);
            return;
          }
          Value v = eval(rhs, ctx);
          const std::string so = dsd_operand(v, rhs.span, ctx);
          if (so != target.s) emit(ctx, "dsdcopy " + target.s + ", " + so, s.span);
          return;
        }
        if (target.k == Value::K::RUNTIME) {
          Value v = eval(*s.value, ctx);
          if (!op.empty()) v = binary(op, target, rvalue(v, s.value->span, ctx), s.span, ctx);
          load_into(*this, b->reg, coerce(v, b->type, s.value->span, ctx), b->type, s.span, ctx);
          return;
        }
        if (target.k == Value::K::GLOBAL && target.global->type->kind != TK::ARRAY) {
          GlobalVar* gv = target.global;
          Value v = eval(*s.value, ctx);
          if (!op.empty()) v = binary(op, load_global(gv, t.span, ctx), rvalue(v, s.value->span, ctx), s.span, ctx);
          v = coerce(v, gv->type, s.value->span, ctx);
          int r = value_reg(*this, v, gv->type, s.span, ctx);
          std::string where = gv->asm_name;
          if (g.p->far_data) {
            const int a = alloc_temp(ctx, s.span);
            emit(ctx, "li " + reg(a) + ", " + gv->asm_name, s.span);
            where = reg(a);
          }
          emit(ctx, std::string(gv->type->byte_size() == 4 ? "st32 [" : "st16 [") + where + "], " + reg(r), s.span);
          return;
        }
        if (target.k == Value::K::GLOBAL) fail(t.span, "unsupported: assigning a whole array");
        fail(t.span, "cannot assign to '" + t.text + "'");
      }
      if (t.kind == ExprKind::INDEX) {
        Value base = eval(*t.args[0], ctx);
        std::vector<Value> idx;
        std::vector<Span> spans;
        for (size_t i = 1; i < t.args.size(); ++i) {
          idx.push_back(eval(*t.args[i], ctx));
          spans.push_back(t.args[i]->span);
        }
        base = rvalue(base, t.span, ctx);
        if (base.k != Value::K::GLOBAL && base.k != Value::K::RUNTIME) fail(t.span, "only elements of arrays can be assigned");
        ElementRef r = element_ref(*this, base, idx, spans, t.span, ctx);
        Value v = eval(*s.value, ctx);
        if (!op.empty()) {
          const int cur = alloc_temp(ctx, t.span);
          emit(ctx, load_mnemonic(r.elem, t.span) + reg(cur) + ", " + mem_operand(r), t.span);
          v = binary(op, runtime(cur, r.elem), rvalue(v, s.value->span, ctx), s.span, ctx);
        }
        v = coerce(v, r.elem, s.value->span, ctx);
        int vr = value_reg(*this, v, r.elem, s.span, ctx);
        const int eb = r.elem->byte_size();
        if (eb != 4 && eb != 2) fail(t.span, "unsupported: elements of " + r.elem->str());
        emit(ctx, std::string(eb == 4 ? "st32 " : "st16 ") + mem_operand(r) + ", " + reg(vr), s.span);
        return;
      }
      if (t.kind == ExprKind::DEREF) {
        Value p = rvalue(eval(*t.args[0], ctx), t.args[0]->span, ctx);
        if (p.k == Value::K::POINTER) {
          // A pointer known at comptime: the element itself.
          if (p.global->type->kind == TK::ARRAY) fail(t.span, "unsupported: assigning through a comptime pointer into an array");
        }
        if (p.k != Value::K::RUNTIME || p.type->kind != TK::PTR || p.type->elem->kind == TK::ARRAY)
          fail(t.span, "unsupported: assignment through this pointer");
        const TypeRef et = p.type->elem;
        Value v = eval(*s.value, ctx);
        if (!op.empty()) {
          const int cur = alloc_temp(ctx, t.span);
          emit(ctx, load_mnemonic(et, t.span) + reg(cur) + ", [" + reg(int(p.i)) + "]", t.span);
          v = binary(op, runtime(cur, et), rvalue(v, s.value->span, ctx), s.span, ctx);
        }
        v = coerce(v, et, s.value->span, ctx);
        int vr = value_reg(*this, v, et, s.span, ctx);
        emit(ctx, std::string(et->byte_size() == 4 ? "st32 [" : "st16 [") + reg(int(p.i)) + "], " + reg(vr), s.span);
        return;
      }
      fail(t.span, "unsupported: assignment to this kind of expression");
    }
    case StmtKind::IF: {
      Value c;
      bool known = false;
      {
        // A comptime condition picks its branch without code (the other branch is not analysed).
        Ctx probe = ctx;
        probe.gen = nullptr;
        try {
          c = eval(*s.value, probe);
          known = c.is_comptime();
        } catch (const CompileError&) {
          known = false;
        }
      }
      if (known) {
        if (to_bool(c, s.value->span, "the condition of 'if'")) body(s.body);
        else if (s.has_else) body(s.else_body);
        return;
      }
      const std::string else_l = new_label(ctx, "else"), end_l = new_label(ctx, "endif");
      gen_cond(*this, *s.value, s.has_else ? else_l : end_l, false, ctx);
      g.temp_top = 1;
      body(s.body);
      if (s.has_else) {
        emit(ctx, "jmp " + end_l, s.span);
        g.p->code.push_back(else_l + ":");
        body(s.else_body);
      }
      g.p->code.push_back(end_l + ":");
      return;
    }
    case StmtKind::WHILE: {
      const std::string top = new_label(ctx, "while"), cont = new_label(ctx, "cont"), end = new_label(ctx, "wend");
      g.p->code.push_back(top + ":");
      gen_cond(*this, *s.value, end, false, ctx);
      g.temp_top = 1;
      g.loops.push_back({end, cont});
      body(s.body);
      g.loops.pop_back();
      g.p->code.push_back(cont + ":");
      if (s.step) gen_stmt(*s.step, ctx);
      g.temp_top = 1;
      emit(ctx, "jmp " + top, s.span);
      g.p->code.push_back(end + ":");
      return;
    }
    case StmtKind::FOR: {
      if (s.iterables.size() != 1 || s.iterables[0]->kind != ExprKind::BUILTIN || s.iterables[0]->text != "range")
        fail(s.span, "unsupported: 'for' over anything but @range(...)");
      if (s.captures.size() != 1) fail(s.span, "a 'for' over @range has one loop variable");
      const Expr& r = *s.iterables[0];
      if (r.args.size() < 2 || r.args.size() > 4) fail(r.span, "@range takes (type, end), (type, start, end) or (type, start, end, step)");
      TypeRef t = eval_type(*r.args[0], ctx);
      if (t->kind != TK::INT) fail(r.args[0]->span, "the type of @range must be an integer type");
      Value start = make_int(0), end, step = make_int(1);
      if (r.args.size() == 2) end = eval(*r.args[1], ctx);
      else {
        start = eval(*r.args[1], ctx);
        end = eval(*r.args[2], ctx);
        if (r.args.size() == 4) step = eval_comptime(*r.args[3], ctx, "the step of @range");
      }
      const int64_t st = to_int(step, r.span, "the step of @range");
      if (st == 0 || st < -32767 || st > 32767) fail(r.span, "the step of @range must be a nonzero 16-bit integer");
      start = coerce(rvalue(start, r.span, ctx), t, r.span, ctx);
      end = coerce(rvalue(end, r.span, ctx), t, r.span, ctx);
      if (start.k == Value::K::INT && end.k == Value::K::INT && (st > 0 ? start.i >= end.i : start.i <= end.i)) return;
      Scope sc;
      sc.parent = ctx.scope;
      Ctx inner = ctx;
      inner.scope = &sc;
      Binding iv;
      iv.reg = alloc_pool(ctx, s.span, s.captures[0]);
      iv.type = t;
      iv.constant = true;
      const int re = alloc_pool(ctx, s.span, "the end of the range");
      load_into(*this, iv.reg, start, t, r.span, ctx);
      g.temp_top = 1;
      load_into(*this, re, end, t, r.span, ctx);
      g.temp_top = 1;
      const std::string top = new_label(ctx, "for"), cont = new_label(ctx, "fcont"), endl = new_label(ctx, "fend");
      const bool sgn = t->is_signed;
      if (!(start.k == Value::K::INT && end.k == Value::K::INT))
        emit(ctx, std::string(sgn ? "bge " : "bgeu ") + (st > 0 ? reg(iv.reg) + ", " + reg(re) : reg(re) + ", " + reg(iv.reg)) + ", " + endl, r.span);
      g.p->code.push_back(top + ":");
      sc.names[s.captures[0]] = iv;
      g.loops.push_back({endl, cont});
      for (const StmtPtr& b : s.body) {
        gen_stmt(*b, inner);
        g.temp_top = 1;
      }
      g.loops.pop_back();
      g.p->code.push_back(cont + ":");
      emit(ctx, "addi " + reg(iv.reg) + ", " + reg(iv.reg) + ", " + std::to_string(st), r.span);
      emit(ctx, std::string(sgn ? "blt " : "bltu ") + (st > 0 ? reg(iv.reg) + ", " + reg(re) : reg(re) + ", " + reg(iv.reg)) + ", " + top, r.span);
      g.p->code.push_back(endl + ":");
      // Locals of the body were released by their statements' scopes; release the loop's own.
      sc.names.erase(s.captures[0]);
      release_scope(sc, inner);
      g.pool[size_t(iv.reg)] = false;
      g.pool[size_t(re)] = false;
      return;
    }
    case StmtKind::RETURN: {
      if (s.value) {
        if (g.ret_type->kind == TK::VOID) fail(s.value->span, "this function returns void");
        Value v = coerce(eval(*s.value, ctx), g.ret_type, s.value->span, ctx);
        int r = value_reg(*this, v, g.ret_type, s.span, ctx);
        if (r != 1) emit(ctx, "mov r1, " + reg(r), s.span);
      } else if (g.ret_type->kind != TK::VOID) {
        fail(s.span, "this function must return a " + g.ret_type->str());
      }
      emit(ctx, "jmp " + g.ret_label, s.span);
      return;
    }
    case StmtKind::BREAK:
      if (g.loops.empty()) fail(s.span, "'break' outside a loop");
      emit(ctx, "jmp " + g.loops.back().brk, s.span);
      return;
    case StmtKind::CONTINUE:
      if (g.loops.empty()) fail(s.span, "'continue' outside a loop");
      emit(ctx, "jmp " + g.loops.back().cont, s.span);
      return;
  }
}

Value Compiler::gen_if_expr(const Expr& e, const Value& cond, Ctx& ctx) {
  (void)cond;
  FnGen& g = *ctx.gen;
  const std::string else_l = new_label(ctx, "ifx_else"), end_l = new_label(ctx, "ifx_end");
  const int rd = alloc_temp(ctx, e.span);
  gen_cond(*this, *e.args[0], else_l, false, ctx);
  Value a = rvalue(eval(*e.args[1], ctx), e.args[1]->span, ctx);
  TypeRef t = a.type;
  // Two comptime integers: a run-time value of a type each fits (unsigned when neither is
  // negative, so that it assigns to u16/u32 as well).
  if (a.k == Value::K::INT && t && t->kind == TK::COMPTIME_INT) {
    Ctx probe = ctx;
    probe.gen = nullptr;
    Value b0 = eval(*e.args[2], probe);
    const bool neg = a.i < 0 || (b0.k == Value::K::INT && b0.i < 0);
    t = int_type(neg ? 32 : 16, neg);
  }
  if (a.k != Value::K::RUNTIME && t && t->kind == TK::COMPTIME_FLOAT) t = float_type(32);
  load_into(*this, rd, a, t, e.span, ctx);
  g.temp_top = rd + 1;
  emit(ctx, "jmp " + end_l, e.span);
  g.p->code.push_back(else_l + ":");
  Value b = coerce(rvalue(eval(*e.args[2], ctx), e.args[2]->span, ctx), t, e.args[2]->span, ctx);
  load_into(*this, rd, b, t, e.span, ctx);
  g.temp_top = rd + 1;
  g.p->code.push_back(end_l + ":");
  return runtime(rd, t);
}

}  // namespace wsemu::compiler::csl
