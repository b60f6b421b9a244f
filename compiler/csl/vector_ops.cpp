// DSD operands and the vector builtins (@fmacs, @fmovs, @mov16, ...): one instruction each, with
// their .async / .activate / .unblock / .ut_id options (see compiler/README.md, DSDs).
#include <algorithm>

#include "compiler/csl/codegen.hpp"

namespace wsemu::compiler::csl {

std::string Compiler::dsd_operand(const Value& v, Span at, Ctx& ctx) {
  if (v.k == Value::K::DSD) return dsd_template(*ctx.gen->p, *v.dsd, at);
  // A DSD variable streaming to the host names the firmware's FIFO itself (its register is never
  // loaded: assignments to such a variable are refused, statements.cpp).
  if (v.k == Value::K::DSR_VAR && v.global && v.dsd && resolve_fabric(*ctx.gen->p, *v.dsd).kind == "d2h_fifo")
    return dsd_template(*ctx.gen->p, *v.dsd, at);
  if (v.k == Value::K::DSR_VAR) return v.s;
  fail(at, "expected a DSD, found " + (v.type ? v.type->str() : v.str()));
}

void Compiler::note_dsd_var_base(Program& p, const std::string& dsr, const Value& base, Span at) {
  TypeRef t = base.type;
  if (base.k == Value::K::GLOBAL || base.k == Value::K::POINTER) t = base.global->type;
  if (t && (t->kind == TK::PTR || t->kind == TK::MANY_PTR)) t = t->elem;
  if (t && t->kind == TK::ARRAY) t = t->elem;
  if (!t || (t->byte_size() != 2 && t->byte_size() != 4)) return;
  const int bits = t->byte_size() * 8;
  auto [it, fresh] = p.dsr_base_bits.try_emplace(dsr, bits);
  if (!fresh && it->second != bits)
    fail(at, "unsupported: a DSD variable based at arrays of 16-bit and of 32-bit elements (wsemu's descriptors carry their width)");
}

// The task id an option names (.activate / .unblock): a task id, or a task by name (the id it
// is bound to).
int64_t Compiler::completion_task_id(const Value& v, const std::string& what, Span at, Ctx& ctx) {
  if (v.k == Value::K::TASK_ID) return v.i;
  if (v.k == Value::K::FUNCTION && v.fn->decl_kind == "task") {
    const FnInst* fi = function_instance(v.mod, v.fn, {}, at);
    for (const auto& [tid, line] : ctx.gen->p->task_lines)
      if (line.rfind(fi->label + ", ", 0) == 0) return tid;
    fail(at, what + " names task '" + v.fn->name + "', which is not bound to a task id");
  }
  fail(at, what + " needs a task id (or a bound task)");
}

namespace {

// The comptime options of a vector op; `.index = v` (a wavelet's index, often a data task's
// run-time parameter) is left out and its expression returned in `index`.
Value comptime_options(Compiler& c, const Expr& options, const std::string& op, Ctx& ctx, const Expr** index) {
  *index = nullptr;
  if (options.kind != ExprKind::ANON_STRUCT) return c.eval_comptime(options, ctx, "the options of @" + op);
  Value o;
  o.k = Value::K::STRUCT;
  o.st = std::make_shared<StructValue>();
  for (size_t i = 0; i < options.names.size() && i < options.args.size(); ++i) {
    if (options.names[i] == "index") {
      *index = options.args[i].get();
      continue;
    }
    o.st->names.push_back(options.names[i]);
    o.st->values.push_back(c.eval_comptime(*options.args[i], ctx, "option ." + options.names[i] + " of @" + op));
  }
  return o;
}

}  // namespace

std::string microthread_priority(const Value& v, Span at) {
  if (v.k != Value::K::STRUCT || !v.st || v.st->names.size() != 1 ||
      (v.st->names[0] != "high" && v.st->names[0] != "medium" && v.st->names[0] != "low") ||
      v.st->values[0].k != Value::K::BOOL || v.st->values[0].i == 0)
    fail(at, ".priority needs one of .{ .high = true }, .{ .medium = true }, .{ .low = true }, found " + v.str());
  return v.st->names[0];
}

void Compiler::gen_vector_op(const Expr& e, Ctx& ctx) {
  const std::string& n = e.text;
  std::vector<const Expr*> operands;
  const Expr* options = nullptr;
  for (const ExprPtr& a : e.args) operands.push_back(a.get());
  auto is_options = [&](const Expr* x) {
    if (x->kind == ExprKind::ANON_STRUCT) return true;
    // A named const struct (`const props = .{ .async = true, ... };`) is options too.
    Ctx probe = ctx;
    probe.gen = nullptr;
    try {
      const Value v = eval(*x, probe);
      return v.k == Value::K::STRUCT && !(v.type && v.type->kind == TK::ARRAY);
    } catch (const CompileError&) {
      return false;
    }
  };
  if (!operands.empty() && is_options(operands.back())) {
    options = operands.back();
    operands.pop_back();
  }
  bool async_option = false;
  const Expr* index_expr = nullptr;  // .index: moves the base of a DSD with .wavelet_index_offset
  if (options) {
    const Value o = comptime_options(*this, *options, n, ctx, &index_expr);
    const Value* a = o.k == Value::K::STRUCT ? o.st->find("async") : nullptr;
    async_option = a && a->k == Value::K::BOOL && a->i;
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
  std::vector<std::pair<size_t, Value>> comptime_dsds;
  int fabout_queue = -1, fabin_queue = -1;  // the fabric operands' queues (the implied microthread)
  std::string dsd_priority;                 // wse3: a fabin or FIFO operand's .priority
  bool to_host_fifo = false;                // a fabout to the host: wsemu's firmware FIFO, no queue
  auto note_queue = [&](const Value& v) {
    if (v.dsd && v.dsd->kind == "fifo" && dsd_priority.empty()) dsd_priority = v.dsd->priority;
    if (!v.dsd || (v.dsd->kind != "fabin_dsd" && v.dsd->kind != "fabout_dsd" && v.dsd->kind != "d2h_fifo")) return;
    const DsdValue r = resolve_fabric(*ctx.gen->p, *v.dsd);  // a d2h_fifo comes back as it is
    if (r.kind == "fabout_dsd" || r.kind == "d2h_fifo") fabout_queue = int(r.queue);
    if (r.kind == "d2h_fifo") to_host_fifo = true;
    if (r.kind == "fabin_dsd" && fabin_queue < 0) fabin_queue = int(r.queue);
    if (r.kind == "fabin_dsd" && dsd_priority.empty()) dsd_priority = v.dsd->priority;
  };
  // A scalar destination `&x` (`@fadds(&sum, sum, dsd)`): the op runs into a register holding x,
  // which a source naming x shares, so that it accumulates over the elements (the ISA's register
  // reduction); x is stored back after the op.
  GlobalVar* scalar_dst = nullptr;
  int scalar_reg = -1;
  for (size_t i = 0; i < operands.size(); ++i) {
    Value v = eval(*operands[i], ctx);
    if (i == 0 && v.k == Value::K::POINTER && v.global && v.global->type->kind != TK::ARRAY) {
      const TypeRef& t = v.global->type;
      const int bits = width(0);
      if (async_option) fail(operands[i]->span, "unsupported: an asynchronous @" + n + " into a scalar");
      if (t->byte_size() * 8 != bits || (t->kind == TK::FLOAT) != (fp32 || fp16))
        fail(operands[i]->span, "the scalar destination of @" + n + " must be a " + std::to_string(bits) + "-bit " +
                                    (fp32 || fp16 ? "float" : "integer") + ", not " + t->str());
      Value x;
      x.k = Value::K::GLOBAL;
      x.global = v.global;
      x.type = t;
      scalar_dst = v.global;
      scalar_reg = value_reg(*this, rvalue(x, operands[i]->span, ctx), t, operands[i]->span, ctx);
      ops.push_back(reg(scalar_reg));
      continue;
    }
    if (scalar_dst && v.k == Value::K::GLOBAL && v.global == scalar_dst) {
      ops.push_back(reg(scalar_reg));
      continue;
    }
    if (v.k == Value::K::DSD && v.dsd && (v.dsd->kind == "fabin_dsd" || v.dsd->kind == "fabout_dsd") &&
        v.dsd->elem_bits != width(i)) {
      auto d = std::make_shared<DsdValue>(*v.dsd);
      d->elem_bits = width(i);
      v.dsd = d;
    }
    if (v.k == Value::K::DSD) {  // its register is named below, once the lengths are settled
      ops.emplace_back();
      comptime_dsds.emplace_back(i, v);
      continue;
    }
    if (v.k == Value::K::DSR_VAR) {
      ops.push_back(dsd_operand(v, operands[i]->span, ctx));
      note_queue(v);
      continue;
    }
    if (i == 0 && v.k != Value::K::GLOBAL) fail(operands[i]->span, "the destination of @" + n + " must be a DSD");
    v = rvalue(v, operands[i]->span, ctx);
    if (v.k == Value::K::GLOBAL) fail(operands[i]->span, "an array is not an operand of @" + n + "; make a DSD of it with @get_dsd");
    if (i == 0) fail(operands[i]->span, "the destination of @" + n + " must be a DSD");
    TypeRef t = fp32 ? float_type(32) : fp16 ? float_type(16) : int_type(n.find("16") != std::string::npos ? 16 : 32, true);
    if (v.k == Value::K::RUNTIME && v.type->kind == TK::FLOAT && !fp32 && !fp16 && n != "fmachs")
      fail(operands[i]->span, "@" + n + " takes integer scalars");
    int r = value_reg(*this, v, v.k == Value::K::RUNTIME ? nullptr : t, operands[i]->span, ctx);
    if (async_option) {
      // The op reads a register source for every element while the task goes on (and the
      // firmware clobbers r0..r7): the scalar lives in one of r13..r15, in turn.
      const int keep = kFirstAsyncReg + ctx.gen->p->async_reg_turn++ % 3;
      emit(ctx, "mov " + reg(keep) + ", " + reg(r), operands[i]->span);
      r = keep;
    }
    ops.push_back(reg(r));
  }
  // A fabric DSD whose extent differs from the memory operands' length streams as many wavelets
  // as they hold: the SDK's examples rely on it (topic-12 and topic-13 send a 5-element buffer
  // through a fabout of extent 1 and their receivers count 5 wavelets), while wsemu's vector
  // operations want equal lengths.
  int64_t mem_len = -1;
  bool mem_agree = true;
  for (const auto& [i, v] : comptime_dsds) {
    if (v.dsd->kind != "mem1d_dsd" && v.dsd->kind != "mem4d_dsd") continue;
    int64_t len = 1;
    for (int64_t x : v.dsd->extents) len *= x;
    if (mem_len >= 0 && len != mem_len) mem_agree = false;
    mem_len = len;
  }
  int64_t d2h_extent = 1;                    // the extent of a MEMCPYD2H_1 destination
  for (auto& [i, v] : comptime_dsds) {
    const bool fabric = v.dsd->kind == "fabin_dsd" || v.dsd->kind == "fabout_dsd";
    if (fabric && mem_agree && mem_len > 0 && !v.dsd->extents.empty() && v.dsd->extents[0] != mem_len) {
      auto d = std::make_shared<DsdValue>(*v.dsd);
      d->extents[0] = mem_len;
      v.dsd = d;
    }
    // A 16-bit operation over a 32-bit array reads (writes) the low half of each element, as the
    // hardware's 16-bit word addressing does (topic-14 moves u32 values with @mov16).
    const bool memory = v.dsd->kind == "mem1d_dsd" || v.dsd->kind == "mem4d_dsd";
    if (memory && width(i) == 16 && v.dsd->elem_bits == 32) {
      auto d = std::make_shared<DsdValue>(*v.dsd);
      d->elem_bits = 16;
      d->base_offset *= 2;
      if (d->strides.empty()) d->strides.assign(d->extents.size(), 1);
      for (int64_t& st : d->strides) st *= 2;
      v.dsd = d;
    }
    ops[i] = dsd_operand(v, operands[i]->span, ctx);
    if (index_expr && v.dsd->index_offset) {
      // The wavelet's index moves this DSD's base by as many 16-bit words, the PE's address unit:
      // an element of a 16-bit DSD, half one of a 32-bit DSD (the SDK's gemv of sdklayout-05 gives
      // `.index = 2 * idx` for its f32 column idx). A scratch copy, moved.
      FnGen& g = *ctx.gen;
      if (g.dsr_temp >= 4) fail(operands[i]->span, "unsupported: more than 4 changed DSDs in one statement");
      const std::string t = "dsd_scratch" + std::to_string(g.dsr_temp++);
      emit(ctx, "dsdcopy " + t + ", " + ops[i], operands[i]->span);
      const Value idx = rvalue(eval(*index_expr, ctx), index_expr->span, ctx);
      const bool wide = v.dsd->elem_bits == 32;
      if (idx.k == Value::K::INT) {
        emit(ctx, "dsdinc " + t + ", " + std::to_string(wide ? idx.i / 2 : idx.i), index_expr->span);
      } else if (idx.k == Value::K::RUNTIME && idx.type->kind == TK::INT) {
        if (wide) {
          const int half = alloc_temp(ctx, index_expr->span);
          emit(ctx, "shri " + reg(half) + ", " + reg(int(idx.i)) + ", 1", index_expr->span);
          emit(ctx, "dsdinc " + t + ", " + reg(half), index_expr->span);
          free_temp(ctx, half);
        } else {
          emit(ctx, "dsdinc " + t + ", " + reg(int(idx.i)), index_expr->span);
        }
      } else {
        fail(index_expr->span, ".index needs an integer (the wavelet's index)");
      }
      ops[i] = t;
    }
    if (i == 0 && ops[0] == "memcpy_d2h_fifo" && !v.dsd->extents.empty()) d2h_extent = v.dsd->extents[0];
    note_queue(v);
  }
  if (index_expr && std::none_of(comptime_dsds.begin(), comptime_dsds.end(), [](const auto& d) { return d.second.dsd->index_offset; }))
    fail(index_expr->span, ".index of @" + n + " needs a DSD operand made with .wavelet_index_offset = true");
  std::string suffix;
  bool is_async = false;
  if (options) {
    Value o = comptime_options(*this, *options, n, ctx, &index_expr);
    for (size_t i = 0; i < o.st->names.size(); ++i) {
      const std::string& k = o.st->names[i];
      const Value& v = o.st->values[i];
      if (k == "async") is_async = to_bool(v, options->span, ".async");
      else if (k == "activate" || k == "unblock") {
        suffix += ", " + k + "=" + std::to_string(completion_task_id(v, "." + k, options->span, ctx));
      } else if (k == "ut_id") {
        if (v.k != Value::K::UT_ID) fail(options->span, ".ut_id needs a microthread id (@get_ut_id)");
        suffix = ", ut=" + std::to_string(v.i) + suffix;
      } else if (k == "priority") {
        // WSE-2 names the microthread priority on the op; WSE-3 on the fabin DSD or FIFO (the
        // SDK's DSDs page, 'Microthread Priority').
        if (ctx.gen->p->arch == "wse3")
          fail(options->span, "on wse3 the microthread priority is the queue's or the fabin DSD's, not an option of @" + n +
                                  ": @initialize_queue(q, .{ .color = c, .priority = .{ .high = true } }) or a fabin_dsd's .priority");
        suffix += ", priority=" + microthread_priority(v, options->span);
      } else if (k == "on_control") {
        fail(options->span, "unsupported: option ." + k + " of @" + n);
      } else {
        fail(options->span, "unknown option ." + k + " of @" + n + " (async, activate, unblock, ut_id, priority)");
      }
    }
    if (!is_async && !suffix.empty()) fail(options->span, ".activate, .unblock, .ut_id and .priority need .async = true");
    // wse3: an async op without a .ut_id runs on its fabric operand's queue's microthread, as
    // the SDK documents (topic-15), not on microthread 0 (the memcpy firmware's). So does one
    // into the host stream on wse2: its fabout's queue names the microthread, but the firmware
    // FIFO standing in for it has none, so the op says which (pipeline-03's edge forwarder).
    const int implied = fabout_queue >= 0 ? fabout_queue : fabin_queue;
    if (is_async && (ctx.gen->p->arch == "wse3" || to_host_fifo) && implied >= 0 && suffix.find("ut=") == std::string::npos)
      suffix = ", ut=" + std::to_string(implied) + suffix;
    // wse3: a fabin or FIFO operand's .priority, else the one @initialize_queue gave a fabric
    // operand's queue (its input queue's first).
    if (is_async && ctx.gen->p->arch == "wse3") {
      const Program& p = *ctx.gen->p;
      auto in = p.input_queue_priority.find(fabin_queue);
      auto out = p.output_queue_priority.find(fabout_queue);
      if (!dsd_priority.empty()) suffix += ", priority=" + dsd_priority;
      else if (in != p.input_queue_priority.end()) suffix += ", priority=" + in->second;
      else if (out != p.output_queue_priority.end()) suffix += ", priority=" + out->second;
    }
  }
  // A completion action and a microthread given when one of the DSRs was loaded (@load_to_dsr
  // .async, .ut_id); the op's own options win. They stay with the DSR until it is loaded again,
  // as the hardware keeps them in the DSR: the SDK's allreduce loads its fabin DSR with
  // .activate once and then runs @fadds or @fmaxs on it, in two branches (pe.csl:602-609).
  if (is_async) {
    for (const std::string& o : ops) {
      auto it = ctx.gen->dsr_on_done.find(o);
      auto ut = ctx.gen->dsr_ut.find(o);
      if (it == ctx.gen->dsr_on_done.end() && ut == ctx.gen->dsr_ut.end()) continue;
      if (ut != ctx.gen->dsr_ut.end() && suffix.find("ut=") == std::string::npos)
        suffix = ", ut=" + std::to_string(ut->second) + suffix;
      if (it != ctx.gen->dsr_on_done.end() && suffix.find("activate=") == std::string::npos &&
          suffix.find("unblock=") == std::string::npos)
        suffix += it->second;
      break;
    }
  }
  std::string line = n + (is_async ? ".async " : " ");
  for (size_t i = 0; i < ops.size(); ++i) line += (i ? ", " : "") + ops[i];
  // Scalars into the host stream (topic-03's @mov16(out_dsd, global)): the FIFO gives no length,
  // so each of the fabout's `extent` elements is its own one-element push.
  const bool scalars_to_host = ops[0] == "memcpy_d2h_fifo" && comptime_dsds.size() == 1;
  if (scalars_to_host && (d2h_extent < 1 || d2h_extent > 64))
    fail(e.span, "unsupported: scalars into MEMCPYD2H_1 with an extent of " + std::to_string(d2h_extent) +
                     " (1..64 pushes); use a memory DSD source");
  for (int64_t k = 1; scalars_to_host && k < d2h_extent; ++k) emit(ctx, line + suffix, e.span);
  emit(ctx, line + suffix, e.span);
  if (scalar_dst) {
    std::string where = scalar_dst->asm_name;
    if (ctx.gen->p->far_data) {
      const int a = alloc_temp(ctx, e.span);
      emit(ctx, "li " + reg(a) + ", " + where, e.span);
      where = reg(a);
    }
    emit(ctx, std::string(scalar_dst->type->byte_size() == 4 ? "st32 [" : "st16 [") + where + "], " + reg(scalar_reg), e.span);
  }
}

}  // namespace wsemu::compiler::csl
