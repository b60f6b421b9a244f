// The linker half of `wsemu build`: from a checked LayoutPlan to an Executable.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "isa/assembler.hpp"
#include "compiler/layout/build.hpp"
#include "compiler/layout/checker.hpp"
#include "compiler/layout/parser.hpp"

namespace wsemu::compiler::layout {
namespace {

uint64_t hash_object(const isa::ObjectImage& o) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  for (uint64_t w : o.code) mix(w);
  for (uint8_t b : o.data_init) mix(b);
  mix(o.data_base);
  mix(o.data_size);
  mix(o.symbols.size());
  mix(o.tasks.size());
  return h;
}

std::string params_text(const std::vector<std::string>& names, const std::vector<int64_t>& values) {
  if (names.empty()) return "no parameters";
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += fmt::format("{} = {}", names[i], values[i]);
  }
  return out;
}

std::string pe_text(uint32_t fx, uint32_t fy) { return fmt::format("PE ({}, {})", fx, fy); }

class Linker {
 public:
  Linker(const LayoutPlan& plan, const SourceText& source, const BuildOptions& options,
         std::vector<Diagnostic>& diagnostics, BuildSummary& summary)
      : plan_(plan), source_(source), options_(options), diags_(diagnostics), summary_(summary) {}

  std::optional<Executable> run() {
    exe_.arch = plan_.arch;
    exe_.fabric_width = plan_.fabric_width;
    exe_.fabric_height = plan_.fabric_height;
    exe_.layout_file = source_.file_name();
    exe_.build_params = plan_.build_params;
    exe_.colors = plan_.colors;
    for (uint32_t i = 0; i < plan_.rects.size(); ++i) link_rect(i);
    if (failed_) return std::nullopt;
    std::vector<std::string> problems = validate(exe_);
    if (!problems.empty()) {
      error({}, "internal error: the linked executable is inconsistent: " + problems.front());
      return std::nullopt;
    }
    summary_.placed_pes = exe_.placed_pes();
    summary_.rects = exe_.rects.size();
    summary_.programs = exe_.programs.size();
    summary_.param_sets = exe_.param_sets.size();
    summary_.route_sets = exe_.route_sets.size();
    return std::move(exe_);
  }

 private:
  void error(Loc loc, std::string message) {
    failed_ = true;
    diags_.push_back(source_.make(Severity::ERROR, loc, std::move(message)));
  }
  void note(Loc loc, std::string message) {
    diags_.push_back(source_.make(Severity::NOTE, loc, std::move(message)));
  }

  // Assembles (or finds) the program for one parameter set; -1 when assembly failed.
  int assemble(const PlannedRect& rect, size_t set) {
    const std::vector<int64_t>& values = rect.param_sets[set];
    std::string key = rect.program_path;
    for (size_t i = 0; i < values.size(); ++i)
      key += fmt::format("\n{}={}", rect.param_names[i], values[i]);
    if (auto it = assembled_.find(key); it != assembled_.end()) return it->second;

    isa::AssembleOptions options;
    for (size_t i = 0; i < values.size(); ++i) options.params[rect.param_names[i]] = values[i];
    options.include_dirs = options_.include_dirs;
    options.arch = plan_.arch;
    ++summary_.assemblies;
    isa::AssembleResult result = isa::assemble_file(rect.program_path, options);
    int index = -1;
    if (!result.object) {
      for (const isa::Diagnostic& d : result.errors)
        diags_.push_back({.file = d.file, .line = d.line, .col = d.col, .message = d.message, .source_line = d.source_line,
                          .included_from = {}});
      if (result.errors.empty()) error(rect.program->path_loc, "the assembler failed without saying why");
      failed_ = true;
      uint32_t first = rect.param_set_first_pe[set];
      note(rect.program->loc,
           fmt::format("while assembling '{}' for rect '{}' ({}: {})", rect.program->path,
                       rect.name, pe_text(rect.x + first % rect.width, rect.y + first / rect.width),
                       params_text(rect.param_names, values)));
    } else {
      index = store(rect, std::move(*result.object));
    }
    assembled_.emplace(std::move(key), index);
    return index;
  }

