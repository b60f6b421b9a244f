// Names, modules and comptime evaluation (see compiler_impl.hpp).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/csl/codegen.hpp"
#include "compiler/csl/compiler_impl.hpp"
#include "compiler/csl/parser.hpp"

namespace wsemu::compiler::csl {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxImportDepth = 32;

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

int64_t wrap(int64_t v, const TypeRef& t) {
  if (!t || t->kind != TK::INT || t->bits >= 64) return v;
  const uint64_t mask = (uint64_t(1) << t->bits) - 1;
  uint64_t u = uint64_t(v) & mask;
  if (t->is_signed && (u >> (t->bits - 1)) & 1) u |= ~mask;
  return int64_t(u);
}

bool fits(int64_t v, const TypeRef& t) {
  if (t->bits >= 64) return t->is_signed || v >= 0;
  if (t->is_signed) return v >= -(int64_t(1) << (t->bits - 1)) && v < (int64_t(1) << (t->bits - 1));
  return v >= 0 && v < (int64_t(1) << t->bits);
}

}  // namespace

Compiler::Compiler(const CslOptions& options) : opt(options) {}

std::string Compiler::resolve_import(const std::string& spec, int from_file, Span at, bool* is_lib) {
  *is_lib = false;
  if (spec.size() > 2 && spec.front() == '<' && spec.back() == '>') {
    const std::string name = spec.substr(1, spec.size() - 2) + ".csl";
    const std::string dir = opt.stdlib_dir.empty() ? default_stdlib_dir() : opt.stdlib_dir;
    fs::path p = fs::path(dir) / name;
    if (fs::exists(p)) {
      *is_lib = true;
      return p.lexically_normal().string();
    }
    fail(at, "standard library module '" + spec + "' not found (looked in " + dir +
                 "; wsemu's standard library is listed in compiler/README.md)");
  }
  std::vector<fs::path> candidates;
  fs::path rel(spec);
  if (rel.is_absolute()) {
    candidates.push_back(rel);
  } else {
    if (from_file >= 0) candidates.push_back(fs::path(sources.name(from_file)).parent_path() / rel);
    for (const std::string& d : opt.import_paths) candidates.push_back(fs::path(d) / rel);
  }
  for (const fs::path& c : candidates)
    if (fs::exists(c) && fs::is_regular_file(c)) {
      // A module of the standard library importing a sibling stays a library module.
      const std::string dir = fs::path(opt.stdlib_dir.empty() ? default_stdlib_dir() : opt.stdlib_dir).lexically_normal().string();
      const std::string norm = c.lexically_normal().string();
      *is_lib = norm.rfind(dir, 0) == 0;
      return norm;
    }
  std::string tried;
  for (const fs::path& c : candidates) tried += (tried.empty() ? "" : ", ") + c.string();
  fail(at, "module file '" + spec + "' not found (tried " + tried + ")");
}

ModuleInstance* Compiler::instantiate(const std::string& path, std::shared_ptr<StructValue> params, Span at,
                                      Program* program, bool is_lib, bool has_importer) {
  int depth = 0;
  for (int f = at.file; has_importer && f >= 0 && depth <= kMaxImportDepth; ++depth) {
    bool found = false;
    for (const auto& m : modules)
      if (m->file == f) {
        found = true;
        break;
      }
    if (!found) break;
    f = -1;
  }
  if (modules.size() > 4096) fail(at, "too many module instances (more than 4096): an import cycle?");
  std::string text;
  if (!read_file(path, text)) fail(at, "cannot read '" + path + "'");
  if (text.size() > (64u << 20)) fail(at, "'" + path + "' is larger than 64 MiB");
  auto m = std::make_unique<ModuleInstance>();
  m->id = int(modules.size());
  m->path = path;
  m->is_lib = is_lib;
  m->program = program;
  m->params = params ? params : std::make_shared<StructValue>();
  m->file = sources.add(path, text, at, has_importer);
  m->ast = std::make_shared<Module>(parse(sources.text(m->file), m->file));
  for (const StmtPtr& d : m->ast->decls) {
    if (d->kind != StmtKind::VAR && d->kind != StmtKind::FN) continue;
    if (m->decls.count(d->name)) fail(d->span, "'" + d->name + "' is declared twice in this file");
    m->decls[d->name] = d.get();
  }
  // Parameters: the import's struct fields, else the declared default.
  for (size_t i = 0; i < m->params->names.size(); ++i) {
    const std::string& n = m->params->names[i];
    auto it = m->decls.find(n);
    if (it == m->decls.end() || it->second->decl_kind != "param") {
      if (is_lib) continue;  // library modules take the fields they know
      fail(at, "'" + n + "' is not a param of " + fs::path(path).filename().string());
    }
  }
  ModuleInstance* raw = m.get();
  modules.push_back(std::move(m));
  for (const StmtPtr& d : raw->ast->decls) {
    if (d->kind != StmtKind::VAR || d->decl_kind != "param") continue;
    Ctx ctx;
    ctx.mod = raw;
    const Value* given = raw->params->find(d->name);
    Value v;
    if (given) {
      v = *given;
    } else if (d->value) {
      v = eval_comptime(*d->value, ctx, "the default value of param '" + d->name + "'");
    } else {
      continue;  // an error where it is used (an unused param may stay unset, as in the SDK)
    }
    if (d->type) v = coerce(v, eval_type(*d->type, ctx), given ? at : d->span, ctx);
    raw->values[d->name] = v;
  }
  return raw;
}

