// Phase 4: instruction operands to encoded words.
#include <fmt/format.h>

#include <bit>
#include <cmath>

#include "isa/asm/assembler_impl.hpp"

namespace wsemu::isa::assembler {
namespace {

std::string kind_list(const InsnInfo& in) {
  std::string out;
  for (int i = 0; i < in.num_operands; ++i)
    out += fmt::format("{}{}", i ? ", " : "", operand_kind_name(in.operands[static_cast<size_t>(i)]));
  return out;
}

std::string_view kind_expectation(OperandKind k) {
  switch (k) {
    case OperandKind::REG: return "a scalar register r0..r15";
    case OperandKind::DSR: return "a descriptor register d0..d47 or a .dsd name";
    case OperandKind::VDST:
    case OperandKind::VSRC: return "a descriptor (d0..d47 or a .dsd name) or a scalar register r0..r15";
    case OperandKind::MEM: return "a memory operand [rN], [rN + offset] or [address]";
    case OperandKind::STR: return "a string literal \"...\"";
    default: return "a value";
  }
}

}  // namespace

bool Assembler::encode_instruction(const InsnStmt& is, uint64_t& word) {
  TokenCursor cur = cursor(is.stmt, is.operand_pos);
  if (!is.info) {  // .word
    int64_t v = 0;
    if (parse_integer(cur, *this, v) != Status::OK || !expect_end(cur, "the .word value")) return false;
    word = static_cast<uint64_t>(v);
    return true;
  }
  const InsnInfo& in = *is.info;
  Instruction insn;
  insn.op = in.id;
  std::array<int, kMaxOperands> cols{};
  const std::string mnem(in.mnemonic);

  auto lookup_dsd = [&](std::string_view name) -> std::optional<int> {
    if (auto d = parse_dsr_name(name)) return d;
    auto it = names_.find(std::string(name));
    if (it != names_.end() && it->second.kind == NameKind::DSD) {
      const int dsr = dsds_[it->second.index].dsr;
      return dsr < 0 ? std::optional<int>(0) : std::optional<int>(dsr);  // failed ones were reported
    }
    return std::nullopt;
  };

  for (int i = 0; i < in.num_operands; ++i) {
    const OperandKind kind = in.operands[static_cast<size_t>(i)];
    if (i > 0 && !cur.accept(",")) {
      if (cur.at_end())
        error(cur.col(), fmt::format("{} expects {} operands ({}), found {}", mnem, in.num_operands, kind_list(in), i));
      else
        error(cur.col(), fmt::format("expected ',' before operand {} of {}, found {}", i + 1, mnem, cur.describe_next()));
      return false;
    }
    if (cur.at_end()) {
      error(cur.col(), fmt::format("{} expects {} operands ({}), found {}", mnem, in.num_operands, kind_list(in), i));
      return false;
    }
    cols[static_cast<size_t>(i)] = cur.col();
    Operand& op = insn.operands[static_cast<size_t>(i)];
    const Token& t = *cur.peek();
    const bool ident = t.kind == TokenKind::IDENT;
    const bool standalone = ident && (cur.peek(1) == nullptr || cur.peek(1)->is(","));
    auto wrong = [&](std::string_view found) {
      error(t.col, fmt::format("operand {} of {} must be {}, not {}", i + 1, mnem, kind_expectation(kind), found));
      return false;
    };
    auto trailing = [&]() {
      error(cur.peek(1)->col, fmt::format("expected ',' after {}, found '{}'", t.text, cur.peek(1)->text.substr(0, 40)));
      return false;
    };
    auto describe = [&]() -> std::string {
      if (ident && parse_register(t.text)) return fmt::format("the scalar register {}", t.text);
      if (ident && lookup_dsd(t.text)) return fmt::format("the descriptor {}", t.text);
      if (t.kind == TokenKind::STRING) return "a string";
      if (t.is("[")) return "a memory operand";
      return fmt::format("'{}'", t.text.substr(0, 40));
    };
    switch (kind) {
      case OperandKind::REG:
      case OperandKind::DSR: {
        std::optional<int> index;
        if (ident) index = kind == OperandKind::REG ? parse_register(t.text) : lookup_dsd(t.text);
        if (index && !standalone) return trailing();
        if (!index) return wrong(describe());
        cur.next();
        op.value = *index;
        break;
      }
      case OperandKind::VDST:
      case OperandKind::VSRC: {
        if (ident && standalone) {
          if (auto r = parse_register(t.text)) {
            cur.next();
            op.is_reg = true;
            op.value = *r;
            break;
          }
          if (auto d = lookup_dsd(t.text)) {
            cur.next();
            op.value = *d;
            break;
          }
        }
        if (ident && !standalone && (parse_register(t.text) || lookup_dsd(t.text))) return trailing();
        return wrong(describe());
      }
      case OperandKind::REG_OR_IMM:
        if (ident && standalone && parse_register(t.text)) {
          cur.next();
          op.is_reg = true;
          op.value = *parse_register(t.text);
          break;
        }
        if (parse_integer(cur, *this, op.value) != Status::OK) return false;
        break;
      case OperandKind::MEM: {
        if (!t.is("[")) return wrong(describe());
        cur.next();
        const Token* b = cur.peek();
        if (b && b->kind == TokenKind::IDENT && parse_register(b->text)) {
          op.is_reg = true;
          op.reg = static_cast<uint8_t>(*parse_register(b->text));
          cur.next();
          if (cur.accept("+")) {
            if (parse_integer(cur, *this, op.value) != Status::OK) return false;
          } else if (cur.accept("-")) {
            int64_t off = 0;
            if (parse_integer(cur, *this, off) != Status::OK) return false;
            op.value = static_cast<int64_t>(0 - static_cast<uint64_t>(off));
          }
        } else {
          if (b && b->kind == TokenKind::IDENT && lookup_dsd(b->text)) {
            error(b->col, "a memory operand takes a scalar base register, not a descriptor");
            return false;
          }
          if (parse_integer(cur, *this, op.value) != Status::OK) return false;
        }
        if (!expect_punct(cur, "]", "to close the memory operand")) return false;
        break;
      }
      case OperandKind::IMM32: {
        Value v;
        if (parse_expression(cur, *this, v) != Status::OK) return false;
        if (v.kind == Value::Kind::FLOAT) {
          const float f = static_cast<float>(v.f);
          if (!std::isfinite(f)) {
            error(t.col, fmt::format("value {} is out of range for fp32", v.f));
            return false;
          }
          op.value = std::bit_cast<uint32_t>(f);
        } else {
          op.value = v.i;
        }
        break;
      }
      case OperandKind::TASKID:
        if (parse_task_ref(cur, *this, op.value) != Status::OK) return false;
        break;
      case OperandKind::LABEL:
        if (ident && standalone) {
          auto it = names_.find(std::string(t.text));
          if (it != names_.end() && it->second.kind == NameKind::DATA) {
            error(t.col, fmt::format("'{}' is a data symbol, not a code label", t.text));
            return false;
          }
        }
        if (parse_integer(cur, *this, op.value) != Status::OK) return false;
        break;
      case OperandKind::STR: {
        if (t.kind != TokenKind::STRING) return wrong(describe());
        cur.next();
        auto [it, inserted] = string_index_.try_emplace(t.str, static_cast<uint16_t>(strings_.size()));
        if (inserted) {
          if (strings_.size() >= 65536) {
            error(t.col, "too many distinct strings (at most 65536)");
            return false;
          }
          strings_.push_back(t.str);
        }
        op.value = it->second;
        break;
      }
      default:
        if (ident && standalone && (parse_register(t.text) || lookup_dsd(t.text))) return wrong(describe());
        if (parse_integer(cur, *this, op.value) != Status::OK) return false;
        break;
    }
  }

  // Trailing options of vector operations.
  int options_col = 0;
  bool have_ut = false, have_done = false, have_priority = false;
  while (cur.accept(",")) {
    const Token* key = cur.peek();
    if (!is_vector(in.timing)) {
      error(key ? key->col : cur.col(),
            fmt::format("too many operands: {} takes {} ({})", mnem, in.num_operands, kind_list(in)));
      return false;
    }
    if (!key || key->kind != TokenKind::IDENT || !cur.peek(1) || !cur.peek(1)->is("=") ||
        (key->text != "ut" && key->text != "priority" && key->text != "activate" && key->text != "unblock")) {
      error(cur.col(), fmt::format("expected ut=N, priority=P, activate=TASK or unblock=TASK after the operands of {} "
                                   "(it takes {} operands), found {}",
                                   mnem, in.num_operands, cur.describe_next()));
      return false;
    }
    if (!options_col) options_col = key->col;
    cur.next();
    cur.next();
    int64_t v = 0;
    if (key->text == "ut") {
      if (have_ut) {
        error(key->col, "ut= is given twice");
        return false;
      }
      have_ut = true;
      if (!parse_int_in(cur, 0, 7, "microthread", v)) return false;
      insn.async.microthread = static_cast<uint8_t>(v);
    } else if (key->text == "priority") {
      const Token* level = cur.peek();
      if (have_priority) {
        error(key->col, "priority= is given twice");
        return false;
      }
      have_priority = true;
      if (!level || !(level->is_ident("high") || level->is_ident("medium") || level->is_ident("low"))) {
        error(cur.col(), fmt::format("priority= takes high, medium or low, found {}", cur.describe_next()));
        return false;
      }
      insn.async.priority = level->text == "high" ? Priority::HIGH : level->text == "medium" ? Priority::MEDIUM : Priority::LOW;
      cur.next();
    } else {
      if (have_done) {
        error(key->col, "only one of activate= and unblock= may be given");
        return false;
      }
      have_done = true;
      if (!parse_task_in(cur, "completion task", v)) return false;
      insn.async.on_done = key->text == "activate" ? OnDone::ACTIVATE : OnDone::UNBLOCK;
      insn.async.task = static_cast<uint8_t>(v);
    }
  }
  if (!cur.at_end()) {
    error(cur.col(), fmt::format("unexpected {} after the operands of {}", cur.describe_next(), mnem));
    return false;
  }
  if (options_col && !is.async) {
    error(options_col, fmt::format("ut=, priority=, activate= and unblock= need the asynchronous form: {}.async", mnem));
    return false;
  }
  insn.async.async = is.async;

  for (int i = 0; i < in.num_operands; ++i) {
    Instruction one;
    one.op = insn.op;
    one.operands[static_cast<size_t>(i)] = insn.operands[static_cast<size_t>(i)];
    std::string problem = validate(one);
    if (!problem.empty()) {
      error(cols[static_cast<size_t>(i)], problem);
      return false;
    }
  }
  std::string problem = validate(insn);
  if (!problem.empty()) {
    error(options_col ? options_col : is.mnemonic_col, problem);
    return false;
  }
  word = encode(insn);
  return true;
}

void Assembler::encode_instructions() {
  code_.reserve(instructions_.size());
  for (const InsnStmt& is : instructions_) {
    if (too_many_errors()) break;
    set_stmt(is.stmt);
    uint64_t word = 0;
    encode_instruction(is, word);
    code_.push_back(word);
    source_lines_.push_back(static_cast<uint32_t>(statements_[is.stmt].line));
  }
}

}  // namespace wsemu::isa::assembler