  int store(const PlannedRect& rect, isa::ObjectImage object) {
    uint64_t h = hash_object(object);
    for (int candidate : by_hash_[h])
      if (exe_.programs[candidate].object == object) return candidate;
    int index = static_cast<int>(exe_.programs.size());
    by_hash_[h].push_back(index);
    exe_.programs.push_back(Program{rect.program->path, std::move(object)});
    return index;
  }

  // SRAM, arch, exported symbols and functions of one program as used by one rect.
  void check_program(const PlannedRect& rect, int program, size_t set) {
    const isa::ObjectImage& o = exe_.programs[program].object;
    uint32_t first = rect.param_set_first_pe[set];
    std::string where = fmt::format(
        "'{}' for rect '{}' ({}: {})", rect.program->path, rect.name,
        pe_text(rect.x + first % rect.width, rect.y + first / rect.width),
        params_text(rect.param_names, rect.param_sets[set]));
    const uint32_t sram = o.sram_bytes();
    const uint32_t code = static_cast<uint32_t>(o.code.size() * 8);
    if (sram > summary_.max_sram_bytes) {
      summary_.max_sram_bytes = sram;
      summary_.max_sram_program = rect.program->path;
    }
    if (sram > kProgramSramLimit)
      error(rect.program->loc,
            fmt::format("program {} is too big for a PE's SRAM: it needs {} bytes (code {} + "
                        "data {}), but a PE has {} bytes for programs ({} KiB minus the {} "
                        "bytes reserved for the memcpy firmware)",
                        where, sram, code, sram - code, kProgramSramLimit, kPeSramBytes / 1024,
                        kFirmwareSramReserve));
    if (!o.arch.empty() && o.arch != plan_.arch)
      error(rect.program->loc, fmt::format("program {} was assembled for {}, but the layout "
                                           "targets {}", where, o.arch, plan_.arch));
    for (const PlannedSymbol& ps : rect.symbols) {
      const ExportSymbolAst& s = *ps.ast;
      const isa::Symbol* sym = o.find_symbol(s.program_symbol);
      if (!sym) {
        std::string known;
        for (const isa::Symbol& k : o.symbols) {
          if (known.size() > 120) {
            known += ", ...";
            break;
          }
          known += (known.empty() ? "" : ", ") + k.name;
        }
        error(s.program_name_loc,
              fmt::format("exported symbol '{}' is not in program {} (its symbols: {})",
                          s.program_symbol, where, known.empty() ? "none" : known));
        continue;
      }
      if (!sym->exported) {
        error(s.program_name_loc,
              fmt::format("symbol '{}' of program {} is not exported by the program (add "
                          "'.export {}' to it); the host only sees exported symbols",
                          s.program_symbol, where, s.program_symbol));
        continue;
      }
      if (s.indirect) {
        if (sym->type != isa::ElemType::U32)
          error(s.program_name_loc,
                fmt::format("symbol '{}' is {}[{}] in program {}, but an indirect export names a u32 pointer "
                            "variable (holding the address of the {} elements)",
                            s.program_symbol, isa::elem_type_name(sym->type), sym->count, where,
                            isa::elem_type_name(s.type)));
      } else if (sym->type != s.type)
        error(s.type_loc,
              fmt::format("symbol '{}' is {}[{}] in program {}, but the export says {}",
                          s.program_symbol, isa::elem_type_name(sym->type), sym->count, where,
                          isa::elem_type_name(s.type)));
      else if (sym->count < ps.elems_per_pe)
        error(s.count_loc,
              fmt::format("symbol '{}' has {} elements in program {}, fewer than the {} per PE "
                          "the export says", s.program_symbol, sym->count, where,
                          ps.elems_per_pe));
    }
    for (const ExportFunctionAst* f : rect.functions) {
      const isa::Function* fn = o.find_function(f->program_function);
      if (!fn) {
        std::string known;
        for (const isa::Function& k : o.functions)
          if (k.exported) known += (known.empty() ? "" : ", ") + k.name;
        error(f->program_name_loc,
              fmt::format("exported function '{}' is not in program {} (its exported "
                          "functions: {})", f->program_function, where,
                          known.empty() ? "none" : known));
      } else if (!fn->exported) {
        error(f->program_name_loc,
              fmt::format("function '{}' of program {} is not exported by the program; the "
                          "host can only launch functions the program exports (add '.export {}')",
                          f->program_function, where, f->program_function));
      }
    }
  }