void Compiler::run_comptime_blocks(ModuleInstance* mod) {
  // Every declaration is analysed (not only the used ones), so that its errors show.
  for (const StmtPtr& d : mod->ast->decls)
    if (d->kind == StmtKind::VAR && d->decl_kind != "param") module_member(mod, d->name, d->span);
  for (const StmtPtr& d : mod->ast->decls) {
    if (d->kind != StmtKind::COMPTIME) continue;
    Ctx ctx;
    ctx.mod = mod;
    Scope scope;
    ctx.scope = &scope;
    Value ret;
    exec_block(d->body, ctx, &ret);
  }
  // Exported functions are roots of code generation.
  for (const StmtPtr& d : mod->ast->decls)
    if (d->kind == StmtKind::FN && d->is_export && mod->program) module_member(mod, d->name, d->span);
}

int64_t Compiler::to_int(const Value& v, Span at, const std::string& what) {
  if (v.k == Value::K::INT || v.k == Value::K::COLOR || v.k == Value::K::TASK_ID || v.k == Value::K::QUEUE ||
      v.k == Value::K::ENUM || v.k == Value::K::UT_ID)
    return v.i;
  if (v.k == Value::K::BOOL) return v.i;
  if (v.k == Value::K::FLOAT && v.f == std::floor(v.f) && std::fabs(v.f) < 9e18) return int64_t(v.f);
  if (!v.is_comptime()) fail(at, what + " must be known at comptime");
  fail(at, what + " must be an integer, found " + (v.type ? v.type->str() : v.str()));
}

bool Compiler::to_bool(const Value& v, Span at, const std::string& what) {
  if (v.k == Value::K::BOOL) return v.i != 0;
  if (!v.is_comptime()) fail(at, what + " must be known at comptime");
  fail(at, what + " must be a bool, found " + (v.type ? v.type->str() : v.str()));
}

Value Compiler::eval_comptime(const Expr& e, Ctx& ctx, const std::string& what) {
  Ctx c = ctx;
  c.gen = nullptr;
  Value v = eval(e, c);
  if (v.k == Value::K::RUNTIME) fail(e.span, what + " must be known at comptime");
  return v;
}

TypeRef Compiler::eval_type(const Expr& e, Ctx& ctx) {
  Value v = eval_comptime(e, ctx, "a type");
  if (v.k != Value::K::TYPE) fail(e.span, "expected a type, found " + v.str());
  return v.type;
}

