// Integer expressions of the layout language: parsing, precedence, binding and evaluation,
// against values worked out by hand with C's rules.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "compiler/layout/expression.hpp"
#include "compiler/layout/parser.hpp"

namespace wsemu::compiler::layout {
namespace {

struct Evaluated {
  int64_t value = 0;
  std::string error;  // "line:col message", empty on success
};

// Scope: M = 8 and N = 6 are constants; x and y are frame slots 0 and 1.
Evaluated eval(const std::string& text, std::vector<int64_t> frame = {3, 1}) {
  SourceText source("expr", text);
  ExprParseResult parsed = parse_expression(source, text);
  if (!parsed.errors.empty())
    return {0, std::to_string(parsed.errors[0].line) + ":" + std::to_string(parsed.errors[0].col) +
                   " " + parsed.errors[0].message};
  Scope scope;
  scope.define_constant("M", 8);
  scope.define_constant("N", 6);
  scope.define_slot("x", 0);
  scope.define_slot("y", 1);
  scope.define_unavailable("fx", "fx is not available here");
  if (auto err = scope.bind(*parsed.expr))
    return {0, std::to_string(err->loc.line) + ":" + std::to_string(err->loc.col) + " " +
                   err->message};
  try {
    return {evaluate(*parsed.expr, frame), ""};
  } catch (const EvalError& e) {
    return {0, std::to_string(e.loc.line) + ":" + std::to_string(e.loc.col) + " " + e.message};
  }
}

int64_t value(const std::string& text, std::vector<int64_t> frame = {3, 1}) {
  Evaluated e = eval(text, frame);
  EXPECT_EQ(e.error, "") << text;
  return e.value;
}

TEST(LayoutExpression, ArithmeticAndPrecedence) {
  EXPECT_EQ(value("1 + 2 * 3"), 7);
  EXPECT_EQ(value("(1 + 2) * 3"), 9);
  EXPECT_EQ(value("10 - 4 - 3"), 3);  // left associative
  EXPECT_EQ(value("7 / 2"), 3);
  EXPECT_EQ(value("-7 / 2"), -3);  // truncation toward zero, as in C
  EXPECT_EQ(value("-7 % 3"), -1);
  EXPECT_EQ(value("7 % -3"), 1);
  EXPECT_EQ(value("2 * -3"), -6);
  EXPECT_EQ(value("--4"), 4);
  EXPECT_EQ(value("0x10 + 0b101"), 21);
  EXPECT_EQ(value("1 << 4 + 1"), 32);  // + binds tighter than <<
  EXPECT_EQ(value("-16 >> 2"), -4);    // arithmetic shift
  EXPECT_EQ(value("1 | 2 ^ 3 & 1"), 3);  // & then ^ then |: 3&1=1, 2^1=3, 1|3=3
  EXPECT_EQ(value("~0"), -1);
}

TEST(LayoutExpression, ComparisonsLogicAndConditionals) {
  EXPECT_EQ(value("3 < 4"), 1);
  EXPECT_EQ(value("3 >= 4"), 0);
  EXPECT_EQ(value("3 < 4 == 1"), 1);  // relational binds tighter than equality
  EXPECT_EQ(value("1 + 1 == 2 && 2 != 3"), 1);
  EXPECT_EQ(value("0 || 0"), 0);
  EXPECT_EQ(value("!5"), 0);
  EXPECT_EQ(value("!0"), 1);
  EXPECT_EQ(value("1 ? 10 : 20"), 10);
  EXPECT_EQ(value("0 ? 10 : 20"), 20);
  EXPECT_EQ(value("0 ? 1 : 0 ? 2 : 3"), 3);  // right associative
  EXPECT_EQ(value("1 ? 0 ? 4 : 5 : 6"), 5);
  EXPECT_EQ(value("true + true"), 2);
  EXPECT_EQ(value("min(3, -1, 2)"), -1);
  EXPECT_EQ(value("max(3, -1, 2)"), 3);
  EXPECT_EQ(value("abs(-5) + abs(5)"), 10);
}

TEST(LayoutExpression, NamesConstantsAndSlots) {
  EXPECT_EQ(value("M / 2 + N"), 10);
  EXPECT_EQ(value("x"), 3);
  EXPECT_EQ(value("x * 10 + y", {2, 5}), 25);
  EXPECT_EQ(value("x % 2 == 0 ? M : N", {4, 0}), 8);
  EXPECT_EQ(value("x % 2 == 0 ? M : N", {5, 0}), 6);
  EXPECT_EQ(eval("Q + 1").error, "1:1 undefined name 'Q'");
  EXPECT_EQ(eval("1 + fx").error, "1:5 fx is not available here");
}

TEST(LayoutExpression, ShortCircuitSkipsTheOtherOperand) {
  EXPECT_EQ(value("0 && 1 / 0"), 0);
  EXPECT_EQ(value("1 || 1 / 0"), 1);
  EXPECT_EQ(value("1 ? 5 : 1 / 0"), 5);
  EXPECT_EQ(value("x == 0 ? 0 : M / x", {0, 0}), 0);
}

TEST(LayoutExpression, ErrorsInsteadOfUndefinedBehaviour) {
  EXPECT_EQ(eval("M / (x - 3)").error, "1:3 division by zero");
  EXPECT_EQ(eval("M % 0").error, "1:3 remainder by zero");
  EXPECT_EQ(eval("9223372036854775807 + 1").error, "1:21 integer overflow in expression");
  EXPECT_EQ(eval("-(-9223372036854775807 - 1)").error, "1:1 integer overflow in expression");
  EXPECT_EQ(eval("(-9223372036854775807 - 1) / -1").error, "1:28 integer overflow in expression");
  EXPECT_EQ(eval("3037000500 * 3037000500").error, "1:12 integer overflow in expression");
  EXPECT_EQ(eval("1 << 64").error, "1:3 shift amount 64 is outside 0..63");
  EXPECT_EQ(eval("1 << 63").error, "1:3 integer overflow in expression");
  EXPECT_EQ(eval("1 >> -1").error, "1:3 shift amount -1 is outside 0..63");
  EXPECT_EQ(eval("99999999999999999999").error,
            "1:1 number does not fit in a signed 64-bit integer");
}

TEST(LayoutExpression, SyntaxErrorsHavePositions) {
  EXPECT_EQ(eval("1 +").error, "1:4 expected an expression, found end of file");
  EXPECT_EQ(eval("(1 + 2").error, "1:7 expected ')' to close the parenthesis, found end of file");
  EXPECT_EQ(eval("1 ? 2").error,
            "1:6 expected ':' in the conditional expression (c ? a : b), found end of file");
  EXPECT_EQ(eval("sqrt(4)").error, "1:1 unknown function 'sqrt' (available: min, max, abs)");
  EXPECT_EQ(eval("abs(1, 2)").error, "1:1 abs() takes 1 argument, got 2");
  EXPECT_EQ(eval("min(1)").error, "1:1 min() takes at least 2 arguments, got 1");
  EXPECT_EQ(eval("1 2").error, "1:3 unexpected number 2 after the expression");
  EXPECT_EQ(eval("1 $ 2").error, "1:3 unexpected character '$'");
  EXPECT_NE(eval(std::string(500, '(') + "1" + std::string(500, ')')).error.find("nested too deeply"),
            std::string::npos);
}

}  // namespace
}  // namespace wsemu::compiler::layout
