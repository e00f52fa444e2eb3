// SPDX-License-Identifier: GPL-2.0
#include "expr.h"

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <numbers>
#include <utility>

namespace hzsetup {
namespace {

struct Function {
  const char* name;
  int min_args, max_args;  // max -1: any number
  double (*fn)(const std::vector<double>& a);
};

double Log(const std::vector<double>& a) {
  const double base = a.size() == 2 ? a[0] : 10, x = a.back();
  if (base == 2) return std::log2(x);
  if (base == 10) return std::log10(x);
  return std::log(x) / std::log(base);
}

double Round(const std::vector<double>& a) {
  const double modulus = a.size() == 2 ? a[0] : 1;
  return std::round(a.back() / modulus) * modulus;
}

double Sign(const std::vector<double>& a) {
  return std::isnan(a[0]) ? a[0] : std::copysign(1.0, a[0]);
}

// min and max: NaN if any argument is NaN, as fasteval.
double Min(const std::vector<double>& a) {
  double m = a[0];
  for (double v : a) {
    if (std::isnan(v)) return v;
    if (v < m) m = v;
  }
  return m;
}

double Max(const std::vector<double>& a) {
  double m = a[0];
  for (double v : a) {
    if (std::isnan(v)) return v;
    if (v > m) m = v;
  }
  return m;
}

#define HZ_UNARY(NAME, EXPR)                                 \
  {                                                          \
    NAME, 1, 1, [](const std::vector<double>& a) -> double { \
      const double x = a[0];                                 \
      return EXPR;                                           \
    }                                                        \
  }

const Function kFunctions[] = {
    {"min", 1, -1, Min},
    {"max", 1, -1, Max},
    HZ_UNARY("int", std::trunc(x)),
    HZ_UNARY("ceil", std::ceil(x)),
    HZ_UNARY("floor", std::floor(x)),
    {"round", 1, 2, Round},
    HZ_UNARY("abs", std::fabs(x)),
    {"sign", 1, 1, Sign},
    {"log", 1, 2, Log},
    {"e", 0, 0, [](const std::vector<double>&) { return std::numbers::e; }},
    {"pi", 0, 0, [](const std::vector<double>&) { return std::numbers::pi; }},
    HZ_UNARY("sin", std::sin(x)),
    HZ_UNARY("cos", std::cos(x)),
    HZ_UNARY("tan", std::tan(x)),
    HZ_UNARY("asin", std::asin(x)),
    HZ_UNARY("acos", std::acos(x)),
    HZ_UNARY("atan", std::atan(x)),
    HZ_UNARY("sinh", std::sinh(x)),
    HZ_UNARY("cosh", std::cosh(x)),
    HZ_UNARY("tanh", std::tanh(x)),
    HZ_UNARY("asinh", std::asinh(x)),
    HZ_UNARY("acosh", std::acosh(x)),
    HZ_UNARY("atanh", std::atanh(x)),
};
#undef HZ_UNARY

// fasteval's SI suffixes of numbers, and the powers of ten they stand for.
const std::pair<std::string_view, int> kSuffixes[] = {
    {"k", 3},  {"K", 3},   {"M", 6},  {"G", 9},
    {"T", 12}, {"m", -3},  {"u", -6}, {"\xc2\xb5", -6},  // µ
    {"n", -9}, {"p", -12},
};

int FindFunction(std::string_view name) {
  for (int i = 0; i < static_cast<int>(std::size(kFunctions)); i++)
    if (name == kFunctions[i].name) return i;
  return -1;
}

std::string ArgCountError(const Function& f, std::size_t given) {
  const std::string name = std::string(f.name) + "()";
  const std::string n = std::to_string(given);
  if (f.max_args == 0) return name + " takes no arguments, not " + n;
  if (f.max_args < 0) return name + " takes at least " + std::to_string(f.min_args) + " argument";
  if (f.min_args == f.max_args)
    return name + " takes " + std::to_string(f.min_args) + " argument" +
           (f.min_args == 1 ? "" : "s") + ", not " + n;
  return name + " takes " + std::to_string(f.min_args) + " or " + std::to_string(f.max_args) +
         " arguments, not " + n;
}

// fasteval's equality: within 8 epsilons.
bool NearlyEqual(double a, double b) { return std::fabs(a - b) <= 8 * DBL_EPSILON; }

// The column (from 1, in characters) of byte @pos of @s.
std::size_t ColumnOf(std::string_view s, std::size_t pos) {
  std::size_t column = 1;
  for (std::size_t i = 0; i < pos && i < s.size(); i++)
    if ((static_cast<unsigned char>(s[i]) & 0xc0) != 0x80) column++;
  return column + (pos > s.size() ? pos - s.size() : 0);
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c); }

}  // namespace