namespace {

Value type_named(TK k) { return make_type_value(make_type(k)); }

bool builtin_type(const std::string& name, Value& out) {
  if (name.size() >= 2 && (name[0] == 'i' || name[0] == 'u')) {
    bool digits = true;
    for (size_t i = 1; i < name.size(); ++i) digits = digits && std::isdigit(static_cast<unsigned char>(name[i]));
    if (digits && name.size() <= 3) {
      int bits = std::stoi(name.substr(1));
      if (bits == 8 || bits == 16 || bits == 32 || bits == 64) {
        out = make_type_value(int_type(bits, name[0] == 'i'));
        return true;
      }
    }
  }
  if (name == "f16" || name == "f32") return out = make_type_value(float_type(name == "f16" ? 16 : 32)), true;
  static const std::map<std::string, TK> kinds = {
      {"bool", TK::BOOL}, {"void", TK::VOID}, {"type", TK::TYPE}, {"comptime_int", TK::COMPTIME_INT},
      {"comptime_float", TK::COMPTIME_FLOAT}, {"comptime_string", TK::COMPTIME_STRING},
      {"comptime_struct", TK::COMPTIME_STRUCT}, {"color", TK::COLOR}, {"data_task_id", TK::DATA_TASK_ID},
      {"local_task_id", TK::LOCAL_TASK_ID}, {"control_task_id", TK::CONTROL_TASK_ID},
      {"input_queue", TK::INPUT_QUEUE}, {"output_queue", TK::OUTPUT_QUEUE}, {"imported_module", TK::MODULE},
      {"ut_id", TK::UT_ID}, {"direction", TK::DIRECTION}, {"anytype", TK::ANYTYPE}};
  auto it = kinds.find(name);
  if (it != kinds.end()) return out = type_named(it->second), true;
  if (name == "dsr_dest" || name == "dsr_src0" || name == "dsr_src1") {
    auto t = std::make_shared<Type>();
    t->kind = TK::DSR;
    t->name = name;
    out = make_type_value(t);
    return true;
  }
  if (name == "mem1d_dsd" || name == "mem4d_dsd" || name == "fabin_dsd" || name == "fabout_dsd") {
    auto t = std::make_shared<Type>();
    t->kind = TK::DSD;
    t->dsd_kind = name;
    out = make_type_value(t);
    return true;
  }
  static const std::map<std::string, int> dirs = {{"NORTH", 0}, {"SOUTH", 1}, {"EAST", 2}, {"WEST", 3}, {"RAMP", 4}};
  auto d = dirs.find(name);
  if (d != dirs.end()) {
    Value v;
    v.k = Value::K::DIRECTION;
    v.i = d->second;
    v.s = name;
    v.type = make_type(TK::DIRECTION);
    out = v;
    return true;
  }
  return false;
}

}  // namespace

Value Compiler::lookup(const std::string& name, Span at, Ctx& ctx) {
  for (Scope* s = ctx.scope; s; s = s->parent) {
    auto it = s->names.find(name);
    if (it == s->names.end()) continue;
    const Binding& b = it->second;
    if (b.reg >= 0) {
      Value v;
      v.k = Value::K::RUNTIME;
      v.i = b.reg;
      v.type = b.type;
      return v;
    }
    if (!b.dsr.empty()) {
      Value v;
      v.k = Value::K::DSR_VAR;
      v.s = b.dsr;
      v.dsd = b.dsd;
      v.type = b.type;
      return v;
    }
    if (!b.slot.empty()) fail(at, "internal: memory-resident locals are not generated yet ('" + name + "')");
    return b.value;
  }
  if (ctx.mod && ctx.mod->decls.count(name)) return module_member(ctx.mod, name, at);
  Value v;
  if (builtin_type(name, v)) return v;
  fail(at, "use of undeclared identifier '" + name + "'");
}

