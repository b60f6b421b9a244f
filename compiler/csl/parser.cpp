#include "compiler/csl/parser.hpp"

#include "compiler/csl/lexer.hpp"

namespace wsemu::compiler::csl {

namespace {

constexpr int kMaxDepth = 256;

std::string describe(const Token& t) {
  switch (t.kind) {
    case Tok::END: return "end of file";
    case Tok::INT: return "a number";
    case Tok::FLOAT: return "a number";
    case Tok::STRING: return "a string";
    case Tok::CHAR: return "a character literal";
    case Tok::BUILTIN: return "'@" + t.text + "'";
    default: return "'" + t.text + "'";
  }
}

class Parser {
 public:
  Parser(std::vector<Token> tokens) : toks_(std::move(tokens)) {
    for (const Token& t : toks_)
      if (t.kind == Tok::ERROR) fail(t.span, t.text);
  }

  Module module(int file) {
    Module m;
    m.file = file;
    while (!at_end()) m.decls.push_back(top_level());
    return m;
  }

 private:
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
  bool no_array_init_ = false;

  struct Depth {
    Parser& p;
    explicit Depth(Parser& parser, Span at) : p(parser) {
      if (++p.depth_ > kMaxDepth) fail(at, "nesting too deep (more than 256 levels)");
    }
    ~Depth() { --p.depth_; }
  };

  const Token& cur() const { return toks_[pos_]; }
  const Token& peek(size_t n = 1) const { return toks_[std::min(pos_ + n, toks_.size() - 1)]; }
  bool at_end() const { return cur().kind == Tok::END; }
  const Token& take() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool is(std::string_view p) const {
    return (cur().kind == Tok::PUNCT || cur().kind == Tok::KEYWORD) && cur().text == p;
  }
  bool is_at(size_t n, std::string_view p) const {
    const Token& t = peek(n);
    return (t.kind == Tok::PUNCT || t.kind == Tok::KEYWORD) && t.text == p;
  }
  bool accept(std::string_view p) {
    if (!is(p)) return false;
    take();
    return true;
  }
  const Token& expect(std::string_view p, std::string_view context) {
    if (!is(p))
      fail(cur().span, "expected '" + std::string(p) + "' " + std::string(context) + ", found " + describe(cur()));
    return take();
  }
  std::string expect_ident(std::string_view context) {
    if (cur().kind != Tok::IDENT) {
      std::string found = describe(cur());
      if (cur().kind == Tok::KEYWORD) found = "keyword '" + cur().text + "'";
      fail(cur().span, "expected " + std::string(context) + ", found " + found);
    }
    return take().text;
  }

  ExprPtr node(ExprKind k, Span s) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->span = s;
    return e;
  }

  // ---- declarations ----

  StmtPtr top_level() {
    const Span start = cur().span;
    bool is_pub = false, is_export = false, is_extern = false;
    while (true) {
      if (accept("pub")) is_pub = true;
      else if (accept("export")) is_export = true;
      else if (accept("extern")) is_extern = true;
      else break;
    }
    StmtPtr s;
    if (is("const") || is("var") || is("param")) {
      s = var_decl();
    } else if (is("fn") || is("task")) {
      s = fn_decl();
    } else if (is("comptime") && is_at(1, "{")) {
      s = std::make_unique<Stmt>();
      s->kind = StmtKind::COMPTIME;
      s->span = take().span;
      s->body = block("after 'comptime'");
    } else if (cur().kind == Tok::IDENT && cur().text == "layout" && is_at(1, "{")) {
      s = std::make_unique<Stmt>();
      s->kind = StmtKind::LAYOUT;
      s->span = take().span;
      s->body = block("after 'layout'");
    } else {
      fail(cur().span, "expected a declaration (const, var, param, fn, task, comptime or layout), found " +
                           describe(cur()));
    }
    if ((is_pub || is_export || is_extern) && s->kind != StmtKind::VAR && s->kind != StmtKind::FN)
      fail(start, "'pub', 'export' and 'extern' apply to declarations only");
    s->is_pub = is_pub;
    s->is_export = is_export;
    s->is_extern = is_extern;
    s->span = start;
    return s;
  }

  // A declaration of `kind` starting at the current keyword (var, const, param, fn, task), taken.
  StmtPtr declaration(StmtKind kind) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->span = cur().span;
    s->decl_kind = take().text;
    return s;
  }

  // `(expr)` after `keyword` (if, while, switch).
  ExprPtr condition(const std::string& keyword) {
    expect("(", "after '" + keyword + "'");
    ExprPtr e = expr();
    expect(")", "after the condition of '" + keyword + "'");
    return e;
  }

