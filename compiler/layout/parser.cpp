#include "compiler/layout/parser.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include "compiler/layout/parser_internal.hpp"

namespace wsemu::compiler::layout {
namespace detail {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

ExprPtr make(ExprOp op, Loc loc) {
  auto e = std::make_unique<Expr>();
  e->op = op;
  e->loc = loc;
  return e;
}
ExprPtr binary(ExprOp op, Loc loc, ExprPtr a, ExprPtr b) {
  auto e = make(op, loc);
  e->args.push_back(std::move(a));
  e->args.push_back(std::move(b));
  return e;
}

struct BinOp {
  std::string_view text;
  ExprOp op;
};
// Lowest precedence first, as in C.
const std::vector<std::vector<BinOp>>& levels() {
  static const std::vector<std::vector<BinOp>> kLevels = {
      {{"||", ExprOp::OR}},
      {{"&&", ExprOp::AND}},
      {{"|", ExprOp::BITOR}},
      {{"^", ExprOp::BITXOR}},
      {{"&", ExprOp::BITAND}},
      {{"==", ExprOp::EQ}, {"!=", ExprOp::NE}},
      {{"<", ExprOp::LT}, {"<=", ExprOp::LE}, {">", ExprOp::GT}, {">=", ExprOp::GE}},
      {{"<<", ExprOp::SHL}, {">>", ExprOp::SHR}},
      {{"+", ExprOp::ADD}, {"-", ExprOp::SUB}},
      {{"*", ExprOp::MUL}, {"/", ExprOp::DIV}, {"%", ExprOp::MOD}},
  };
  return kLevels;
}

}  // namespace

std::string describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::IDENT: return "'" + t.text + "'";
    case TokenKind::NUMBER: return "number " + std::to_string(t.value);
    case TokenKind::STRING: return "string \"" + t.text + "\"";
    case TokenKind::PUNCT: return "'" + t.text + "'";
    case TokenKind::END: return "end of file";
    case TokenKind::ERROR: return t.text;
  }
  return "?";
}

// Skips to the next token that can start a statement of the current block, at the current
// brace depth. With stop_at_close, also stops before the '}' that closes the block.
void Parser::sync(std::span<const std::string_view> keywords, bool stop_at_close) {
  depth_ = 0;  // an expression may have failed half-way down
  // The failing token is never a good restart point: always move past at least one token.
  bool first = true;
  int depth = 0;
  while (!at_end()) {
    const Token& t = peek();
    if (!first && depth == 0) {
      if (stop_at_close && t.kind == TokenKind::PUNCT && t.text == "}") return;
      if (t.kind == TokenKind::IDENT &&
          std::find(std::begin(keywords), std::end(keywords), t.text) != std::end(keywords))
        return;
    }
    if (t.kind == TokenKind::PUNCT && t.text == "{") ++depth;
    if (t.kind == TokenKind::PUNCT && t.text == "}") {
      if (depth == 0 && stop_at_close) return;
      if (depth > 0) --depth;
    }
    first = false;
    ++pos_;
  }
}

ParseResult Parser::run() {
  ParseResult result;
  while (!at_end()) {
    try {
      top_statement(result.ast);
    } catch (const SyntaxError& e) {
      report(e);
      sync(kTopKeywords, /*stop_at_close=*/false);
    }
  }
  result.errors = std::move(errors_);
  return result;
}

ExprParseResult Parser::run_expression() {
  ExprParseResult result;
  try {
    result.expr = expression();
    if (!at_end()) fail(peek().loc, "unexpected " + describe(peek()) + " after the expression");
  } catch (const SyntaxError& e) {
    report(e);
    result.expr.reset();
  }
  result.errors = std::move(errors_);
  return result;
}

void Parser::top_statement(LayoutAst& ast) {
  if (accept_punct(";")) return;
  const Token& kw =
      expect_ident("a statement (arch, fabric, param, let, color, rect or include)");
  if (kw.text == "include") {
    include(kw, kTopKeywords, [&] { top_statement(ast); });
  } else if (kw.text == "arch") {
    ArchDecl d;
    d.loc = kw.loc;
    const Token& name = expect_ident("an architecture name (wse2 or wse3)");
    d.name_loc = name.loc;
    d.name = name.text;
    ast.archs.push_back(std::move(d));
  } else if (kw.text == "fabric") {
    FabricDecl d;
    d.loc = kw.loc;
    d.width = expression();
    expect_word("x", "between the fabric's width and height (fabric W x H)");
    d.height = expression();
    ast.fabrics.push_back(std::move(d));
  } else if (kw.text == "param" || kw.text == "let" || kw.text == "color") {
    ast.decls.push_back(declaration(kw));
  } else if (kw.text == "rect") {
    ast.rects.push_back(rect(kw));
  } else {
    fail(kw.loc, "unknown statement '" + kw.text +
                     "' (expected arch, fabric, param, let, color, rect or include)");
  }
}