Value Compiler::module_member(ModuleInstance* mod, const std::string& name, Span at) {
  auto vit = mod->values.find(name);
  if (vit != mod->values.end()) return vit->second;
  auto dit = mod->decls.find(name);
  if (dit == mod->decls.end())
    fail(at, "module " + fs::path(mod->path).filename().string() + " has no member '" + name + "'");
  const Stmt& d = *dit->second;
  if (d.decl_kind == "param")
    fail(at, "param '" + name + "' of " + fs::path(mod->path).filename().string() +
                 " has no value: the import, @set_tile_code or --params must set it");
  if (mod->in_progress.count(name)) fail(at, "'" + name + "' depends on its own value");
  mod->in_progress.insert(name);
  Value v;
  Ctx ctx;
  ctx.mod = mod;
  if (d.kind == StmtKind::FN) {
    v.k = Value::K::FUNCTION;
    v.mod = mod;
    v.fn = &d;
    v.type = make_type(TK::FN);
    if (d.is_export && mod->program) {
      if (d.decl_kind == "task") fail(d.span, "a task cannot be 'export'ed; bind it with @bind_local_task or @bind_data_task");
    }
  } else if (d.decl_kind == "var") {
    if (!mod->program) fail(d.span, "'var' at the top level of a layout file: variables belong to PE programs");
    GlobalVar* g = global_var(mod, d);
    if (!g->dsr.empty()) {
      v.k = Value::K::DSR_VAR;
      v.s = g->dsr;
      v.dsd = g->dsd;
      v.type = g->type;
      v.global = g;
    } else {
      v.k = Value::K::GLOBAL;
      v.global = g;
      v.type = g->type;
    }
  } else {
    if (!d.value) fail(d.span, "'" + name + "' has no value");
    v = eval_comptime(*d.value, ctx, "the value of const '" + name + "'");
    if (d.type) v = coerce(v, eval_type(*d.type, ctx), d.value->span, ctx);
  }
  mod->in_progress.erase(name);
  mod->values[name] = v;
  return v;
}

GlobalVar* Compiler::global_var(ModuleInstance* mod, const Stmt& d) {
  auto g = std::make_unique<GlobalVar>();
  g->csl_name = d.name;
  g->mod = mod;
  g->span = d.span;
  Ctx ctx;
  ctx.mod = mod;
  TypeRef declared = d.type ? eval_type(*d.type, ctx) : nullptr;
  Value init;
  if (d.value) {
    init = eval_comptime(*d.value, ctx, "the initial value of global var '" + d.name + "'");
    if (declared) init = coerce(init, declared, d.value->span, ctx);
  } else {
    init.k = Value::K::UNDEFINED;
  }
  g->type = declared ? declared : init.type;
  if (!g->type || g->type->kind == TK::COMPTIME_INT || g->type->kind == TK::COMPTIME_FLOAT)
    fail(d.span, "global var '" + d.name + "' needs a run-time type (e.g. 'var " + d.name + ": i32 = ...')");
  if (g->type->is_comptime_only()) fail(d.span, "a var cannot hold a " + g->type->str() + "; use const");
  if (g->type->kind == TK::ARRAY && g->type->element_count() * std::max(1, g->type->elem->byte_size()) > 48 * 1024)
    fail(d.span, "'" + d.name + "' (" + g->type->str() + ", " +
                     std::to_string(g->type->element_count() * std::max(1, g->type->elem->byte_size())) +
                     " bytes) does not fit in a PE's 48 KiB of memory");
  g->init = init;
  if (d.align) g->align = int(to_int(eval_comptime(*d.align, ctx, "align"), d.align->span, "align"));
  if (d.linksection) eval_comptime(*d.linksection, ctx, "linksection");
  const bool root = mod->program && mod->id == 0;
  (void)root;
  g->asm_name = (mod->is_lib ? "lib" : "m") + std::to_string(mod->id) + "_" + d.name;
  if (d.is_export && g->type->kind != TK::DSD) {
    // `export var`: visible under its own name, as CSL's ELF symbols are, so that the host reads
    // it with read_symbol (the SDK's SdkLayout tutorials export no other way).
    Program& p = *mod->program;
    if (p.exported_symbols.count(d.name)) fail(d.span, "'" + d.name + "' is exported twice");
    g->asm_name = d.name;
    p.exported_symbols[d.name] = d.name;
    p.exported_symbol_types[d.name] = g->type->kind == TK::ARRAY ? g->type->elem : g->type;
    p.exported_symbol_counts[d.name] = g->type->kind == TK::ARRAY ? g->type->element_count() : 1;
    p.export_vars.insert(d.name);
  }
  if (g->type->kind == TK::DSD) {
    if (init.k != Value::K::DSD) fail(d.span, "a DSD var needs an initial value from @get_dsd");
    g->dsd = init.dsd;
    g->dsr = alloc_dsr(*mod->program, d.span);
    mod->program->dsd_regs.push_back({g->dsr, init.dsd});
    // The register gets its initial contents from a .dsd line written by program.cpp.
  }
  GlobalVar* raw = g.get();
  globals.push_back(std::move(g));
  mod->program->globals.push_back(raw);
  return raw;
}

