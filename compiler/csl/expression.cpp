// Expression evaluation: comptime folding, and run-time expressions handed to codegen.cpp.
#include "compiler/csl/compiler_impl.hpp"

namespace wsemu::compiler::csl {

Value Compiler::eval(const Expr& e, Ctx& ctx) {
  using K = Value::K;
  switch (e.kind) {
    case ExprKind::INT:
      if (e.int_value > uint64_t(INT64_MAX)) fail(e.span, "integer literal too large");
      return make_int(int64_t(e.int_value));
    case ExprKind::FLOAT: return make_float(e.float_value);
    case ExprKind::STRING: {
      Value v;
      v.k = K::STRING;
      v.s = e.text;
      v.type = make_type(TK::COMPTIME_STRING);
      return v;
    }
    case ExprKind::BOOL: return make_bool(e.int_value != 0);
    case ExprKind::NULL_LIT: {
      Value v;
      v.k = K::NULL_V;
      v.type = make_type(TK::NULL_T);
      return v;
    }
    case ExprKind::UNDEFINED: {
      Value v;
      v.k = K::UNDEFINED;
      return v;
    }
    case ExprKind::IDENT: return lookup(e.text, e.span, ctx);
    case ExprKind::BUILTIN: return builtin(e, ctx);
    case ExprKind::CALL: {
      Value callee = eval(*e.args[0], ctx);
      std::vector<const Expr*> args;
      for (size_t i = 1; i < e.args.size(); ++i) args.push_back(e.args[i].get());
      return call(callee, args, e.span, ctx);
    }
    case ExprKind::FIELD: return field(eval(*e.args[0], ctx), e.text, e.span, ctx);
    case ExprKind::INDEX: {
      Value base;
      if (e.args[0]->kind == ExprKind::DEREF && ctx.gen) {
        // p.*[i]: the array p points to, indexed. A run-time pointer to an array (`*[N]T`, or a
        // `&array` kept in a variable, [*]T here) is the place itself.
        Value p = rvalue(eval(*e.args[0]->args[0], ctx), e.args[0]->span, ctx);
        if (p.k == K::RUNTIME && p.type->kind == TK::PTR && p.type->elem && p.type->elem->kind == TK::ARRAY) {
          base = p;
          base.type = p.type->elem;
        } else if (p.k == K::RUNTIME && p.type->kind == TK::MANY_PTR) {
          base = p;
        } else {
          base = eval(*e.args[0], ctx);
        }
      } else {
        base = eval(*e.args[0], ctx);
      }
      if (ctx.gen && base.k == K::GLOBAL && (base.global->type->kind == TK::MANY_PTR || base.global->type->kind == TK::PTR)) {
        // A pointer variable (`var x: [*]f32;`) indexed: its value is the place.
        base = rvalue(base, e.args[0]->span, ctx);
        if (base.type->kind == TK::PTR && base.type->elem && base.type->elem->kind == TK::ARRAY) base.type = base.type->elem;
      }
      std::vector<Value> idx;
      for (size_t i = 1; i < e.args.size(); ++i) idx.push_back(eval(*e.args[i], ctx));
      if (base.k == K::STRUCT) {
        if (idx.size() != 1 && !(base.type && base.type->kind == TK::ARRAY))
          fail(e.span, "a tuple takes one index");
        int64_t flat = 0;
        const std::vector<int64_t> dims = base.type && base.type->kind == TK::ARRAY ? base.type->dims
                                                                                      : std::vector<int64_t>{int64_t(base.st->values.size())};
        if (idx.size() != dims.size()) fail(e.span, "the array has " + std::to_string(dims.size()) + " dimensions");
        for (size_t d = 0; d < idx.size(); ++d) {
          int64_t i = to_int(idx[d], e.args[d + 1]->span, "the index");
          if (i < 0 || i >= dims[d]) fail(e.args[d + 1]->span, "index " + std::to_string(i) + " is out of bounds (0.." + std::to_string(dims[d] - 1) + ")");
          flat = flat * dims[d] + i;
        }
        if (base.st->values.size() == 1 && base.i == 1) return base.st->values[0];
        if (size_t(flat) >= base.st->values.size()) fail(e.span, "index out of bounds");
        return base.st->values[size_t(flat)];
      }
      if (base.k == K::GLOBAL && !ctx.gen)
        fail(e.span, "the elements of var '" + base.global->csl_name + "' are only known at run time");
      if (!ctx.gen) fail(e.span, "cannot index " + (base.type ? base.type->str() : base.str()) + " at comptime");
      Value sel;
      sel.k = K::VOID;
      // Delegated to codegen: an element load.
      std::vector<Value> all{base};
      for (Value& v : idx) all.push_back(v);
      Value out;
      out.k = K::BUILTIN_NAME;
      out.s = "__index_load";
      out.st = std::make_shared<StructValue>();
      out.st->values = all;
      return gen_call(out, {}, e.span, ctx);
    }
    case ExprKind::UNARY: {
      if (e.text == "comptime") return eval_comptime(*e.args[0], ctx, "the comptime expression");
      if (e.text == "&") {
        const Expr& t = *e.args[0];
        if (t.kind == ExprKind::IDENT || t.kind == ExprKind::FIELD) {
          Value g = eval(t, ctx);
          if (g.k == K::GLOBAL || (g.k == K::DSR_VAR && g.global)) {
            Value p;
            p.k = K::POINTER;
            p.global = g.global;
            auto pt = std::make_shared<Type>();
            pt->kind = g.global->type->kind == TK::ARRAY ? TK::MANY_PTR : TK::PTR;
            pt->elem = g.global->type->kind == TK::ARRAY ? g.global->type->elem : g.global->type;
            p.type = pt;
            return p;
          }
          if (g.k == K::FUNCTION) return g;
          if (g.k == K::STRUCT && g.type && g.type->kind == TK::ARRAY && ctx.mod && ctx.mod->program) {
            // A comptime array (a const of the file, a module's constant table): its read-only copy.
            Value p;
            p.k = K::POINTER;
            p.global = comptime_array_storage(g, t.kind == ExprKind::IDENT ? t.text : "array", e.span, ctx);
            auto pt = std::make_shared<Type>();
            pt->kind = TK::MANY_PTR;
            pt->elem = g.type->elem;
            p.type = pt;
            return p;
          }
          fail(e.span, "'&' needs a global variable (locals have no address)");
        }
        if (t.kind == ExprKind::INDEX) {
          Value g = eval(*t.args[0], ctx);
          const std::vector<int64_t>* dims = g.k == K::GLOBAL && g.global->type->kind == TK::ARRAY ? &g.global->type->dims : nullptr;
          if (dims && t.args.size() == dims->size() + 1) {
            // &a[i, j]: the element's address; comptime indices give a comptime pointer.
            std::vector<Value> idx;
            bool all_ct = true;
            for (size_t k = 1; k < t.args.size(); ++k) {
              idx.push_back(eval(*t.args[k], ctx));
              all_ct = all_ct && idx.back().is_comptime();
            }
            auto pt = std::make_shared<Type>();
            pt->kind = TK::PTR;
            pt->elem = g.global->type->elem;
            if (all_ct) {
              int64_t flat = 0;
              for (size_t k = 0; k < idx.size(); ++k) {
                const int64_t i = to_int(idx[k], t.args[k + 1]->span, "the index");
                if (i < 0 || i >= (*dims)[k])
                  fail(t.args[k + 1]->span, "index " + std::to_string(i) + " is out of bounds (0.." + std::to_string((*dims)[k] - 1) + ")");
                flat = flat * (*dims)[k] + i;
              }
              Value p;
              p.k = K::POINTER;
              p.global = g.global;
              p.offset = flat;
              p.type = pt;
              return p;
            }
            if (ctx.gen) return gen_element_address(g, idx, t.span, pt, ctx);
          }
          // &p[i] of a many-pointer or a pointer to an array: p plus i elements (CSL's pointer
          // arithmetic), a comptime pointer when p and i are comptime.
          Value p = g;
          if (ctx.gen && p.k == K::GLOBAL && (p.global->type->kind == TK::MANY_PTR || p.global->type->kind == TK::PTR))
            p = rvalue(p, t.args[0]->span, ctx);
          if (!ctx.gen && p.k == K::GLOBAL && (p.global->type->kind == TK::MANY_PTR || p.global->type->kind == TK::PTR))
            fail(e.span, "'&" + p.global->csl_name + "[i]' is only known at run time: var '" + p.global->csl_name + "' is a run-time pointer");
          const bool pointer = (p.k == K::RUNTIME || (p.k == K::POINTER && p.global)) && p.type &&
                               (p.type->kind == TK::MANY_PTR || (p.type->kind == TK::PTR && p.type->elem && p.type->elem->kind == TK::ARRAY));
          if ((p.k == K::RUNTIME || p.k == K::POINTER) && p.type && p.type->kind == TK::PTR && !pointer)
            fail(t.args[0]->span, "a single-item pointer (" + p.type->str() + ") has no elements: '&p[i]' needs a [*]T or a *[N]T");
          if (pointer) {
            const TypeRef elem = p.type->kind == TK::MANY_PTR ? p.type->elem : p.type->elem->elem;
            std::vector<Value> idx;
            for (size_t k = 1; k < t.args.size(); ++k) idx.push_back(eval(*t.args[k], ctx));
            auto pt = std::make_shared<Type>();
            pt->kind = TK::PTR;
            pt->elem = elem;
            const TypeRef gt = p.k == K::POINTER ? p.global->type : nullptr;
            const TypeRef global_elem = gt ? (gt->kind == TK::ARRAY ? gt->elem : gt) : nullptr;
            if (p.k == K::POINTER && p.type->kind == TK::MANY_PTR && idx.size() == 1 && idx[0].is_comptime() &&
                global_elem->byte_size() == elem->byte_size()) {
              const int64_t i = to_int(idx[0], t.args[1]->span, "the index");
              const int64_t left = gt->byte_size() / elem->byte_size() - p.offset;
              if (i < 0 || i >= left)
                fail(t.args[1]->span, "index " + std::to_string(i) + " is out of bounds for the array '" + p.global->csl_name +
                                          "' points into (0.." + std::to_string(left - 1) + ")");
              Value q = p;
              q.offset = p.offset + i;
              q.type = pt;
              return q;
            }
            if (ctx.gen) return gen_element_address(p, idx, t.span, pt, ctx);
            fail(e.span, "the address of an element through a pointer is only known at run time here");
          }
        }
        fail(e.span, "unsupported: '&' of this expression (only &global, &array[i] and &pointer[i] of a [*]T or *[N]T)");
      }
      return unary(e.text, rvalue(eval(*e.args[0], ctx), e.span, ctx), e.span, ctx);
    }
    case ExprKind::DEREF: {
      Value p = rvalue(eval(*e.args[0], ctx), e.args[0]->span, ctx);
      if (p.k == K::POINTER) {
        const bool to_array = p.type->kind == TK::PTR && p.type->elem && p.type->elem->kind == TK::ARRAY;
        if (to_array && (p.offset != 0 || !same_type(p.type->elem, p.global->type)))
          return p;  // *[N]T into an array at element k, or shaped otherwise: the place, indexed by element_ref
        if (p.offset == 0 && p.type->elem && p.type->elem->kind == TK::ARRAY) {
          Value g;
          g.k = K::GLOBAL;
          g.global = p.global;
          g.type = p.global->type;
          return g;
        }
        if (p.global->type->kind != TK::ARRAY) {
          Value g;
          g.k = K::GLOBAL;
          g.global = p.global;
          g.type = p.global->type;
          return g;
        }
        if (!ctx.gen) fail(e.span, "the value behind a pointer is only known at run time");
        // An element of an array: element 0 of the pointer read as a [*]T (its own element type,
        // whatever the array's shape).
        Value out;
        out.k = K::BUILTIN_NAME;
        out.s = "__index_load";
        out.st = std::make_shared<StructValue>();
        Value base = p;
        auto mp = std::make_shared<Type>();
        mp->kind = TK::MANY_PTR;
        mp->elem = p.type->elem;
        base.type = mp;
        out.st->values = {base, make_int(0)};
        return gen_call(out, {}, e.span, ctx);
      }
      if (p.k != K::RUNTIME || (p.type->kind != TK::PTR && p.type->kind != TK::MANY_PTR))
        fail(e.args[0]->span, "'.*' needs a pointer, found " + (p.type ? p.type->str() : p.str()));
      if (p.type->elem->kind == TK::ARRAY) {
        Value place = p;  // an array at a run-time address: indexed by the caller
        place.type = p.type->elem;
        return place;
      }
      Value out;
      out.k = K::BUILTIN_NAME;
      out.s = "__deref_load";
      out.st = std::make_shared<StructValue>();
      out.st->values = {p};
      return gen_call(out, {}, e.span, ctx);
    }
    case ExprKind::BINARY: {
      if (e.text == "and" || e.text == "or") {
        Value a = rvalue(eval(*e.args[0], ctx), e.args[0]->span, ctx);
        if (a.is_comptime()) {
          const bool av = to_bool(a, e.args[0]->span, "the operand of '" + e.text + "'");
          if (e.text == "and" && !av) return make_bool(false);
          if (e.text == "or" && av) return make_bool(true);
          Value b = rvalue(eval(*e.args[1], ctx), e.args[1]->span, ctx);
          if (b.is_comptime()) return make_bool(to_bool(b, e.args[1]->span, "the operand of '" + e.text + "'"));
          return b;
        }
        return gen_binary(e.text, a, eval(*e.args[1], ctx), e.span, ctx);
      }
      Value a = eval(*e.args[0], ctx);
      Value b = eval(*e.args[1], ctx);
      return binary(e.text, rvalue(a, e.args[0]->span, ctx), rvalue(b, e.args[1]->span, ctx), e.span, ctx);
    }
    case ExprKind::ANON_STRUCT: {
      Value v;
      v.k = K::STRUCT;
      v.type = make_type(TK::COMPTIME_STRUCT);
      v.st = std::make_shared<StructValue>();
      for (size_t i = 0; i < e.args.size(); ++i) {
        if (!e.names.empty()) {
          for (size_t j = 0; j < i; ++j)
            if (e.names[j] == e.names[i]) fail(e.args[i]->span, "duplicate field '" + e.names[i] + "'");
          v.st->names.push_back(e.names[i]);
        }
        if (e.args[i]->kind == ExprKind::TENSOR_ACCESS) {
          Value ta;
          ta.k = K::BUILTIN_NAME;
          ta.s = "__tensor_access";
          ta.fn = nullptr;
          ta.offset = reinterpret_cast<intptr_t>(e.args[i].get());
          v.st->values.push_back(ta);
          continue;
        }
        Value x = eval(*e.args[i], ctx);
        if (x.k == K::RUNTIME || x.k == K::GLOBAL) fail(e.args[i]->span, "struct literal fields must be known at comptime");
        v.st->values.push_back(x);
      }
      if (e.names.empty()) v.st->names.assign(v.st->values.size(), "");
      return v;
    }
    case ExprKind::ENUM_LITERAL: {
      Value v;
      v.k = K::ENUM;
      v.i = -1;
      v.s = e.text;
      return v;
    }
    case ExprKind::ARRAY_TYPE: {
      auto t = std::make_shared<Type>();
      t->kind = TK::ARRAY;
      for (size_t i = 0; i + 1 < e.args.size(); ++i) {
        if (e.args[i]->kind == ExprKind::IDENT && e.args[i]->text == "_") fail(e.args[i]->span, "unsupported: inferred array length '[_]'");
        int64_t n = to_int(eval_comptime(*e.args[i], ctx, "an array dimension"), e.args[i]->span, "an array dimension");
        if (n < 0 || n > (1 << 24)) fail(e.args[i]->span, "array dimension " + std::to_string(n) + " is out of range");
        t->dims.push_back(n);
      }
      t->elem = eval_type(*e.args.back(), ctx);
      if (t->elem->kind == TK::ARRAY) {
        for (int64_t d : t->elem->dims) t->dims.push_back(d);
        t->elem = t->elem->elem;
      }
      return make_type_value(t);
    }
    case ExprKind::MANY_PTR_TYPE:
    case ExprKind::PTR_TYPE: {
      auto t = std::make_shared<Type>();
      t->kind = e.kind == ExprKind::MANY_PTR_TYPE ? TK::MANY_PTR : TK::PTR;
      t->elem = eval_type(*e.args[0], ctx);
      return make_type_value(t);
    }
    case ExprKind::FN_TYPE: return make_type_value(make_type(TK::FN));
    case ExprKind::STRUCT_TYPE: {
      auto t = std::make_shared<Type>();
      t->kind = TK::STRUCT;
      t->field_names = e.names;
      for (const ExprPtr& f : e.args) t->field_types.push_back(eval_type(*f, ctx));
      t->name = "struct@" + sources.where(e.span);
      return make_type_value(t);
    }
    case ExprKind::ENUM_TYPE: {
      auto t = std::make_shared<Type>();
      t->kind = TK::ENUM;
      t->field_names = e.names;
      int64_t next = 0;
      for (size_t i = 0; i < e.names.size(); ++i) {
        if (e.enum_values[i]) next = to_int(eval_comptime(*e.enum_values[i], ctx, "an enum value"), e.enum_values[i]->span, "an enum value");
        t->enum_values.push_back(next++);
      }
      t->name = "enum@" + sources.where(e.span);
      return make_type_value(t);
    }
    case ExprKind::ARRAY_INIT: {
      TypeRef t = eval_type(*e.args[0], ctx);
      if (int64_t(e.args.size() - 1) != t->element_count())
        fail(e.span, "the array has " + std::to_string(t->element_count()) + " elements but " +
                         std::to_string(e.args.size() - 1) + " values are given");
      Value v;
      v.k = K::STRUCT;
      v.type = t;
      v.st = std::make_shared<StructValue>();
      for (size_t i = 1; i < e.args.size(); ++i)
        v.st->values.push_back(coerce(eval_comptime(*e.args[i], ctx, "an array element"), t->elem, e.args[i]->span, ctx));
      return v;
    }
    case ExprKind::TENSOR_ACCESS: fail(e.span, "a tensor access '|i|{...} -> ...' is only allowed as .tensor_access of @get_dsd");
    case ExprKind::IF_EXPR: {
      Value c = rvalue(eval(*e.args[0], ctx), e.args[0]->span, ctx);
      if (c.is_comptime()) {
        const bool yes = to_bool(c, e.args[0]->span, "the condition");
        if (!yes && !e.args[2]) fail(e.span, "the condition of this 'if' expression is false and it has no 'else' branch");
        return eval(*e.args[yes ? 1 : 2], ctx);
      }
      if (!e.args[2]) fail(e.span, "an 'if' expression with a run-time condition needs an 'else' branch");
      return gen_if_expr(e, c, ctx);
    }
    case ExprKind::SWITCH: {
      Value x = rvalue(eval(*e.args[0], ctx), e.args[0]->span, ctx);
      if (!x.is_comptime() && ctx.gen) return gen_switch(e, x, ctx);
      if (!x.is_comptime()) fail(e.span, "unsupported: 'switch' on a run-time value");
      const SwitchCase* chosen = nullptr;
      for (const SwitchCase& c : e.switch_cases) {
        if (c.values.empty()) {
          if (!chosen) chosen = &c;
          continue;
        }
        for (const ExprPtr& v : c.values) {
          bool hit = false;
          if (v->kind == ExprKind::RANGE) {
            Value lo = eval_comptime(*v->args[0], ctx, "a case"), hi = eval_comptime(*v->args[1], ctx, "a case");
            hit = to_bool(binary(">=", x, lo, v->span, ctx), v->span, "") && to_bool(binary("<=", x, hi, v->span, ctx), v->span, "");
          } else {
            Value cv = eval_comptime(*v, ctx, "a case value");
            if (cv.k == K::ENUM && cv.i < 0 && x.type) cv = coerce(cv, x.type, v->span, ctx);
            hit = to_bool(binary("==", x, cv, v->span, ctx), v->span, "");
          }
          if (hit) return switch_case(c, ctx);
        }
      }
      if (!chosen) fail(e.span, "the switch has no case for " + x.str() + " and no 'else'");
      return switch_case(*chosen, ctx);
    }
    case ExprKind::RANGE: fail(e.span, "a range 'a...b' is only allowed as a switch case");
  }
  fail(e.span, "unsupported expression");
}

// The chosen prong of a comptime switch: its value, or its block run (at comptime, or generated
// in run-time code).
Value Compiler::switch_case(const SwitchCase& c, Ctx& ctx) {
  if (!c.block) return eval(*c.result, ctx);
  if (ctx.gen) {
    gen_stmt(*c.block, ctx);
    return Value{};
  }
  Value ret;
  if (exec_block(c.block->body, ctx, &ret) != Flow::NORMAL)
    fail(c.span, "unsupported: break, continue or return inside a comptime switch prong");
  return Value{};
}

}  // namespace wsemu::compiler::csl