Decl Parser::declaration(const Token& kw) {
  Decl d;
  d.kind = kw.text == "param" ? DeclKind::PARAM
           : kw.text == "let" ? DeclKind::LET
                              : DeclKind::COLOR;
  d.loc = kw.loc;
  const Token& name = expect_ident("a name after '" + kw.text + "'");
  d.name_loc = name.loc;
  d.name = name.text;
  expect_punct("=", "after the name (" + kw.text + " " + name.text + " = ...)");
  d.value = expression();
  return d;
}

RectAst Parser::rect(const Token& kw) {
  RectAst r;
  r.loc = kw.loc;
  const Token& name = expect_ident("the rectangle's name (rect NAME at (X, Y) size W x H)");
  r.name_loc = name.loc;
  r.name = name.text;
  expect_word("at", "after the rectangle's name (rect NAME at (X, Y) size W x H)");
  expect_punct("(", "before the origin (at (X, Y))");
  r.x = expression();
  expect_punct(",", "between the origin's x and y (at (X, Y))");
  r.y = expression();
  expect_punct(")", "after the origin (at (X, Y))");
  expect_word("size", "after the origin (rect NAME at (X, Y) size W x H)");
  r.width = expression();
  expect_word("x", "between the rectangle's width and height (size W x H)");
  r.height = expression();
  expect_punct("{", "to open the rectangle's body");
  while (true) {
    check_lexical();
    if (at_end()) fail(peek().loc, "missing '}' to close rect '" + r.name + "'");
    if (accept_punct("}")) break;
    try {
      rect_item(r, {});
    } catch (const SyntaxError& e) {
      report(e);
      sync(kRectKeywords, /*stop_at_close=*/true);
    }
  }
  return r;
}

void Parser::rect_item(RectAst& r, const std::vector<SharedExpr>& conditions) {
  if (accept_punct(";")) return;
  const Token& kw =
      expect_ident("a rect item (let, program, route, where, export or include) or '}'");
  if (kw.text == "include") {
    include(kw, kRectKeywords, [&] { rect_item(r, conditions); });
  } else if (kw.text == "let") {
    if (!conditions.empty()) fail(kw.loc, "'let' is not allowed inside a 'where' block");
    r.lets.push_back(declaration(kw));
  } else if (kw.text == "program") {
    if (!conditions.empty()) fail(kw.loc, "'program' is not allowed inside a 'where' block");
    if (r.program) fail(kw.loc, "rect '" + r.name + "' already has a program (" +
                                    source_.position(r.program->loc) + ")");
    r.program = program(kw);
  } else if (kw.text == "route") {
    r.routes.push_back(route(kw, conditions));
  } else if (kw.text == "where") {
    auto cond = SharedExpr(expression().release());
    expect_punct("{", "to open the 'where' block (where CONDITION { route ... })");
    std::vector<SharedExpr> inner = conditions;
    inner.push_back(cond);
    while (true) {
      check_lexical();
      if (at_end()) fail(peek().loc, "missing '}' to close the 'where' block");
      if (accept_punct("}")) break;
      try {
        rect_item(r, inner);
      } catch (const SyntaxError& e) {
        report(e);
        sync(kRectKeywords, /*stop_at_close=*/true);
      }
    }
  } else if (kw.text == "export") {
    if (!conditions.empty()) fail(kw.loc, "'export' is not allowed inside a 'where' block");
    const Token& what = expect_ident("'symbol' or 'function' after 'export'");
    if (what.text == "symbol") r.symbols.push_back(export_symbol(kw));
    else if (what.text == "function") r.functions.push_back(export_function(kw));
    else fail(what.loc, "expected 'symbol' or 'function' after 'export', found '" + what.text + "'");
  } else {
    fail(kw.loc, "unknown rect item '" + kw.text +
                     "' (expected let, program, route, where, export, include or '}')");
  }
}