Value Compiler::field(const Value& base, const std::string& name, Span at, Ctx& ctx) {
  (void)ctx;
  switch (base.k) {
    case Value::K::MODULE: return module_member(base.mod, name, at);
    case Value::K::STRUCT: {
      if (base.type && base.type->kind == TK::ARRAY) {
        if (name == "len") return make_int(base.type->dims.empty() ? 0 : base.type->dims[0]);
        break;
      }
      const Value* f = base.st->find(name);
      if (!f) fail(at, "the struct has no field '" + name + "' (it has: " + [&] {
          std::string s;
          for (const auto& n : base.st->names) s += (s.empty() ? "" : ", ") + n;
          return s.empty() ? std::string("none") : s;
        }() + ")");
      return *f;
    }
    case Value::K::TYPE:
      if (base.type->kind == TK::ENUM) {
        for (size_t i = 0; i < base.type->field_names.size(); ++i)
          if (base.type->field_names[i] == name) {
            Value v;
            v.k = Value::K::ENUM;
            v.i = base.type->enum_values[i];
            v.s = name;
            v.type = base.type;
            return v;
          }
        fail(at, "enum " + base.type->str() + " has no member '" + name + "'");
      }
      break;
    case Value::K::GLOBAL:
      if (base.type->kind == TK::ARRAY && name == "len") return make_int(base.type->dims[0]);
      break;
    default: break;
  }
  fail(at, "cannot take field '" + name + "' of " + (base.type ? base.type->str() : base.str()));
}

Value Compiler::coerce(const Value& v, const TypeRef& t, Span at, Ctx& ctx) {
  if (!t || t->kind == TK::ANYTYPE) return v;
  using K = Value::K;
  if (v.k == K::UNDEFINED) {
    Value u = v;
    u.type = t;
    return u;
  }
  if (v.k == K::RUNTIME || v.k == K::GLOBAL) {
    Value r = rvalue(v, at, ctx);
    if (same_type(r.type, t)) return r;
    if (r.type->kind == TK::INT && t->kind == TK::INT &&
        (r.type->bits < t->bits && (t->is_signed || !r.type->is_signed))) {
      r = wrapped(*this, r, at, ctx);
      r.type = t;
      return r;
    }
    if (r.type->kind == TK::BOOL && t->kind == TK::BOOL) return r;
    fail(at, "expected type '" + t->str() + "', found '" + r.type->str() + "' (convert with @as)");
  }
  // The types that take a value of these kinds as it is.
  static const std::map<TK, std::set<K>> as_is = {
      {TK::BOOL, {K::BOOL}}, {TK::TYPE, {K::TYPE}}, {TK::COMPTIME_STRING, {K::STRING}}, {TK::COLOR, {K::COLOR}},
      {TK::DATA_TASK_ID, {K::TASK_ID}}, {TK::LOCAL_TASK_ID, {K::TASK_ID}}, {TK::CONTROL_TASK_ID, {K::TASK_ID}},
      {TK::INPUT_QUEUE, {K::QUEUE}}, {TK::OUTPUT_QUEUE, {K::QUEUE}}, {TK::MODULE, {K::MODULE}},
      {TK::DSD, {K::DSD, K::DSR_VAR}}, {TK::FN, {K::FUNCTION}}, {TK::DIRECTION, {K::DIRECTION}},
      {TK::UT_ID, {K::UT_ID}}, {TK::STRUCT, {K::STRUCT}}};
  if (auto it = as_is.find(t->kind); it != as_is.end() && it->second.count(v.k)) return v;
  switch (t->kind) {
    case TK::INT:
      if (v.k == K::INT || (v.k == K::FLOAT && v.f == std::floor(v.f))) {
        int64_t x = v.k == K::INT ? v.i : int64_t(v.f);
        if (!fits(x, t)) fail(at, "value " + std::to_string(x) + " does not fit in " + t->str());
        return make_int(x, t);
      }
      break;
    case TK::FLOAT:
      if (v.k == K::FLOAT || v.k == K::INT) return make_float(v.k == K::FLOAT ? v.f : double(v.i), t);
      break;
    case TK::COMPTIME_INT:
      if (v.k == K::INT) return make_int(v.i);
      break;
    case TK::COMPTIME_FLOAT:
      if (v.k == K::FLOAT || v.k == K::INT) return make_float(v.k == K::FLOAT ? v.f : double(v.i));
      break;
    case TK::COMPTIME_STRUCT:
      if (v.k == K::STRUCT && (!v.type || v.type->kind != TK::ARRAY)) return v;
      break;
    case TK::ARRAY:
      if (v.k == K::STRUCT && v.type && v.type->kind == TK::ARRAY && same_type(v.type->elem, t->elem) &&
          v.type->element_count() == t->element_count()) {
        Value a = v;
        a.type = t;
        return a;
      }
      if (v.k == K::STRUCT && (!v.type || v.type->kind != TK::ARRAY) &&
          int64_t(v.st->values.size()) == t->element_count()) {
        Value a;
        a.k = K::STRUCT;
        a.type = t;
        a.st = std::make_shared<StructValue>();
        for (const Value& e : v.st->values) a.st->values.push_back(coerce(e, t->elem, at, ctx));
        return a;
      }
      break;
    case TK::MANY_PTR: case TK::PTR:
      if (v.k == K::POINTER) {
        // `&array` is a [*]T here; a param or const declared `*[N]T` takes that type, so that
        // `(p.*)[i]` is the array indexed, not its first element. Only where the element types
        // agree: another pointee is left as it was (as @ptrcast would have made it).
        auto scalar = [](const TypeRef& pt) {
          TypeRef e = pt ? pt->elem : nullptr;
          return e && e->kind == TK::ARRAY ? e->elem : e;
        };
        const TypeRef from = scalar(v.type), to = scalar(t);
        if (from && to && same_type(from, to)) {
          Value p = v;
          p.type = t;
          return p;
        }
        return v;
      }
      break;
    case TK::ENUM:
      if (v.k == K::ENUM && v.type && same_type(v.type, t)) return v;
      if (v.k == K::ENUM && !v.type) {
        for (size_t i = 0; i < t->field_names.size(); ++i)
          if (t->field_names[i] == v.s) return field(make_type_value(t), v.s, at, ctx);
        fail(at, "enum " + t->str() + " has no member '" + v.s + "'");
      }
      break;
    default: break;
  }
  fail(at, "expected type '" + t->str() + "', found " + (v.type ? "'" + v.type->str() + "'" : v.str()));
}

