// The DSD builtins' comptime side: @get_dsd (its fields, the queues its fabric DSDs bind) and the
// tensor access of a memory DSD (|i|{M} -> A[...], an affine index turned into base, extents and
// strides). Run-time DSD changes and DSD operands are codegen's (vector_ops.cpp, calls.cpp).
#include "compiler/csl/codegen.hpp"
#include "compiler/csl/compiler_impl.hpp"

namespace wsemu::compiler::csl {

// The memory of a comptime array whose address is needed (a DSD over it, `&name`): one read-only
// copy per array value and program, so that every use names the same storage.
GlobalVar* Compiler::comptime_array_storage(const Value& array, const std::string& name, Span at, Ctx& ctx) {
  Program* p = ctx.mod ? ctx.mod->program : nullptr;
  if (!p) fail(at, "a comptime array gets memory only in a PE program");
  auto& slot = array_storage_[{p, array.st.get()}];
  if (slot) return slot;
  auto gv = std::make_unique<GlobalVar>();
  gv->csl_name = name;
  gv->asm_name = "const" + std::to_string(globals.size()) + "_" + gv->csl_name;
  gv->type = array.type;
  gv->init = array;
  gv->mod = ctx.mod;
  gv->span = at;
  slot = gv.get();
  globals.push_back(std::move(gv));
  p->globals.push_back(slot);
  return slot;
}

Value Compiler::make_dsd(const Expr& e, Ctx& ctx) {
  using K = Value::K;
  if (e.args.size() != 2) fail(e.span, "@get_dsd takes (dsd type, .{ ... })");
  TypeRef t = eval_type(*e.args[0], ctx);
  if (t->kind != TK::DSD) fail(e.args[0]->span, "@get_dsd needs a DSD type (mem1d_dsd, mem4d_dsd, fabin_dsd, fabout_dsd)");
  if (e.args[1]->kind != ExprKind::ANON_STRUCT || e.args[1]->names.empty())
    fail(e.args[1]->span, "@get_dsd needs a struct literal with named fields, e.g. .{ .tensor_access = |i|{M} -> A[i] }");
  const Expr& lit = *e.args[1];
  auto d = std::make_shared<DsdValue>();
  d->kind = t->dsd_kind;
  bool has_extent = false;
  Value runtime_base;
  for (size_t i = 0; i < lit.names.size(); ++i) {
    const std::string& f = lit.names[i];
    const Expr& x = *lit.args[i];
    auto iv = [&] { return to_int(eval_comptime(x, ctx, "." + f), x.span, "." + f); };
    if (f == "tensor_access") {
      if (x.kind != ExprKind::TENSOR_ACCESS) fail(x.span, ".tensor_access needs '|i|{extent} -> array[index]'");
      auto ta = tensor_access_dsd(x, d->kind, ctx);
      ta->color = d->color;
      ta->queue = d->queue;
      d = ta;
      d->kind = t->dsd_kind;
      has_extent = true;
    } else if (f == "extent") {
      d->extents = {iv()};
      if (d->strides.empty()) d->strides = {1};
      has_extent = true;
    } else if (f == "stride") {
      const int64_t stride = iv();
      if (stride < -32768 || stride > 32767) fail(x.span, ".stride " + std::to_string(stride) + " does not fit a DSD's 16-bit stride");
      d->strides = {stride};
    } else if (f == "base_address") {
      Value p;
      try {
        p = eval_comptime(x, ctx, ".base_address");
      } catch (const CompileError&) {
        if (!ctx.gen) throw;
      }
      // In run-time code a pointer known only then (a [*]T var, &p[i]): the DSD is its template
      // with the base set by a dsdbase below.
      if (p.k != K::POINTER && ctx.gen) p = rvalue(eval(x, ctx), x.span, ctx);
      if (p.k == K::RUNTIME && (p.type->kind == TK::PTR || p.type->kind == TK::MANY_PTR)) {
        const TypeRef et = p.type->elem->kind == TK::ARRAY ? p.type->elem->elem : p.type->elem;
        d->elem_bits = et->byte_size() == 2 ? 16 : 32;
        runtime_base = p;
        continue;
      }
      if (p.k != K::POINTER) fail(x.span, ".base_address needs a pointer (&array, or in run-time code a pointer value)");
      d->base = p.global;
      d->base_offset = p.offset;
      const TypeRef& et = p.global->type->kind == TK::ARRAY ? p.global->type->elem : p.global->type;
      d->elem_bits = et->byte_size() == 2 ? 16 : 32;
    } else if (f == "fabric_color") {
      Value c = eval_comptime(x, ctx, ".fabric_color");
      // `{}` (void), the SDK's "no such color" of a module param left at its default (as
      // pipeline-03's memcpy_edge leaves USER_IN_2): a DSD without a color, an error only where
      // an instruction uses it (program.cpp).
      if (c.k == K::VOID || c.k == K::UNDEFINED || (c.k == K::STRUCT && (!c.st || c.st->values.empty()))) continue;
      if (c.k != K::COLOR) fail(x.span, ".fabric_color needs a color, found " + c.str());
      d->color = int(c.i);
    } else if (f == "input_queue" || f == "output_queue") {
      Value q = eval_comptime(x, ctx, "." + f);
      if (q.k != K::QUEUE) fail(x.span, "." + f + " needs a queue");
      d->queue = int(q.i);
    } else if (f == "control") {
      d->control = to_bool(eval_comptime(x, ctx, ".control"), x.span, ".control");
    } else if (f == "priority") {
      // wse3: the microthread priority of the async ops reading this fabin DSD (the SDK's DSDs
      // page); on wse2 it is an option of the op.
      if (opt.arch != "wse3" || d->kind != "fabin_dsd")
        fail(x.span, ".priority of @get_dsd belongs to a fabin_dsd on wse3 (on wse2 it is an option of the async operation)");
      d->priority = microthread_priority(eval_comptime(x, ctx, ".priority"), x.span);
    } else if (f == "wavelet_index_offset") {
      d->index_offset = to_bool(eval_comptime(x, ctx, ".wavelet_index_offset"), x.span, ".wavelet_index_offset");
    } else if (f == "advance_switch") {
      d->advance_switch = to_bool(eval_comptime(x, ctx, ".advance_switch"), x.span, ".advance_switch");
    } else if (f == "index") {
      d->wavelet_index = iv();
    } else if (f == "simd_mode" || f == "async") {
      fail(x.span, "unsupported: ." + f + " of @get_dsd");
    } else if (f == "data_type") {
      TypeRef dt = eval_type(x, ctx);
      if (dt->kind == TK::INT && dt->bits == 8) fail(x.span, "unsupported: DSD elements of " + dt->str() + " (wavelets and DSDs move 16 or 32 bits)");
      d->elem_bits = dt->byte_size() == 2 ? 16 : 32;
    } else {
      fail(x.span, "unsupported: field ." + f + " of @get_dsd");
    }
  }
  const bool mem = d->kind == "mem1d_dsd" || d->kind == "mem4d_dsd";
  if (runtime_base.k == K::RUNTIME) {
    if (!mem) fail(lit.span, ".base_address belongs to a memory DSD (mem1d_dsd, mem4d_dsd)");
    if (!has_extent) fail(lit.span, "@get_dsd needs an .extent (or a .tensor_access)");
    if (ctx.gen->dsr_temp >= 4) fail(lit.span, "unsupported: more than 4 changed DSDs in one statement");
    const std::string scratch = "dsd_scratch" + std::to_string(ctx.gen->dsr_temp++);
    emit(ctx, "dsdcopy " + scratch + ", " + dsd_template(*ctx.gen->p, *d, lit.span), lit.span);
    emit(ctx, "dsdbase " + scratch + ", " + reg(int(runtime_base.i)), lit.span);
    free_temp(ctx, int(runtime_base.i));
    Value v;
    v.k = K::DSR_VAR;
    v.s = scratch;
    v.dsd = d;
    v.type = t;
    return v;
  }
  if (mem && !d->base) fail(lit.span, d->kind + " needs .tensor_access or .base_address");
  if (!has_extent) fail(lit.span, "@get_dsd needs an .extent (or a .tensor_access)");
  if (!mem && (d->kind == "fabin_dsd" || d->kind == "fabout_dsd")) {
    Program* p = ctx.mod ? ctx.mod->program : nullptr;
    if (d->queue < 0) fail(lit.span, d->kind + " needs ." + (d->kind == "fabin_dsd" ? "input_queue" : "output_queue") + " in wsemu");
    d->span = lit.span;
    if (d->color == kH2dStreamColor && d->kind == "fabin_dsd") {
      d->queue = kStreamQueue;  // the firmware delivers host streams into its input queue 1
    } else if (d->color == kD2hStreamColor && d->kind == "fabout_dsd") {
      d->kind = "d2h_fifo";     // to the host: the firmware's memcpy_d2h_fifo
    } else if (d->color == kH2dStreamColor || d->color == kD2hStreamColor) {
      fail(lit.span, std::string("MEMCPY") + (d->color == kH2dStreamColor ? "H2D" : "D2H") + "_1 is a stream " +
                         (d->color == kH2dStreamColor ? "from" : "to") + " the host: use it in a " +
                         (d->color == kH2dStreamColor ? "fabin_dsd" : "fabout_dsd"));
    } else if (d->color >= 0 && p) {
      auto& m = d->kind == "fabin_dsd" ? p->input_queue_colors : p->output_queue_colors;
      auto it = m.find(d->queue);
      // A wse2 output queue carries each fabout's own color (the SDK's stencil libraries send
      // four colors through one): the first color binds it at load, the others just use it.
      const bool shared_out = d->kind == "fabout_dsd" && opt.arch == "wse2";
      if (it != m.end() && it->second != d->color && !shared_out)
        fail(lit.span, "queue " + std::to_string(d->queue) + " is bound to color " + std::to_string(it->second) + ", not " + std::to_string(d->color));
      if (it == m.end()) m[d->queue] = d->color;
    }
    // A DSD without .fabric_color takes its queue's color from @initialize_queue, resolved when
    // the program is generated (the comptime blocks that bind queues run after the declarations).
  }
  Value v;
  v.k = K::DSD;
  v.dsd = d;
  v.type = t;
  return v;
}

std::shared_ptr<DsdValue> Compiler::tensor_access_dsd(const Expr& ta, const std::string& kind, Ctx& ctx) {
  const size_t nvars = ta.names.size();
  const Expr& target = *ta.args.back();
  if (target.kind != ExprKind::INDEX) fail(target.span, "the tensor access must index an array: |i|{M} -> A[i]");
  if (kind == "mem1d_dsd" && nvars != 1) fail(ta.span, "mem1d_dsd takes one index; use mem4d_dsd for more");
  if (nvars > 4) fail(ta.span, "a tensor access has at most 4 indices");
  std::vector<int64_t> extents;
  for (size_t i = 0; i < nvars; ++i)
    extents.push_back(to_int(eval_comptime(*ta.args[i], ctx, "an extent"), ta.args[i]->span, "an extent"));
  Value base = eval_comptime(*target.args[0], ctx, "the array of the tensor access");
  int64_t pointer_offset = 0;
  if (base.k == Value::K::POINTER && base.global->type->kind == TK::ARRAY) {
    pointer_offset = base.offset;  // a pointer param (`param src: *[N]f32`) names the global
    Value g;
    g.k = Value::K::GLOBAL;
    g.global = base.global;
    g.type = base.global->type;
    base = g;
  }
  if (base.k == Value::K::STRUCT && base.type && base.type->kind == TK::ARRAY && ctx.mod && ctx.mod->program) {
    // A comptime array (`const t = @zeros([4]f32);`) gets memory when a DSD describes it.
    GlobalVar* raw = comptime_array_storage(base, target.args[0]->kind == ExprKind::IDENT ? target.args[0]->text : "array",
                                            target.span, ctx);
    Value g;
    g.k = Value::K::GLOBAL;
    g.global = raw;
    g.type = raw->type;
    base = g;
  }
  if (base.k != Value::K::GLOBAL || base.global->type->kind != TK::ARRAY)
    fail(target.args[0]->span, "the tensor access must index an array (a global var, a pointer to one, or a comptime array)");
  GlobalVar* g = base.global;
  const std::vector<int64_t>& dims = g->type->dims;
  if (target.args.size() - 1 != dims.size()) fail(target.span, "the array has " + std::to_string(dims.size()) + " dimensions");
  // The flat element index as a function of the index variables, evaluated at a few points.
  auto flat = [&](const std::vector<int64_t>& at) {
    Scope sc;
    sc.parent = ctx.scope;
    for (size_t i = 0; i < nvars; ++i) {
      Binding b;
      b.value = make_int(at[i], int_type(16, true));
      sc.names[ta.names[i]] = b;
    }
    Ctx c = ctx;
    c.scope = &sc;
    c.gen = nullptr;
    int64_t f = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      Value iv = eval(*target.args[d + 1], c);
      Value civ = iv.type && iv.type->kind == TK::INT ? iv : iv;
      f = f * dims[d] + to_int(civ, target.args[d + 1]->span, "the index");
    }
    return f;
  };
  std::vector<int64_t> zero(nvars, 0);
  const int64_t off = flat(zero) + pointer_offset;
  std::vector<int64_t> strides(nvars);
  for (size_t i = 0; i < nvars; ++i) {
    std::vector<int64_t> p = zero;
    p[i] = 1;
    strides[i] = flat(p) + pointer_offset - off;
    p[i] = 2;
    if (flat(p) + pointer_offset - off != 2 * strides[i]) fail(target.span, "the tensor access index is not affine in '" + ta.names[i] + "'");
  }
  auto d = std::make_shared<DsdValue>();
  d->base = g;
  d->base_offset = off;
  d->elem_bits = g->type->elem->byte_size() == 2 ? 16 : 32;
  // wsemu's mem4d has dimension 0 innermost; CSL's last index varies fastest.
  for (size_t i = nvars; i-- > 0;) {
    d->extents.push_back(extents[i]);
    d->strides.push_back(strides[i]);
  }
  int64_t lo = off, hi = off;
  for (size_t i = 0; i < nvars; ++i) {
    if (extents[i] <= 0) continue;
    int64_t span = strides[i] * (extents[i] - 1);
    (span < 0 ? lo : hi) += span;
  }
  for (size_t i = 0; i < nvars; ++i)
    if (extents[i] == 0) lo = hi = off;
  // CSL lets a DSD reach past its array (the SDK's examples describe a one-element placeholder
  // and set its base and length at run time); only a range outside any PE's memory is an error.
  const int64_t eb = d->elem_bits / 8;
  if ((lo + g->type->element_count()) * eb < 0 || hi * eb >= 48 * 1024)
    fail(ta.span, "the tensor access reaches elements " + std::to_string(lo) + ".." + std::to_string(hi) + " of '" +
                      g->csl_name + "', outside a PE's 48 KiB of memory");
  return d;
}

