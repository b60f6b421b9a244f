// Comptime statements and calls: a comptime function call (its own scope, its parameters
// coerced), blocks, comptime locals, and the statements of comptime blocks and comptime
// functions (if, while, for over @range or a comptime array, assignment to a comptime local), within the step limit.
// Run-time statements are codegen's (statements.cpp).
#include <algorithm>

#include "compiler/csl/compiler_impl.hpp"

namespace wsemu::compiler::csl {

namespace {

constexpr int64_t kMaxComptimeSteps = 20'000'000;

}  // namespace

// A copy of the comptime aggregate `agg` with the place the path names from step `d` on
// updated (values share their parts, so everything on the way is copied, never changed).
Value Compiler::assign_path(const Value& agg, const std::vector<PathStep>& path, size_t d,
                            const std::function<Value(const Value&, const TypeRef&)>& update) {
  if (d == path.size()) return update(agg, agg.type);
  const PathStep& step = path[d];
  const Span at = step.at->span;
  if (agg.k != Value::K::STRUCT) fail(at, "cannot assign to an element or field of " + (agg.type ? agg.type->str() : agg.str()) + " at comptime");
  Value out = agg;
  out.st = std::make_shared<StructValue>(*agg.st);
  const bool array = agg.type && agg.type->kind == TK::ARRAY;
  size_t slot = 0;
  TypeRef elem;
  if (!step.field.empty()) {
    if (array) fail(at, "an array has no field '" + step.field + "'");
    const auto it = std::find(out.st->names.begin(), out.st->names.end(), step.field);
    if (it == out.st->names.end()) fail(at, "the struct has no field '" + step.field + "'");
    slot = size_t(it - out.st->names.begin());
  } else {
    const std::vector<int64_t> dims = array ? agg.type->dims : std::vector<int64_t>{int64_t(out.st->values.size())};
    if (step.index.size() != dims.size()) fail(at, "the array has " + std::to_string(dims.size()) + " dimensions");
    int64_t flat = 0;
    for (size_t k = 0; k < dims.size(); ++k) {
      if (step.index[k] < 0 || step.index[k] >= dims[k])
        fail(at, "index " + std::to_string(step.index[k]) + " is out of bounds (0.." + std::to_string(dims[k] - 1) + ")");
      flat = flat * dims[k] + step.index[k];
    }
    if (array && out.i == 1 && out.st->values.size() == 1) {
      // A splat (@zeros, @constants): one value for every element, spelled out before one changes.
      if (agg.type->element_count() > 1'000'000) fail(at, "unsupported: comptime assignment into an array of more than a million elements");
      out.st->values.assign(size_t(agg.type->element_count()), out.st->values[0]);
      out.i = 0;
    }
    slot = size_t(flat);
    if (slot >= out.st->values.size()) fail(at, "index out of bounds");
    if (array) elem = agg.type->elem;
  }
  const Value& cur = out.st->values[slot];
  out.st->values[slot] = d + 1 == path.size() ? update(cur, elem ? elem : cur.type) : assign_path(cur, path, d + 1, update);
  return out;
}

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
      // The target: a comptime local, or an element / field of one (`a[i] = v`, `s.f += v`, nested).
      std::vector<PathStep> path;
      const Expr* root = s.target.get();
      while (root->kind == ExprKind::INDEX || root->kind == ExprKind::FIELD) {
        PathStep step;
        step.at = root->kind == ExprKind::INDEX && root->args.size() > 1 ? root->args[1].get() : root;
        if (root->kind == ExprKind::FIELD) step.field = root->text;
        for (size_t i = 1; root->kind == ExprKind::INDEX && i < root->args.size(); ++i)
          step.index.push_back(to_int(eval_comptime(*root->args[i], ctx, "an index"), root->args[i]->span, "the index"));
        path.push_back(std::move(step));
        root = root->args[0].get();
      }
      std::reverse(path.begin(), path.end());
      if (root->kind != ExprKind::IDENT)
        fail(root->span, "unsupported: comptime assignment to this kind of expression (a local, or an element or field of one)");
      Binding* b = nullptr;
      for (Scope* sc = ctx.scope; sc && !b; sc = sc->parent) {
        auto it = sc->names.find(root->text);
        if (it != sc->names.end()) b = &it->second;
      }
      if (!b) {
        if (ctx.mod && ctx.mod->decls.count(root->text))
          fail(root->span, "cannot assign to '" + root->text + "' at comptime (it is a declaration of the file)");
        fail(root->span, "use of undeclared identifier '" + root->text + "'");
      }
      if (!b->is_comptime_var) fail(root->span, "cannot assign to constant '" + root->text + "'");
      Value v = eval(*s.value, ctx);
      auto update = [&](const Value& old, const TypeRef& t) {
        Value x = s.assign_op == "=" ? v : binary(s.assign_op.substr(0, s.assign_op.size() - 1), old, v, s.span, ctx);
        return t && !t->is_comptime_only() ? coerce(x, t, s.value->span, ctx) : x;
      };
      b->value = assign_path(b->value, path, 0, update);
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
      if (s.iterables.size() != 1) fail(s.span, "unsupported: a 'for' over more than one sequence");
      if (s.iterables[0]->kind != ExprKind::BUILTIN || s.iterables[0]->text != "range")
        return exec_for_each(s, ctx, ret);
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

// `for (seq) |elem, i|` at comptime, seq a comptime array of one dimension or a tuple (`.{...}`):
// the body once per element, elem its value and i its index as a comptime_int (usize in Zig).
// A capture `_` is not bound. The SDK's layouts loop so over `@zeros([W]u8)` to get 0..W-1.
Flow Compiler::exec_for_each(const Stmt& s, Ctx& ctx, Value* ret) {
  const Expr& seq_expr = *s.iterables[0];
  const Value seq = eval_comptime(seq_expr, ctx, "the sequence of a comptime 'for'");
  const bool array = seq.type && seq.type->kind == TK::ARRAY;
  if (seq.k != Value::K::STRUCT || (array && seq.type->dims.size() != 1))
    fail(seq_expr.span, array ? "unsupported: a comptime 'for' over an array of more than one dimension"
                              : "a 'for' runs over @range(...), a comptime array or a tuple");
  if (s.captures.empty() || s.captures.size() > 2) fail(s.span, "a 'for' over an array has one or two captures: |element| or |element, index|");
  const bool splat = array && seq.i == 1 && seq.st->values.size() == 1;
  const int64_t n = array ? seq.type->dims[0] : int64_t(seq.st->values.size());
  const int64_t limit = opt.max_comptime_steps > 0 ? opt.max_comptime_steps : kMaxComptimeSteps;
  for (int64_t i = 0; i < n; ++i) {
    if (++comptime_steps > limit) fail(s.span, "comptime loop runs too long");
    Scope local;
    local.parent = ctx.scope;
    auto bind = [&](const std::string& name, Value v) {
      if (name == "_") return;
      Binding b;
      b.value = std::move(v);
      local.names[name] = b;
    };
    bind(s.captures[0], seq.st->values[splat ? 0 : size_t(i)]);
    if (s.captures.size() == 2) bind(s.captures[1], make_int(i));
    Ctx inner = ctx;
    inner.scope = &local;
    const Flow f = exec_block(s.body, inner, ret);
    if (f == Flow::BREAK) break;
    if (f == Flow::RETURN) return f;
  }
  return Flow::NORMAL;
}

}  // namespace wsemu::compiler::csl
