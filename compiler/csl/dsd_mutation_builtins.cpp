// The DSD builtins that change descriptors at comptime or at run time: @increment_dsd_offset,
// @set_dsd_base_addr, @set_dsd_length and @set_dsd_stride (a comptime DSD with comptime
// arguments gives a new comptime DSD; otherwise the change is code, calls.cpp), and the
// descriptor registers named by @get_dsr and loaded by @load_to_dsr (with the completion action
// and microthread an async op on them takes). Split from builtins.cpp, which calls it first.
#include "compiler/csl/codegen.hpp"
#include "compiler/csl/compiler_impl.hpp"

namespace wsemu::compiler::csl {

std::optional<Value> Compiler::dsd_mutation_builtin(const BuiltinCall& call) {
  using K = Value::K;
  const Expr& e = call.e;
  Ctx& ctx = call.ctx;
  const std::string& n = e.text;
  auto argc = [&](size_t lo, size_t hi) { call.argc(lo, hi); };
  auto ct = [&](size_t i, const std::string& what) { return call.ct(i, what); };
  auto ci = [&](size_t i, const std::string& what) { return call.ci(i, what); };
  if (n == "increment_dsd_offset" || n == "set_dsd_base_addr" || n == "set_dsd_length" || n == "set_dsd_stride") {
    Value d = eval(*e.args.at(0), ctx);
    if (d.k == K::DSD && (n == "increment_dsd_offset" || n == "set_dsd_length" || n == "set_dsd_stride")) {
      bool all_ct = true;
      for (size_t i = 1; i < e.args.size(); ++i) all_ct = all_ct && eval(*e.args[i], ctx).is_comptime();
      if (all_ct) {
        auto nd = std::make_shared<DsdValue>(*d.dsd);
        if (n == "increment_dsd_offset") {
          argc(3, 3);
          nd->base_offset += dsd_offset_in_elements(ci(1, "offset"), *e.args[2], nd->elem_bits, ctx);
        } else if (n == "set_dsd_length") {
          argc(2, 2);
          nd->extents.at(0) = ci(1, "length");
        } else {
          argc(2, 2);
          nd->strides.at(0) = ci(1, "stride");
        }
        Value v = d;
        v.dsd = nd;
        return v;
      }
    }
    if (!ctx.gen) fail(e.span, "@" + n + " of a DSD variable happens at run time; call it inside a function");
    Value marker;
    marker.k = K::BUILTIN_NAME;
    marker.s = n;
    marker.offset = reinterpret_cast<intptr_t>(&e);
    return gen_call(marker, {}, e.span, ctx);
  }
  if (n == "get_dsr") {
    argc(2, 2);
    TypeRef kind = eval_type(*e.args[0], ctx);
    const int64_t id = ci(1, "register number");
    if (kind->kind != TK::DSR) fail(e.args[0]->span, "@get_dsr needs dsr_dest, dsr_src0 or dsr_src1");
    if (id < 0 || id > 31) fail(e.args[1]->span, "DSR number " + std::to_string(id) + " is out of range");
    if (!ctx.mod || !ctx.mod->program) fail(e.span, "@get_dsr belongs in a PE program");
    Program& p = *ctx.mod->program;
    // Each (file, number) of CSL gets its own wsemu descriptor register (one register file here).
    const std::string key = "dsr|" + kind->name + "|" + std::to_string(id);
    auto it = p.dsd_templates.find(key);
    std::string r;
    if (it != p.dsd_templates.end()) {
      r = it->second;
    } else {
      r = alloc_dsr(p, e.span);
      p.dsd_templates[key] = r;
      p.plain_dsrs.push_back(r);
    }
    Value v;
    v.k = K::DSR_VAR;
    v.s = r;
    v.type = kind;
    return v;
  }
  if (n == "load_to_dsr") {
    argc(2, 3);
    if (!ctx.gen) fail(e.span, "@load_to_dsr is a run-time operation; call it inside a function or task");
    Value r = eval(*e.args[0], ctx);
    if (r.k != K::DSR_VAR || !r.type || r.type->kind != TK::DSR) fail(e.args[0]->span, "@load_to_dsr needs a DSR from @get_dsr");
    Value d = eval(*e.args[1], ctx);
    emit(ctx, "dsdcopy " + r.s + ", " + dsd_operand(d, e.args[1]->span, ctx), e.span);
    ctx.gen->dsr_on_done.erase(r.s);  // a new load replaces what the DSR carried
    ctx.gen->dsr_ut.erase(r.s);
    if (e.args.size() == 3) {
      // With .async, the action belongs to the asynchronous operation that will run on the DSR
      // (as the SDK's benchmark allreduce uses it: load the fabric DSD with .activate, then
      // start the @mov32 on the DSRs): it is attached to the async vector ops of this function
      // that name the DSR, until the DSR is loaded again. Without .async the load (one cycle in wsemu) is complete
      // at once, and so is its action.
      Value o = ct(2, "options");
      if (o.k != K::STRUCT) fail(e.args[2]->span, "the options must be a struct");
      const Value* async = o.st->find("async");
      const bool is_async = async && to_bool(*async, e.args[2]->span, ".async");
      for (size_t i = 0; i < o.st->names.size(); ++i) {
        const std::string& k = o.st->names[i];
        const Value& v = o.st->values[i];
        if (k == "async") continue;
        if (k == "save_address") {  // each op on the DSR then leaves its base where it ended
          if (!to_bool(v, e.args[2]->span, ".save_address")) continue;
          if (!d.dsd || d.dsd->kind != "mem1d_dsd")
            fail(e.args[2]->span, "unsupported: .save_address of a DSD that is not a one-dimensional memory DSD");
          emit(ctx, "dsdsave " + r.s + ", 1", e.span);
          continue;
        }
        if (k == "activate" || k == "unblock") {
          const int64_t id = completion_task_id(v, "." + k, e.args[2]->span, ctx);
          if (is_async) ctx.gen->dsr_on_done[r.s] = ", " + k + "=" + std::to_string(id);
          else emit(ctx, k + " " + std::to_string(id), e.span);
          continue;
        }
        if (k == "ut_id") {  // the microthread of the asynchronous op that will run on the DSR
          if (v.k != K::UT_ID) fail(e.args[2]->span, ".ut_id needs a microthread id (@get_ut_id)");
          if (!is_async) fail(e.args[2]->span, ".ut_id of @load_to_dsr needs .async = true");
          ctx.gen->dsr_ut[r.s] = v.i;
          continue;
        }
        fail(e.args[2]->span, "unsupported: option ." + k + " of @load_to_dsr");
      }
    }
    return make_void();
  }
  return std::nullopt;
}

}  // namespace wsemu::compiler::csl
