// Comptime statements and calls: a comptime function call (its own scope, its parameters
// coerced), blocks, comptime locals, and the statements of comptime blocks and comptime
// functions (if, while, for over @range, assignment to a comptime local), within the step limit.
// Run-time statements are codegen's (statements.cpp).
#include "compiler/csl/compiler_impl.hpp"

namespace wsemu::compiler::csl {

namespace {

constexpr int64_t kMaxComptimeSteps = 20'000'000;

}  // namespace

Value Compiler::call(const Value& callee, const std::vector<const Expr*>& args, Span at, Ctx& ctx) {
  if (callee.k != Value::K::FUNCTION) fail(at, "cannot call " + (callee.type ? callee.type->str() : callee.str()));
  const Stmt& fn = *callee.fn;
  if (args.size() != fn.params.size())
    fail(at, "'" + fn.name + "' takes " + std::to_string(fn.params.size()) + " argument" +
                 (fn.params.size() == 1 ? "" : "s") + ", " + std::to_string(args.size()) + " given");
  if (fn.decl_kind == "task") fail(at, "a task cannot be called; activate it (@activate) or bind it to a color");
  Ctx fctx;
  fctx.mod = callee.mod;
  const TypeRef ret = eval_type(*fn.type, fctx);
  if (!ctx.gen || ret->is_comptime_only()) {
    std::vector<Value> vals;
    for (const Expr* a : args) vals.push_back(eval_comptime(*a, ctx, "an argument of a comptime call"));
    return call_comptime(callee, vals, at, ctx);
  }
  return gen_call(callee, args, at, ctx);
}

Value Compiler::call_comptime(const Value& fnv, std::vector<Value> args, Span at, Ctx& ctx) {
  const Stmt& fn = *fnv.fn;
  if (ctx.call_depth > 200) fail(at, "comptime calls nested more than 200 deep (recursion?)");
  Scope local;
  Scope* scope = &local;
  Ctx fctx;
  fctx.mod = fnv.mod;
  fctx.scope = scope;
  fctx.call_depth = ctx.call_depth + 1;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    Binding b;
    b.value = coerce(args[i], eval_type(*fn.params[i].type, fctx), at, fctx);
    scope->names[fn.params[i].name] = b;
  }
  Value ret;
  ret.k = Value::K::VOID;
  exec_block(fn.body, fctx, &ret);
  const TypeRef rt = eval_type(*fn.type, fctx);
  if (rt->kind != TK::VOID) return coerce(ret, rt, at, fctx);
  return ret;
}

Flow Compiler::exec_block(const std::vector<StmtPtr>& body, Ctx& ctx, Value* ret) {
  Scope local;
  Scope* s = &local;
  s->parent = ctx.scope;
  Ctx inner = ctx;
  inner.scope = s;
  for (const StmtPtr& st : body) {
    Flow f = exec(*st, inner, ret);
    if (f != Flow::NORMAL) return f;
  }
  return Flow::NORMAL;
}

void Compiler::declare_var(const Stmt& s, Ctx& ctx) {
  for (Scope* sc = ctx.scope; sc; sc = sc->parent)
    if (sc->names.count(s.name)) fail(s.span, "'" + s.name + "' shadows a local of the same name");
  if (ctx.mod && ctx.mod->decls.count(s.name)) fail(s.span, "local '" + s.name + "' shadows a declaration of the file");
  Binding b;
  if (!s.value) fail(s.span, "a comptime local needs an initial value");
  b.value = eval_comptime(*s.value, ctx, "the value of '" + s.name + "'");
  if (s.type) b.value = coerce(b.value, eval_type(*s.type, ctx), s.value->span, ctx);
  b.is_comptime_var = s.decl_kind == "var";
  ctx.scope->names[s.name] = b;
}