std::string ExprError::ToString() const {
  return "column " + std::to_string(column) + ": " + message;
}

std::vector<std::string> FunctionNames() {
  std::vector<std::string> names;
  for (const Function& f : kFunctions) names.push_back(f.name);
  return names;
}

// Recursive descent, lowest precedence first:
//   or:      and ('||' and)*
//   and:     compare ('&&' compare)*
//   compare: sum (('==' | '!=' | '<' | '<=' | '>' | '>=') sum)*
//   sum:     product (('+' | '-') product)*
//   product: unary (('*' | '/' | '%') unary)*
//   unary:   ('-' | '+' | '!') unary | power
//   power:   primary ('^' unary)?          (right-associative)
//   primary: number | name | name '(' [or (',' or)*] ')' | '(' or ')'
class Expression::Parser {
 public:
  Parser(Expression* e, ExprError* error) : e_(e), s_(e->text_), error_(error) {}

  bool Run() {
    if (s_.size() > kMaxLength) return Fail(kMaxLength, "expression longer than 4096 characters");
    int root;
    if (!Or(0, &root)) return false;
    SkipSpaces();
    if (pos_ < s_.size()) return Fail(pos_, "expected an operator, found " + Found());
    e_->root_ = root;
    return true;
  }

 private:
  bool Fail(std::size_t pos, std::string message) {
    *error_ = {ColumnOf(s_, pos), std::move(message)};
    return false;
  }

  void SkipSpaces() {
    while (pos_ < s_.size() && IsSpace(s_[pos_])) pos_++;
  }

  // The token at pos_, quoted, for messages; "the end" past the text.
  std::string Found() {
    if (pos_ >= s_.size()) return "the end";
    std::size_t end = pos_ + 1;
    if (IsNameChar(s_[pos_]) || s_[pos_] == '.') {
      while (end < s_.size() && (IsNameChar(s_[end]) || s_[end] == '.')) end++;
    } else {
      while (end < s_.size() && (static_cast<unsigned char>(s_[end]) & 0xc0) == 0x80) end++;
    }
    return "'" + std::string(s_.substr(pos_, end - pos_)) + "'";
  }

  // Takes @op at pos_ (after spaces) if it is there, and is not the start
  // of a longer operator in @not_followed_by.
  bool Take(std::string_view op, char not_followed_by = 0) {
    SkipSpaces();
    if (s_.substr(pos_, op.size()) != op) return false;
    if (not_followed_by && pos_ + op.size() < s_.size() && s_[pos_ + op.size()] == not_followed_by)
      return false;
    pos_ += op.size();
    return true;
  }

  int Add(Node node) {
    e_->nodes_.push_back(std::move(node));
    return static_cast<int>(e_->nodes_.size() - 1);
  }

  int Binary(Op op, int left, int right, std::size_t offset) {
    Node n;
    n.op = op;
    n.args = {left, right};
    n.offset = offset;
    return Add(std::move(n));
  }

  bool Deeper(int depth) {
    if (depth < kMaxDepth) return true;
    return Fail(pos_, "expression nested more than " + std::to_string(kMaxDepth) + " deep");
  }

  bool Or(int depth, int* out) {
    if (!Deeper(depth) || !And(depth, out)) return false;
    for (;;) {
      const std::size_t at = (SkipSpaces(), pos_);
      if (!Take("||")) return true;
      int right;
      if (!And(depth, &right)) return false;
      *out = Binary(Op::kOr, *out, right, at);
    }
  }

  bool And(int depth, int* out) {
    if (!Compare(depth, out)) return false;
    for (;;) {
      const std::size_t at = (SkipSpaces(), pos_);
      if (!Take("&&")) return true;
      int right;
      if (!Compare(depth, &right)) return false;
      *out = Binary(Op::kAnd, *out, right, at);
    }
  }

  bool Compare(int depth, int* out) {
    if (!Sum(depth, out)) return false;
    for (;;) {
      const std::size_t at = (SkipSpaces(), pos_);
      Op op;
      if (Take("=="))
        op = Op::kEq;
      else if (Take("!="))
        op = Op::kNe;
      else if (Take("<="))
        op = Op::kLe;
      else if (Take(">="))
        op = Op::kGe;
      else if (Take("<"))
        op = Op::kLt;
      else if (Take(">"))
        op = Op::kGt;
      else
        return true;
      int right;
      if (!Sum(depth, &right)) return false;
      *out = Binary(op, *out, right, at);
    }
  }

