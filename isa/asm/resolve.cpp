// Phase 3: tasks, descriptors, queue bindings and exports, now that every address is known.
#include <fmt/format.h>

#include <map>

#include "isa/asm/assembler_impl.hpp"

namespace wsemu::isa::assembler {
namespace {

struct DsdSyntax {
  std::string_view kind;
  std::string_view usage;
};
constexpr DsdSyntax kDsdKinds[] = {
    {"mem1d", "mem1d(base, length[, stride])"},
    {"mem4d", "mem4d(base, [e0, e1, e2, e3], [s0, s1, s2, s3])"},
    {"circbuf", "circbuf(buf, length)"},
    {"fabin", "fabin(color, queue, length[, on_control=terminate|activate:TASK|unblock:TASK])"},
    {"fabout", "fabout(color, queue, length[, control=1][, index=N][, advance_switch=1])"},
    {"fifo", "fifo(buf, capacity[, activate_push=TASK][, activate_pop=TASK])"},
};

}  // namespace

void Assembler::resolve_task(TaskDecl& t) {
  t.busy = true;
  set_stmt(t.stmt);
  TokenCursor cur = cursor(t.stmt, t.kind_pos);
  TaskBinding& b = t.binding;
  const bool wse3 = effective_arch() == "wse3";
  auto fail = [&] {
    t.busy = false;
    t.failed = true;
  };
  const Token* kind = cur.peek();
  if (!kind || kind->kind != TokenKind::IDENT ||
      (kind->text != "data" && kind->text != "local" && kind->text != "control")) {
    error(cur.col(), fmt::format("expected a task kind (data, local or control), found {}", cur.describe_next()));
    return fail();
  }
  cur.next();
  if (!expect_punct(cur, ",", fmt::format("after the task kind '{}'", kind->text))) return fail();
  int64_t id = 0;
  if (kind->text == "data") {
    b.kind = TaskKind::DATA;
    const Token* trig = cur.peek();
    if (!trig || trig->kind != TokenKind::IDENT || (trig->text != "color" && trig->text != "queue")) {
      error(cur.col(), fmt::format("a data task names its trigger: 'color C' (wse2) or 'queue Q' (wse3); found {}",
                                   cur.describe_next()));
      return fail();
    }
    const bool by_queue = trig->text == "queue";
    if (by_queue != wse3) {
      error(trig->col, wse3 ? "on wse3 a data task is triggered by an input queue: .task NAME, data, queue Q"
                            : "on wse2 a data task is triggered by a color: .task NAME, data, color C "
                              "(queue-triggered data tasks need .arch wse3)");
      return fail();
    }
    cur.next();
    if (!parse_int_in(cur, 0, by_queue ? kNumQueues - 1 : 23, by_queue ? "input queue" : "color", id))
      return fail();
    b.trigger = static_cast<uint8_t>(id);
    b.trigger_is_queue = by_queue;
  } else if (kind->text == "local") {
    b.kind = TaskKind::LOCAL;
    if (!parse_int_in(cur, wse3 ? 8 : 0, 30, wse3 ? "local task id (wse3)" : "local task id (wse2)", id))
      return fail();
  } else {
    b.kind = TaskKind::CONTROL;
    if (!parse_int_in(cur, 0, kNumTaskIds - 1, "control task id", id)) return fail();
  }
  b.id = static_cast<uint8_t>(id);
  // Flags, in any order: `blocked` (starts blocked), `activated` (a local task activated at load).
  while (cur.accept(",")) {
    const Token* flag = cur.peek();
    if (!flag || (!flag->is_ident("blocked") && !flag->is_ident("activated"))) {
      error(cur.col(), fmt::format("expected 'blocked' or 'activated', found {}", cur.describe_next()));
      return fail();
    }
    bool& set = flag->text == "blocked" ? b.starts_blocked : b.starts_activated;
    if (set) {
      error(flag->col, fmt::format("'{}' is given twice", flag->text));
      return fail();
    }
    if (flag->text == "activated" && b.kind != TaskKind::LOCAL) {
      error(flag->col, "only a local task starts activated (a data task is activated by its wavelets, a control task by a control wavelet)");
      return fail();
    }
    set = true;
    cur.next();
  }
  if (!expect_end(cur, "the task declaration")) return fail();
  t.busy = false;
  t.resolved = true;
}

void Assembler::resolve_tasks() {
  std::map<int, size_t> by_id;
  for (TaskDecl& t : tasks_) {
    if (!t.resolved && !t.failed) resolve_task(t);
    if (!t.resolved) continue;
    set_stmt(t.stmt);
    auto [it, inserted] = by_id.try_emplace(t.binding.id, &t - tasks_.data());
    if (!inserted) {
      error(t.name_col, fmt::format("task id {} is already used by task '{}'", t.binding.id,
                                    tasks_[it->second].name));
      continue;
    }
    auto name = names_.find(t.name);
    if (name == names_.end()) continue;  // reported by define_task_labels
    if (name->second.kind != NameKind::CODE) {
      error(t.name_col, fmt::format("task '{}' must name a code label, but '{}' is not one", t.name, t.name));
      continue;
    }
    t.binding.entry = code_labels_[name->second.index].index;
  }
}

bool Assembler::resolve_dsd(DsdDecl& d) {
  set_stmt(d.stmt);
  TokenCursor cur = cursor(d.stmt, d.kind_pos);
  const Token& kind_tok = cur.next();
  std::string_view kind = kind_tok.text;
  int width = 0;  // 0: not given
  if (const size_t dot = kind.find('.'); dot != std::string_view::npos) {
    const std::string_view suffix = kind.substr(dot + 1);
    kind = kind.substr(0, dot);
    if (suffix == "16") width = 16;
    else if (suffix == "32") width = 32;
    else {
      error(kind_tok.col, fmt::format("element width suffix '.{}' must be .16 or .32", suffix));
      return false;
    }
  }
  const DsdSyntax* syntax = nullptr;
  for (const DsdSyntax& k : kDsdKinds)
    if (k.kind == kind) syntax = &k;
  if (!syntax) {
    error(kind_tok.col, fmt::format("unknown descriptor kind '{}' (mem1d, mem4d, circbuf, fabin, fabout, fifo)", kind));
    return false;
  }
  Descriptor& v = d.value;
  auto usage = [&] { return fmt::format("in {}", syntax->usage); };
  if (!expect_punct(cur, "(", usage())) return false;

  // The width of a memory descriptor comes from the first data symbol its base names.
  auto base_arg = [&](std::string_view what) -> bool {
    const std::vector<Token>& toks = statements_[d.stmt].tokens;
    int symbol_width = 0;
    int depth = 0;
    for (size_t i = cur.pos(); i < toks.size() && symbol_width == 0; ++i) {
      if (toks[i].is("(") || toks[i].is("[")) ++depth;
      if ((toks[i].is(")") || toks[i].is("]")) && depth-- == 0) break;
      if (toks[i].is(",") && depth == 0) break;
      if (toks[i].kind != TokenKind::IDENT) continue;
      auto it = names_.find(std::string(toks[i].text));
      if (it != names_.end() && it->second.kind == NameKind::DATA)
        symbol_width = elem_bytes(data_symbols_[it->second.index].symbol.type) * 8;
    }
    int64_t base = 0;
    if (!parse_int_in(cur, 0, kAddressSpace - 1, what, base)) return false;
    v.base = static_cast<uint16_t>(base);
    v.elem_bits = static_cast<uint8_t>(width ? width : symbol_width ? symbol_width : 32);
    return true;
  };
  auto comma = [&] { return expect_punct(cur, ",", usage()); };
  int64_t n = 0;

  if (kind == "mem1d") {
    v.kind = DsdKind::MEM1D;
    if (!base_arg("base address") || !comma() || !parse_int_in(cur, 0, 65535, "length", n)) return false;
    v.length = static_cast<uint32_t>(n);
    if (cur.accept(",")) {
      if (!parse_int_in(cur, -32768, 32767, "stride", n)) return false;
      v.stride = static_cast<int16_t>(n);
    }
  } else if (kind == "mem4d") {
    v.kind = DsdKind::MEM4D;
    if (!base_arg("base address") || !comma()) return false;
    for (int list = 0; list < 2; ++list) {
      if (list == 1 && !comma()) return false;
      if (!expect_punct(cur, "[", list == 0 ? "before the extents" : "before the strides")) return false;
      int k = 0;
      do {
        if (k == 4) {
          error(cur.col(), "mem4d has at most 4 dimensions");
          return false;
        }
        if (list == 0) {
          if (!parse_int_in(cur, 0, 65535, "extent", n)) return false;
          v.extents[static_cast<size_t>(k)] = static_cast<uint16_t>(n);
        } else {
          if (!parse_int_in(cur, -32768, 32767, "stride", n)) return false;
          v.strides[static_cast<size_t>(k)] = static_cast<int16_t>(n);
        }
        ++k;
      } while (cur.accept(","));
      // Unused outer dimensions run once.
      for (int j = k; j < 4 && list == 0; ++j) v.extents[static_cast<size_t>(j)] = 1;
      if (!expect_punct(cur, "]", list == 0 ? "after the extents" : "after the strides")) return false;
    }
  } else if (kind == "circbuf") {
    v.kind = DsdKind::CIRCBUF;
    if (!base_arg("buffer address") || !comma() || !parse_int_in(cur, 0, 65535, "length", n)) return false;
    v.length = static_cast<uint32_t>(n);
  } else if (kind == "fifo") {
    v.kind = DsdKind::FIFO;
    if (!base_arg("buffer address") || !comma() || !parse_int_in(cur, 0, 65535, "capacity", n)) return false;
    v.length = static_cast<uint32_t>(n);
    while (cur.accept(",")) {
      const Token* key = cur.peek();
      if (!key || key->kind != TokenKind::IDENT || (key->text != "activate_push" && key->text != "activate_pop")) {
        error(cur.col(), fmt::format("expected activate_push=TASK or activate_pop=TASK, found {}", cur.describe_next()));
        return false;
      }
      cur.next();
      if (!expect_punct(cur, "=", fmt::format("after {}", key->text))) return false;
      if (!parse_task_in(cur, "task id", n)) return false;
      (key->text == "activate_push" ? v.activate_on_push : v.activate_on_pop) = static_cast<int8_t>(n);
    }
  } else {  // fabin, fabout
    const bool out = kind == "fabout";
    v.kind = out ? DsdKind::FABOUT : DsdKind::FABIN;
    v.elem_bits = static_cast<uint8_t>(width ? width : 32);
    const int max_queue = out && effective_arch() == "wse2" ? 5 : kNumQueues - 1;
    if (!parse_int_in(cur, 0, 23, "color", n)) return false;
    v.color = static_cast<uint8_t>(n);
    if (!comma() || !parse_int_in(cur, 0, max_queue, out ? "output queue" : "input queue", n)) return false;
    v.queue = static_cast<uint8_t>(n);
    if (!comma() || !parse_int_in(cur, 0, 65535, "length", n)) return false;
    v.length = static_cast<uint32_t>(n);
    while (cur.accept(",")) {
      const Token* key = expect_name(cur, "expected an option name,");
      if (!key) return false;
      if (!expect_punct(cur, "=", fmt::format("after {}", key->text))) return false;
      if (!out && key->text == "on_control") {
        const Token* action = cur.peek();
        if (action && action->is_ident("terminate")) {
          cur.next();
          v.on_control = OnControl::TERMINATE;
        } else if (action && (action->is_ident("activate") || action->is_ident("unblock"))) {
          cur.next();
          if (!expect_punct(cur, ":", fmt::format("after on_control={} (then the task)", action->text))) return false;
          if (!parse_task_in(cur, "task id", n)) return false;
          v.on_control = action->text == "activate" ? OnControl::ACTIVATE : OnControl::UNBLOCK;
          v.on_control_task = static_cast<uint8_t>(n);
        } else {
          error(cur.col(), fmt::format("on_control takes terminate, activate:TASK or unblock:TASK, found {}",
                                       cur.describe_next()));
          return false;
        }
      } else if (out && (key->text == "control" || key->text == "advance_switch")) {
        if (!parse_int_in(cur, 0, 1, key->text, n)) return false;
        (key->text == "control" ? v.control : v.advance_switch) = n != 0;
      } else if (out && key->text == "index") {
        if (!parse_int_in(cur, -1, 65535, "wavelet index", n)) return false;
        v.index = static_cast<int32_t>(n);
      } else {
        error(key->col, fmt::format("unknown {} option '{}' ({})", kind, key->text,
                                    out ? "control=, index=, advance_switch=" : "on_control="));
        return false;
      }
    }
  }
  if (!expect_punct(cur, ")", usage())) return false;
  if (cur.accept("@")) {
    const Token* reg = cur.peek();
    std::optional<int> dsr = reg && reg->kind == TokenKind::IDENT ? parse_dsr_name(reg->text) : std::nullopt;
    if (!dsr) {
      error(cur.col(), fmt::format("expected a descriptor register d0..d47 after '@', found {}", cur.describe_next()));
      return false;
    }
    d.explicit_dsr_col = reg->col;
    cur.next();
    d.explicit_dsr = *dsr;
  }
  return expect_end(cur, "the descriptor");
}

void Assembler::resolve_dsds() {
  std::vector<int> owner(kNumDsrs, -1);
  std::vector<bool> ok(dsds_.size(), false);
  for (size_t i = 0; i < dsds_.size(); ++i) {
    DsdDecl& d = dsds_[i];
    ok[i] = resolve_dsd(d);
    if (!ok[i] || d.explicit_dsr < 0) continue;
    int& o = owner[static_cast<size_t>(d.explicit_dsr)];
    if (o >= 0) {
      error(d.explicit_dsr_col,
            fmt::format("d{} is already given to descriptor '{}'", d.explicit_dsr, dsds_[static_cast<size_t>(o)].name));
      ok[i] = false;
      continue;
    }
    o = static_cast<int>(i);
    d.dsr = d.explicit_dsr;
  }
  int next = 0;
  for (size_t i = 0; i < dsds_.size(); ++i) {
    DsdDecl& d = dsds_[i];
    if (!ok[i] || d.explicit_dsr >= 0) continue;
    while (next < kNumDsrs && owner[static_cast<size_t>(next)] >= 0) ++next;
    if (next == kNumDsrs) {
      set_stmt(d.stmt);
      error(statements_[d.stmt].tokens.front().col,
            fmt::format("out of descriptor registers: all {} are taken when '{}' is declared", kNumDsrs, d.name));
      continue;
    }
    owner[static_cast<size_t>(next)] = static_cast<int>(i);
    d.dsr = next;
  }
}

void Assembler::resolve_queues() {
  std::map<std::pair<bool, int>, size_t> seen;
  for (const QueueDecl& q : queue_decls_) {
    set_stmt(q.stmt);
    TokenCursor cur = cursor(q.stmt, q.pos);
    const int qcol = cur.col();
    int64_t queue = 0, color = 0;
    const int max_queue = q.output && effective_arch() == "wse2" ? 5 : kNumQueues - 1;
    if (!parse_int_in(cur, 0, max_queue, q.output ? "output queue" : "input queue", queue)) continue;
    if (!expect_punct(cur, ",", "between the queue and the color")) continue;
    if (!parse_int_in(cur, 0, 23, "color", color)) continue;
    if (!expect_end(cur, "the queue binding")) continue;
    auto [it, inserted] = seen.try_emplace({q.output, static_cast<int>(queue)}, q.stmt);
    if (!inserted) {
      const Statement& prev = statements_[it->second];
      error(qcol, fmt::format("{} queue {} is already bound at {}:{}", q.output ? "output" : "input", queue,
                              files_[static_cast<size_t>(prev.file)].name, prev.line));
      continue;
    }
    queues_.push_back({q.output, static_cast<uint8_t>(queue), static_cast<uint8_t>(color)});
  }
}

// `.unblock ID`: an id with no data or local task that starts unblocked. An id a data or local
// task binds says so on its `.task` line (`, blocked` or not), so naming it here is an error.
void Assembler::resolve_unblocks() {
  std::map<int, size_t> seen;
  for (const UnblockDecl& u : unblock_decls_) {
    set_stmt(u.stmt);
    TokenCursor cur = cursor(u.stmt, u.pos);
    const int col = cur.col();
    int64_t id = 0;
    if (!parse_int_in(cur, 0, kNumTaskIds - 1, "task id", id)) continue;
    if (!expect_end(cur, "the .unblock")) continue;
    bool bound = false;
    for (const TaskDecl& t : tasks_)
      if (t.binding.kind != TaskKind::CONTROL && t.binding.id == id) bound = true;
    if (bound) {
      error(col, fmt::format(".unblock {}: a data or local task is bound to id {}; its .task line says whether it "
                             "starts blocked",
                             id, id));
      continue;
    }
    if (!seen.try_emplace(static_cast<int>(id), u.stmt).second) {
      const Statement& prev = statements_[seen[static_cast<int>(id)]];
      error(col, fmt::format("task id {} is already unblocked at {}:{}", id,
                             files_[static_cast<size_t>(prev.file)].name, prev.line));
      continue;
    }
    unblocked_ids_.push_back(static_cast<uint8_t>(id));
  }
}

void Assembler::resolve_exports() {
  for (const ExportDecl& e : exports_) {
    set_stmt(e.stmt);
    auto it = names_.find(e.name);
    if (it == names_.end()) {
      error(e.col, fmt::format("cannot export '{}': it is not defined", e.name));
      continue;
    }
    switch (it->second.kind) {
      case NameKind::DATA: data_symbols_[it->second.index].symbol.exported = true; break;
      case NameKind::CODE: code_labels_[it->second.index].exported = true; break;
      default:
        error(e.col, fmt::format("cannot export '{}': only data symbols and code labels (functions) can be exported",
                                 e.name));
    }
  }
}

}  // namespace wsemu::isa::assembler