Flow Compiler::exec(const Stmt& s, Ctx& ctx, Value* ret) {
  if (ctx.gen) {
    gen_stmt(s, ctx);
    return Flow::NORMAL;
  }
  // Counted per compilation (a Compiler member), so that one program's loops never count against
  // the next compilation in the same process.
  int64_t& steps = comptime_steps;
  const int64_t limit = opt.max_comptime_steps > 0 ? opt.max_comptime_steps : kMaxComptimeSteps;
  if (++steps > limit)
    fail(s.span, "comptime evaluation takes too long (more than " + std::to_string(limit) + " statements)");
  switch (s.kind) {
    case StmtKind::VAR:
      if (s.decl_kind == "param") fail(s.span, "'param' is only allowed at the top level of a file");
      declare_var(s, ctx);
      return Flow::NORMAL;
    case StmtKind::FN: fail(s.span, "functions can only be declared at the top level");
    case StmtKind::COMPTIME:
    case StmtKind::BLOCK: return exec_block(s.body, ctx, ret);
    case StmtKind::LAYOUT: fail(s.span, "a layout block is only allowed at the top level of the layout file");
    case StmtKind::EXPR: {
      Value v = eval(*s.value, ctx);
      (void)v;
      return Flow::NORMAL;
    }
    case StmtKind::ASSIGN: {
      if (s.target->kind != ExprKind::IDENT) fail(s.target->span, "unsupported: comptime assignment to anything but a local variable");
      Binding* b = nullptr;
      for (Scope* sc = ctx.scope; sc && !b; sc = sc->parent) {
        auto it = sc->names.find(s.target->text);
        if (it != sc->names.end()) b = &it->second;
      }
      if (!b) {
        if (ctx.mod && ctx.mod->decls.count(s.target->text))
          fail(s.target->span, "cannot assign to '" + s.target->text + "' at comptime (it is a declaration of the file)");
        fail(s.target->span, "use of undeclared identifier '" + s.target->text + "'");
      }
      if (!b->is_comptime_var) fail(s.target->span, "cannot assign to constant '" + s.target->text + "'");
      Value v = eval(*s.value, ctx);
      if (s.assign_op != "=") v = binary(s.assign_op.substr(0, s.assign_op.size() - 1), b->value, v, s.span, ctx);
      b->value = b->value.type && !b->value.type->is_comptime_only() ? coerce(v, b->value.type, s.value->span, ctx) : v;
      return Flow::NORMAL;
    }
    case StmtKind::IF: {
      if (to_bool(eval(*s.value, ctx), s.value->span, "the condition of 'if'")) return exec_block(s.body, ctx, ret);
      if (s.has_else) return exec_block(s.else_body, ctx, ret);
      return Flow::NORMAL;
    }
    case StmtKind::WHILE: {
      while (to_bool(eval(*s.value, ctx), s.value->span, "the condition of 'while'")) {
        if (++steps > limit) fail(s.span, "comptime loop runs too long");
        Flow f = exec_block(s.body, ctx, ret);
        if (f == Flow::BREAK) break;
        if (f == Flow::RETURN) return f;
        if (s.step) exec(*s.step, ctx, ret);
      }
      return Flow::NORMAL;
    }
    case StmtKind::FOR: {
      if (s.iterables.size() != 1 || s.iterables[0]->kind != ExprKind::BUILTIN || s.iterables[0]->text != "range")
        fail(s.span, "unsupported: comptime 'for' over anything but @range(...)");
      const Expr& r = *s.iterables[0];
      if (r.args.size() < 2 || r.args.size() > 4) fail(r.span, "@range takes (type, end), (type, start, end) or (type, start, end, step)");
      TypeRef t = eval_type(*r.args[0], ctx);
      int64_t start = 0, end = 0, step = 1;
      auto iv = [&](size_t i) { return to_int(eval(*r.args[i], ctx), r.args[i]->span, "a @range bound"); };
      if (r.args.size() == 2) end = iv(1);
      else {
        start = iv(1);
        end = iv(2);
        if (r.args.size() == 4) step = iv(3);
      }
      if (step == 0) fail(r.span, "@range step is 0");
      if (s.captures.size() != 1) fail(s.span, "a 'for' over @range has one loop variable");
      for (int64_t i = start; step > 0 ? i < end : i > end; i += step) {
        if (++steps > limit) fail(s.span, "comptime loop runs too long");
        Scope local;
        Scope* sc = &local;
        sc->parent = ctx.scope;
        Binding b;
        b.value = coerce(make_int(i), t, r.span, ctx);
        sc->names[s.captures[0]] = b;
        Ctx inner = ctx;
        inner.scope = sc;
        Flow f = exec_block(s.body, inner, ret);
        if (f == Flow::BREAK) break;
        if (f == Flow::RETURN) return f;
      }
      return Flow::NORMAL;
    }
    case StmtKind::RETURN:
      if (s.value) *ret = eval_comptime(*s.value, ctx, "the returned value");
      return Flow::RETURN;
    case StmtKind::BREAK: return Flow::BREAK;
    case StmtKind::CONTINUE: return Flow::CONTINUE;
  }
  return Flow::NORMAL;
}

}  // namespace wsemu::compiler::csl