  bool Sum(int depth, int* out) {
    if (!Product(depth, out)) return false;
    for (;;) {
      const std::size_t at = (SkipSpaces(), pos_);
      Op op;
      if (Take("+"))
        op = Op::kAdd;
      else if (Take("-"))
        op = Op::kSub;
      else
        return true;
      int right;
      if (!Product(depth, &right)) return false;
      *out = Binary(op, *out, right, at);
    }
  }

  bool Product(int depth, int* out) {
    if (!Unary(depth, out)) return false;
    for (;;) {
      const std::size_t at = (SkipSpaces(), pos_);
      Op op;
      if (Take("*"))
        op = Op::kMul;
      else if (Take("/"))
        op = Op::kDiv;
      else if (Take("%"))
        op = Op::kMod;
      else
        return true;
      int right;
      if (!Unary(depth, &right)) return false;
      *out = Binary(op, *out, right, at);
    }
  }

  bool Unary(int depth, int* out) {
    if (!Deeper(depth)) return false;
    const std::size_t at = (SkipSpaces(), pos_);
    Op op;
    if (Take("-"))
      op = Op::kNeg;
    else if (Take("+"))
      op = Op::kPos;
    else if (Take("!", '='))
      op = Op::kNot;
    else
      return Power(depth, out);
    int operand;
    if (!Unary(depth + 1, &operand)) return false;
    Node n;
    n.op = op;
    n.args = {operand};
    n.offset = at;
    *out = Add(std::move(n));
    return true;
  }

  bool Power(int depth, int* out) {
    if (!Primary(depth, out)) return false;
    const std::size_t at = (SkipSpaces(), pos_);
    if (!Take("^")) return true;
    int right;
    if (!Unary(depth + 1, &right)) return false;
    *out = Binary(Op::kPow, *out, right, at);
    return true;
  }

  bool Primary(int depth, int* out) {
    SkipSpaces();
    const std::size_t at = pos_;
    if (pos_ >= s_.size()) return Fail(pos_, "expected a number, a name or '(', found the end");
    const char c = s_[pos_];
    if (IsDigit(c) || c == '.') return Number(out);
    if (c == '(') {
      pos_++;
      if (!Or(depth + 1, out)) return false;
      SkipSpaces();
      if (pos_ >= s_.size())
        return Fail(pos_, "missing ')' to close the '(' of column " + Column(at));
      if (!Take(")")) return Fail(pos_, "expected an operator or ')', found " + Found());
      return true;
    }
    if (!IsNameStart(c)) return Fail(pos_, "expected a number, a name or '(', found " + Found());
    std::size_t end = pos_;
    while (end < s_.size() && IsNameChar(s_[end])) end++;
    const std::string name(s_.substr(pos_, end - pos_));
    pos_ = end;
    SkipSpaces();
    if (pos_ >= s_.size() || s_[pos_] != '(') {
      Node n;
      n.op = Op::kVar;
      n.name = name;
      n.offset = at;
      *out = Add(std::move(n));
      return true;
    }
    const int f = FindFunction(name);
    if (f < 0) return Fail(at, "unknown function '" + name + "'");
    pos_++;  // '('
    Node call;
    call.op = Op::kCall;
    call.function = f;
    call.offset = at;
    if (!Take(")")) {
      for (;;) {
        int arg;
        if (!Or(depth + 1, &arg)) return false;
        call.args.push_back(arg);
        SkipSpaces();
        if (pos_ >= s_.size())
          return Fail(pos_, "missing ')' to close '" + name + "(' of column " + Column(at));
        if (Take(")")) break;
        if (!Take(",")) return Fail(pos_, "expected an operator, ',' or ')', found " + Found());
      }
    }
    const Function& fn = kFunctions[f];
    const int n = static_cast<int>(call.args.size());
    if (n < fn.min_args || (fn.max_args >= 0 && n > fn.max_args))
      return Fail(at, ArgCountError(fn, call.args.size()));
    *out = Add(std::move(call));
    return true;
  }

