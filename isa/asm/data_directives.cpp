// Phase 1: data directives (.i16 .u16 .i32 .u32 .f16 .f32, .align). Values are evaluated later
// (layout.cpp), once every address is known, so a table may hold addresses of later symbols.
#include <fmt/format.h>

#include "isa/asm/assembler_impl.hpp"

namespace wsemu::isa::assembler {

void Assembler::directive_data(size_t s, TokenCursor& cur, ElemType type, int directive_col,
                               std::vector<PendingLabel>& labels) {
  DataItem item;
  item.stmt = s;
  item.type = type;
  const size_t item_index = data_items_.size();
  bool complete = true;
  if (cur.peek_is("[")) {
    cur.next();
    if (cur.at_end() || cur.peek_is("]")) {
      error(cur.col(), fmt::format("expected an element count in .{}[...]", elem_type_name(type)));
      return;
    }
    item.kind = DataItem::Kind::ZERO;
    item.count_pos = cur.pos();
  } else if (cur.at_end()) {
    error(cur.col(), fmt::format(".{} needs values (.{} 1, 2, 3) or a zero-filled count (.{} [N])",
                                 elem_type_name(type), elem_type_name(type), elem_type_name(type)));
    return;
  } else {
    item.kind = DataItem::Kind::VALUES;
    complete = collect_values(item, s, cur.pos());
  }
  (void)directive_col;
  // Labels waiting in .data, then those on this line, all name this item.
  std::vector<PendingLabel> names = std::move(pending_data_labels_);
  pending_data_labels_.clear();
  for (PendingLabel& l : labels) names.push_back(std::move(l));
  labels.clear();
  for (const PendingLabel& l : names) {
    set_stmt(l.stmt);
    DataSymbol sym;
    sym.symbol.name = l.name;
    sym.symbol.type = type;
    sym.item = item_index;
    sym.stmt = l.stmt;
    if (define_name(l.name, NameKind::DATA, data_symbols_.size(), l.stmt, l.col)) {
      item.symbols.push_back(data_symbols_.size());
      data_symbols_.push_back(std::move(sym));
    }
  }
  set_stmt(s);
  data_items_.push_back(std::move(item));
  if (!complete) continued_item_ = item_index;
}

bool Assembler::collect_values(DataItem& item, size_t s, size_t pos) {
  const std::vector<Token>& toks = statements_[s].tokens;
  int depth = 0;
  bool expect_value = true;
  for (size_t i = pos; i < toks.size(); ++i) {
    const Token& t = toks[i];
    if (expect_value) {
      if (t.is(",")) {
        error(t.col, "missing value before ','");
        return true;
      }
      item.value_pos.emplace_back(s, i);
      expect_value = false;
    }
    if (t.is("(") || t.is("[")) ++depth;
    else if ((t.is(")") || t.is("]")) && depth > 0) --depth;
    else if (t.is(",") && depth == 0) expect_value = true;
  }
  return !expect_value;  // a trailing ',' continues the list on the next line
}

void Assembler::continue_values(size_t s) {
  DataItem& item = data_items_[*continued_item_];
  const std::vector<Token>& toks = statements_[s].tokens;
  if (!toks.empty() && toks[0].kind == TokenKind::IDENT &&
      (toks[0].text.starts_with(".") || (toks.size() > 1 && toks[1].is(":")))) {
    error(toks[0].col, "expected more data values after the ',' that ended the previous line");
    continued_item_.reset();
    return;
  }
  if (!collect_values(item, s, 0)) return;  // continues further
  continued_item_.reset();
}

void Assembler::directive_align(size_t s, TokenCursor& cur) {
  if (section_ != Section::DATA) {
    error(statements_[s].tokens[cur.pos() - 1].col, ".align belongs in the .data section");
    return;
  }
  if (cur.at_end()) {
    error(cur.col(), ".align needs a power of two: .align 8");
    return;
  }
  DataItem item;
  item.kind = DataItem::Kind::ALIGN;
  item.stmt = s;
  item.count_pos = cur.pos();
  data_items_.push_back(std::move(item));
}

}  // namespace wsemu::isa::assembler
