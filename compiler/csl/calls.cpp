// Function instances (one per distinct set of comptime arguments), the generation of every
// function and task body from the roots, and run-time calls with their register save/restore.
#include <functional>

#include "compiler/csl/codegen.hpp"

namespace wsemu::compiler::csl {

// The data word of a function's run-time parameter k past the fifth (r8..r12 hold the first five).
static std::string memory_arg(const FnInst& f, int k) { return f.label + "$arg" + std::to_string(k); }

static bool contains_call(const Expr* e) {
  if (!e) return false;
  if (e->kind == ExprKind::CALL) return true;
  for (const ExprPtr& a : e->args)
    if (contains_call(a.get())) return true;
  return false;
}

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
    collect_addressed(fn.body, g.addressed);
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
        const int k = runtime_params++;
        b.type = t;
        b.constant = true;  // parameters are immutable in CSL
        if (8 + k > kLastLocalReg) {
          // Past r12: the caller stores the argument in a data word of the callee (no recursion).
          if (t->byte_size() != 2 && t->byte_size() != 4) fail(prm.span, "unsupported: a " + t->str() + " parameter past the fifth");
          auto gv = std::make_unique<GlobalVar>();
          gv->csl_name = prm.name;
          gv->asm_name = memory_arg(*fi, k);
          gv->type = t;
          gv->mod = fi->mod;
          gv->span = prm.span;
          gv->init.k = Value::K::UNDEFINED;
          b.value.k = Value::K::GLOBAL;
          b.value.global = gv.get();
          b.value.type = t;
          p.globals.push_back(gv.get());
          globals.push_back(std::move(gv));
        } else {
          b.reg = 8 + k;
          g.pool[size_t(b.reg)] = true;
        }
      }
      scope.names[prm.name] = b;
    }
    if (!fi->is_task && runtime_params > 0 && p.exported_functions.count(fi->label)) {
      // A launched function's arguments: the memcpy firmware stores them at MEMCPY_ARGS.
      if (!p.includes.count("memcpy.wsa")) fail(fn.span, "an exported function with parameters needs <memcpy/memcpy> (it passes the arguments)");
      for (int k = 0; k < runtime_params; ++k)
        {
          // MEMCPY_ARGS is above 32 KiB: out of reach of a mem operand's offset.
          const std::string r = "r" + std::to_string(8 + k <= kLastLocalReg ? 8 + k : 1);
          emit(ctx, "li " + r + ", MEMCPY_ARGS + " + std::to_string(4 * k), fn.span);
          emit(ctx, "ld32 " + r + ", [" + r + "]", fn.span);
          if (8 + k > kLastLocalReg) {
            const TypeRef& t = scope.names[fn.params[size_t(k)].name].type;  // (exported: no comptime params)
            emit(ctx, "li r2, " + memory_arg(*fi, k), fn.span);
            emit(ctx, std::string(t->byte_size() == 4 ? "st32 [r2], r1" : "st16 [r2], r1"), fn.span);
          }
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
  if (fn.k == Value::K::BUILTIN_NAME &&
      (fn.s == "__wsemu_coord" || fn.s == "__wsemu_tsc" || fn.s == "__wsemu_tsch" || fn.s == "__wsemu_tdmask")) {
    const int rd = alloc_temp(ctx, at);
    if (fn.s == "__wsemu_coord") emit(ctx, "coord " + reg(rd) + ", " + std::to_string(fn.st->values[0].i), at);
    else if (fn.s == "__wsemu_tdmask") emit(ctx, "tdmask " + reg(rd), at);
    else emit(ctx, std::string(fn.s == "__wsemu_tsc" ? "tsc " : "tsch ") + reg(rd), at);
    return runtime(rd, fn.s == "__wsemu_tsc" || fn.s == "__wsemu_tdmask" ? int_type(32, false) : int_type(16, false));
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
    if (fn.s == "set_dsd_base_addr" && src.k == Value::K::DSD && src.dsd && (src.dsd->kind == "mem1d_dsd" || src.dsd->kind == "mem4d_dsd")) {
      // A memory DSD takes its element type from the new base, as in CSL (a placeholder DSD over
      // an i16 array based at an f32 array is an f32 DSD): the template copied has that width.
      Ctx probe = ctx;
      probe.gen = nullptr;
      TypeRef pt;
      try {
        pt = eval(*e.args.at(1), probe).type;
      } catch (const CompileError&) {
        pt = nullptr;
      }
      if (!pt) {
        // A run-time pointer: its type from a probe is not known; nothing to change.
      } else {
        TypeRef et = pt->kind == TK::ARRAY ? pt->elem : (pt->kind == TK::PTR || pt->kind == TK::MANY_PTR) ? pt->elem : nullptr;
        if (et && et->kind == TK::ARRAY) et = et->elem;
        if (et && (et->byte_size() == 2 || et->byte_size() == 4) && et->byte_size() * 8 != src.dsd->elem_bits) {
          auto d = std::make_shared<DsdValue>(*src.dsd);
          d->elem_bits = et->byte_size() * 8;
          src.dsd = d;
        }
      }
    }
    std::string t;
    if (src.k == Value::K::DSR_VAR && src.s.rfind("dsd_scratch", 0) == 0) {
      t = src.s;  // a nested change (@set_dsd_length(@increment_dsd_offset(d, ...), ...)): the same scratch
    } else {
      if (g.dsr_temp >= 4) fail(at, "unsupported: more than 4 modified DSDs in one statement");
      t = "dsd_scratch" + std::to_string(g.dsr_temp++);
      emit(ctx, "dsdcopy " + t + ", " + dsd_operand(src, e.args[0]->span, ctx), at);
    }
    Value arg = rvalue(eval(*e.args.at(1), ctx), e.args[1]->span, ctx);
    std::string operand;
    if (fn.s == "set_dsd_base_addr") {
      if (arg.k == Value::K::RUNTIME && (arg.type->kind == TK::PTR || arg.type->kind == TK::MANY_PTR)) {
        operand = reg(int(arg.i));  // a run-time pointer: its byte address
      } else if (arg.k == Value::K::GLOBAL && arg.global->type->kind == TK::ARRAY) {
        operand = arg.global->asm_name;  // an array: its address
      } else {
        if (arg.k != Value::K::POINTER) fail(e.args[1]->span, "@set_dsd_base_addr needs a pointer (&array, or a pointer value)");
        const int eb = arg.global->type->kind == TK::ARRAY ? arg.global->type->elem->byte_size() : arg.global->type->byte_size();
        operand = arg.global->asm_name + " + " + std::to_string(arg.offset * eb);
      }
    } else if (fn.s == "increment_dsd_offset" && e.args.size() == 3) {
      operand = dsd_offset_operand(arg, *e.args[2], src.dsd->elem_bits, e.args[1]->span, ctx);
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
  std::vector<TypeRef> arg_types;
  const int live_temps = g.temp_top;
  Ctx fctx;
  fctx.mod = fn.mod;
  // Without comptime parameters the callee is known before its arguments: an argument past the
  // fifth then goes to its data word at once, freeing its temporary (so that calls of up to 8
  // arguments fit in r1..r7), unless a later argument makes a call (which could be the same one).
  FnInst* early = nullptr;
  {
    bool any_ct_param = false;
    for (const FnParam& prm : f.params) any_ct_param = any_ct_param || prm.is_comptime || eval_type(*prm.type, fctx)->is_comptime_only();
    if (!any_ct_param) early = function_instance(fn.mod, fn.fn, {}, at);
  }
  int runtime_k = 0;
  for (size_t i = 0; i < f.params.size(); ++i) {
    TypeRef t = eval_type(*f.params[i].type, fctx);
    if (f.params[i].is_comptime || t->is_comptime_only()) {
      ct_args[i] = coerce(eval_comptime(*args[i], ctx, "comptime argument '" + f.params[i].name + "'"), t, args[i]->span, ctx);
      continue;
    }
    Value a = wrapped(*this, coerce(eval(*args[i], ctx), t, args[i]->span, ctx), args[i]->span, ctx);
    const int k = runtime_k++;
    bool later_call = false;
    for (size_t j = i + 1; j < args.size(); ++j) later_call = later_call || contains_call(args[j]);
    if (early && 8 + k > kLastLocalReg && !later_call && !g.p->far_data && (t->byte_size() == 2 || t->byte_size() == 4)) {
      const int r = value_reg(*this, a, t, args[i]->span, ctx);
      emit(ctx, std::string(t->byte_size() == 4 ? "st32 [" : "st16 [") + memory_arg(*early, k) + "], " + reg(r), args[i]->span);
      free_temp(ctx, r);
      arg_regs.push_back(-1);  // stored already
      arg_types.push_back(t);
      continue;
    }
    int r = value_reg(*this, a, t, args[i]->span, ctx);
    if (!is_temp(r) || r < live_temps) {
      int tr = alloc_temp(ctx, at);
      emit(ctx, "mov " + reg(tr) + ", " + reg(r), at);
      r = tr;
    }
    arg_regs.push_back(r);
    arg_types.push_back(t);
  }
  bool any_ct = false;
  for (const Value& v : ct_args) any_ct = any_ct || v.k != Value::K::VOID;
  FnInst* callee = function_instance(fn.mod, fn.fn, any_ct ? ct_args : std::vector<Value>{}, at);
  std::vector<int> saved;
  for (int r = 1; r < live_temps; ++r) saved.push_back(r);
  for (int r = 8; r <= kLastLocalReg; ++r)
    if (g.pool[size_t(r)]) saved.push_back(r);
  g.spill_words = std::max(g.spill_words, int(saved.size()));
  // The save words' base as a memory operand: past a mem operand's reach (far data), its address
  // in a temporary above every saved one, held while it is used.
  auto save_words = [&](const std::function<void(const std::string&)>& each_base) {
    if (saved.empty()) return;
    if (!g.p->far_data) return each_base(g.spill);
    const int a = alloc_temp(ctx, at);
    emit(ctx, "li " + reg(a) + ", " + g.spill, at);
    each_base(reg(a));
    free_temp(ctx, a);
  };
  save_words([&](const std::string& base) {
    for (size_t k = 0; k < saved.size(); ++k)
      emit(ctx, "st32 [" + base + " + " + std::to_string(4 * k) + "], " + reg(saved[k]), at);
  });
  for (size_t k = 0; k < arg_regs.size(); ++k) {
    if (arg_regs[k] < 0) continue;  // stored into its data word while the arguments were evaluated
    if (8 + int(k) <= kLastLocalReg) {
      emit(ctx, "mov " + reg(int(8 + k)) + ", " + reg(arg_regs[k]), at);
      continue;
    }
    // Past r12: into the callee's data word for the parameter (see generate_functions).
    const int eb = arg_types[k]->byte_size();
    if (eb != 2 && eb != 4) fail(at, "unsupported: a " + arg_types[k]->str() + " argument past the fifth");
    std::string where = memory_arg(*callee, int(k));
    if (g.p->far_data) {  // the word may lie past a mem operand's reach: its address in a register
      const int a = alloc_temp(ctx, at);
      emit(ctx, "li " + reg(a) + ", " + where, at);
      where = reg(a);
      free_temp(ctx, a);
    }
    emit(ctx, std::string(eb == 4 ? "st32 [" : "st16 [") + where + "], " + reg(arg_regs[k]), at);
  }
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
  save_words([&](const std::string& base) {
    for (size_t k = 0; k < saved.size(); ++k)
      emit(ctx, "ld32 " + reg(saved[k]) + ", [" + base + " + " + std::to_string(4 * k) + "]", at);
  });
  return result;
}

namespace {

void collect_addressed(const Expr* e, std::set<std::string>& out) {
  if (!e) return;
  if (e->kind == ExprKind::UNARY && e->text == "&" && !e->args.empty() && e->args[0] && e->args[0]->kind == ExprKind::IDENT)
    out.insert(e->args[0]->text);
  for (const ExprPtr& a : e->args) collect_addressed(a.get(), out);
  for (const SwitchCase& c : e->switch_cases) {
    for (const ExprPtr& v : c.values) collect_addressed(v.get(), out);
    collect_addressed(c.result.get(), out);
    if (c.block) collect_addressed(c.block->body, out);
  }
}

}  // namespace

void collect_addressed(const std::vector<StmtPtr>& body, std::set<std::string>& out) {
  for (const StmtPtr& s : body) {
    if (!s) continue;
    collect_addressed(s->value.get(), out);
    collect_addressed(s->target.get(), out);
    for (const ExprPtr& it : s->iterables) collect_addressed(it.get(), out);
    collect_addressed(s->body, out);
    collect_addressed(s->else_body, out);
    if (s->step) {
      collect_addressed(s->step->value.get(), out);
      collect_addressed(s->step->target.get(), out);
    }
  }
}

}  // namespace wsemu::compiler::csl