  StmtPtr var_decl() {
    auto s = declaration(StmtKind::VAR);
    s->name = expect_ident("a name after '" + s->decl_kind + "'");
    if (accept(":")) s->type = type_expr();
    if (accept("align")) {
      expect("(", "after 'align'");
      s->align = expr();
      expect(")", "to close 'align('");
    }
    if (accept("linksection")) {
      expect("(", "after 'linksection'");
      s->linksection = expr();
      expect(")", "to close 'linksection('");
    }
    if (accept("=")) {
      s->value = expr();
    } else if (s->decl_kind == "const") {
      fail(cur().span, "expected '=' after the declaration of const '" + s->name + "', found " + describe(cur()));
    } else if (!s->type && s->decl_kind != "param") {  // an untyped param takes its value's type
      fail(cur().span, "'" + s->name + "' needs a type or an initial value");
    }
    expect(";", "after the declaration of '" + s->name + "'");
    return s;
  }

  StmtPtr fn_decl() {
    auto s = declaration(StmtKind::FN);
    s->name = expect_ident("a function name after '" + s->decl_kind + "'");
    expect("(", "after the function name");
    while (!is(")")) {
      FnParam p;
      p.span = cur().span;
      p.is_comptime = accept("comptime");
      p.name = expect_ident("a parameter name");
      expect(":", "after the parameter name");
      p.type = type_expr();
      s->params.push_back(std::move(p));
      if (!accept(",")) break;
    }
    expect(")", "to close the parameter list");
    if (is("{")) fail(cur().span, "expected the return type of '" + s->name + "' before '{' (e.g. 'void')");
    // `fn f() [2]f32 { ... }`: the brace opens the body, not an array initialiser.
    no_array_init_ = true;
    s->type = type_expr();
    no_array_init_ = false;
    s->body = block("for the body of '" + s->name + "'");
    return s;
  }

  // ---- statements ----

  std::vector<StmtPtr> block(const std::string& context) {
    Depth d(*this, cur().span);
    expect("{", context);
    std::vector<StmtPtr> body;
    while (!is("}")) {
      if (at_end()) fail(cur().span, "expected '}' to close the block, found end of file");
      body.push_back(statement());
    }
    take();
    return body;
  }

  std::vector<StmtPtr> block_or_statement(const std::string& context) {
    if (is("{")) return block(context);
    std::vector<StmtPtr> one;
    one.push_back(statement());
    return one;
  }

  StmtPtr statement() {
    Depth d(*this, cur().span);
    auto s = std::make_unique<Stmt>();
    s->span = cur().span;
    if (is("const") || is("var")) return var_decl();
    if (is("param")) fail(cur().span, "'param' declarations are only allowed at the top level of a file");
    if (is("fn") || is("task")) fail(cur().span, "functions can only be declared at the top level of a file");
    if (is("comptime") && is_at(1, "{")) {
      take();
      s->kind = StmtKind::COMPTIME;
      s->body = block("after 'comptime'");
      return s;
    }
    if (is("{")) {
      s->kind = StmtKind::BLOCK;
      s->body = block("");
      return s;
    }
    if (accept("if")) {
      s->kind = StmtKind::IF;
      s->value = condition("if");
      if (is("{")) {
        s->body = block("after 'if (...)'");
      } else if (is("return") || is("break") || is("continue") || is("if") || is("while") || is("for") ||
                 is("const") || is("var") || is("comptime")) {
        s->body.push_back(statement());
      } else {
        // `if (c) f() else g();` reads as in Zig: the branch before `else` takes no ';'.
        s->body.push_back(simple_statement());
        if (!is("else")) expect(";", "after the statement");
      }
      if (accept("else")) {
        s->has_else = true;
        s->else_body = block_or_statement("after 'else'");
      }
      return s;
    }
    if (accept("while")) {
      s->kind = StmtKind::WHILE;
      s->value = condition("while");
      if (accept(":")) {
        expect("(", "before the continue expression of 'while'");
        s->step = simple_statement();
        expect(")", "after the continue expression of 'while'");
      }
      s->body = block("for the body of 'while'");
      return s;
    }
    if (accept("for")) {
      s->kind = StmtKind::FOR;
      expect("(", "after 'for'");
      do {
        s->iterables.push_back(expr());
      } while (accept(","));
      expect(")", "after the range of 'for'");
      expect("|", "before the loop variable of 'for' (for (@range(i16, N)) |i| { ... })");
      do {
        s->captures.push_back(expect_ident("a loop variable name"));
      } while (accept(","));
      expect("|", "after the loop variable");
      s->body = block("for the body of 'for'");
      return s;
    }
    if (accept("return")) {
      s->kind = StmtKind::RETURN;
      if (!is(";")) s->value = expr();
      expect(";", "after 'return'");
      return s;
    }
    if (accept("break")) {
      s->kind = StmtKind::BREAK;
      expect(";", "after 'break'");
      return s;
    }
    if (accept("continue")) {
      s->kind = StmtKind::CONTINUE;
      expect(";", "after 'continue'");
      return s;
    }
    s = simple_statement();
    // A switch statement ends with its '}' (as in Zig); a ';' after it is allowed.
    if (s->kind == StmtKind::EXPR && s->value && s->value->kind == ExprKind::SWITCH) accept(";");
    else expect(";", "after the statement");
    return s;
  }

