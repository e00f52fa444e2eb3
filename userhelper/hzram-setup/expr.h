// SPDX-License-Identifier: GPL-2.0
//
// The arithmetic of zram-size and zram-resident-limit in hzram.conf: the
// expression language of zram-generator (fasteval's), with standard
// operator precedence. See Documentation/man/hzram.conf.5.
#ifndef HZRAM_SETUP_EXPR_H
#define HZRAM_SETUP_EXPR_H

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace hzsetup {

using Variables = std::map<std::string, double, std::less<>>;

// What is wrong with an expression, and where: @column counts characters
// from 1; one past the last for an expression that ends too early.
struct ExprError {
  std::size_t column = 0;
  std::string message;
  // "column N: MESSAGE"
  std::string ToString() const;
};

class Expression {
 public:
  // Parses @text. Functions are checked here (name and number of
  // arguments); variables when evaluated. False and *error if @text is
  // not an expression.
  bool Parse(std::string_view text, ExprError* error);

  // The value, with @vars for the variables. False and *error for a
  // variable that is not in @vars (the only error: arithmetic gives inf
  // or NaN, which the caller judges).
  bool Evaluate(const Variables& vars, double* value, ExprError* error) const;

  const std::string& text() const { return text_; }

  // Longest expression, deepest nesting accepted.
  static constexpr std::size_t kMaxLength = 4096;
  static constexpr int kMaxDepth = 64;

 private:
  enum class Op {
    kConst,
    kVar,
    kCall,
    kNeg,
    kPos,
    kNot,
    kAdd,
    kSub,
    kMul,
    kDiv,
    kMod,
    kPow,
    kLt,
    kLe,
    kGt,
    kGe,
    kEq,
    kNe,
    kAnd,
    kOr,
  };
  struct Node {
    Op op = Op::kConst;
    double value = 0;        // kConst
    std::string name;        // kVar
    int function = -1;       // kCall: index in the function table
    std::vector<int> args;   // operands, or the call's arguments
    std::size_t offset = 0;  // its first byte in the text, for errors
  };

  class Parser;
  bool Eval(int node, const Variables& vars, double* value, ExprError* error) const;

  std::string text_;
  std::vector<Node> nodes_;
  int root_ = -1;
};

// The functions an expression may call, "name(args)", for the man page and
// the tests, in the order of the table.
std::vector<std::string> FunctionNames();

}  // namespace hzsetup

#endif  // HZRAM_SETUP_EXPR_H