  uint32_t route_set_index(const std::vector<uint32_t>& key) {
    RouteSet set;
    for (uint32_t ri : key) set.routes.push_back(plan_.routes[ri].route);
    std::sort(set.routes.begin(), set.routes.end(),
              [](const ColorRoute& a, const ColorRoute& b) { return a.color < b.color; });
    std::string id;
    for (const ColorRoute& r : set.routes) {
      id += fmt::format("{}:{}:{}:{}:{}:{}:{}:{}:{}:{}:{}:{}", r.color, r.current_position, r.ring_mode, r.host_port,
                        r.filter, r.filter_min, r.filter_max, r.swap_x, r.swap_y, r.pop_mode, r.reconfigurable,
                        r.teardown);
      if (r.counter_filter)
        id += fmt::format(":counter{}:{}:{}:{}:{}", r.count_data, r.count_control, r.counter_init, r.counter_max,
                          r.counter_limit);
      for (const SwitchPosition& p : r.positions) id += fmt::format(",{}/{}", p.rx.bits, p.tx.bits);
      id += ';';
    }
    auto [it, fresh] = route_set_ids_.emplace(id, static_cast<uint32_t>(exe_.route_sets.size()));
    if (fresh) exe_.route_sets.push_back(std::move(set));
    return it->second;
  }

  int32_t param_set_index(const PlannedRect& rect, size_t set) {
    ParamSet ps;
    for (size_t i = 0; i < rect.param_names.size(); ++i)
      ps.values.emplace_back(rect.param_names[i], rect.param_sets[set][i]);
    auto [it, fresh] =
        param_set_ids_.emplace(ps.values, static_cast<int32_t>(exe_.param_sets.size()));
    if (fresh) exe_.param_sets.push_back(std::move(ps));
    return it->second;
  }

  uint32_t config_index(const PeConfig& c) {
    auto [it, fresh] = config_ids_.emplace(std::tuple(c.program, c.param_set, c.route_set),
                                           static_cast<uint32_t>(exe_.pe_configs.size()));
    if (fresh) exe_.pe_configs.push_back(c);
    return it->second;
  }