namespace {
// log2 of (bytes of T) / (bytes of the DSD's element): 1, 0 or -1.
int offset_shift(Compiler& c, const Expr& type_arg, int elem_bits, Ctx& ctx) {
  const TypeRef t = c.eval_type(type_arg, ctx);
  const int bytes = t->byte_size();
  if (bytes != 2 && bytes != 4) fail(type_arg.span, "@increment_dsd_offset counts in a 16- or 32-bit element type, not " + t->str());
  return bytes * 8 == elem_bits ? 0 : bytes * 8 > elem_bits ? 1 : -1;
}
}  // namespace

int64_t Compiler::dsd_offset_in_elements(int64_t n, const Expr& type_arg, int elem_bits, Ctx& ctx) {
  const int shift = offset_shift(*this, type_arg, elem_bits, ctx);
  if (shift < 0 && n % 2)
    fail(type_arg.span, "an offset of " + std::to_string(n) + " 16-bit elements is half an element of this 32-bit DSD");
  return shift > 0 ? n * 2 : shift < 0 ? n / 2 : n;
}

std::string Compiler::dsd_offset_operand(const Value& n, const Expr& type_arg, int elem_bits, Span at, Ctx& ctx) {
  if (n.k == Value::K::INT) return std::to_string(dsd_offset_in_elements(n.i, type_arg, elem_bits, ctx));
  if (n.k != Value::K::RUNTIME || n.type->kind != TK::INT) fail(at, "expected an integer");
  const int shift = offset_shift(*this, type_arg, elem_bits, ctx);
  if (shift == 0) return reg(int(n.i));
  const int r = alloc_temp(ctx, at);
  emit(ctx, std::string(shift > 0 ? "shli " : "sari ") + reg(r) + ", " + reg(int(n.i)) + ", 1", at);
  return reg(r);
}

}  // namespace wsemu::compiler::csl
