// Run-time statements: locals, assignments, if / while / for, break / continue / return, and
// run-time conditions (see codegen.hpp).
#include "compiler/csl/codegen.hpp"

namespace wsemu::compiler::csl {

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
    Value a = wrapped(c, c.rvalue(c.eval(*e.args[0], ctx), e.args[0]->span, ctx), e.args[0]->span, ctx);
    Value b = wrapped(c, c.rvalue(c.eval(*e.args[1], ctx), e.args[1]->span, ctx), e.args[1]->span, ctx);
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

// Frees the pool registers a scope's locals held.
void release_scope(Scope& s, Ctx& ctx) {
  for (auto& [name, b] : s.names)
    if (b.reg >= 8) ctx.gen->pool[size_t(b.reg)] = false;
}

// A data word of the function for a local that gets no register (none left, or its address is
// taken): no recursion in CSL, so one per declaration suffices.
GlobalVar* memory_local(Compiler& c, Ctx& ctx, const std::string& name, const TypeRef& t, Span at) {
  if (t->byte_size() != 2 && t->byte_size() != 4) fail(at, "unsupported: a " + t->str() + " local");
  FnGen& g = *ctx.gen;
  auto gv = std::make_unique<GlobalVar>();
  gv->csl_name = name;
  gv->asm_name = g.fi->label + "$" + name + std::to_string(g.p->label_counter++);
  gv->type = t;
  gv->mod = ctx.mod;
  gv->span = at;
  gv->init.k = Value::K::UNDEFINED;
  GlobalVar* raw = gv.get();
  c.globals.push_back(std::move(gv));
  g.p->globals.push_back(raw);
  return raw;
}

void store_local(Compiler& c, Ctx& ctx, GlobalVar* slot, int r, Span at) {
  std::string where = slot->asm_name;
  if (ctx.gen->p->far_data) {
    const int a = alloc_temp(ctx, at);
    c.emit(ctx, "li " + reg(a) + ", " + slot->asm_name, at);
    where = reg(a);
    free_temp(ctx, a);
  }
  c.emit(ctx, std::string(slot->type->byte_size() == 4 ? "st32 [" : "st16 [") + where + "], " + reg(r), at);
}

// A pool register of r8..r12, or -1 when none is free.
int try_alloc_pool(Ctx& ctx) {
  for (int r = 8; r <= kLastLocalReg; ++r)
    if (!ctx.gen->pool[size_t(r)]) {
      ctx.gen->pool[size_t(r)] = true;
      return r;
    }
  return -1;
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
      for (int r = 8; r <= kLastLocalReg && b.reg < 0 && !g.addressed.count(s.name); ++r)
        if (!g.pool[size_t(r)]) b.reg = r;
      if (b.reg < 0) {
        // No register left, or its address is taken: the local lives in a data word of its
        // function (no recursion in CSL), read and written with loads and stores.
        GlobalVar* raw = memory_local(*this, ctx, s.name, t, s.span);
        if (init.k != Value::K::UNDEFINED) {
          Value v = coerce(init, t, s.value->span, ctx);
          store_local(*this, ctx, raw, value_reg(*this, v, t, s.span, ctx), s.span);
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
          if (target.global && target.dsd && resolve_fabric(*g.p, *target.dsd).kind == "d2h_fifo")
            fail(s.span, "unsupported: changing DSD variable '" + t.text + "', which streams to the host (MEMCPYD2H_1): wsemu's host stream is the firmware's FIFO, whose length is set by each push");
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
              if (arg.k == Value::K::GLOBAL && arg.global->type->kind == TK::ARRAY) {
                operand = arg.global->asm_name;  // an array: its address
              } else if (arg.k == Value::K::POINTER) {
                const int eb = arg.global->type->kind == TK::ARRAY ? arg.global->type->elem->byte_size() : arg.global->type->byte_size();
                operand = arg.global->asm_name + " + " + std::to_string(arg.offset * eb);
              } else if (arg.k == Value::K::RUNTIME) {
                operand = reg(int(arg.i));
              } else {
                fail(rhs.args[1]->span, "@set_dsd_base_addr needs a pointer (&array)");
              }
              note_dsd_var_base(*g.p, target.s, arg, rhs.args[1]->span);
            } else if (rhs.text == "increment_dsd_offset") {
              operand = dsd_offset_operand(arg, *rhs.args[2], target.dsd ? target.dsd->elem_bits : src.dsd->elem_bits,
                                           rhs.args[1]->span, ctx);
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
          if (gv->assigned_at.line == 0) gv->assigned_at = s.span;
          Value v = eval(*s.value, ctx);
          if (!op.empty()) v = binary(op, load_global(gv, t.span, ctx), rvalue(v, s.value->span, ctx), s.span, ctx);
          v = coerce(v, gv->type, s.value->span, ctx);
          if (v.k == Value::K::POINTER && v.global) gv->assigned_arrays.push_back({s.value->span, v.global, v.offset});
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
        if (base.k == Value::K::GLOBAL && (base.global->type->kind == TK::MANY_PTR || base.global->type->kind == TK::PTR))
          base = rvalue(base, t.span, ctx);  // a pointer variable indexed (`var x: [*]f32;` x[i] = e): its value is the place
        if (base.k != Value::K::GLOBAL && base.k != Value::K::RUNTIME && base.k != Value::K::POINTER)
          fail(t.span, "only elements of arrays can be assigned");
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
        if ((p.k != Value::K::RUNTIME && p.k != Value::K::POINTER) || (p.type->kind != TK::PTR && p.type->kind != TK::MANY_PTR))
          fail(t.span, "unsupported: assignment through this pointer");
        if (p.type->elem->kind == TK::ARRAY) fail(t.span, "unsupported: assigning a whole array through a pointer (assign its elements)");
        const TypeRef et = p.type->elem;
        // The pointee's place: the register's address, or for a comptime pointer (&global,
        // &array[k], a param set to one) its element 0 read as a [*]T.
        std::string where;
        if (p.k == Value::K::POINTER) {
          Value as_many = p;
          auto mp = std::make_shared<Type>();
          mp->kind = TK::MANY_PTR;
          mp->elem = et;
          as_many.type = mp;
          where = mem_operand(element_ref(*this, as_many, {make_int(0)}, {}, t.span, ctx));
        } else {
          where = "[" + reg(int(p.i)) + "]";
        }
        Value v = eval(*s.value, ctx);
        if (!op.empty()) {
          const int cur = alloc_temp(ctx, t.span);
          emit(ctx, load_mnemonic(et, t.span) + reg(cur) + ", " + where, t.span);
          v = binary(op, runtime(cur, et), rvalue(v, s.value->span, ctx), s.span, ctx);
        }
        v = coerce(v, et, s.value->span, ctx);
        int vr = value_reg(*this, v, et, s.span, ctx);
        const int eb = et->byte_size();
        if (eb != 4 && eb != 2) fail(t.span, "unsupported: assignment through a pointer to " + et->str());
        emit(ctx, std::string(eb == 4 ? "st32 " : "st16 ") + where + ", " + reg(vr), s.span);
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
      // The loop variable and the bound live in registers of r8..r12; when none is left, the
      // variable lives in a data word (loaded, incremented and stored each iteration) and the
      // bound is loaded each iteration (`li` for a comptime one, else from a data word).
      Binding iv;
      iv.type = t;
      iv.constant = true;
      iv.reg = try_alloc_pool(ctx);
      GlobalVar* iv_slot = iv.reg < 0 ? memory_local(*this, ctx, s.captures[0], t, s.span) : nullptr;
      const int re = try_alloc_pool(ctx);
      const bool end_ct = end.k == Value::K::INT;
      GlobalVar* end_slot = re < 0 && !end_ct ? memory_local(*this, ctx, "end", t, r.span) : nullptr;
      if (iv_slot) store_local(*this, ctx, iv_slot, value_reg(*this, start, t, r.span, ctx), r.span);
      else load_into(*this, iv.reg, start, t, r.span, ctx);
      g.temp_top = 1;
      if (re >= 0) load_into(*this, re, end, t, r.span, ctx);
      else if (end_slot) store_local(*this, ctx, end_slot, value_reg(*this, end, t, r.span, ctx), r.span);
      g.temp_top = 1;
      auto iv_reg = [&] { return iv_slot ? int(load_global(iv_slot, r.span, ctx).i) : iv.reg; };
      auto end_reg = [&] {
        if (re >= 0) return re;
        if (end_slot) return int(load_global(end_slot, r.span, ctx).i);
        return value_reg(*this, end, t, r.span, ctx);
      };
      const std::string top = new_label(ctx, "for"), cont = new_label(ctx, "fcont"), endl = new_label(ctx, "fend");
      const bool sgn = t->is_signed;
      if (!(start.k == Value::K::INT && end.k == Value::K::INT)) {
        const int a = iv_reg(), b = end_reg();
        emit(ctx, std::string(sgn ? "bge " : "bgeu ") + (st > 0 ? reg(a) + ", " + reg(b) : reg(b) + ", " + reg(a)) + ", " + endl, r.span);
        g.temp_top = 1;
      }
      g.p->code.push_back(top + ":");
      if (iv_slot) {
        iv.reg = -1;
        iv.value.k = Value::K::GLOBAL;
        iv.value.global = iv_slot;
        iv.value.type = t;
      }
      sc.names[s.captures[0]] = iv;
      g.loops.push_back({endl, cont});
      for (const StmtPtr& b : s.body) {
        gen_stmt(*b, inner);
        g.temp_top = 1;
      }
      g.loops.pop_back();
      g.p->code.push_back(cont + ":");
      const int a = iv_reg();
      emit(ctx, "addi " + reg(a) + ", " + reg(a) + ", " + std::to_string(st), r.span);
      if (iv_slot) store_local(*this, ctx, iv_slot, a, r.span);
      const int b = end_reg();
      emit(ctx, std::string(sgn ? "blt " : "bltu ") + (st > 0 ? reg(a) + ", " + reg(b) : reg(b) + ", " + reg(a)) + ", " + top, r.span);
      g.temp_top = 1;
      g.p->code.push_back(endl + ":");
      // Locals of the body were released by their statements' scopes; release the loop's own.
      sc.names.erase(s.captures[0]);
      release_scope(sc, inner);
      if (iv.reg >= 8) g.pool[size_t(iv.reg)] = false;
      if (re >= 0) g.pool[size_t(re)] = false;
      return;
    }
    case StmtKind::RETURN: {
      if (s.value) {
        if (g.ret_type->kind == TK::VOID) fail(s.value->span, "this function returns void");
        Value v = coerce(eval(*s.value, ctx), g.ret_type, s.value->span, ctx);
        if (needs_wrap(v)) {
          wrap_into(*this, 1, v, s.span, ctx);
        } else {
          int r = value_reg(*this, v, g.ret_type, s.span, ctx);
          if (r != 1) emit(ctx, "mov r1, " + reg(r), s.span);
        }
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

// A switch on a run-time integer, as a statement: one compare-and-branch per case value, then
// each prong's code and a jump to the end (a prong's value, if any, is dropped).
Value Compiler::gen_switch(const Expr& e, const Value& x, Ctx& ctx) {
  if (x.k != Value::K::RUNTIME || !x.type || x.type->kind != TK::INT)
    fail(e.span, "unsupported: a run-time 'switch' on a " + (x.type ? x.type->str() : x.str()) + " (integers only)");
  Program& p = *ctx.gen->p;
  const int xr = int(x.i);
  const std::string end = new_label(ctx, "switch_end");
  std::vector<std::string> labels;
  std::string else_label = end;
  for (const SwitchCase& c : e.switch_cases) {
    labels.push_back(new_label(ctx, "case"));
    if (c.values.empty()) {
      else_label = labels.back();
      continue;
    }
    for (const ExprPtr& v : c.values) {
      if (v->kind == ExprKind::RANGE) fail(v->span, "unsupported: a range case in a run-time switch");
      const Value cv = coerce(eval_comptime(*v, ctx, "a case value"), x.type, v->span, ctx);
      const int t = alloc_temp(ctx, v->span);
      emit(ctx, "li " + reg(t) + ", " + std::to_string(int64_t(int32_t(uint32_t(cv.i)))), v->span);
      emit(ctx, "beq " + reg(xr) + ", " + reg(t) + ", " + labels.back(), v->span);
      free_temp(ctx, t);
    }
  }
  emit(ctx, "jmp " + else_label, e.span);
  free_temp(ctx, xr);
  const int top = ctx.gen->temp_top;
  for (size_t i = 0; i < e.switch_cases.size(); ++i) {
    const SwitchCase& c = e.switch_cases[i];
    p.code.push_back(labels[i] + ":");
    if (c.block) gen_stmt(*c.block, ctx);
    else (void)eval(*c.result, ctx);
    ctx.gen->temp_top = top;
    emit(ctx, "jmp " + end, c.span);
  }
  p.code.push_back(end + ":");
  return Value{};
}

}  // namespace wsemu::compiler::csl