  // An expression or an assignment, without the ';'.
  StmtPtr simple_statement() {
    auto s = std::make_unique<Stmt>();
    s->span = cur().span;
    ExprPtr e = expr();
    static constexpr std::string_view kAssign[] = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};
    for (std::string_view op : kAssign) {
      if (is(op)) {
        take();
        s->kind = StmtKind::ASSIGN;
        s->assign_op = std::string(op);
        s->target = std::move(e);
        s->value = expr();
        return s;
      }
    }
    s->kind = StmtKind::EXPR;
    s->value = std::move(e);
    return s;
  }

  // ---- expressions ----

  ExprPtr type_expr() { return unary(); }

  ExprPtr expr() {
    Depth d(*this, cur().span);
    return binary(0);
  }

  static int precedence(const Token& t) {
    if (t.kind != Tok::PUNCT && t.kind != Tok::KEYWORD) return -1;
    const std::string& s = t.text;
    if (s == "or") return 1;
    if (s == "and") return 2;
    if (s == "==" || s == "!=" || s == "<" || s == ">" || s == "<=" || s == ">=") return 3;
    if (s == "&" || s == "^" || s == "|") return 4;
    if (s == "<<" || s == ">>") return 5;
    if (s == "+" || s == "-") return 6;
    if (s == "*" || s == "/" || s == "%") return 7;
    return -1;
  }

  ExprPtr binary(int min_prec) {
    ExprPtr lhs = unary();
    while (true) {
      int p = precedence(cur());
      if (p < 0 || p <= min_prec) break;
      const Token& op = take();
      ExprPtr rhs = binary(p);
      if (p == 3 && precedence(cur()) == 3)
        fail(cur().span, "comparisons cannot be chained; use parentheses");
      auto e = node(ExprKind::BINARY, op.span);
      e->text = op.text;
      e->args.push_back(std::move(lhs));
      e->args.push_back(std::move(rhs));
      lhs = std::move(e);
    }
    return lhs;
  }

  ExprPtr unary() {
    Depth d(*this, cur().span);
    const Token& t = cur();
    if (t.kind == Tok::PUNCT && (t.text == "-" || t.text == "!" || t.text == "~" || t.text == "&")) {
      take();
      auto e = node(ExprKind::UNARY, t.span);
      e->text = t.text;
      e->args.push_back(unary());
      return e;
    }
    if (t.kind == Tok::PUNCT && t.text == "*") {
      take();
      auto e = node(ExprKind::PTR_TYPE, t.span);
      if (accept("const")) e->int_value = 1;
      e->args.push_back(unary());
      return e;
    }
    if (t.kind == Tok::KEYWORD && t.text == "comptime") {
      take();
      auto e = node(ExprKind::UNARY, t.span);
      e->text = "comptime";
      e->args.push_back(unary());
      return e;
    }
    return postfix(primary());
  }

  std::vector<ExprPtr> call_args(const std::string& what) {
    std::vector<ExprPtr> args;
    while (!is(")")) {
      args.push_back(expr());
      if (!accept(",")) break;
    }
    expect(")", "to close the arguments of " + what);
    return args;
  }

  ExprPtr postfix(ExprPtr e) {
    while (true) {
      if (is("(")) {
        Span s = take().span;
        auto c = node(ExprKind::CALL, s);
        c->span = e->span;
        c->args.push_back(std::move(e));
        for (auto& a : call_args("the call")) c->args.push_back(std::move(a));
        e = std::move(c);
      } else if (is("[")) {
        Span s = take().span;
        auto i = node(ExprKind::INDEX, s);
        i->args.push_back(std::move(e));
        do {
          i->args.push_back(expr());
        } while (accept(","));
        expect("]", "to close the index");
        e = std::move(i);
      } else if (is(".*")) {
        Span s = take().span;
        auto dr = node(ExprKind::DEREF, s);
        dr->args.push_back(std::move(e));
        e = std::move(dr);
      } else if (is(".") ) {
        Span s = take().span;
        auto f = node(ExprKind::FIELD, s);
        if (cur().kind != Tok::IDENT && cur().kind != Tok::KEYWORD)
          fail(cur().span, "expected a field name after '.', found " + describe(cur()));
        f->text = take().text;
        f->args.push_back(std::move(e));
        e = std::move(f);
      } else {
        return e;
      }
    }
  }

  ExprPtr primary() {
    const Token& t = cur();
    // A node of the token's own value (each kind of token fills only its field of it).
    auto leaf = [&](ExprKind kind) {
      auto e = node(kind, t.span);
      const Token& tok = take();
      e->int_value = tok.int_value;
      e->float_value = tok.float_value;
      e->text = tok.text;
      return e;
    };
    switch (t.kind) {
      case Tok::INT:
      case Tok::CHAR: return leaf(ExprKind::INT);
      case Tok::FLOAT: return leaf(ExprKind::FLOAT);
      case Tok::STRING: return leaf(ExprKind::STRING);
      case Tok::IDENT: return leaf(ExprKind::IDENT);
      case Tok::BUILTIN: {
        auto e = leaf(ExprKind::BUILTIN);
        expect("(", "after the builtin '@" + e->text + "'");
        e->args = call_args("'@" + e->text + "'");
        return e;
      }
      default: break;
    }
    if (t.kind == Tok::KEYWORD) {
      if (t.text == "true" || t.text == "false") {
        auto e = node(ExprKind::BOOL, t.span);
        e->int_value = take().text == "true";
        return e;
      }
      if (t.text == "null") return take(), node(ExprKind::NULL_LIT, t.span);
      if (t.text == "undefined") return take(), node(ExprKind::UNDEFINED, t.span);
      if (t.text == "fn" || (t.text == "task" && is_at(1, "("))) return fn_type();  // `task () void`: a task-typed param
      if (t.text == "struct" || t.text == "packed") return struct_type();
      if (t.text == "enum") return enum_type();
      if (t.text == "if") return if_expr();
      if (t.text == "switch") return switch_expr();
    }
    if (is("{") && is_at(1, "}")) {  // `{}`: the void value, as in Zig
      Span s = take().span;
      take();
      return node(ExprKind::UNDEFINED, s);
    }
    if (is("(")) {
      take();
      ExprPtr e = expr();
      expect(")", "to close '('");
      return e;
    }
    if (is(".{")) return anon_struct();
    if (is(".")) {
      Span s = take().span;
      auto e = node(ExprKind::ENUM_LITERAL, s);
      e->text = expect_ident("a name after '.'");
      return e;
    }
    if (is("[")) return array_type();
    if (is("|")) return tensor_access();
    fail(t.span, "expected an expression, found " + describe(t));
  }

  ExprPtr anon_struct() {
    auto e = node(ExprKind::ANON_STRUCT, take().span);
    bool named = is(".") && peek().kind == Tok::IDENT && is_at(2, "=");
    while (!is("}")) {
      if (named) {
        expect(".", "before a field name in '.{ .name = value }'");
        e->names.push_back(expect_ident("a field name"));
        expect("=", "after the field name");
      } else if (is(".") && peek().kind == Tok::IDENT && is_at(2, "=")) {
        fail(cur().span, "a struct literal mixes named fields and positional values");
      }
      e->args.push_back(expr());
      if (!accept(",")) break;
    }
    expect("}", "to close the struct literal '.{'");
    return e;
  }

  ExprPtr array_type() {
    Span s = take().span;
    if (accept("*")) {
      expect("]", "after '[*'");
      auto e = node(ExprKind::MANY_PTR_TYPE, s);
      if (accept("const")) e->int_value = 1;
      e->args.push_back(unary());
      return e;
    }
    auto e = node(ExprKind::ARRAY_TYPE, s);
    do {
      e->args.push_back(expr());
    } while (accept(","));
    expect("]", "to close the array dimensions");
    e->args.push_back(postfix_type());
    if (is("{") && !no_array_init_) {
      auto init = node(ExprKind::ARRAY_INIT, cur().span);
      take();
      init->args.push_back(std::move(e));
      while (!is("}")) {
        init->args.push_back(expr());
        if (!accept(",")) break;
      }
      expect("}", "to close the array initialiser");
      return init;
    }
    return e;
  }

  // The element type of an array type: a name (possibly dotted) or a nested type, without calls.
  ExprPtr postfix_type() {
    if (is("[") || is("*") || is("fn") || (is("task") && is_at(1, "(")) || is("struct") || is("enum")) return unary();
    if (cur().kind != Tok::IDENT && cur().kind != Tok::BUILTIN)
      fail(cur().span, "expected the element type of the array, found " + describe(cur()));
    ExprPtr e = primary();
    while (is(".") && peek().kind == Tok::IDENT) {
      Span s = take().span;
      auto f = node(ExprKind::FIELD, s);
      f->text = take().text;
      f->args.push_back(std::move(e));
      e = std::move(f);
    }
    return e;
  }

  ExprPtr tensor_access() {
    auto e = node(ExprKind::TENSOR_ACCESS, take().span);
    do {
      e->names.push_back(expect_ident("an index name in the tensor access '|i| {M} -> A[i]'"));
    } while (accept(","));
    expect("|", "after the index names of the tensor access");
    expect("{", "before the extents of the tensor access ('|i| {M} -> A[i]')");
    do {
      e->args.push_back(expr());
    } while (accept(","));
    expect("}", "after the extents of the tensor access");
    if (e->args.size() != e->names.size())
      fail(e->span, "the tensor access has " + std::to_string(e->names.size()) + " index names but " +
                        std::to_string(e->args.size()) + " extents");
    expect("->", "after the extents of the tensor access");
    e->args.push_back(expr());
    return e;
  }

  ExprPtr fn_type() {
    auto e = node(ExprKind::FN_TYPE, take().span);
    expect("(", "after 'fn' (or 'task') in a function type");
    while (!is(")")) {
      if (cur().kind == Tok::IDENT && is_at(1, ":")) {
        take();
        take();
      }
      e->args.push_back(type_expr());
      if (!accept(",")) break;
    }
    expect(")", "to close the function type's parameters");
    e->args.push_back(type_expr());
    return e;
  }

  ExprPtr struct_type() {
    auto e = node(ExprKind::STRUCT_TYPE, cur().span);
    accept("packed");
    expect("struct", "after 'packed'");
    expect("{", "after 'struct'");
    while (!is("}")) {
      e->names.push_back(expect_ident("a field name"));
      expect(":", "after the field name");
      e->args.push_back(type_expr());
      if (!accept(",")) break;
    }
    expect("}", "to close the struct");
    return e;
  }

  ExprPtr enum_type() {
    auto e = node(ExprKind::ENUM_TYPE, take().span);
    if (accept("(")) {
      e->args.push_back(type_expr());
      expect(")", "after the enum's tag type");
    } else {
      e->args.push_back(nullptr);
    }
    expect("{", "after 'enum'");
    while (!is("}")) {
      e->names.push_back(expect_ident("an enum member name"));
      e->enum_values.push_back(accept("=") ? expr() : nullptr);
      if (!accept(",")) break;
    }
    expect("}", "to close the enum");
    return e;
  }

  ExprPtr if_expr() {
    auto e = node(ExprKind::IF_EXPR, take().span);
    e->args.push_back(condition("if"));
    e->args.push_back(expr());
    // CSL accepts a comptime `if` expression without `else`; reaching the missing branch is an
    // error of the evaluation.
    e->args.push_back(accept("else") ? expr() : nullptr);
    return e;
  }

  ExprPtr switch_expr() {
    auto e = node(ExprKind::SWITCH, take().span);
    e->args.push_back(condition("switch"));
    expect("{", "to open the switch cases");
    while (!is("}")) {
      SwitchCase c;
      c.span = cur().span;
      if (!accept("else")) {
        do {
          ExprPtr v = expr();
          if (accept("...")) {
            auto r = node(ExprKind::RANGE, v->span);
            r->args.push_back(std::move(v));
            r->args.push_back(expr());
            v = std::move(r);
          }
          c.values.push_back(std::move(v));
        } while (accept(",") && !is("=>"));
      }
      expect("=>", "after the switch case values");
      if (is("{")) c.block = statement();
      else c.result = expr();
      e->switch_cases.push_back(std::move(c));
      if (!accept(",")) break;
    }
    expect("}", "to close the switch");
    return e;
  }
};

}  // namespace

Module parse(std::string_view text, int file) { return Parser(tokenize(text, file)).module(file); }

}  // namespace wsemu::compiler::csl
