// Name resolution for expressions: constants, parameters, addresses, labels, tasks.
#include <fmt/format.h>

#include <charconv>

#include "isa/asm/assembler_impl.hpp"

namespace wsemu::isa::assembler {
namespace {

std::optional<int> numbered(std::string_view name, char prefix, int count) {
  if (name.size() < 2 || name.size() > 3 || name[0] != prefix) return std::nullopt;
  if (name.size() == 3 && name[1] == '0') return std::nullopt;  // no "r01"
  int v = 0;
  auto [end, ec] = std::from_chars(name.data() + 1, name.data() + name.size(), v);
  if (ec != std::errc{} || end != name.data() + name.size() || v < 0 || v >= count) return std::nullopt;
  return v;
}

}  // namespace

std::optional<int> parse_register(std::string_view name) { return numbered(name, 'r', kNumRegs); }
std::optional<int> parse_dsr_name(std::string_view name) { return numbered(name, 'd', kNumDsrs); }

bool is_register_name(std::string_view name) {
  return parse_register(name).has_value() || parse_dsr_name(name).has_value();
}

std::optional<int64_t> builtin_constant(std::string_view name) {
  if (name == "NOP") return 0;
  if (name == "SWITCH_ADV") return 1;
  if (name == "SWITCH_RST") return 2;
  if (name == "TEARDOWN") return 3;
  return std::nullopt;
}

Status Assembler::name_value(const Token& tok, Value& out) {
  const std::string_view name = tok.text;
  if (auto c = builtin_constant(name)) {
    out = Value::integer(*c);
    return Status::OK;
  }
  if (auto r = parse_register(name)) {
    error(tok.col, fmt::format("register '{}' cannot be used in an expression", name));
    return Status::FAILED;
  }
  if (auto d = parse_dsr_name(name)) {
    error(tok.col, fmt::format("descriptor register '{}' cannot be used in an expression", name));
    return Status::FAILED;
  }
  auto it = names_.find(std::string(name));
  if (it == names_.end()) {
    if (!include_failed_) error(tok.col, fmt::format("undefined symbol '{}'", name.substr(0, 80)));
    return Status::FAILED;
  }
  const NameEntry& e = it->second;
  switch (e.kind) {
    case NameKind::EQU: {
      EquDef& equ = equs_[e.index];
      Status s = evaluate_equ(equ, tok.col);
      if (s == Status::OK) out = equ.value;
      return s;
    }
    case NameKind::PARAM:
      if (params_[e.index].missing) return Status::FAILED;
      out = Value::integer(params_[e.index].value);
      return Status::OK;
    case NameKind::DATA: {
      const DataSymbol& d = data_symbols_[e.index];
      if (!d.laid_out) return layout_done_ ? Status::FAILED : Status::NOT_YET;
      out = Value::integer(d.symbol.address);
      return Status::OK;
    }
    case NameKind::CODE:
      out = Value::integer(code_labels_[e.index].index);
      return Status::OK;
    case NameKind::DSD:
      error(tok.col, fmt::format("'{}' is a descriptor: it has no numeric value (use it as an operand)", name));
      return Status::FAILED;
  }
  return Status::FAILED;
}

Status Assembler::size_of(const Token& tok, int64_t& out) {
  auto it = names_.find(std::string(tok.text));
  if (it == names_.end()) {
    if (!include_failed_) error(tok.col, fmt::format("undefined symbol '{}'", tok.text.substr(0, 80)));
    return Status::FAILED;
  }
  if (it->second.kind != NameKind::DATA) {
    error(tok.col, fmt::format("sizeof() needs a data symbol; '{}' is not one", tok.text));
    return Status::FAILED;
  }
  const DataSymbol& d = data_symbols_[it->second.index];
  if (!d.laid_out) return layout_done_ ? Status::FAILED : Status::NOT_YET;
  out = static_cast<int64_t>(d.symbol.count) * elem_bytes(d.symbol.type);
  return Status::OK;
}

std::optional<int64_t> Assembler::task_id(std::string_view name) {
  auto it = task_index_.find(std::string(name));
  if (it == task_index_.end()) return std::nullopt;
  TaskDecl& t = tasks_[it->second];
  if (!t.resolved && !t.busy && !t.failed) {
    const size_t keep = cur_stmt_;
    resolve_task(t);
    set_stmt(keep);
  }
  return t.binding.id;  // 0 after a failure, which was reported at the .task line
}

Status Assembler::evaluate_equ(EquDef& equ, int use_col) {
  switch (equ.state) {
    case EquDef::State::DONE: return Status::OK;
    case EquDef::State::FAILED: return Status::FAILED;
    case EquDef::State::BUSY:
      error(use_col, fmt::format("constant '{}' is defined in terms of itself", equ.name));
      equ.state = EquDef::State::FAILED;
      return Status::FAILED;
    case EquDef::State::NEW: break;
  }
  if (equ_depth_ >= kMaxConstantDepth) {
    error(use_col, fmt::format("constants defined through more than {} other constants", kMaxConstantDepth));
    return Status::FAILED;
  }
  const size_t keep = cur_stmt_;
  set_stmt(equ.stmt);
  equ.state = EquDef::State::BUSY;
  ++equ_depth_;
  TokenCursor cur = cursor(equ.stmt, equ.expr_pos);
  Value v;
  Status s = parse_expression(cur, *this, v);
  if (s == Status::OK && !expect_end(cur, fmt::format("the value of '{}'", equ.name))) s = Status::FAILED;
  --equ_depth_;
  set_stmt(keep);
  if (equ.state == EquDef::State::FAILED) return Status::FAILED;  // a cycle through it
  switch (s) {
    case Status::OK:
      equ.value = v;
      equ.state = EquDef::State::DONE;
      break;
    case Status::FAILED: equ.state = EquDef::State::FAILED; break;
    case Status::NOT_YET: equ.state = EquDef::State::NEW; break;
  }
  return s;
}

bool Assembler::parse_in_range(TokenCursor& cur, Status (*parse)(TokenCursor&, ExprContext&, int64_t&), int64_t lo,
                               int64_t hi, std::string_view what, int64_t& out) {
  const int col = cur.col();
  Status s = parse(cur, *this, out);
  if (s == Status::NOT_YET) {
    error(col, fmt::format("{} uses an address that is not known yet", what));
    return false;
  }
  if (s != Status::OK) return false;
  if (out < lo || out > hi) {
    error(col, fmt::format("{} {} is outside {}..{}", what, out, lo, hi));
    return false;
  }
  return true;
}

bool Assembler::parse_int_in(TokenCursor& cur, int64_t lo, int64_t hi, std::string_view what, int64_t& out) {
  return parse_in_range(cur, parse_integer, lo, hi, what, out);
}

bool Assembler::parse_task_in(TokenCursor& cur, std::string_view what, int64_t& out) {
  return parse_in_range(cur, parse_task_ref, 0, kNumTaskIds - 1, what, out);
}

}  // namespace wsemu::isa::assembler