ProgramAst Parser::program(const Token& kw) {
  ProgramAst p;
  p.loc = kw.loc;
  check_lexical();
  if (peek().kind != TokenKind::STRING)
    fail(peek().loc, "expected the program's file name as a string (program \"pe.wsa\"), found " +
                         describe(peek()));
  const Token& path = next();
  p.path_loc = path.loc;
  p.path = path.text;
  if (p.path.empty()) fail(path.loc, "empty program file name");
  if (accept_punct("{")) {
    while (true) {
      check_lexical();
      if (accept_punct("}")) break;
      if (accept_punct(",") || accept_punct(";")) continue;
      const Token& name = expect_ident("a program parameter (NAME = expression) or '}'");
      ProgramParamAst param;
      param.loc = name.loc;
      param.name = name.text;
      expect_punct("=", "after the program parameter's name");
      param.value = expression();
      p.params.push_back(std::move(param));
    }
  }
  return p;
}

DirSetAst Parser::dir_set(std::string_view what) {
  DirSetAst set;
  check_lexical();
  set.loc = peek().loc;
  auto one = [&]() {
    const Token& t = expect_ident("a direction (N, S, E, W or RAMP) in the " +
                                  std::string(what) + " set");
    int d = direction_from_name(t.text);
    if (d < 0)
      fail(t.loc, "unknown direction '" + t.text + "' (expected N, S, E, W or RAMP)");
    if (set.bits & (1u << d)) fail(t.loc, "direction '" + t.text + "' listed twice");
    set.bits |= static_cast<uint8_t>(1u << d);
  };
  if (accept_punct("[")) {
    if (accept_punct("]")) return set;
    while (true) {
      one();
      if (accept_punct("]")) break;
      expect_punct(",", "between directions (or ']' to close the set)");
    }
  } else {
    one();
  }
  return set;
}

RouteAst Parser::route(const Token& kw, const std::vector<SharedExpr>& conditions) {
  RouteAst r;
  r.loc = kw.loc;
  r.conditions = conditions;
  r.color = expression();
  if (is_word("host")) {
    next();
    r.host = true;
  }
  bool have_rx = false, have_tx = false;
  while (is_word("rx") || is_word("tx")) {
    const Token& which = next();
    bool rx = which.text == "rx";
    if ((rx && have_rx) || (!rx && have_tx))
      fail(which.loc, "'" + which.text + "' given twice in one route");
    (rx ? r.rx : r.tx) = dir_set(which.text);
    (rx ? have_rx : have_tx) = true;
  }
  if (!have_rx || !have_tx) {
    check_lexical();
    fail(peek().loc, std::string("expected '") + (have_rx ? "tx" : "rx") +
                         "' in the route (route COLOR rx [..] tx [..]), found " +
                         describe(peek()));
  }
  if (is_word("switch")) {
    r.has_switch = true;
    r.switch_loc = next().loc;
    expect_punct("{", "to open the switch block (switch { pos1 tx [..] ... })");
    while (true) {
      check_lexical();
      if (accept_punct("}")) break;
      if (accept_punct(";") || accept_punct(",")) continue;
      const Token& item = expect_ident("pos1, pos2, pos3, current, ring or '}'");
      if (item.text == "pos1" || item.text == "pos2" || item.text == "pos3") {
        SwitchPosAst pos;
        pos.loc = item.loc;
        pos.index = item.text[3] - '0';
        for (const SwitchPosAst& other : r.positions)
          if (other.index == pos.index) fail(item.loc, item.text + " given twice");
        while (is_word("rx") || is_word("tx")) {
          const Token& which = next();
          auto& slot = which.text == "rx" ? pos.rx : pos.tx;
          if (slot) fail(which.loc, "'" + which.text + "' given twice in " + item.text);
          slot = dir_set(which.text);
        }
        if (!pos.rx && !pos.tx)
          fail(peek().loc, item.text + " needs 'rx [..]' and/or 'tx [..]'");
        r.positions.push_back(std::move(pos));
      } else if (item.text == "current") {
        if (r.current) fail(item.loc, "'current' given twice");
        r.current = expression();
      } else if (item.text == "ring") {
        r.ring = true;
      } else {
        fail(item.loc, "unknown switch item '" + item.text +
                           "' (expected pos1, pos2, pos3, current or ring)");
      }
    }
  }
  // Optional clauses after the sets and the switch block, in any order.
  while (is_word("filter") || is_word("counter_filter") || is_word("swap_x") || is_word("swap_y") ||
         is_word("pop") || is_word("reconfigurable") || is_word("teardown")) {
    const Token& word = next();
    if (word.text == "pop") {
      if (r.pop_mode >= 0) fail(word.loc, "'pop' given twice in one route");
      r.pop_loc = word.loc;
      const Token& mode = expect_ident("a pop mode: always, never or advance");
      if (mode.text == "always") r.pop_mode = 0;
      else if (mode.text == "never") r.pop_mode = 1;
      else if (mode.text == "advance") r.pop_mode = 2;
      else fail(mode.loc, "unknown pop mode '" + mode.text + "' (always, never or advance)");
    } else if (word.text == "reconfigurable" || word.text == "teardown") {
      bool& flag = word.text == "teardown" ? r.teardown : r.reconfigurable;
      if (flag) fail(word.loc, "'" + word.text + "' given twice in one route");
      flag = true;
    } else if (word.text == "filter") {
      if (r.filter_min) fail(word.loc, "'filter' given twice in one route");
      r.filter_loc = word.loc;
      expect_punct("[", "to open the filter range (filter [MIN, MAX])");
      r.filter_min = expression();
      expect_punct(",", "between the filter's minimum and maximum (filter [MIN, MAX])");
      r.filter_max = expression();
      expect_punct("]", "to close the filter range (filter [MIN, MAX])");
    } else if (word.text == "counter_filter") {
      if (r.counter_init) fail(word.loc, "'counter_filter' given twice in one route");
      r.counter_loc = word.loc;
      const char* form = " (counter_filter [INIT, MAX, LIMIT])";
      expect_punct("[", std::string("to open the counter filter's values") + form);
      r.counter_init = expression();
      expect_punct(",", std::string("after the counter's start") + form);
      r.counter_max = expression();
      expect_punct(",", std::string("after the counter's maximum") + form);
      r.counter_limit = expression();
      expect_punct("]", std::string("to close the counter filter's values") + form);
      if (is_word("counts")) {
        next();
        const Token& kind = expect_ident("what the counter counts: data, control or both");
        if (kind.text != "data" && kind.text != "control" && kind.text != "both")
          fail(kind.loc, "unknown count kind '" + kind.text + "' (data, control or both)");
        r.count_data = kind.text != "control";
        r.count_control = kind.text != "data";
      }
    } else {
      bool& flag = word.text == "swap_x" ? r.swap_x : r.swap_y;
      if (flag) fail(word.loc, "'" + word.text + "' given twice in one route");
      flag = true;
    }
  }
  if (is_word("where")) {
    next();
    r.conditions.push_back(SharedExpr(expression().release()));
  }
  return r;
}

