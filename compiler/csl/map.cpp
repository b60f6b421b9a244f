// @map (the SDK's custom DSD operation): a loop over the elements of its DSD operands, one call
// of the callback per element. `@map(f, operands..., out)`: a DSD operand gives f its element i,
// any other operand (a scalar, a pointer) is passed as it is; f's result goes to element i of
// `out` (a DSD) or through `out` (a pointer). When f returns void there is no output operand.
// The loop costs what it compiles to: a counter, per DSD operand its element's address (a
// shift or a multiply and an add; a DSD variable's base and stride read from its register) and a
// load, the call, the store, the increment and the branch. The element count is a const DSD
// operand's length, or with DSD variables only the first one's length at run time.
#include "compiler/csl/codegen.hpp"

namespace wsemu::compiler::csl {

namespace {

TypeRef element_type(const DsdValue& d) {
  const TypeRef& t = d.base->type;
  return t->kind == TK::ARRAY ? t->elem : t;
}

// The place of element k (its index in the counter register) of a memory DSD; of a DSD
// variable (`dsr` its register): its base and stride as they are now, read from the register.
ElementRef map_element(Compiler& c, const DsdValue& d, const std::string& dsr, const TypeRef& dsr_type, int counter,
                       Span at, Ctx& ctx) {
  ElementRef r;
  r.g = d.base;
  r.elem = dsr.empty() ? element_type(d) : dsr_type;
  const int64_t eb = r.elem->byte_size();
  if (!dsr.empty()) {
    const int a = alloc_temp(ctx, at), s = alloc_temp(ctx, at);
    c.emit(ctx, "dsdaddr " + reg(a) + ", " + dsr, at);
    c.emit(ctx, "dsdgetstride " + reg(s) + ", " + dsr, at);
    c.emit(ctx, "mul " + reg(s) + ", " + reg(s) + ", " + reg(counter), at);
    c.emit(ctx, "shli " + reg(s) + ", " + reg(s) + ", " + (eb == 4 ? "2" : "1"), at);
    c.emit(ctx, "add " + reg(a) + ", " + reg(a) + ", " + reg(s), at);
    free_temp(ctx, s);
    r.g = nullptr;
    r.addr_reg = a;
    return r;
  }
  const int64_t step = d.strides.at(0) * eb;
  const int a = alloc_temp(ctx, at);
  if (step > 0 && (step & (step - 1)) == 0) {
    int sh = 0;
    while ((int64_t(1) << sh) < step) ++sh;
    c.emit(ctx, "shli " + reg(a) + ", " + reg(counter) + ", " + std::to_string(sh), at);
  } else {
    c.emit(ctx, "li " + reg(a) + ", " + std::to_string(step), at);
    c.emit(ctx, "mul " + reg(a) + ", " + reg(counter) + ", " + reg(a), at);
  }
  const int64_t off = d.base_offset * eb;
  if (off != 0 && off >= -32767 && off <= 32767) {
    c.emit(ctx, "addi " + reg(a) + ", " + reg(a) + ", " + std::to_string(off), at);
  } else if (off != 0) {
    const int t = alloc_temp(ctx, at);
    c.emit(ctx, "li " + reg(t) + ", " + std::to_string(off), at);
    c.emit(ctx, "add " + reg(a) + ", " + reg(a) + ", " + reg(t), at);
    free_temp(ctx, t);
  }
  if (ctx.gen->p->far_data) {
    const int t = alloc_temp(ctx, at);
    c.emit(ctx, "li " + reg(t) + ", " + d.base->asm_name, at);
    c.emit(ctx, "add " + reg(a) + ", " + reg(a) + ", " + reg(t), at);
    free_temp(ctx, t);
    r.g = nullptr;
  }
  r.addr_reg = a;
  return r;
}

void store(Compiler& c, const ElementRef& r, int value_reg, Span at, Ctx& ctx) {
  const int eb = r.elem->byte_size();
  if (eb != 2 && eb != 4) fail(at, "unsupported: @map output elements of " + r.elem->str());
  c.emit(ctx, std::string(eb == 4 ? "st32 " : "st16 ") + mem_operand(r) + ", " + reg(value_reg), at);
}

}  // namespace

void Compiler::gen_map(const Expr& e, Ctx& ctx) {
  if (!ctx.gen) fail(e.span, "@map is a run-time operation; call it inside a function or task");
  if (e.args.size() < 2) fail(e.span, "@map takes a callback and at least one operand");
  const Value cb = eval_comptime(*e.args[0], ctx, "the callback of @map");
  if (cb.k != Value::K::FUNCTION || cb.fn->decl_kind != "fn")
    fail(e.args[0]->span, "the first argument of @map must be a function (the callback)");
  const Stmt& f = *cb.fn;
  Ctx fctx;
  fctx.mod = cb.mod;
  const TypeRef rt = eval_type(*f.type, fctx);
  const bool has_out = rt->kind != TK::VOID;
  const size_t inputs = e.args.size() - 1 - (has_out ? 1 : 0);
  if (f.params.size() != inputs)
    fail(e.span, "@map: '" + f.name + "' takes " + std::to_string(f.params.size()) + " argument" +
                     (f.params.size() == 1 ? "" : "s") + ", " + std::to_string(inputs) + " input operand" +
                     (inputs == 1 ? "" : "s") + " given" + (has_out ? " (it returns a value: the last operand is the output)" : ""));
  // Which operands are DSDs (known without generating code), and the element count they share.
  int64_t length = -1;
  std::vector<std::shared_ptr<DsdValue>> dsds(e.args.size());
  std::vector<std::string> dsrs(e.args.size());
  std::vector<TypeRef> dsr_types(e.args.size());
  std::string length_dsr;  // all DSD operands are variables: the first one's length, read at run time
  for (size_t j = 1; j < e.args.size(); ++j) {
    Value v;
    Ctx probe = ctx;
    probe.gen = nullptr;
    try {
      v = eval(*e.args[j], probe);
    } catch (const CompileError&) {
      continue;  // a run-time value: a scalar or pointer operand
    }
    if (v.k != Value::K::DSD && v.k != Value::K::DSR_VAR) continue;
    if (!v.dsd) fail(e.args[j]->span, "unsupported: @map over a DSD register of @get_dsr");
    const DsdValue& d = *v.dsd;
    if (d.kind == "mem1d_dsd" && !d.base) fail(e.args[j]->span, "unsupported: @map over a DSD whose base is a run-time pointer");
    if (d.kind != "mem1d_dsd") fail(e.args[j]->span, "unsupported: @map over a " + d.kind + " (memory DSDs of one dimension only)");
    dsds[j] = v.dsd;
    if (v.k == Value::K::DSR_VAR) {
      // Its base may have been set at run time to an array of any type: its elements are read
      // (written) at the type of the callback's parameter (result), as they are passed.
      const bool output = has_out && j + 1 == e.args.size();
      TypeRef t = output ? rt : eval_type(*f.params.at(j - 1).type, fctx);
      if (t->byte_size() != 2 && t->byte_size() != 4)
        fail(e.args[j]->span, "unsupported: @map over a DSD variable of " + t->str() + " elements (16- or 32-bit only)");
      dsrs[j] = v.s;
      dsr_types[j] = t;
      if (length_dsr.empty()) length_dsr = v.s;
      continue;
    }
    if (d.elem_bits != element_type(d)->byte_size() * 8)
      fail(e.args[j]->span, "unsupported: @map over a DSD whose element width differs from its array's");
    const int64_t n = d.extents.at(0);
    if (length >= 0 && n != length)
      fail(e.args[j]->span, "the DSD operands of @map differ in length: " + std::to_string(n) + " here, " + std::to_string(length) + " before");
    length = n;
  }
  if (length >= 0) length_dsr.clear();  // a const DSD operand gives the count
  if (length < 0 && length_dsr.empty()) fail(e.span, "@map needs at least one DSD operand (its length is the element count)");
  if (length == 0) return;
  if (length > 65535) fail(e.span, "unsupported: @map over more than 65535 elements");
  // The callback's arguments: a synthetic expression for each DSD operand (its element at the
  // counter, loaded when the call evaluates its arguments), the operand itself otherwise.
  std::vector<ExprPtr> synthetic;
  std::vector<const Expr*> args;
  for (size_t j = 1; j <= inputs; ++j) {
    if (!dsds[j]) {
      args.push_back(e.args[j].get());
      continue;
    }
    auto x = std::make_unique<Expr>();
    x->kind = ExprKind::BUILTIN;
    x->text = "wsemu$map_operand";  // no CSL identifier has a '$': only the compiler writes it
    x->int_value = j;
    x->span = e.args[j]->span;
    args.push_back(x.get());
    synthetic.push_back(std::move(x));
  }
  FnGen& g = *ctx.gen;
  const int live = g.temp_top;
  const int k = alloc_pool(ctx, e.span, "the element counter of @map");
  emit(ctx, "li " + reg(k) + ", 0", e.span);
  const std::string top = new_label(ctx, "map"), done = length_dsr.empty() ? "" : new_label(ctx, "map_done");
  if (!done.empty()) {  // a DSD variable of length 0 runs no iteration
    const int n = alloc_temp(ctx, e.span);
    emit(ctx, "dsdgetlen " + reg(n) + ", " + length_dsr, e.span);
    emit(ctx, "beq " + reg(n) + ", " + reg(k) + ", " + done, e.span);
    free_temp(ctx, n);
  }
  g.p->code.push_back(top + ":");
  MapLoop loop{k, dsds, dsrs, dsr_types, map_loop_};
  map_loop_ = &loop;
  const Value result = gen_call(cb, args, e.span, ctx);
  map_loop_ = loop.outer;
  if (has_out) {
    const Expr& out = *e.args.back();
    const Span at = out.span;
    if (dsds.back()) {
      const ElementRef r = map_element(*this, *dsds.back(), dsrs.back(), dsr_types.back(), k, at, ctx);
      const int vr = value_reg(*this, coerce(result, r.elem, at, ctx), r.elem, at, ctx);
      store(*this, r, vr, at, ctx);
    } else {
      const Value p = rvalue(eval(out, ctx), at, ctx);
      if (p.k == Value::K::POINTER) {
        ElementRef r;
        r.g = p.global;
        r.elem = p.global->type->kind == TK::ARRAY ? p.global->type->elem : p.global->type;
        r.const_bytes = p.offset * r.elem->byte_size();
        if (g.p->far_data) {
          r.base_reg = alloc_temp(ctx, at);
          emit(ctx, "li " + reg(r.base_reg) + ", " + p.global->asm_name + " + " + std::to_string(r.const_bytes), at);
          r.g = nullptr;
          r.const_bytes = 0;
        }
        const int vr = value_reg(*this, coerce(result, r.elem, at, ctx), r.elem, at, ctx);
        store(*this, r, vr, at, ctx);
      } else if (p.k == Value::K::RUNTIME && p.type->kind == TK::PTR && p.type->elem->kind != TK::ARRAY) {
        ElementRef r;
        r.base_reg = int(p.i);
        r.elem = p.type->elem;
        const int vr = value_reg(*this, coerce(result, r.elem, at, ctx), r.elem, at, ctx);
        store(*this, r, vr, at, ctx);
      } else {
        fail(at, "the output of @map must be a DSD or a pointer to a scalar, found " + (p.type ? p.type->str() : p.str()));
      }
    }
  }
  g.temp_top = live;
  emit(ctx, "addi " + reg(k) + ", " + reg(k) + ", 1", e.span);
  const int end = alloc_temp(ctx, e.span);
  if (length_dsr.empty()) emit(ctx, "li " + reg(end) + ", " + std::to_string(length), e.span);
  else emit(ctx, "dsdgetlen " + reg(end) + ", " + length_dsr, e.span);
  emit(ctx, "blt " + reg(k) + ", " + reg(end) + ", " + top, e.span);
  free_temp(ctx, end);
  if (!done.empty()) g.p->code.push_back(done + ":");
  g.pool[size_t(k)] = false;
}

Value Compiler::map_operand(const Expr& e, Ctx& ctx) {
  if (!map_loop_ || !ctx.gen || e.int_value >= map_loop_->dsds.size() || !map_loop_->dsds[e.int_value])
    fail(e.span, "internal: a @map operand outside its loop");
  const ElementRef r = map_element(*this, *map_loop_->dsds[e.int_value], map_loop_->dsrs[e.int_value],
                                   map_loop_->dsr_types[e.int_value], map_loop_->counter, e.span, ctx);
  emit(ctx, load_mnemonic(r.elem, e.span) + reg(r.addr_reg) + ", " + mem_operand(r), e.span);
  return runtime(r.addr_reg, r.elem);
}

}  // namespace wsemu::compiler::csl
