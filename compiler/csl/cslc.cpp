#include "compiler/csl/cslc.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "compiler/csl/compiler_impl.hpp"
#include "compiler/layout/build.hpp"
#include "firmware/data_paths.hpp"
#include "firmware/memcpy_protocol.hpp"

namespace wsemu::compiler::csl {

namespace fs = std::filesystem;

std::string default_stdlib_dir() {
  const std::string source = (fs::path(__FILE__).parent_path() / "lib").string();
  return firmware::data_dir("csl-lib", "WSEMU_CSL_LIB_DIR", source);
}

namespace {

// A --params value: an integer (decimal or 0x hex, optionally negative) or a float.
bool parse_number(const std::string& s, Value& out) {
  if (s.empty()) return false;
  size_t pos = 0;
  try {
    if (s.find_first_of(".eE") != std::string::npos && s.find("0x") == std::string::npos) {
      double d = std::stod(s, &pos);
      if (pos != s.size()) return false;
      out = make_float(d);
      return true;
    }
    long long v = std::stoll(s, &pos, 0);
    if (pos != s.size()) return false;
    out = make_int(v);
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace

CslResult Compiler::run() {
  CslResult result;
  // The layout file: its params come from --params.
  std::string text;
  {
    std::ifstream in(opt.layout_file, std::ios::binary);
    if (!in) {
      Diagnostic d;
      d.file = opt.layout_file;
      d.message = "cannot read the layout file '" + opt.layout_file + "'";
      result.diagnostics.push_back(d);
      return result;
    }
  }
  auto params = std::make_shared<StructValue>();
  for (const auto& [name, value] : opt.params) {
    Value v;
    if (!parse_number(value, v)) fail({}, "--params " + name + ":" + value + ": the value must be a number");
    params->names.push_back(name);
    params->values.push_back(v);
  }
  for (const auto& [name, value] : opt.colors) {
    Value v;
    if (!parse_number(value, v) || v.k != Value::K::INT || v.i < 0 || v.i > 23)
      fail({}, "--colors " + name + ":" + value + ": the value must be a color 0..23");
    v.k = Value::K::COLOR;
    v.type = make_type(TK::COLOR);
    params->names.push_back(name);
    params->values.push_back(v);
  }
  ModuleInstance* layout_mod = instantiate(fs::path(opt.layout_file).lexically_normal().string(), params, {}, nullptr, false, false);
  const Stmt* layout_block = nullptr;
  for (const StmtPtr& d : layout_mod->ast->decls) {
    if (d->kind != StmtKind::LAYOUT) continue;
    if (layout_block) fail(d->span, "a second layout block (the first is at " + sources.where(layout_block->span) + ")");
    layout_block = d.get();
  }
  if (!layout_block) fail({layout_mod->file, 1, 1}, "the layout file has no 'layout { ... }' block");
  run_comptime_blocks(layout_mod);
  {
    Ctx ctx;
    ctx.mod = layout_mod;
    in_layout = true;
    Value ret;
    exec_block(layout_block->body, ctx, &ret);
    in_layout = false;
  }
  if (!rect_set) fail(layout_block->span, "the layout block never calls @set_rectangle");
  if (opt.placement.fabric_w == 0 && opt.placement.fabric_h == 0) {
    const_cast<CslOptions&>(opt).placement.fabric_w = opt.placement.offset_x + rect_w + 1;
    const_cast<CslOptions&>(opt).placement.fabric_h = opt.placement.offset_y + rect_h + 1;
  }
  if (opt.placement.offset_x + rect_w > opt.placement.fabric_w || opt.placement.offset_y + rect_h > opt.placement.fabric_h)
    fail(layout_block->span, "the " + std::to_string(rect_w) + " x " + std::to_string(rect_h) + " rectangle at offsets (" +
                                 std::to_string(opt.placement.offset_x) + ", " + std::to_string(opt.placement.offset_y) + ") does not fit the " +
                                 std::to_string(opt.placement.fabric_w) + " x " + std::to_string(opt.placement.fabric_h) + " fabric (--fabric-dims)");
  for (const auto& [xy, pl] : tiles) program_for(pl);
  // An exported pointer variable's host name stands for elements_per_pe elements of one type
  // wherever the pointer points: every array assigned to it must hold them.
  for (const auto& gv : globals) {
    if (gv->exported_as_its_array.line != 0 && gv->assigned_at.line != 0)
      fail(gv->assigned_at, "unsupported: '" + gv->csl_name + "' is exported (at " + sources.where(gv->exported_as_its_array) +
                                ") under the name of the `export var` it points to, which names that array, so the host "
                                "could not follow this assignment; export the pointer under a name of its own");
    if (gv->exported_as.empty()) continue;
    for (const GlobalVar::ArrayAssignment& a : gv->assigned_arrays) {
      const TypeRef& at = a.array->type;
      const TypeRef elem = at->kind == TK::ARRAY ? at->elem : at;
      const int64_t count = (at->kind == TK::ARRAY ? at->element_count() : 1) - a.offset;
      if (elem->str() != gv->exported_elem->str() || count < gv->exported_count)
        fail(a.span, "'" + gv->csl_name + "' is exported to the host as '" + gv->exported_as + "' (at " +
                         sources.where(gv->exported_at) + "), " + std::to_string(gv->exported_count) + " " +
                         gv->exported_elem->str() + " elements wherever it points, but this points it at " +
                         std::to_string(count) + " " + elem->str() + " elements of '" + a.array->csl_name + "'");
    }
  }
  result.layout_wsl = write_layout();
  for (size_t i = 0; i < programs.size(); ++i) result.programs["pe_" + std::to_string(i) + ".wsa"] = programs[i]->asm_text;
  result.comptime_prints = comptime_prints;
  return result;
}

CslResult compile_csl(const CslOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  CslOptions opt = options;
  if (opt.asm_include_dirs.empty()) opt.asm_include_dirs.push_back(firmware::include_dir());
  CslResult result;
  Compiler c(opt);
  try {
    result = c.run();
  } catch (const CompileError& e) {
    if (e.span.line == 0) {
      Diagnostic d;
      d.file = e.span.file >= 0 && e.span.file < c.sources.size() ? c.sources.name(e.span.file) : "wsemu cslc";
      d.message = e.what();
      result.diagnostics.push_back(d);
    } else {
      result.diagnostics = c.sources.diagnose(e.span, e.what());
    }
    return result;
  } catch (const std::exception& e) {
    Diagnostic d;
    d.file = options.layout_file;
    d.message = std::string("internal compiler error: ") + e.what();
    result.diagnostics.push_back(d);
    return result;
  }
  if (!result.diagnostics.empty()) return result;
  // The generated sources go to the output folder (or a scratch folder), and are linked there.
  fs::path dir = opt.out_dir;
  bool scratch = false;
  std::error_code ec;
  if (dir.empty()) {
    std::random_device rd;
    dir = fs::temp_directory_path(ec) / ("wsemu-cslc-" + std::to_string(rd()));
    scratch = true;
  }
  fs::create_directories(dir, ec);
  auto write = [&](const std::string& name, const std::string& body) {
    std::ofstream out(dir / name, std::ios::binary);
    out << body;
    return bool(out);
  };
  bool ok = write("layout.wsl", result.layout_wsl);
  for (const auto& [name, body] : result.programs) ok = ok && write(name, body);
  if (!ok) {
    Diagnostic d;
    d.file = dir.string();
    d.message = "cannot write the generated sources to " + dir.string();
    result.diagnostics.push_back(d);
    return result;
  }
  layout::BuildOptions bo;
  bo.arch = opt.arch;
  bo.include_dirs = opt.asm_include_dirs;
  layout::BuildResult built = layout::build_layout_file((dir / "layout.wsl").string(), bo);
  for (Diagnostic& d : built.diagnostics) {
    if (d.severity == Severity::ERROR && d.message.rfind("internal", 0) != 0)
      d.message = "in the generated code: " + d.message;
    result.diagnostics.push_back(d);
  }
  if (built.ok()) {
    try {
      c.finish_executable(*built.executable);
      result.executable = std::move(built.executable);
      result.summary = layout::summary_line(built.summary, *result.executable);
    } catch (const CompileError& e) {
      result.diagnostics = c.sources.diagnose(e.span, e.what());
    }
  }
  if (scratch) fs::remove_all(dir, ec);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace wsemu::compiler::csl
