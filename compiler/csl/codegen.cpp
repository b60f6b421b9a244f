// Run-time code generation of values: emitting instructions, loading and storing variables,
// expressions, and the places of array elements (see codegen.hpp for the register convention).
// What the program does at run time costs the instructions it compiles to: loop counters, index
// arithmetic, DSD changes and calls are emitted as written.
#include "compiler/csl/codegen.hpp"

#include <filesystem>

#include "isa/fp16.hpp"

namespace wsemu::compiler::csl {

namespace {

bool is_float(const TypeRef& t) { return t && (t->kind == TK::FLOAT || t->kind == TK::COMPTIME_FLOAT); }
bool is_half(const TypeRef& t) { return t && t->kind == TK::FLOAT && t->bits == 16; }

// The bits a register holds for a comptime float of type t: fp16 in the low half for f16.
uint32_t float_bits(double v, const TypeRef& t) { return is_half(t) ? isa::fp32_to_fp16(float(v)) : f32_bits(v); }

// r, computed in 32 bits for an integer type narrower than that, may carry bits past its width
// (codegen.hpp). An i8 or u8 is wrapped at once: it lives in a 16-bit word, and st16 would not
// cut it to 8 bits.
Value carried(Compiler& c, Value r, Span at, Ctx& ctx) {
  if (r.k != Value::K::RUNTIME || !r.type || r.type->kind != TK::INT || r.type->bits >= 32) return r;
  r.unwrapped = true;
  return r.type->bits < 16 ? wrapped(c, r, at, ctx) : r;
}

}  // namespace

// Each instruction's CSL place goes into the object's line table through a `.loc` line (written
// when it changes), so that fault and hang reports and the debugger name the CSL line.
void Compiler::emit(Ctx& ctx, const std::string& line, Span at) {
  Program& p = *ctx.gen->p;
  if (at.line > 0) {
    std::string file;
    for (char c : std::filesystem::path(sources.name(at.file)).filename().string()) {
      if (c == '"' || c == '\\') file += '\\';
      file += c;
    }
    std::string loc = "        .loc \"" + file + "\", " + std::to_string(at.line);
    if (at.col > 0 && at.col <= 65535) loc += ", " + std::to_string(at.col);
    if (loc != p.last_loc) {
      p.code.push_back(loc);
      p.last_loc = std::move(loc);
    }
  }
  p.code.push_back("        " + line);
}

Value Compiler::rvalue(const Value& v, Span at, Ctx& ctx) {
  if (v.k != Value::K::GLOBAL) return v;
  if (v.global->type->kind == TK::ARRAY) return v;  // indexed or passed by address later
  if (!ctx.gen) fail(at, "the value of var '" + v.global->csl_name + "' is only known at run time");
  return load_global(v.global, at, ctx);
}

Value Compiler::load_global(GlobalVar* g, Span at, Ctx& ctx) {
  const int r = alloc_temp(ctx, at);
  const int bytes = g->type->byte_size();
  std::string where = g->asm_name;
  if (ctx.gen->p->far_data) {
    emit(ctx, "li " + reg(r) + ", " + g->asm_name, at);
    where = reg(r);
  }
  if (bytes == 4) emit(ctx, "ld32 " + reg(r) + ", [" + where + "]", at);
  else if (bytes == 2) emit(ctx, std::string(g->type->kind == TK::INT && g->type->is_signed ? "ld16s " : "ld16 ") + reg(r) + ", [" + where + "]", at);
  else fail(at, "unsupported: run-time read of a " + g->type->str() + " variable");
  return runtime(r, g->type);
}

namespace {

// The register holding v (a run-time value), or a temporary loaded with a comptime v of type t.
int to_reg(Compiler& c, const Value& v, const TypeRef& t, Span at, Ctx& ctx) {
  using K = Value::K;
  if (v.k == K::RUNTIME) return int(v.i);
  const int r = alloc_temp(ctx, at);
  uint32_t imm = 0;
  if (v.k == K::FLOAT || (v.k == K::INT && is_float(t))) imm = float_bits(v.k == K::FLOAT ? v.f : double(v.i), is_half(t) ? t : v.type);
  else if (v.k == K::INT || v.k == K::BOOL || v.k == K::COLOR || v.k == K::TASK_ID || v.k == K::ENUM || v.k == K::QUEUE)
    imm = uint32_t(v.i);
  else if (v.k == K::POINTER) {
    c.emit(ctx, "li " + reg(r) + ", " + v.global->asm_name + " + " + std::to_string(v.offset * std::max(1, v.global->type->elem ? v.global->type->elem->byte_size() : 4)), at);
    return r;
  } else
    fail(at, "cannot use " + (v.type ? v.type->str() : v.str()) + " as a run-time value");
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%X", imm);
  c.emit(ctx, "li " + reg(r) + ", " + buf, at);
  return r;
}

// The run-time type two operands meet at.
TypeRef peer(const Value& a, const Value& b, const std::string& op, Span at) {
  const TypeRef& ta = a.type;
  const TypeRef& tb = b.type;
  const bool ra = a.k == Value::K::RUNTIME, rb = b.k == Value::K::RUNTIME;
  // A shift's amount has a type of its own (as in Zig): the result has the shifted value's type.
  if ((op == "<<" || op == ">>") && ta && ta->kind == TK::INT && (ra || a.k == Value::K::INT)) return ta;
  if (ra && rb) {
    if (same_type(ta, tb)) return ta;
    if (ta->kind == TK::INT && tb->kind == TK::INT) {
      if (ta->is_signed != tb->is_signed)
        fail(at, "operands of '" + op + "' have different signedness: " + ta->str() + " and " + tb->str() + " (convert with @as)");
      return ta->bits >= tb->bits ? ta : tb;
    }
    fail(at, "operands of '" + op + "' have different types: " + ta->str() + " and " + tb->str() + " (convert with @as)");
  }
  const TypeRef& rt = ra ? ta : tb;
  const Value& other = ra ? b : a;
  if (rt->kind == TK::INT && other.k == Value::K::FLOAT)
    fail(at, "operands of '" + op + "' mix " + rt->str() + " and a float (convert with @as)");
  if (rt->kind == TK::FLOAT && other.k != Value::K::FLOAT && other.k != Value::K::INT)
    fail(at, "operand of '" + op + "' must be a number");
  if (other.type && other.type->kind == TK::INT && rt->kind == TK::INT && !same_type(other.type, rt)) {
    if (other.type->is_signed != rt->is_signed)
      fail(at, "operands of '" + op + "' have different signedness: " + rt->str() + " and " + other.type->str());
    return rt->bits >= other.type->bits ? rt : other.type;
  }
  return rt;
}

}  // namespace

Value Compiler::gen_unary(const std::string& op, Value a, Span at, Ctx& ctx) {
  if (!ctx.gen) fail(at, "a run-time value in a comptime context");
  a = rvalue(a, at, ctx);
  const int ra = int(a.i);
  const int rd = is_temp(ra) ? ra : alloc_temp(ctx, at);
  if (op == "-") {
    if (is_float(a.type)) {
      int m = alloc_temp(ctx, at);
      emit(ctx, "li " + reg(m) + (is_half(a.type) ? ", 0x8000" : ", 0x80000000"), at);
      emit(ctx, "xor " + reg(rd) + ", " + reg(ra) + ", " + reg(m), at);
      free_temp(ctx, m);
    } else {
      int z = alloc_temp(ctx, at);
      emit(ctx, "li " + reg(z) + ", 0", at);
      emit(ctx, "sub " + reg(rd) + ", " + reg(z) + ", " + reg(ra), at);
      free_temp(ctx, z);
    }
    return carried(*this, runtime(rd, a.type), at, ctx);
  }
  if (op == "!") {
    if (a.type->kind != TK::BOOL) fail(at, "'!' needs a bool");
    emit(ctx, "xori " + reg(rd) + ", " + reg(ra) + ", 1", at);
    return runtime(rd, a.type);
  }
  if (op == "~") {
    if (a.type->kind != TK::INT) fail(at, "'~' needs an integer");
    int m = alloc_temp(ctx, at);
    emit(ctx, "li " + reg(m) + ", -1", at);
    emit(ctx, "xor " + reg(rd) + ", " + reg(ra) + ", " + reg(m), at);
    free_temp(ctx, m);
    return carried(*this, runtime(rd, a.type), at, ctx);
  }
  fail(at, "operator '" + op + "' cannot be applied to a run-time " + a.type->str());
}

Value Compiler::gen_binary(const std::string& op, Value a, Value b, Span at, Ctx& ctx) {
  if (!ctx.gen) fail(at, "a run-time value in a comptime context");
  a = rvalue(a, at, ctx);
  b = rvalue(b, at, ctx);
  if (a.k == Value::K::DSR_VAR || b.k == Value::K::DSR_VAR || a.k == Value::K::GLOBAL || b.k == Value::K::GLOBAL)
    fail(at, "operator '" + op + "' cannot be applied to a DSD or an array");
  if ((a.type && a.type->kind == TK::ENUM) || (b.type && b.type->kind == TK::ENUM)) {
    // A run-time enum (a var of an enum type) holds its tag, 16 bits: == and != compare tags.
    if (op != "==" && op != "!=") fail(at, "operator '" + op + "' cannot be applied to an enum");
    if (!a.type || !b.type || !same_type(a.type, b.type)) fail(at, "operands of '" + op + "' are not of the same enum type");
    for (Value* v : {&a, &b}) {
      if (v->k == Value::K::ENUM) v->k = Value::K::INT;
      v->type = int_type(16, false);
    }
  }
  if (op == "and" || op == "or") {
    if ((a.type && a.type->kind != TK::BOOL) || (b.type && b.type->kind != TK::BOOL)) fail(at, "'" + op + "' needs bools");
    int x = to_reg(*this, a, a.type, at, ctx);
    int y = to_reg(*this, b, b.type, at, ctx);
    int rd = is_temp(x) ? x : is_temp(y) ? y : alloc_temp(ctx, at);
    emit(ctx, std::string(op == "and" ? "and " : "or ") + reg(rd) + ", " + reg(x) + ", " + reg(y), at);
    if (rd != y) free_temp(ctx, y);
    return runtime(rd, make_type(TK::BOOL));
  }
  const TypeRef t = peer(a, b, op, at);
  if (op == "<" || op == ">" || op == "<=" || op == ">=" || op == "==" || op == "!=" || op == ">>" || op == "/" ||
      op == "%") {
    a = wrapped(*this, a, at, ctx);
    b = wrapped(*this, b, at, ctx);
  }
  // + - * << and a signed / (-128 / -1) of integers narrower than 32 bits: the register may
  // carry bits past the width.
  const bool may_carry = t->kind == TK::INT && (op == "+" || op == "-" || op == "*" || op == "<<" || (op == "/" && t->is_signed));
  auto carry = [&](Value r) { return may_carry ? carried(*this, r, at, ctx) : r; };
  if (is_half(t)) {
    // f16: each operand widened to f32 (exact), the f32 operation, the result rounded back to
    // f16. f32 has more than twice f16's precision plus two bits, so the double rounding gives
    // the correctly rounded f16 result of + - * /; comparisons are exact.
    const TypeRef f32 = float_type(32);
    auto widen = [&](const Value& v) {
      if (v.k != Value::K::RUNTIME) {
        const double x = v.k == Value::K::FLOAT ? v.f : double(to_int(v, at, "an operand"));
        return make_float(isa::fp16_to_fp32(isa::fp32_to_fp16(float(x))), f32);
      }
      const int r = int(v.i);
      const int d = is_temp(r) ? r : alloc_temp(ctx, at);
      emit(ctx, "sfh2s " + reg(d) + ", " + reg(r), at);
      return runtime(d, f32);
    };
    const Value wa = widen(a), wb = widen(b);
    Value r = gen_binary(op, wa, wb, at, ctx);
    if (r.k == Value::K::RUNTIME && r.type->kind == TK::FLOAT) {
      emit(ctx, "sfs2h " + reg(int(r.i)) + ", " + reg(int(r.i)), at);
      r.type = t;
    }
    return r;
  }
  if (t->kind == TK::FLOAT && t->bits != 32) fail(at, "unsupported: scalar " + t->str() + " arithmetic (use vector builtins on DSDs)");
  if (t->kind != TK::INT && t->kind != TK::FLOAT && t->kind != TK::BOOL)
    fail(at, "operator '" + op + "' cannot be applied to " + t->str());
  const bool fl = t->kind == TK::FLOAT;
  const bool sgn = t->kind == TK::INT && t->is_signed;
  if (!fl && a.k == Value::K::INT && b.k == Value::K::RUNTIME && (op == "+" || op == "*" || op == "&" || op == "|" || op == "^"))
    std::swap(a, b);  // commutative: the comptime operand becomes an immediate
  if (!fl && b.k == Value::K::INT && a.k == Value::K::RUNTIME) {
    if (b.i == 0 && (op == "+" || op == "-" || op == "|" || op == "^" || op == "<<" || op == ">>")) return runtime(int(a.i), t);
    if (b.i == 1 && (op == "*" || op == "/")) return runtime(int(a.i), t);
  }
  // Immediate forms for a comptime right operand.
  if (!fl && b.k == Value::K::INT && a.k == Value::K::RUNTIME) {
    const int64_t c = b.i;
    const int ra = int(a.i);
    auto into = [&] { return is_temp(ra) ? ra : alloc_temp(ctx, at); };
    if ((op == "+" || op == "-") && c >= -32767 && c <= 32767) {
      int rd = into();
      emit(ctx, "addi " + reg(rd) + ", " + reg(ra) + ", " + std::to_string(op == "+" ? c : -c), at);
      return carry(runtime(rd, t));
    }
    if ((op == "&" || op == "|" || op == "^") && c >= 0 && c <= 65535) {
      int rd = into();
      emit(ctx, std::string(op == "&" ? "andi " : op == "|" ? "ori " : "xori ") + reg(rd) + ", " + reg(ra) + ", " + std::to_string(c), at);
      return runtime(rd, t);
    }
    if ((op == "<<" || op == ">>") && c >= 0 && c <= 31) {
      int rd = into();
      emit(ctx, std::string(op == "<<" ? "shli " : sgn ? "sari " : "shri ") + reg(rd) + ", " + reg(ra) + ", " + std::to_string(c), at);
      return carry(runtime(rd, t));
    }
    if (op == "*" && c > 0 && (c & (c - 1)) == 0) {
      int rd = into();
      int sh = 0;
      while ((int64_t(1) << sh) < c) ++sh;
      emit(ctx, "shli " + reg(rd) + ", " + reg(ra) + ", " + std::to_string(sh), at);
      return carry(runtime(rd, t));
    }
  }
  const int x = to_reg(*this, a, t, at, ctx);
  const int y = to_reg(*this, b, t, at, ctx);
  const int rd = is_temp(x) ? x : is_temp(y) ? y : alloc_temp(ctx, at);
  auto three = [&](const std::string& m, int d, int s1, int s2) { emit(ctx, m + " " + reg(d) + ", " + reg(s1) + ", " + reg(s2), at); };
  auto done = [&](TypeRef rt) {
    if (rd != y) free_temp(ctx, y);
    return runtime(rd, rt);
  };
  const TypeRef boolean = make_type(TK::BOOL);
  if (op == "<" || op == ">" || op == "<=" || op == ">=") {
    const std::string m = fl ? "sflt" : sgn ? "slt" : "sltu";
    const bool swap = op == ">" || op == "<=";
    three(m, rd, swap ? y : x, swap ? x : y);
    if (op == "<=" || op == ">=") emit(ctx, "xori " + reg(rd) + ", " + reg(rd) + ", 1", at);
    return done(boolean);
  }
  if (op == "==" || op == "!=") {
    three("xor", rd, x, y);
    int k = alloc_temp(ctx, at);
    if (op == "==") {
      emit(ctx, "li " + reg(k) + ", 1", at);
      three("sltu", rd, rd, k);
    } else {
      emit(ctx, "li " + reg(k) + ", 0", at);
      three("sltu", rd, k, rd);
    }
    free_temp(ctx, k);
    return done(boolean);
  }
  if (fl) {
    const char* m = op == "+" ? "sfadd" : op == "-" ? "sfsub" : op == "*" ? "sfmul" : op == "/" ? "sfdiv" : nullptr;
    if (!m) fail(at, "operator '" + op + "' cannot be applied to floats");
    three(m, rd, x, y);
    return done(t);
  }
  if (t->kind == TK::BOOL) fail(at, "operator '" + op + "' cannot be applied to bools");
  if (op == "+" || op == "-" || op == "*" || op == "&" || op == "|" || op == "^" || op == "<<" || op == ">>") {
    const std::string m = op == "+" ? "add" : op == "-" ? "sub" : op == "*" ? "mul" : op == "&" ? "and" : op == "|" ? "or" : op == "^" ? "xor" : op == "<<" ? "shl" : sgn ? "sar" : "shr";
    three(m, rd, x, y);
    return carry(done(t));
  }
  if (op == "/" || op == "%") {
    if (!sgn) {
      three(op == "/" ? "divu" : "remu", rd, x, y);
      return done(t);
    }
    // Signed: divide the magnitudes, then give the quotient the sign of x ^ y (the remainder x's).
    const int sx = alloc_temp(ctx, at), sy = alloc_temp(ctx, at), ax = alloc_temp(ctx, at), ay = alloc_temp(ctx, at);
    emit(ctx, "sari " + reg(sx) + ", " + reg(x) + ", 31", at);
    emit(ctx, "sari " + reg(sy) + ", " + reg(y) + ", 31", at);
    three("xor", ax, x, sx);
    three("sub", ax, ax, sx);
    three("xor", ay, y, sy);
    three("sub", ay, ay, sy);
    three(op == "/" ? "divu" : "remu", ax, ax, ay);
    if (op == "/") three("xor", sx, sx, sy);
    three("xor", ax, ax, sx);
    three("sub", rd, ax, sx);
    free_temp(ctx, ay);
    free_temp(ctx, ax);
    free_temp(ctx, sy);
    free_temp(ctx, sx);
    return carry(done(t));
  }
  fail(at, "operator '" + op + "' cannot be applied to " + t->str());
}

Value Compiler::gen_convert(const Value& v0, const TypeRef& t, Span at, Ctx& ctx) {
  Value v = rvalue(v0, at, ctx);
  if (v.k != Value::K::RUNTIME) fail(at, "@as cannot convert " + (v.type ? v.type->str() : v.str()) + " to " + t->str());
  if (!same_type(v.type, t)) v = wrapped(*this, v, at, ctx);
  const TypeRef& from = v.type;
  const int ra = int(v.i);
  if (same_type(from, t)) return v;
  auto dest = [&] { return is_temp(ra) ? ra : alloc_temp(ctx, at); };
  if (is_half(from) || is_half(t)) {
    // Through f32: f16 -> f32 is exact; an integer -> f16 rounds twice only past 2^24.
    int rd = dest();
    int src = ra;
    if (is_half(from)) {
      emit(ctx, "sfh2s " + reg(rd) + ", " + reg(src), at);
      src = rd;
    } else if (from->kind == TK::INT || from->kind == TK::BOOL) {
      emit(ctx, "sfcvt " + reg(rd) + ", " + reg(src), at);
      src = rd;
    } else if (from->kind != TK::FLOAT) {
      fail(at, "@as cannot convert a run-time " + from->str() + " to " + t->str());
    }
    if (is_half(t)) emit(ctx, "sfs2h " + reg(rd) + ", " + reg(src), at);
    else if (t->kind == TK::INT) emit(ctx, "sfint " + reg(rd) + ", " + reg(src), at);
    else if (t->kind != TK::FLOAT) fail(at, "@as cannot convert a run-time " + from->str() + " to " + t->str());
    else if (src != rd) emit(ctx, "mov " + reg(rd) + ", " + reg(src), at);
    return runtime(rd, t);
  }
  if ((from->kind == TK::FLOAT && from->bits != 32) || (t->kind == TK::FLOAT && t->bits != 32))
    fail(at, "unsupported: run-time conversion to or from " + std::string(from->kind == TK::FLOAT && from->bits != 32 ? from->str() : t->str()));
  if ((from->kind == TK::INT || from->kind == TK::BOOL) && t->kind == TK::FLOAT) {
    int rd = dest();
    emit(ctx, "sfcvt " + reg(rd) + ", " + reg(ra), at);
    return runtime(rd, t);
  }
  if (from->kind == TK::FLOAT && t->kind == TK::INT) {
    int rd = dest();
    emit(ctx, "sfint " + reg(rd) + ", " + reg(ra), at);
    return runtime(rd, t);
  }
  if ((from->kind == TK::INT || from->kind == TK::BOOL) && t->kind == TK::INT) {
    const int fb = from->kind == TK::BOOL ? 1 : from->bits;
    if (t->bits >= 32 || (t->bits > fb && (t->is_signed || from->kind == TK::BOOL || !from->is_signed))) {
      Value r = v;
      r.type = t;
      return r;
    }
    int rd = dest();
    if (t->is_signed) {
      emit(ctx, "shli " + reg(rd) + ", " + reg(ra) + ", " + std::to_string(32 - t->bits), at);
      emit(ctx, "sari " + reg(rd) + ", " + reg(rd) + ", " + std::to_string(32 - t->bits), at);
    } else {
      emit(ctx, "andi " + reg(rd) + ", " + reg(ra) + ", " + std::to_string((1 << t->bits) - 1), at);
    }
    return runtime(rd, t);
  }
  if (from->kind == TK::BOOL && t->kind == TK::BOOL) return v;
  fail(at, "@as cannot convert a run-time " + from->str() + " to " + t->str());
}

int value_reg(Compiler& c, const Value& v0, const TypeRef& t, Span at, Ctx& ctx) {
  Value v = c.rvalue(v0, at, ctx);
  if (v.k == Value::K::RUNTIME) return int(v.i);
  Value cv = t ? c.coerce(v, t, at, ctx) : v;
  const int r = alloc_temp(ctx, at);
  uint32_t imm = 0;
  if (cv.k == Value::K::FLOAT) imm = float_bits(cv.f, cv.type);
  else if (cv.k == Value::K::POINTER) {
    const int eb = cv.global->type->kind == TK::ARRAY ? cv.global->type->elem->byte_size() : cv.global->type->byte_size();
    c.emit(ctx, "li " + reg(r) + ", " + cv.global->asm_name + " + " + std::to_string(cv.offset * eb), at);
    return r;
  } else if (cv.k == Value::K::INT || cv.k == Value::K::BOOL || cv.k == Value::K::COLOR || cv.k == Value::K::TASK_ID ||
             cv.k == Value::K::ENUM)
    imm = uint32_t(cv.i);
  else
    fail(at, "cannot use " + (cv.type ? cv.type->str() : cv.str()) + " as a run-time value");
  c.emit(ctx, "li " + reg(r) + ", " + hex(imm), at);
  return r;
}

bool needs_wrap(const Value& v) {
  return v.k == Value::K::RUNTIME && v.unwrapped && v.type && v.type->kind == TK::INT && v.type->bits < 32;
}

void wrap_into(Compiler& c, int dst, const Value& v, Span at, Ctx& ctx) {
  const int src = int(v.i), bits = v.type->bits;
  if (v.type->is_signed) {
    c.emit(ctx, "shli " + reg(dst) + ", " + reg(src) + ", " + std::to_string(32 - bits), at);
    c.emit(ctx, "sari " + reg(dst) + ", " + reg(dst) + ", " + std::to_string(32 - bits), at);
  } else {
    c.emit(ctx, "andi " + reg(dst) + ", " + reg(src) + ", " + std::to_string((1 << bits) - 1), at);
  }
}

Value wrapped(Compiler& c, const Value& v, Span at, Ctx& ctx) {
  if (!needs_wrap(v)) return v;
  wrap_into(c, int(v.i), v, at, ctx);
  Value r = v;
  r.unwrapped = false;
  return r;
}

void load_into(Compiler& c, int dst, const Value& v, const TypeRef& t, Span at, Ctx& ctx) {
  Value r = c.rvalue(v, at, ctx);
  if (r.k == Value::K::RUNTIME) {
    if (needs_wrap(r)) wrap_into(c, dst, r, at, ctx);
    else if (int(r.i) != dst) c.emit(ctx, "mov " + reg(dst) + ", " + reg(int(r.i)), at);
    return;
  }
  Value cv = t ? c.coerce(r, t, at, ctx) : r;
  if (cv.k == Value::K::FLOAT) c.emit(ctx, "li " + reg(dst) + ", " + hex(float_bits(cv.f, cv.type)), at);
  else if (cv.k == Value::K::INT || cv.k == Value::K::BOOL || cv.k == Value::K::COLOR || cv.k == Value::K::TASK_ID || cv.k == Value::K::ENUM)
    c.emit(ctx, "li " + reg(dst) + ", " + std::to_string(int64_t(int32_t(uint32_t(cv.i)))), at);
  else {
    int x = value_reg(c, cv, t, at, ctx);
    c.emit(ctx, "mov " + reg(dst) + ", " + reg(x), at);
    free_temp(ctx, x);
  }
}

ElementRef element_ref(Compiler& c, const Value& base, const std::vector<Value>& idx, const std::vector<Span>& spans, Span at, Ctx& ctx) {
  const TypeRef& bt = base.type;
  const bool ptr_to_array = bt && bt->kind == TK::PTR && bt->elem && bt->elem->kind == TK::ARRAY;
  if ((base.k == Value::K::RUNTIME || base.k == Value::K::POINTER) && bt && bt->kind == TK::PTR && !ptr_to_array)
    fail(at, "a single-item pointer (" + bt->str() + ") cannot be indexed: its value is p.*; index a [*]T or a *[N]T");
  // A run-time pointer (a register) or a comptime one (&global[k], a param set to &array) is a
  // place like an array: element i lies at the pointer plus i times the pointee's element size.
  const bool place = base.k == Value::K::RUNTIME && (bt->kind == TK::ARRAY || bt->kind == TK::MANY_PTR || ptr_to_array);
  const bool at_pointer = base.k == Value::K::POINTER && base.global && (bt->kind == TK::MANY_PTR || ptr_to_array);
  if (!place && !at_pointer && (base.k != Value::K::GLOBAL || base.global->type->kind != TK::ARRAY))
    fail(at, "only arrays and pointers to arrays can be indexed at run time, found " + (bt ? bt->str() : base.str()));
  GlobalVar* g = place ? nullptr : base.global;
  const TypeRef at_type = ptr_to_array ? bt->elem : (place || at_pointer) ? bt : g->type;
  // A comptime pointer's offset counts elements of the array it points into (value.hpp).
  int64_t base_bytes = 0;
  if (at_pointer) {
    const TypeRef& gt = g->type;
    base_bytes = base.offset * (gt->kind == TK::ARRAY ? gt->elem->byte_size() : gt->byte_size());
  }
  std::vector<int64_t> dims = at_type->kind == TK::MANY_PTR ? std::vector<int64_t>{INT32_MAX} : at_type->dims;
  if (at_pointer && at_type->kind == TK::MANY_PTR && at_type->elem->byte_size() > 0)  // what is left of the array
    dims = {std::max<int64_t>(0, (g->type->byte_size() - base_bytes) / at_type->elem->byte_size())};
  const std::string name = g && !at_pointer ? g->csl_name : g ? "the array '" + g->csl_name + "' points into" : "the pointed-to array";
  if (idx.size() != dims.size()) fail(at, name + " has " + std::to_string(dims.size()) + " dimension" + (dims.size() == 1 ? "" : "s"));
  ElementRef r;
  r.g = g;
  r.base_reg = place ? int(base.i) : -1;
  r.elem = at_type->elem;
  const int eb = r.elem->byte_size();
  // flat = ((i0 * d1 + i1) * d2 + i2) ...; comptime parts fold.
  Value flat;
  for (size_t d = 0; d < idx.size(); ++d) {
    Value i = c.rvalue(idx[d], at, ctx);
    if (i.k == Value::K::INT && (i.i < 0 || i.i >= dims[d]))
      fail(d < spans.size() ? spans[d] : at, "index " + std::to_string(i.i) + " is out of bounds for '" + name + "' (0.." + std::to_string(dims[d] - 1) + ")");
    if (i.k == Value::K::RUNTIME && i.type->kind != TK::INT) fail(at, "an index must be an integer, found " + i.type->str());
    if (i.k != Value::K::RUNTIME && i.k != Value::K::INT) fail(at, "an index must be an integer");
    if (d == 0) {
      flat = i;
      continue;
    }
    flat = c.binary("*", flat, make_int(dims[d]), at, ctx);
    flat = c.binary("+", flat, i, at, ctx);
  }
  if (flat.k == Value::K::INT) {
    r.const_bytes = base_bytes + flat.i * eb;
    if (g && ctx.gen->p->far_data) {
      r.base_reg = alloc_temp(ctx, at);
      c.emit(ctx, "li " + reg(r.base_reg) + ", " + g->asm_name + " + " + std::to_string(r.const_bytes), at);
      r.const_bytes = 0;
      r.g = nullptr;
    }
    return r;
  }
  Value bytes = c.binary("*", flat, make_int(eb), at, ctx);
  r.addr_reg = int(bytes.i);
  if (!is_temp(r.addr_reg)) {  // a local used directly as the index: copy, the address is scratch
    int t = alloc_temp(ctx, at);
    c.emit(ctx, "mov " + reg(t) + ", " + reg(r.addr_reg), at);
    r.addr_reg = t;
  }
  if (!g) c.emit(ctx, "add " + reg(r.addr_reg) + ", " + reg(r.addr_reg) + ", " + reg(r.base_reg), at);
  r.const_bytes = base_bytes;  // with a global: folded into the operand, [rA + array + bytes]
  if (g && ctx.gen->p->far_data) {
    const int t = alloc_temp(ctx, at);
    c.emit(ctx, "li " + reg(t) + ", " + g->asm_name + (base_bytes ? " + " + std::to_string(base_bytes) : ""), at);
    c.emit(ctx, "add " + reg(r.addr_reg) + ", " + reg(r.addr_reg) + ", " + reg(t), at);
    free_temp(ctx, t);
    r.g = nullptr;
    r.const_bytes = 0;
  }
  return r;
}

// &a[i, j] with a run-time index: the element's byte address in a register.
Value Compiler::gen_element_address(const Value& array, const std::vector<Value>& idx, Span at, const TypeRef& ptr_type, Ctx& ctx) {
  const ElementRef r = element_ref(*this, array, idx, {}, at, ctx);
  int a = r.addr_reg >= 0 ? r.addr_reg : r.base_reg;
  if (a >= 0 && !is_temp(a)) {  // a local pointer variable's own register: the sum goes elsewhere
    const int t = alloc_temp(ctx, at);
    emit(ctx, "mov " + reg(t) + ", " + reg(a), at);
    a = t;
  }
  if (a < 0) {
    a = alloc_temp(ctx, at);
    emit(ctx, "li " + reg(a) + ", " + r.g->asm_name + " + " + std::to_string(r.const_bytes), at);
    return runtime(a, ptr_type);
  }
  if (r.g) {  // a byte offset relative to the array
    const int b = alloc_temp(ctx, at);
    emit(ctx, "li " + reg(b) + ", " + r.g->asm_name + " + " + std::to_string(r.const_bytes), at);
    emit(ctx, "add " + reg(a) + ", " + reg(a) + ", " + reg(b), at);
    free_temp(ctx, b);
  } else if (r.addr_reg < 0 && r.const_bytes != 0) {
    emit(ctx, "addi " + reg(a) + ", " + reg(a) + ", " + std::to_string(r.const_bytes), at);
  }
  return runtime(a, ptr_type);
}

std::string mem_operand(const ElementRef& r) {
  if (!r.g) {
    if (r.addr_reg >= 0) return "[" + reg(r.addr_reg) + "]";
    return "[" + reg(r.base_reg) + (r.const_bytes ? " + " + std::to_string(r.const_bytes) : "") + "]";
  }
  if (r.addr_reg < 0) return "[" + r.g->asm_name + (r.const_bytes ? " + " + std::to_string(r.const_bytes) : "") + "]";
  return "[" + reg(r.addr_reg) + " + " + r.g->asm_name + (r.const_bytes ? " + " + std::to_string(r.const_bytes) : "") + "]";
}

std::string load_mnemonic(const TypeRef& t, Span at) {
  const int eb = t->byte_size();
  if (eb == 4) return "ld32 ";
  if (eb == 2) return t->kind == TK::INT && t->is_signed ? "ld16s " : "ld16 ";
  fail(at, "unsupported: run-time access to a " + t->str());
}

}  // namespace wsemu::compiler::csl