  // Digits with at most one '.', then an exponent (e or E, a sign, digits)
  // or an SI suffix (fasteval's: k K M G T m u µ n p).
  bool Number(int* out) {
    const std::size_t at = pos_;
    std::size_t end = pos_, digits = 0, dots = 0;
    for (; end < s_.size() && (IsDigit(s_[end]) || s_[end] == '.'); end++)
      (s_[end] == '.' ? dots : digits)++;
    bool good = digits > 0 && dots <= 1, exponent = false;
    if (end < s_.size() && (s_[end] == 'e' || s_[end] == 'E')) {
      exponent = true;
      end++;
      if (end < s_.size() && (s_[end] == '+' || s_[end] == '-')) end++;
      std::size_t exp_digits = 0;
      for (; end < s_.size() && IsDigit(s_[end]); end++) exp_digits++;
      good = good && exp_digits > 0;
    }
    std::string token(s_.substr(at, end - at));
    if (!good) {
      while (end < s_.size() && IsNameChar(s_[end])) end++;
      return Fail(at, "bad number '" + std::string(s_.substr(at, end - at)) + "'");
    }
    if (!exponent) {
      for (const auto& [suffix, power] : kSuffixes) {
        if (s_.substr(end, suffix.size()) != suffix) continue;
        // As fasteval: the digits with "e<power>" appended, read once.
        token += "e" + std::to_string(power);
        end += suffix.size();
        break;
      }
    }
    pos_ = end;
    Node n;
    n.op = Op::kConst;
    n.value = std::strtod(token.c_str(), nullptr);
    n.offset = at;
    *out = Add(std::move(n));
    return true;
  }

  std::string Column(std::size_t pos) { return std::to_string(ColumnOf(s_, pos)); }

  Expression* e_;
  std::string_view s_;
  ExprError* error_;
  std::size_t pos_ = 0;
};

bool Expression::Parse(std::string_view text, ExprError* error) {
  text_ = std::string(text);
  nodes_.clear();
  root_ = -1;
  Parser p(this, error);
  if (p.Run()) return true;
  nodes_.clear();
  return false;
}

bool Expression::Evaluate(const Variables& vars, double* value, ExprError* error) const {
  if (root_ < 0) {
    *error = {1, "no expression"};
    return false;
  }
  return Eval(root_, vars, value, error);
}

bool Expression::Eval(int index, const Variables& vars, double* value, ExprError* error) const {
  const Node& n = nodes_[index];
  std::vector<double> a(n.args.size());
  for (std::size_t i = 0; i < n.args.size(); i++)
    if (!Eval(n.args[i], vars, &a[i], error)) return false;
  switch (n.op) {
    case Op::kConst:
      *value = n.value;
      return true;
    case Op::kVar: {
      const auto it = vars.find(n.name);
      if (it == vars.end()) {
        *error = {ColumnOf(text_, n.offset), "unknown variable '" + n.name + "'"};
        return false;
      }
      *value = it->second;
      return true;
    }
    case Op::kCall:
      *value = kFunctions[n.function].fn(a);
      return true;
    case Op::kNeg:
      *value = -a[0];
      return true;
    case Op::kPos:
      *value = a[0];
      return true;
    case Op::kNot:
      *value = NearlyEqual(a[0], 0) ? 1 : 0;
      return true;
    case Op::kAdd:
      *value = a[0] + a[1];
      return true;
    case Op::kSub:
      *value = a[0] - a[1];
      return true;
    case Op::kMul:
      *value = a[0] * a[1];
      return true;
    case Op::kDiv:
      *value = a[0] / a[1];
      return true;
    case Op::kMod:
      *value = std::fmod(a[0], a[1]);
      return true;
    case Op::kPow:
      *value = std::pow(a[0], a[1]);
      return true;
    case Op::kLt:
      *value = a[0] < a[1];
      return true;
    case Op::kLe:
      *value = a[0] <= a[1];
      return true;
    case Op::kGt:
      *value = a[0] > a[1];
      return true;
    case Op::kGe:
      *value = a[0] >= a[1];
      return true;
    case Op::kEq:
      *value = NearlyEqual(a[0], a[1]);
      return true;
    case Op::kNe:
      *value = !NearlyEqual(a[0], a[1]);
      return true;
    // fasteval's: the left operand if it decides, else the right one.
    case Op::kAnd:
      *value = NearlyEqual(a[0], 0) ? a[0] : a[1];
      return true;
    case Op::kOr:
      *value = !NearlyEqual(a[0], 0) ? a[0] : a[1];
      return true;
  }
  return false;
}

}  // namespace hzsetup