Value Compiler::unary(const std::string& op, Value a, Span at, Ctx& ctx) {
  using K = Value::K;
  if (!a.is_comptime()) return gen_unary(op, a, at, ctx);
  if (op == "-") {
    if (a.k == K::INT) {
      if (a.type->kind == TK::INT && !a.type->is_signed) fail(at, "cannot negate an unsigned " + a.type->str());
      return make_int(wrap(-a.i, a.type), a.type);
    }
    if (a.k == K::FLOAT) return make_float(-a.f, a.type);
  } else if (op == "!") {
    if (a.k == K::BOOL) return make_bool(!a.i);
  } else if (op == "~") {
    if (a.k == K::INT && a.type->kind == TK::INT) return make_int(wrap(~a.i, a.type), a.type);
    if (a.k == K::INT) fail(at, "'~' needs a sized integer type (e.g. @as(u16, ...))");
  }
  fail(at, "operator '" + op + "' cannot be applied to " + (a.type ? a.type->str() : a.str()));
}

Value Compiler::binary(const std::string& op, Value a, Value b, Span at, Ctx& ctx) {
  using K = Value::K;
  if (!a.is_comptime() || !b.is_comptime()) return gen_binary(op, a, b, at, ctx);
  const bool cmp = op == "==" || op == "!=" || op == "<" || op == ">" || op == "<=" || op == ">=";
  // Types compare at comptime (a generic module choosing by @type_of, as <message_passing> does).
  if (a.k == K::TYPE && b.k == K::TYPE && (op == "==" || op == "!="))
    return make_bool(same_type(a.type, b.type) == (op == "=="));
  if ((a.k == K::INT || a.k == K::FLOAT) && (b.k == K::INT || b.k == K::FLOAT)) {
    const bool fa = a.k == K::FLOAT, fb = b.k == K::FLOAT;
    if (a.k == K::INT && b.k == K::INT) {
      const bool shift = op == "<<" || op == ">>";
      TypeRef t = a.type->kind == TK::INT || shift ? a.type : b.type;
      // A shift's amount has a type of its own (u16 shifting an i16, as in Zig); the result has
      // the shifted value's.
      if (!shift && a.type->kind == TK::INT && b.type->kind == TK::INT && !same_type(a.type, b.type)) {
        if (a.type->is_signed != b.type->is_signed)
          fail(at, "operands of '" + op + "' have different signedness: " + a.type->str() + " and " + b.type->str());
        t = a.type->bits >= b.type->bits ? a.type : b.type;
      }
      const int64_t x = a.i, y = b.i;
      if (cmp) {
        bool r = op == "==" ? x == y : op == "!=" ? x != y : op == "<" ? x < y : op == ">" ? x > y : op == "<=" ? x <= y : x >= y;
        return make_bool(r);
      }
      int64_t r = 0;
      if (op == "+") r = int64_t(uint64_t(x) + uint64_t(y));
      else if (op == "-") r = int64_t(uint64_t(x) - uint64_t(y));
      else if (op == "*") r = int64_t(uint64_t(x) * uint64_t(y));
      else if (op == "/" || op == "%") {
        if (y == 0) fail(at, "division by zero");
        if (x == INT64_MIN && y == -1) fail(at, "integer overflow in division");
        r = op == "/" ? x / y : x % y;
      } else if (op == "<<" || op == ">>") {
        if (y < 0 || y > 63) fail(at, "shift amount " + std::to_string(y) + " is out of range");
        r = op == "<<" ? int64_t(uint64_t(x) << y) : x >> y;
      } else if (op == "&") r = x & y;
      else if (op == "|") r = x | y;
      else if (op == "^") r = x ^ y;
      else fail(at, "operator '" + op + "' cannot be applied to integers");
      if (t->kind == TK::INT) {
        if (!fits(r, t)) fail(at, "comptime result " + std::to_string(r) + " overflows " + t->str());
        return make_int(r, t);
      }
      return make_int(r);
    }
    TypeRef t = fa && a.type->kind == TK::FLOAT ? a.type : fb && b.type->kind == TK::FLOAT ? b.type : nullptr;
    if ((a.k == K::INT && a.type->kind == TK::INT) || (b.k == K::INT && b.type->kind == TK::INT))
      fail(at, "operands of '" + op + "' mix an integer type and a float (convert with @as)");
    const double x = fa ? a.f : double(a.i), y = fb ? b.f : double(b.i);
    if (cmp) {
      bool r = op == "==" ? x == y : op == "!=" ? x != y : op == "<" ? x < y : op == ">" ? x > y : op == "<=" ? x <= y : x >= y;
      return make_bool(r);
    }
    double r = 0;
    if (op == "+") r = x + y;
    else if (op == "-") r = x - y;
    else if (op == "*") r = x * y;
    else if (op == "/") r = x / y;
    else fail(at, "operator '" + op + "' cannot be applied to floats");
    if (t && t->bits == 32) r = double(float(r));
    return make_float(r, t);
  }
  if (a.k == K::BOOL && b.k == K::BOOL) {
    if (op == "==") return make_bool(a.i == b.i);
    if (op == "!=") return make_bool(a.i != b.i);
    if (op == "and") return make_bool(a.i && b.i);
    if (op == "or") return make_bool(a.i || b.i);
  }
  if (a.k == b.k && (op == "==" || op == "!=") &&
      (a.k == K::COLOR || a.k == K::TASK_ID || a.k == K::ENUM || a.k == K::QUEUE || a.k == K::DIRECTION))
    return make_bool((a.i == b.i) == (op == "=="));
  if (a.k == K::STRING && b.k == K::STRING && (op == "==" || op == "!=")) return make_bool((a.s == b.s) == (op == "=="));
  fail(at, "operator '" + op + "' cannot be applied to " + (a.type ? a.type->str() : a.str()) + " and " +
               (b.type ? b.type->str() : b.str()));
}

}  // namespace wsemu::compiler::csl