ExportSymbolAst Parser::export_symbol(const Token& kw) {
  ExportSymbolAst s;
  export_names(kw, "the symbol's host name (export symbol NAME : f32[N])", "the program's symbol name after '='",
               {s.loc, s.name_loc, s.host_name, s.program_name_loc, s.program_symbol});
  expect_punct(":", "before the element type (export symbol NAME : f32[N])");
  const Token& type = expect_ident("an element type (f32, f16, i32, u32, i16 or u16)");
  s.type_loc = type.loc;
  const std::optional<isa::ElemType> named = isa::elem_type_named(type.text);
  if (!named) fail(type.loc, "unknown element type '" + type.text + "' (expected f32, f16, i32, u32, i16 or u16)");
  s.type = *named;
  expect_punct("[", "before the number of elements per PE (f32[N])");
  check_lexical();
  s.count_loc = peek().loc;
  s.count = expression();
  expect_punct("]", "after the number of elements per PE");
  bool any_access = false;
  bool readable = false, writable = false;
  while (is_word("read") || is_word("write") || is_word("indirect")) {
    const Token& a = next();
    if (a.text == "indirect") {
      s.indirect = true;
      continue;
    }
    (a.text == "read" ? readable : writable) = true;
    any_access = true;
  }
  if (any_access) {
    s.readable = readable;
    s.writable = writable;
  }
  return s;
}

ExportFunctionAst Parser::export_function(const Token& kw) {
  ExportFunctionAst f;
  export_names(kw, "the function's host name (export function NAME)", "the program's function name after '='",
               {f.loc, f.name_loc, f.host_name, f.program_name_loc, f.program_function});
  return f;
}

void Parser::export_names(const Token& kw, std::string_view host_what, std::string_view program_what,
                          ExportNames names) {
  names.loc = kw.loc;
  const Token& host = expect_ident(host_what);
  names.host_loc = names.program_loc = host.loc;
  names.host = names.program = host.text;
  if (accept_punct("=")) {
    const Token& program = expect_ident(program_what);
    names.program_loc = program.loc;
    names.program = program.text;
  }
}