  void link_rect(uint32_t r) {
    const PlannedRect& rect = plan_.rects[r];
    std::vector<int> programs;     // per param set
    std::vector<int32_t> globals;  // per param set: index into exe_.param_sets
    if (rect.program) {
      std::vector<bool> checked;
      for (size_t s = 0; s < rect.param_sets.size(); ++s) {
        int p = assemble(rect, s);
        if (p < 0) return;  // one failing assembly per rect is enough to report
        programs.push_back(p);
        globals.push_back(param_set_index(rect, s));
        if (std::find(programs.begin(), programs.end() - 1, p) == programs.end() - 1)
          check_program(rect, p, s);
      }
    }
    std::vector<uint32_t> route_sets;
    for (const auto& key : rect.route_keys) route_sets.push_back(route_set_index(key));
    Rect out{.name = rect.name, .x = rect.x, .y = rect.y, .width = rect.width, .height = rect.height, .runs = {}};
    // Configurations are few (distinct parameter sets x distinct route keys); cache per pair.
    std::unordered_map<uint64_t, uint32_t> cache;
    const size_t n = static_cast<size_t>(rect.width) * rect.height;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t set = rect.program ? rect.pe_param_set[i] : 0;
      const uint32_t key = rect.pe_route_key[i];
      summary_.routes += rect.route_keys[key].size();
      const uint64_t pair = (static_cast<uint64_t>(set) << 32) | key;
      auto it = cache.find(pair);
      if (it == cache.end()) {
        PeConfig c;
        if (rect.program) {
          c.program = programs[set];
          c.param_set = globals[set];
        }
        c.route_set = route_sets[key];
        it = cache.emplace(pair, config_index(c)).first;
      }
      if (!out.runs.empty() && out.runs.back().config == it->second) ++out.runs.back().count;
      else out.runs.push_back({1, it->second});
    }
    exe_.rects.push_back(std::move(out));
    for (const PlannedSymbol& ps : rect.symbols) {
      HostSymbol h;
      h.name = ps.ast->host_name;
      h.program_symbol = ps.ast->program_symbol;
      h.type = ps.ast->type;
      h.elems_per_pe = ps.elems_per_pe;
      h.rect = static_cast<uint32_t>(exe_.rects.size() - 1);
      h.host_readable = ps.ast->readable;
      h.host_writable = ps.ast->writable;
      h.indirect = ps.ast->indirect;
      exe_.symbols.push_back(std::move(h));
    }
    for (const ExportFunctionAst* f : rect.functions)
      exe_.functions.push_back(
          {f->host_name, f->program_function, static_cast<uint32_t>(exe_.rects.size() - 1)});
  }

  const LayoutPlan& plan_;
  const SourceText& source_;
  const BuildOptions& options_;
  std::vector<Diagnostic>& diags_;
  BuildSummary& summary_;
  Executable exe_;
  bool failed_ = false;
  std::unordered_map<std::string, int> assembled_;
  std::unordered_map<uint64_t, std::vector<int>> by_hash_;
  std::map<std::string, uint32_t> route_set_ids_;
  std::map<std::vector<std::pair<std::string, int64_t>>, int32_t> param_set_ids_;
  std::map<std::tuple<int32_t, int32_t, uint32_t>, uint32_t> config_ids_;
};

}  // namespace

BuildResult build_layout(std::string_view text, const std::string& file_name,
                         const BuildOptions& options) {
  BuildResult result;
  SourceText source(file_name, text);
  ParseOptions parse_options;
  parse_options.include_dirs = options.include_dirs;
  ParseResult parsed = parse_layout(source, text, parse_options);
  if (!parsed.errors.empty()) {
    result.diagnostics = std::move(parsed.errors);
    return result;
  }
  CheckOptions check_options;
  check_options.params = options.params;
  check_options.arch = options.arch;
  check_options.base_dir = std::filesystem::path(file_name).parent_path().string();
  CheckResult checked = check_layout(parsed.ast, source, check_options);
  const bool checked_ok = checked.ok();
  result.diagnostics = std::move(checked.diagnostics);
  if (!checked_ok) return result;
  result.executable =
      Linker(checked.plan, source, options, result.diagnostics, result.summary).run();
  return result;
}

BuildResult build_layout_file(const std::string& path, const BuildOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    BuildResult result;
    Diagnostic d;
    d.file = path;
    d.message = "cannot open the layout file: " + std::string(std::strerror(errno));
    result.diagnostics.push_back(std::move(d));
    return result;
  }
  std::stringstream text;
  text << in.rdbuf();
  return build_layout(text.str(), path, options);
}

std::string summary_line(const BuildSummary& s, const Executable& exe) {
  return fmt::format(
      "fabric {} x {} ({}): {} PE{} in {} rect{}, {} distinct program{} from {} assembl{}, "
      "{} route{}, SRAM max {} of {} bytes{}",
      exe.fabric_width, exe.fabric_height, exe.arch, s.placed_pes, s.placed_pes == 1 ? "" : "s",
      s.rects, s.rects == 1 ? "" : "s", s.programs, s.programs == 1 ? "" : "s", s.assemblies,
      s.assemblies == 1 ? "y" : "ies", s.routes, s.routes == 1 ? "" : "s", s.max_sram_bytes,
      kProgramSramLimit, s.max_sram_program.empty() ? "" : " (" + s.max_sram_program + ")");
}

}  // namespace wsemu::compiler::layout