ExprPtr Parser::expression() {
  // Guards against stack exhaustion on pathological input such as 100000 '('.
  if (++depth_ > 200) fail(peek().loc, "expression nested too deeply");
  ExprPtr cond = binary_level(0);
  if (is_punct("?")) {
    Loc loc = next().loc;
    ExprPtr a = expression();
    expect_punct(":", "in the conditional expression (c ? a : b)");
    ExprPtr b = expression();
    auto e = make(ExprOp::COND, loc);
    e->args.push_back(std::move(cond));
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    cond = std::move(e);
  }
  --depth_;
  return cond;
}

ExprPtr Parser::binary_level(size_t level) {
  if (level == levels().size()) return unary();
  ExprPtr lhs = binary_level(level + 1);
  while (true) {
    check_lexical();
    const BinOp* found = nullptr;
    if (peek().kind == TokenKind::PUNCT)
      for (const BinOp& b : levels()[level])
        if (peek().text == b.text) found = &b;
    if (!found) return lhs;
    Loc loc = next().loc;
    lhs = binary(found->op, loc, std::move(lhs), binary_level(level + 1));
  }
}

ExprPtr Parser::unary() {
  check_lexical();
  if (is_punct("-") || is_punct("!") || is_punct("~")) {
    const Token& t = next();
    ExprOp op = t.text == "-" ? ExprOp::NEG : t.text == "!" ? ExprOp::NOT : ExprOp::BITNOT;
    if (++depth_ > 200) fail(t.loc, "expression nested too deeply");
    auto e = make(op, t.loc);
    e->args.push_back(unary());
    --depth_;
    return e;
  }
  return primary();
}

ExprPtr Parser::primary() {
  check_lexical();
  const Token& t = peek();
  if (t.kind == TokenKind::NUMBER) {
    next();
    auto e = make(ExprOp::NUMBER, t.loc);
    e->value = t.value;
    return e;
  }
  if (t.kind == TokenKind::IDENT) {
    next();
    if (t.text == "true" || t.text == "false") {
      auto e = make(ExprOp::NUMBER, t.loc);
      e->value = t.text == "true" ? 1 : 0;
      return e;
    }
    if (is_punct("(")) return call(t);
    auto e = make(ExprOp::NAME, t.loc);
    e->name = t.text;
    return e;
  }
  if (is_punct("(")) {
    next();
    ExprPtr e = expression();
    expect_punct(")", "to close the parenthesis");
    return e;
  }
  fail(t.loc, "expected an expression, found " + describe(t));
}

ExprPtr Parser::call(const Token& name) {
  ExprOp op;
  size_t arity_min, arity_max;
  if (name.text == "min") op = ExprOp::MIN, arity_min = 2, arity_max = 64;
  else if (name.text == "max") op = ExprOp::MAX, arity_min = 2, arity_max = 64;
  else if (name.text == "abs") op = ExprOp::ABS, arity_min = 1, arity_max = 1;
  else fail(name.loc, "unknown function '" + name.text + "' (available: min, max, abs)");
  next();  // '('
  auto e = make(op, name.loc);
  e->name = name.text;
  if (!is_punct(")")) {
    while (true) {
      e->args.push_back(expression());
      if (accept_punct(")")) break;
      expect_punct(",", "between the arguments of " + name.text + "()");
    }
  } else {
    next();
  }
  if (e->args.size() < arity_min || e->args.size() > arity_max)
    fail(name.loc, name.text + "() takes " +
                       (arity_min == arity_max ? std::to_string(arity_min)
                                               : "at least " + std::to_string(arity_min)) +
                       " argument" + (arity_min == 1 && arity_max == 1 ? "" : "s") +
                       ", got " + std::to_string(e->args.size()));
  return e;
}

}  // namespace detail

int direction_from_name(std::string_view name) {
  std::string n = detail::lower(name);
  if (n == "n" || n == "north") return 0;
  if (n == "s" || n == "south") return 1;
  if (n == "e" || n == "east") return 2;
  if (n == "w" || n == "west") return 3;
  if (n == "ramp") return 4;
  return -1;
}

ParseResult parse_layout(SourceText& source, std::string_view text,
                         const ParseOptions& options) {
  return detail::Parser(source, tokenize(text), options).run();
}

ExprParseResult parse_expression(SourceText& source, std::string_view text) {
  return detail::Parser(source, tokenize(text)).run_expression();
}

}  // namespace wsemu::compiler::layout
