// SPDX-License-Identifier: GPL-2.0
// hzram-setup: the size expressions (values, precedence, functions,
// errors with their column), hzram.conf (files and their precedence,
// sections, keys, defaults, set!, errors with their line), what each
// device resolves to, the steps and the --dry-run output, the readers of
// /proc/swaps and mountinfo, the command line, and the program itself on
// configurations under --root.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "config.h"
#include "expr.h"
#include "options.h"
#include "plan.h"
#include "program.h"

namespace hzsetup {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------
// Expressions.

double Eval(const std::string& text, double ram = 1000) {
  Expression e;
  ExprError err;
  EXPECT_TRUE(e.Parse(text, &err)) << text << ": " << err.ToString();
  double v = std::nan("");
  Variables vars{{"ram", ram}, {"two", 2}};
  EXPECT_TRUE(e.Evaluate(vars, &v, &err)) << text << ": " << err.ToString();
  return v;
}

// The error of @text, parsing or evaluating it: "column N: message".
std::string ErrorOf(const std::string& text) {
  Expression e;
  ExprError err;
  if (e.Parse(text, &err)) {
    double v;
    if (e.Evaluate({{"ram", 1000}}, &v, &err)) return "no error, value " + std::to_string(v);
  }
  return err.ToString();
}

TEST(ExprTest, Numbers) {
  EXPECT_EQ(42, Eval("42"));
  EXPECT_EQ(0.5, Eval("0.5"));
  EXPECT_EQ(0.5, Eval(".5"));
  EXPECT_EQ(5, Eval("5."));
  EXPECT_EQ(1500, Eval("1.5e3"));
  EXPECT_EQ(1500, Eval("1.5E+3"));
  EXPECT_EQ(0.015, Eval("15e-3"));
  EXPECT_EQ(7, Eval("  7\t"));
}

TEST(ExprTest, SiSuffixesAreDecimalAsInFasteval) {
  EXPECT_EQ(1500, Eval("1.5k"));
  EXPECT_EQ(2000, Eval("2K"));
  EXPECT_EQ(3e6, Eval("3M"));
  EXPECT_EQ(4e9, Eval("4G"));
  EXPECT_EQ(5e12, Eval("5T"));
  EXPECT_EQ(6e-3, Eval("6m"));
  EXPECT_EQ(7e-6, Eval("7u"));
  EXPECT_EQ(7e-6, Eval("7\xc2\xb5"));  // µ
  EXPECT_EQ(8e-9, Eval("8n"));
  EXPECT_EQ(9e-12, Eval("9p"));
  EXPECT_EQ(1002000, Eval("1k * 1k + 2k"));
}

TEST(ExprTest, OperatorsAndPrecedence) {
  EXPECT_EQ(7, Eval("1 + 2 * 3"));
  EXPECT_EQ(9, Eval("(1 + 2) * 3"));
  EXPECT_EQ(3, Eval("10 - 4 - 3"));
  EXPECT_EQ(1, Eval("8 / 4 / 2"));
  EXPECT_EQ(3, Eval("7 % 4"));
  EXPECT_EQ(-1, Eval("-7 % 3"));  // the dividend's sign, as fmod
  EXPECT_EQ(1.5, Eval("7 / 2 % 2"));
  EXPECT_EQ(512, Eval("2 ^ 3 ^ 2"));  // right-associative
  EXPECT_EQ(-4, Eval("-2 ^ 2"));      // unary minus below ^
  EXPECT_EQ(0.5, Eval("2 ^ -1"));
  EXPECT_EQ(6, Eval("2 * -(-3)"));
  EXPECT_EQ(5, Eval("+5"));
  EXPECT_EQ(4, Eval("--4"));
  EXPECT_EQ(16, Eval("2 ^ (1 + 3)"));
  EXPECT_EQ(36, Eval("(2 * 3) ^ 2"));
  EXPECT_EQ(21, Eval("1 + 2 * 3 ^ 2 + 2"));
}

TEST(ExprTest, ComparisonsAndLogic) {
  EXPECT_EQ(1, Eval("1 < 2"));
  EXPECT_EQ(0, Eval("2 < 2"));
  EXPECT_EQ(1, Eval("2 <= 2"));
  EXPECT_EQ(1, Eval("3 > 2"));
  EXPECT_EQ(1, Eval("2 >= 2"));
  EXPECT_EQ(1, Eval("0.1 + 0.2 == 0.3"));  // within 8 epsilons, as fasteval
  EXPECT_EQ(0, Eval("1 != 1"));
  EXPECT_EQ(1, Eval("1 + 1 == 2"));
  EXPECT_EQ(5, Eval("3 > 2 && 5"));  // the deciding operand
  EXPECT_EQ(0, Eval("0 && 5"));
  EXPECT_EQ(7, Eval("0 || 7"));
  EXPECT_EQ(3, Eval("3 || 7"));
  EXPECT_EQ(1, Eval("!0"));
  EXPECT_EQ(0, Eval("!3"));
  EXPECT_EQ(1, Eval("1 || 0 && 0"));  // && binds tighter
  // A size that depends on the memory.
  EXPECT_EQ(500, Eval("(ram < 2048) * ram / 2 + (ram >= 2048) * 4096", 1000));
  EXPECT_EQ(4096, Eval("(ram < 2048) * ram / 2 + (ram >= 2048) * 4096", 8192));
}

TEST(ExprTest, Functions) {
  EXPECT_EQ(1, Eval("min(3, 1, 2)"));
  EXPECT_EQ(3, Eval("max(3, 1, 2)"));
  EXPECT_EQ(-4, Eval("min(1, -2, 3, -4)"));
  EXPECT_EQ(7, Eval("min(7)"));
  EXPECT_TRUE(std::isnan(Eval("min(1, 0 / 0)")));
  EXPECT_TRUE(std::isnan(Eval("max(0 / 0, 1)")));
  EXPECT_EQ(-2, Eval("int(-2.7)"));
  EXPECT_EQ(2, Eval("int(2.7)"));
  EXPECT_EQ(3, Eval("ceil(2.1)"));
  EXPECT_EQ(2, Eval("floor(2.9)"));
  EXPECT_EQ(-3, Eval("floor(-2.1)"));
  EXPECT_EQ(3, Eval("round(2.5)"));
  EXPECT_EQ(-3, Eval("round(-2.5)"));
  EXPECT_NEAR(1.235, Eval("round(0.001, 1.23456)"), 1e-12);
  EXPECT_EQ(1024, Eval("round(512, 1000)"));
  EXPECT_EQ(2.5, Eval("abs(-2.5)"));
  EXPECT_EQ(-1, Eval("sign(-3)"));
  EXPECT_EQ(1, Eval("sign(3)"));
  EXPECT_EQ(1, Eval("sign(0)"));
  EXPECT_EQ(2, Eval("log(100)"));  // base 10
  EXPECT_EQ(10, Eval("log(2, 1024)"));
  EXPECT_NEAR(2, Eval("log(3, 9)"), 1e-12);
  EXPECT_NEAR(1, Eval("log(e(), e())"), 1e-12);
  EXPECT_DOUBLE_EQ(M_E, Eval("e()"));
  EXPECT_DOUBLE_EQ(M_PI, Eval("pi()"));
  EXPECT_NEAR(0, Eval("sin(pi())"), 1e-12);
  EXPECT_NEAR(-1, Eval("cos(pi())"), 1e-12);
  EXPECT_NEAR(1, Eval("tan(pi() / 4)"), 1e-12);
  EXPECT_NEAR(M_PI / 2, Eval("asin(1)"), 1e-12);
  EXPECT_NEAR(0, Eval("acos(1)"), 1e-12);
  EXPECT_NEAR(M_PI / 4, Eval("atan(1)"), 1e-12);
  EXPECT_NEAR(std::sinh(1), Eval("sinh(1)"), 1e-12);
  EXPECT_NEAR(std::cosh(1), Eval("cosh(1)"), 1e-12);
  EXPECT_NEAR(std::tanh(1), Eval("tanh(1)"), 1e-12);
  EXPECT_NEAR(std::asinh(2), Eval("asinh(2)"), 1e-12);
  EXPECT_NEAR(std::acosh(2), Eval("acosh(2)"), 1e-12);
  EXPECT_NEAR(std::atanh(0.5), Eval("atanh(0.5)"), 1e-12);
  EXPECT_EQ(6, Eval("max ( 1 , min(6, 9) )"));
  EXPECT_EQ(
      (std::vector<std::string>{"min",  "max",  "int",  "ceil", "floor", "round", "abs",  "sign",
                                "log",  "e",    "pi",   "sin",  "cos",   "tan",   "asin", "acos",
                                "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh"}),
      FunctionNames());
}

TEST(ExprTest, Variables) {
  EXPECT_EQ(500, Eval("min(ram / 2, 4096)", 1000));
  EXPECT_EQ(4096, Eval("min(ram / 2, 4096)", 10000));
  EXPECT_EQ(2000, Eval("ram * two", 1000));
  // zram-generator's README example: 1:1 up to 4G, then 1:2, at most 32G.
  const char* piecewise = "min(min(ram, 4096) + max(ram - 4096, 0) / 2, 32 * 1024)";
  EXPECT_EQ(2048, Eval(piecewise, 2048));
  EXPECT_EQ(6144, Eval(piecewise, 8192));
  EXPECT_EQ(32768, Eval(piecewise, 65536 + 8192));
  Expression e;
  ExprError err;
  ASSERT_TRUE(e.Parse("ram + x", &err));
  double v;
  EXPECT_TRUE(e.Evaluate({{"ram", 1}, {"x", 2}}, &v, &err));
  EXPECT_EQ(3, v);
  EXPECT_EQ("ram + x", e.text());
}

TEST(ExprTest, ArithmeticGivesInfinityAndNan) {
  EXPECT_EQ(std::numeric_limits<double>::infinity(), Eval("1 / 0"));
  EXPECT_TRUE(std::isnan(Eval("0 / 0")));
  EXPECT_TRUE(std::isnan(Eval("5 % 0")));
}

TEST(ExprTest, Errors) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "column 1: expected a number, a name or '(', found the end"},
      {"   ", "column 4: expected a number, a name or '(', found the end"},
      {"1 +", "column 4: expected a number, a name or '(', found the end"},
      {"*2", "column 1: expected a number, a name or '(', found '*'"},
      {")", "column 1: expected a number, a name or '(', found ')'"},
      {"2 ram", "column 3: expected an operator, found 'ram'"},
      {"(1)(2)", "column 4: expected an operator, found '('"},
      {"1 = 2", "column 3: expected an operator, found '='"},
      {"1 & 2", "column 3: expected an operator, found '&'"},
      {"2k3", "column 3: expected an operator, found '3'"},
      {"ram # half", "column 5: expected an operator, found '#'"},
      {"(1 + 2", "column 7: missing ')' to close the '(' of column 1"},
      {"min(ram, (2", "column 12: missing ')' to close the '(' of column 10"},
      {"min(ram / 2, 4096", "column 18: missing ')' to close 'min(' of column 1"},
      {"(1 2)", "column 4: expected an operator or ')', found '2'"},
      {"min(1 2)", "column 7: expected an operator, ',' or ')', found '2'"},
      {"min(1,", "column 7: expected a number, a name or '(', found the end"},
      {"min(1,)", "column 7: expected a number, a name or '(', found ')'"},
      {"1e", "column 1: bad number '1e'"},
      {"1e+", "column 1: bad number '1e+'"},
      {"2exp", "column 1: bad number '2exp'"},
      {"1.2.3", "column 1: bad number '1.2.3'"},
      {"3 * .", "column 5: bad number '.'"},
      {"foo(1)", "column 1: unknown function 'foo'"},
      {"1 + print(2)", "column 5: unknown function 'print'"},
      {"min()", "column 1: min() takes at least 1 argument"},
      {"2 * int(1, 2)", "column 5: int() takes 1 argument, not 2"},
      {"log(1, 2, 3)", "column 1: log() takes 1 or 2 arguments, not 3"},
      {"round()", "column 1: round() takes 1 or 2 arguments, not 0"},
      {"pi(1)", "column 1: pi() takes no arguments, not 1"},
      {"\xc2\xb5", "column 1: expected a number, a name or '(', found '\xc2\xb5'"},
      {"\xc2\xb5 + x", "column 1: expected a number, a name or '(', found '\xc2\xb5'"},
      {"2\xc2\xb5 x", "column 4: expected an operator, found 'x'"},  // µ is one column
      {"[ram]", "column 1: expected a number, a name or '(', found '['"},
      // Variables are looked up when evaluated: the first unknown one.
      {"rams * 2", "column 1: unknown variable 'rams'"},
      {"min(ram, x) + y", "column 10: unknown variable 'x'"},
      {"pi", "column 1: unknown variable 'pi'"},
  };
  for (const auto& [text, error] : cases) EXPECT_EQ(error, ErrorOf(text)) << "'" << text << "'";
}

TEST(ExprTest, Limits) {
  EXPECT_EQ("no error, value 1.000000",
            ErrorOf(std::string(Expression::kMaxLength - 1, ' ') + "1"));
  EXPECT_EQ("column 4097: expression longer than 4096 characters",
            ErrorOf(std::string(Expression::kMaxLength, ' ') + "1"));
  std::string deep = std::string(63, '(') + "1" + std::string(63, ')');
  EXPECT_EQ("no error, value 1.000000", ErrorOf(deep));
  deep = std::string(64, '(') + "1" + std::string(64, ')');
  EXPECT_EQ("column 65: expression nested more than 64 deep", ErrorOf(deep));
  EXPECT_EQ("column 65: expression nested more than 64 deep", ErrorOf(std::string(64, '-') + "1"));
  Expression e;
  ExprError err;
  double v;
  EXPECT_FALSE(e.Evaluate({}, &v, &err));  // never parsed
  EXPECT_FALSE(e.Parse("(", &err));
  EXPECT_FALSE(e.Evaluate({}, &v, &err));  // a failed parse leaves nothing
}

// ---------------------------------------------------------------------
// hzram.conf.

// A shell for set! that answers from a table.
struct FakeShell {
  std::vector<std::string> programs;  // run, in order
  std::string output = "2\n";
  int status = 0;
  bool Run(const std::string& program, std::string* out, int* st, std::string*) {
    programs.push_back(program);
    *out = output;
    *st = status;
    return true;
  }
  ShellRunner runner() {
    return [this](const std::string& p, std::string* o, int* s, std::string* e) {
      return Run(p, o, s, e);
    };
  }
};

// Parses @text as /etc/hzram.conf, with ram = @ram; *error on failure.
bool Parse(const std::string& text, Config* c, std::string* error, std::uint64_t ram = 1000,
           const ShellRunner& shell = RunShell) {
  *c = Config();
  c->variables["ram"] = static_cast<double>(ram);
  return ParseConfigText("/etc/hzram.conf", text, c, shell, error);
}

std::string ParseError(const std::string& text) {
  Config c;
  std::string error;
  if (Parse(text, &c, &error)) return "no error";
  return error;
}

std::vector<Device> Resolve(const std::string& text, std::uint64_t ram = 1000,
                            std::vector<std::string>* warnings = nullptr) {
  Config c;
  std::string error;
  std::vector<Device> devices;
  std::vector<std::string> w;
  EXPECT_TRUE(Parse(text, &c, &error, ram)) << error;
  EXPECT_TRUE(ResolveDevices(c, ram, &devices, warnings ? warnings : &w, &error)) << error;
  return devices;
}

std::string ResolveError(const std::string& text, std::uint64_t ram = 1000) {
  Config c;
  std::string error;
  std::vector<Device> devices;
  std::vector<std::string> w;
  if (!Parse(text, &c, &error, ram)) return "parse: " + error;
  if (ResolveDevices(c, ram, &devices, &w, &error)) return "no error";
  return error;
}

TEST(ConfigTest, Defaults) {
  const std::vector<Device> d = Resolve("[hzram0]\n", 1000);
  ASSERT_EQ(1u, d.size());
  EXPECT_EQ(0u, d[0].id);
  EXPECT_EQ("hzram0", d[0].name);
  EXPECT_TRUE(d[0].enabled);
  EXPECT_EQ("min(ram / 2, 4096)", d[0].size_text);
  EXPECT_EQ(500, d[0].size_mib);
  EXPECT_EQ(500ull << 20, d[0].disksize);
  EXPECT_EQ(0u, d[0].mem_limit);
  EXPECT_EQ("", d[0].algorithm);
  EXPECT_EQ("swap", d[0].fs_type);
  EXPECT_TRUE(d[0].swap());
  EXPECT_EQ("", d[0].mount_point);
  EXPECT_EQ("discard", d[0].options);
  EXPECT_EQ(100, d[0].swap_priority);
  // Half the memory, at most 4 GiB.
  EXPECT_EQ(4096ull << 20, Resolve("[hzram0]\n", 16000)[0].disksize);
  // An odd number of MiB: ram / 2 is a half MiB more.
  EXPECT_EQ((1000ull << 20) + (1ull << 19), Resolve("[hzram0]\n", 2001)[0].disksize);
}

TEST(ConfigTest, EveryKey) {
  const std::vector<Device> d = Resolve(
      "# a comment\n"
      "; another\n"
      "\n"
      "[hzram3]\n"
      "  zram-size = ram / 4\n"
      "zram-resident-limit = 100\n"
      "compression-algorithm = zstd\n"
      "swap-priority = -1\n"
      "options = discard=pages\n"
      "host-memory-limit = 1000\n"
      "[ hzram1 ]\n"
      "fs-type = ext4\n"
      "mount-point = /var//cache/./x/\n"
      "options = \"noatime,discard\"\n"
      "zram-size = 64\n"
      "[hzram2]\n"
      "mount-point = /srv\n"
      "options = ''\n"
      "[hzram4]\n"
      "fs-type = xfs\n",
      1000);
  ASSERT_EQ(4u, d.size());
  // In the order of N.
  EXPECT_EQ("hzram1", d[0].name);
  EXPECT_EQ("ext4", d[0].fs_type);
  EXPECT_EQ("/var/cache/x", d[0].mount_point);
  EXPECT_EQ("noatime,discard", d[0].options);
  EXPECT_EQ(64ull << 20, d[0].disksize);
  EXPECT_FALSE(d[0].swap());
  EXPECT_EQ("hzram2", d[1].name);
  EXPECT_EQ("ext2", d[1].fs_type);  // the default with a mount point
  EXPECT_EQ("/srv", d[1].mount_point);
  EXPECT_EQ("", d[1].options);
  EXPECT_EQ("hzram3", d[2].name);
  EXPECT_TRUE(d[2].enabled);  // ram is not above the limit
  EXPECT_EQ(250ull << 20, d[2].disksize);
  EXPECT_EQ(100ull << 20, d[2].mem_limit);
  EXPECT_EQ("zstd", d[2].algorithm);
  EXPECT_EQ(-1, d[2].swap_priority);
  EXPECT_EQ("discard=pages", d[2].options);
  EXPECT_TRUE(d[2].swap());
  // A file system without a mount point: formatted, not mounted.
  EXPECT_EQ("hzram4", d[3].name);
  EXPECT_EQ("xfs", d[3].fs_type);
  EXPECT_EQ("", d[3].mount_point);
}

TEST(ConfigTest, AliasesAndOverrides) {
  std::vector<Device> d = Resolve(
      "[hzram0]\n"
      "hzram-size = 100\n"
      "hzram-resident-limit = 10\n"
      "memory-limit = 500\n"
      "[hzram1]\n"
      "zram-size = 1\n"
      "zram-size = 2\n"
      "fs-type = swap\n"
      "[hzram0]\n"
      "swap-priority = +7\n"  // a sign, as zram-generator takes it
      "compression-algorithm = lz4hc\n"
      "compression-algorithm =\n",
      400);
  ASSERT_EQ(2u, d.size());
  EXPECT_EQ(100ull << 20, d[0].disksize);
  EXPECT_EQ(10ull << 20, d[0].mem_limit);
  EXPECT_EQ(7, d[0].swap_priority);      // sections of one name merge
  EXPECT_EQ("", d[0].algorithm);         // an empty value: the kernel's default
  EXPECT_EQ(2ull << 20, d[1].disksize);  // the last value wins
  EXPECT_TRUE(d[1].swap());
  // memory-limit is host-memory-limit: above it, no device.
  d = Resolve("[hzram0]\nmemory-limit = 500\n", 501);
  EXPECT_FALSE(d[0].enabled);
  d = Resolve("[hzram0]\nmemory-limit = 500\nhost-memory-limit = none\n", 501);
  EXPECT_TRUE(d[0].enabled);
}

TEST(ConfigTest, DisabledDevices) {
  std::vector<Device> d = Resolve(
      "[hzram0]\nhost-memory-limit = 999\n[hzram1]\nzram-size = 0\n"
      "[hzram2]\nzram-size = ram / 2^30\n",
      1000);
  ASSERT_EQ(3u, d.size());
  EXPECT_FALSE(d[0].enabled);
  EXPECT_EQ("ram (1000 MiB) is above host-memory-limit (999 MiB)", d[0].why_disabled);
  EXPECT_FALSE(d[1].enabled);
  EXPECT_EQ("its size is 0", d[1].why_disabled);
  // Less than a byte is 0 bytes.
  EXPECT_FALSE(d[2].enabled);
  // A disabled device's size is not evaluated.
  EXPECT_EQ("no error", ResolveError("[hzram0]\nhost-memory-limit = 1\nzram-size = nope\n"));
}

TEST(ConfigTest, SizesInBytes) {
  // MiB times 2^20, truncated to a byte; the module rounds up to a page.
  std::vector<Device> d = Resolve("[hzram0]\nzram-size = ram / 3\n", 1000);
  EXPECT_EQ(349525333u, d[0].disksize);  // 1000 * 2^20 / 3
  d = Resolve("[hzram0]\nzram-size = 0.001\n");
  EXPECT_EQ(1048u, d[0].disksize);
  d = Resolve("[hzram0]\nzram-size = 16M\n", 1000);  // SI: 16e6 MiB
  EXPECT_EQ(16000000ull << 20, d[0].disksize);
}

TEST(ConfigTest, ObsoleteFractionAndMax) {
  // Either one overrides zram-size: fraction * ram (whole MiB), at most max.
  std::vector<Device> d = Resolve(
      "[hzram0]\nzram-size = 1\nzram-fraction = 0.1\n"
      "max-zram-size = 2048\n",
      30000);
  EXPECT_EQ(2048ull << 20, d[0].disksize);
  EXPECT_EQ("zram-fraction = 0.1, max-zram-size = 2048", d[0].size_text);
  d = Resolve("[hzram0]\nzram-fraction = 0.1\n", 30005);
  EXPECT_EQ(3000ull << 20, d[0].disksize);  // no maximum unless given
  d = Resolve("[hzram0]\nmax-zram-size = 100\n", 30000);
  EXPECT_EQ(100ull << 20, d[0].disksize);  // fraction 0.5
  d = Resolve("[hzram0]\nmax-zram-size = none\n", 3000);
  EXPECT_EQ(1500ull << 20, d[0].disksize);
  EXPECT_EQ("zram-fraction = 0.5, max-zram-size = none", d[0].size_text);
}

TEST(ConfigTest, RatioWarning) {
  std::vector<std::string> w;
  Resolve("[hzram0]\nzram-size = ram * 33\n[hzram1]\nzram-size = ram * 32.9\n", 100, &w);
  ASSERT_EQ(1u, w.size());
  EXPECT_EQ(
      "hzram0: a size of 3460300800 bytes (ram * 33) would need a compression ratio of 33 "
      "with 100 MiB of RAM: sizes are in MiB",
      w[0]);
}

TEST(ConfigTest, SetDirective) {
  FakeShell shell;
  Config c;
  std::string error;
  shell.output = "3 * 2\n";
  ASSERT_TRUE(Parse("set!six = whatever program\n[hzram0]\nzram-size = ram * six\n", &c, &error,
                    100, shell.runner()))
      << error;
  EXPECT_EQ(std::vector<std::string>{"whatever program"}, shell.programs);
  EXPECT_EQ(6, c.variables.at("six"));
  std::vector<Device> d;
  std::vector<std::string> w;
  ASSERT_TRUE(ResolveDevices(c, 100, &d, &w, &error)) << error;
  EXPECT_EQ(600ull << 20, d[0].disksize);
  // A failing program is a warning; its output still counts.
  shell.status = 3;
  shell.output = "ram + 1";
  ASSERT_TRUE(Parse("set!x = false\n", &c, &error, 100, shell.runner())) << error;
  EXPECT_EQ(101, c.variables.at("x"));
  EXPECT_EQ(std::vector<std::string>{"/etc/hzram.conf:1: set!x: 'false' exited with status 3"},
            c.warnings);
  // Output that is no expression.
  shell.status = 0;
  shell.output = "lots\n";
  EXPECT_FALSE(Parse("set!x = echo lots\n", &c, &error, 100, shell.runner()));
  EXPECT_EQ(
      "/etc/hzram.conf:1: set!x: the output of 'echo lots', 'lots': column 1: unknown "
      "variable 'lots'",
      error);
  shell.output = "";
  EXPECT_FALSE(Parse("set!x = true\n", &c, &error, 100, shell.runner()));
  EXPECT_EQ(
      "/etc/hzram.conf:1: set!x: the output of 'true', '': column 1: expected a number, a "
      "name or '(', found the end",
      error);
  // The real shell; variables of earlier set! lines.
  ASSERT_TRUE(
      Parse("set!two = echo 2\nset!four = echo two '*' two; exit 0\n"
            "[hzram0]\nzram-size = ram / four\n",
            &c, &error, 100))
      << error;
  EXPECT_EQ(2, c.variables.at("two"));
  EXPECT_EQ(4, c.variables.at("four"));
  EXPECT_TRUE(c.warnings.empty());
  ASSERT_TRUE(Parse("set!n = echo 5; exit 4\n", &c, &error)) << error;
  EXPECT_EQ(5, c.variables.at("n"));
  EXPECT_EQ(std::vector<std::string>{"/etc/hzram.conf:1: set!n: 'echo 5; exit 4' exited with "
                                     "status 4"},
            c.warnings);
}

TEST(ConfigTest, Errors) {
  const std::pair<const char*, const char*> cases[] = {
      {"[hzram0]\nzram-size = min(ram / 2, 4096\n",
       "/etc/hzram.conf:2: [hzram0] zram-size: column 18: missing ')' to close 'min(' of column "
       "1 in 'min(ram / 2, 4096'"},
      {"[hzram0]\nhzram-size = 2 ram\n",
       "/etc/hzram.conf:2: [hzram0] hzram-size: column 3: expected an operator, found 'ram' in "
       "'2 ram'"},
      {"[hzram0]\nzram-resident-limit = foo(1)\n",
       "/etc/hzram.conf:2: [hzram0] zram-resident-limit: column 1: unknown function 'foo' in "
       "'foo(1)'"},
      {"[hzram0]\nsize = 5\n", "/etc/hzram.conf:2: [hzram0] size: unknown key"},
      {"\n[hzram1]\n\nZram-Size = 5\n", "/etc/hzram.conf:4: [hzram1] Zram-Size: unknown key"},
      {"[hzram0]\nwriteback-device = dev/sdb1\n",
       "/etc/hzram.conf:2: [hzram0] writeback-device: 'dev/sdb1' is not an absolute path"},
      {"[hzram0]\nwriteback-limit = 1G\n",
       "/etc/hzram.conf:2: [hzram0] writeback-limit: '1G' is not a number of MiB or \"none\""},
      {"[hzram0]\nwriteback-idle-age = 1w\n",
       "/etc/hzram.conf:2: [hzram0] writeback-idle-age: '1w' is not a duration (seconds, or a "
       "number with min, h or d)"},
      {"[hzram0]\nrecompress-idle-age = 0\n",
       "/etc/hzram.conf:2: [hzram0] recompress-idle-age: '0' is not a duration (seconds, or a "
       "number with min, h or d)"},
      {"[hzram0]\nrecompress-idle-age = -5\n",
       "/etc/hzram.conf:2: [hzram0] recompress-idle-age: '-5' is not a duration (seconds, or a "
       "number with min, h or d)"},
      {"[zram0]\n",
       "/etc/hzram.conf:1: unknown section [zram0]: sections are [hzramN], N from 0 to 255"},
      {"[hzram256]\n",
       "/etc/hzram.conf:1: unknown section [hzram256]: sections are [hzramN], N from 0 to 255"},
      {"[hzram01]\n",
       "/etc/hzram.conf:1: unknown section [hzram01]: sections are [hzramN], N from 0 to 255"},
      {"[hzram]\n",
       "/etc/hzram.conf:1: unknown section [hzram]: sections are [hzramN], N from 0 to 255"},
      {"[hzram0\n", "/etc/hzram.conf:1: a section header ends with ']'"},
      {"[hzram0]\nzram-size\n",
       "/etc/hzram.conf:2: expected 'key = value', a [section] or a comment, found 'zram-size'"},
      {"[hzram0]\n = 5\n", "/etc/hzram.conf:2: no key before '='"},
      {"zram-size = 5\n",
       "/etc/hzram.conf:1: 'zram-size' outside a section: only set!VARIABLE = PROGRAM may come "
       "before the first [hzramN]"},
      {"set!ram = echo 1\n",
       "/etc/hzram.conf:1: set!ram: 'ram' is the machine's memory, it cannot be set"},
      {"set!a-b = echo 1\n",
       "/etc/hzram.conf:1: set!a-b: 'a-b' is not a variable name (letters, digits, '_')"},
      {"set! = echo 1\n",
       "/etc/hzram.conf:1: set!: '' is not a variable name (letters, digits, '_')"},
      {"[hzram0]\nswap-priority = 32768\n",
       "/etc/hzram.conf:2: [hzram0] swap-priority: '32768' is not a number from -1 to 32767"},
      {"[hzram0]\nswap-priority = -2\n",
       "/etc/hzram.conf:2: [hzram0] swap-priority: '-2' is not a number from -1 to 32767"},
      {"[hzram0]\nswap-priority = +-1\n",
       "/etc/hzram.conf:2: [hzram0] swap-priority: '+-1' is not a number from -1 to 32767"},
      {"[hzram0]\nswap-priority = high\n",
       "/etc/hzram.conf:2: [hzram0] swap-priority: 'high' is not a number from -1 to 32767"},
      {"[hzram0]\nswap-priority =\n",
       "/etc/hzram.conf:2: [hzram0] swap-priority: '' is not a number from -1 to 32767"},
      {"[hzram0]\nhost-memory-limit = 4G\n",
       "/etc/hzram.conf:2: [hzram0] host-memory-limit: '4G' is not a number of MiB or \"none\""},
      {"[hzram0]\nmemory-limit = -1\n",
       "/etc/hzram.conf:2: [hzram0] memory-limit: '-1' is not a number of MiB or \"none\""},
      {"[hzram0]\nmax-zram-size = lots\n",
       "/etc/hzram.conf:2: [hzram0] max-zram-size: 'lots' is not a number of MiB or \"none\""},
      {"[hzram0]\nzram-fraction = -0.5\n",
       "/etc/hzram.conf:2: [hzram0] zram-fraction: '-0.5' is not a fraction (a number, 0 or "
       "more)"},
      {"[hzram0]\nzram-fraction = inf\n",
       "/etc/hzram.conf:2: [hzram0] zram-fraction: 'inf' is not a fraction (a number, 0 or "
       "more)"},
      {"[hzram0]\ncompression-algorithm = lz5\n",
       "/etc/hzram.conf:2: [hzram0] compression-algorithm: 'lz5' is not one of hzram's "
       "algorithms: lzo, lzo-rle, lz4, lz4hc, zstd"},
      {"[hzram0]\ncompression-algorithm = lz4 zstd lz4hc zstd lz4\n",
       "/etc/hzram.conf:2: [hzram0] compression-algorithm: at most 4 algorithms (the primary and "
       "three for recompression), not 5"},
      {"[hzram0]\ncompression-algorithm = lz4 zstd(level=3 (type=idle)\n",
       "/etc/hzram.conf:2: [hzram0] compression-algorithm: '(type=idle' in 'zstd''s parameters "
       "is not level=NUMBER or dict=/PATH"},
      {"[hzram0]\ncompression-algorithm = lz4 zstd(level=3\n",
       "/etc/hzram.conf:2: [hzram0] compression-algorithm: no ')' after 'zstd(level=3'"},
      {"[hzram0]\ncompression-algorithm = lz4 zstd(level=3)x\n",
       "/etc/hzram.conf:2: [hzram0] compression-algorithm: no space after 'zstd(level=3)'"},
      {"[hzram0]\ncompression-algorithm = zstd(level=x)\n",
       "/etc/hzram.conf:2: [hzram0] compression-algorithm: 'level=x' in 'zstd''s parameters is "
       "not level=NUMBER or dict=/PATH"},
      {"[hzram0]\ncompression-algorithm = zstd(dict=d)\n",
       "/etc/hzram.conf:2: [hzram0] compression-algorithm: 'dict=d' in 'zstd''s parameters is "
       "not level=NUMBER or dict=/PATH"},
      {"[hzram0]\ncompression-algorithm = lz4 zstd (type=idle)\n",
       "/etc/hzram.conf:2: [hzram0] compression-algorithm: parameters in parentheses follow "
       "their algorithm without a space (\"zstd(level=3)\"), and recompression parameters "
       "without one are not taken: recompress-idle-age says when to recompress"},
      {"[hzram0]\nwriteback-idle-age = 49711d\n",
       "/etc/hzram.conf:2: [hzram0] writeback-idle-age: '49711d' is not a duration (seconds, or "
       "a number with min, h or d)"},
      {"[hzram0]\nmount-point = var/tmp\n",
       "/etc/hzram.conf:2: [hzram0] mount-point: 'var/tmp' is not an absolute path"},
      {"[hzram0]\nmount-point = /var/../tmp\n",
       "/etc/hzram.conf:2: [hzram0] mount-point: '/var/../tmp' is not normalised (\"..\")"},
      {"[hzram0]\nfs-type =\n",
       "/etc/hzram.conf:2: [hzram0] fs-type: '' is not a file system type (letters, digits, '.', "
       "'_', '-')"},
      {"[hzram0]\nfs-type = ext4 -E x\n",
       "/etc/hzram.conf:2: [hzram0] fs-type: 'ext4 -E x' is not a file system type (letters, "
       "digits, '.', '_', '-')"},
  };
  for (const auto& [text, error] : cases) EXPECT_EQ(error, ParseError(text)) << text;
}

TEST(ConfigTest, ResolveErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {"[hzram0]\nzram-size = ram - 1001\n",
       "/etc/hzram.conf:2: [hzram0] zram-size: 'ram - 1001' is -1: a size cannot be negative"},
      {"[hzram0]\n\nzram-size = (ram - 1000) / 0\n",
       "/etc/hzram.conf:3: [hzram0] zram-size: '(ram - 1000) / 0' is NaN, not a number"},
      {"[hzram0]\nzram-size = (ram - 999) / 0\n",
       "/etc/hzram.conf:2: [hzram0] zram-size: '(ram - 999) / 0' is inf MiB: more than 2^64 "
       "bytes"},
      {"[hzram0]\nzram-size = 2^44\n",
       "/etc/hzram.conf:2: [hzram0] zram-size: '2^44' is 1.75922e+13 MiB: more than 2^64 bytes"},
      {"[hzram0]\nzram-size = 2 * rams\n",
       "/etc/hzram.conf:2: [hzram0] zram-size: column 5: unknown variable 'rams' in '2 * rams'"},
      {"[hzram0]\nzram-resident-limit = -ram\n",
       "/etc/hzram.conf:2: [hzram0] zram-resident-limit: '-ram' is -1000: a size cannot be "
       "negative"},
      {"[hzram0]\nzram-fraction = 1e30\nmax-zram-size = none\n",
       "/etc/hzram.conf:2: [hzram0] zram-fraction = 1e+30, max-zram-size = none: more than 2^64 "
       "bytes"},
      {"[hzram0]\nmount-point = /mnt\n\nfs-type = swap\n",
       "/etc/hzram.conf:4: [hzram0] fs-type: swap, but mount-point is set (/etc/hzram.conf:2)"},
      {"[hzram0]\nwriteback-idle-age = 1d\n",
       "/etc/hzram.conf:2: [hzram0] writeback-idle-age: no writeback-device"},
      {"[hzram0]\n\nwriteback-limit = 100\n",
       "/etc/hzram.conf:3: [hzram0] writeback-limit: no writeback-device"},
      {"[hzram0]\ncompression-algorithm = zstd\nrecompress-idle-age = 1h\n",
       "/etc/hzram.conf:3: [hzram0] recompress-idle-age: compression-algorithm names no "
       "algorithm to recompress with"},
  };
  for (const auto& [text, error] : cases) EXPECT_EQ(error, ResolveError(text)) << text;
  // 2^44 - 1 MiB is the largest whole number of MiB below 2^64 bytes.
  EXPECT_EQ("no error", ResolveError("[hzram0]\nzram-size = 2^44 - 1\n"));
}

TEST(ConfigTest, LineEndingsAndQuotes) {
  std::vector<Device> d = Resolve("[hzram0]\r\nzram-size = 10\r\noptions = 'a b'\r\n", 1000);
  EXPECT_EQ(10ull << 20, d[0].disksize);
  EXPECT_EQ("a b", d[0].options);
  d = Resolve("[hzram0]\noptions = \"x\n");  // unbalanced quotes stay
  EXPECT_EQ("\"x", d[0].options);
  d = Resolve("[hzram0]\noptions = a=b,c\n");  // the first '=' separates
  EXPECT_EQ("a=b,c", d[0].options);
}

TEST(ConfigTest, MemTotal) {
  std::uint64_t kb = 0;
  EXPECT_TRUE(ParseMemTotal("MemTotal:        8013220 kB\nMemFree:  721288 kB\n", &kb));
  EXPECT_EQ(8013220u, kb);
  EXPECT_TRUE(ParseMemTotal("MemFree: 1 kB\nMemTotal: 42 kB\n", &kb));
  EXPECT_EQ(42u, kb);
  EXPECT_FALSE(ParseMemTotal("MemTotala: 1 kB\naMemTotal: 2 kB\nMemTotal:: 3 kB\n", &kb));
  EXPECT_FALSE(ParseMemTotal("MemTotal: lots\n", &kb));
}

TEST(ConfigTest, DeviceNames) {
  unsigned id = 99;
  EXPECT_TRUE(ParseDeviceName("hzram0", &id));
  EXPECT_EQ(0u, id);
  EXPECT_TRUE(ParseDeviceName("hzram255", &id));
  EXPECT_EQ(255u, id);
  for (const char* bad : {"hzram256", "hzram00", "hzram-1", "hzram", "zram0", "hzram1x", ""})
    EXPECT_FALSE(ParseDeviceName(bad, &id)) << bad;
}

// A directory tree for --root, removed at the end.
class TreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/hzram-setup-test.XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(tmpl));
    root_ = tmpl;
    Write("/proc/meminfo", "MemTotal:        1025000 kB\nMemFree: 5 kB\n");  // ram = 1000
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(root_ + path).parent_path());
    std::ofstream(root_ + path) << text;
  }
  std::vector<std::string> Files() {
    std::vector<std::string> files;
    for (const std::string& f : FindConfigFiles(root_)) files.push_back(f.substr(root_.size()));
    return files;
  }
  std::string root_;
};

TEST_F(TreeTest, FilesAndTheirOrder) {
  EXPECT_TRUE(Files().empty());
  Config c;
  std::string error;
  ASSERT_TRUE(LoadConfig(root_, 1000, &c, &error)) << error;
  EXPECT_TRUE(c.devices.empty());
  EXPECT_TRUE(c.files.empty());

  // The main file: the first of /run, /etc, /usr/local/lib, /usr/lib.
  Write("/usr/lib/hzram.conf", "[hzram0]\nzram-size = 1\n");
  EXPECT_EQ(std::vector<std::string>{"/usr/lib/hzram.conf"}, Files());
  Write("/usr/local/lib/hzram.conf", "[hzram0]\nzram-size = 2\n");
  EXPECT_EQ(std::vector<std::string>{"/usr/local/lib/hzram.conf"}, Files());
  Write("/etc/hzram.conf", "[hzram0]\nzram-size = 3\n");
  EXPECT_EQ(std::vector<std::string>{"/etc/hzram.conf"}, Files());
  Write("/run/hzram.conf", "[hzram0]\nzram-size = 4\n");
  EXPECT_EQ(std::vector<std::string>{"/run/hzram.conf"}, Files());
  fs::remove(root_ + "/run/hzram.conf");

  // Drop-ins: by name across the directories, after the main file; a
  // name in a later directory (/usr/lib, /usr/local/lib, /etc, /run)
  // replaces it in an earlier one; only *.conf, no dotfiles.
  Write("/usr/lib/hzram.conf.d/10-vendor.conf", "[hzram0]\nzram-size = 10\nswap-priority = 5\n");
  Write("/usr/lib/hzram.conf.d/30-vendor.conf", "[hzram1]\nzram-size = 30\n");
  Write("/usr/local/lib/hzram.conf.d/20-local.conf", "[hzram0]\nzram-size = 20\n");
  Write("/etc/hzram.conf.d/30-vendor.conf", "[hzram1]\nzram-size = 31\n");
  Write("/run/hzram.conf.d/05-run.conf", "[hzram2]\n");
  Write("/etc/hzram.conf.d/40-notes.txt", "not read");
  Write("/etc/hzram.conf.d/.50-hidden.conf", "not read");
  fs::create_directories(root_ + "/etc/hzram.conf.d/60-dir.conf");
  EXPECT_EQ((std::vector<std::string>{"/etc/hzram.conf", "/run/hzram.conf.d/05-run.conf",
                                      "/usr/lib/hzram.conf.d/10-vendor.conf",
                                      "/usr/local/lib/hzram.conf.d/20-local.conf",
                                      "/etc/hzram.conf.d/30-vendor.conf"}),
            Files());
  ASSERT_TRUE(LoadConfig(root_, 1000, &c, &error)) << error;
  EXPECT_EQ(5u, c.files.size());
  std::vector<Device> d;
  std::vector<std::string> w;
  ASSERT_TRUE(ResolveDevices(c, 1000, &d, &w, &error)) << error;
  ASSERT_EQ(3u, d.size());
  EXPECT_EQ(20ull << 20, d[0].disksize);  // 20-local.conf comes last for hzram0
  EXPECT_EQ(5, d[0].swap_priority);       // keys it does not set stay
  EXPECT_EQ(31ull << 20, d[1].disksize);
  EXPECT_EQ(500ull << 20, d[2].disksize);

  // A link to /dev/null masks a file of the same name; an empty main file
  // in /etc masks those of /usr.
  fs::create_symlink("/dev/null", root_ + "/run/hzram.conf.d/20-local.conf");
  fs::create_symlink("/dev/null", root_ + "/run/hzram.conf.d/30-vendor.conf");
  ASSERT_TRUE(LoadConfig(root_, 1000, &c, &error)) << error;
  ASSERT_TRUE(ResolveDevices(c, 1000, &d, &w, &error)) << error;
  ASSERT_EQ(2u, d.size());
  EXPECT_EQ(10ull << 20, d[0].disksize);
  EXPECT_EQ("hzram2", d[1].name);
  // A dangling link is no file, and hides nothing.
  fs::create_symlink(root_ + "/nowhere", root_ + "/run/hzram.conf.d/10-vendor.conf");
  EXPECT_EQ(root_ + "/usr/lib/hzram.conf.d/10-vendor.conf", FindConfigFiles(root_)[2]);

  // The error names the file.
  Write("/etc/hzram.conf.d/70-bad.conf", "[hzram0]\n\nzram-size = ram +\n");
  EXPECT_FALSE(LoadConfig(root_, 1000, &c, &error));
  EXPECT_EQ(root_ +
                "/etc/hzram.conf.d/70-bad.conf:3: [hzram0] zram-size: column 6: expected a "
                "number, a name or '(', found the end in 'ram +'",
            error);
}

// ---------------------------------------------------------------------
// Steps and the dry run.

std::vector<std::string> Lines(const std::vector<Step>& steps) {
  std::vector<std::string> lines;
  for (const Step& s : steps) lines.push_back(FormatStep(s));
  return lines;
}

TEST(PlanTest, SwapSteps) {
  const std::vector<Device> d = Resolve(
      "[hzram0]\n"
      "[hzram1]\ncompression-algorithm = zstd\nzram-resident-limit = 8\nswap-priority = -1\n"
      "options =\n",
      1000);
  EXPECT_EQ(
      (std::vector<std::string>{"# create /dev/hzram0 if missing (modprobe hzram, hot_add)",
                                "echo 524288000 > /sys/block/hzram0/disksize", "mkswap /dev/hzram0",
                                "swapon -p 100 -o discard /dev/hzram0"}),
      Lines(SetupSteps(d[0])));
  EXPECT_EQ((std::vector<std::string>{"# create /dev/hzram1 if missing (modprobe hzram, hot_add)",
                                      "echo zstd > /sys/block/hzram1/comp_algorithm",
                                      "echo 8388608 > /sys/block/hzram1/mem_limit",
                                      "echo 524288000 > /sys/block/hzram1/disksize",
                                      "mkswap /dev/hzram1", "swapon /dev/hzram1"}),
            Lines(SetupSteps(d[1])));
  EXPECT_EQ((std::vector<std::string>{"swapoff /dev/hzram0", "echo 1 > /sys/block/hzram0/reset"}),
            Lines(ResetSteps(d[0])));
  const std::vector<Step> s = SetupSteps(d[1]);
  EXPECT_EQ(Step::Kind::kEnsureDevice, s[0].kind);
  EXPECT_EQ("/dev/hzram1", s[0].path);
  EXPECT_EQ(Step::Kind::kWrite, s[1].kind);
  EXPECT_EQ("/sys/block/hzram1/comp_algorithm", s[1].path);
  EXPECT_EQ("zstd", s[1].value);
  EXPECT_EQ(Step::Kind::kRun, s[5].kind);
  EXPECT_EQ((std::vector<std::string>{"swapon", "/dev/hzram1"}), s[5].argv);
}

// The second tier: recompression algorithms and their parameters, a
// backing device and its daily limit, and the maintenance steps.
TEST(PlanTest, SecondTierSteps) {
  const std::vector<Device> d = Resolve(
      "[hzram0]\ncompression-algorithm = lz4(level=2) lz4hc zstd(level=12, dict=/etc/d)\n"
      "writeback-device = /dev/sdb1\nwriteback-limit = 100\nwriteback-idle-age = 1d\n"
      "recompress-idle-age = 30min\n"
      "[hzram1]\ncompression-algorithm = zstd\nwriteback-device = /var/lib/hzram/backing\n"
      "writeback-idle-age = 12h\nwriteback-limit = none\n"
      "[hzram2]\n",
      1000);
  EXPECT_EQ((std::vector<std::string>{"# create /dev/hzram0 if missing (modprobe hzram, hot_add)",
                                      "echo lz4 > /sys/block/hzram0/comp_algorithm",
                                      "echo 'priority=0 level=2' > /sys/block/hzram0/algorithm_params",
                                      "echo 'algo=lz4hc priority=1' > /sys/block/hzram0/recomp_algorithm",
                                      "echo 'algo=zstd priority=2' > /sys/block/hzram0/recomp_algorithm",
                                      "echo 'priority=2 level=12 dict=/etc/d' > "
                                      "/sys/block/hzram0/algorithm_params",
                                      "echo /dev/sdb1 > /sys/block/hzram0/backing_dev",
                                      "echo 1 > /sys/block/hzram0/writeback_limit_enable",
                                      "echo 25600 > /sys/block/hzram0/writeback_limit",
                                      "echo 524288000 > /sys/block/hzram0/disksize",
                                      "mkswap /dev/hzram0", "swapon -p 100 -o discard /dev/hzram0"}),
            Lines(SetupSteps(d[0])));
  EXPECT_EQ((std::vector<std::string>{"echo 1800 > /sys/block/hzram0/idle",
                                      "echo 'type=idle priority=1' > /sys/block/hzram0/recompress",
                                      "echo 1800 > /sys/block/hzram0/idle",
                                      "echo 'type=idle priority=2' > /sys/block/hzram0/recompress",
                                      "echo 25600 > /sys/block/hzram0/writeback_limit  # at the "
                                      "first run of each day",
                                      "echo 86400 > /sys/block/hzram0/idle",
                                      "echo idle > /sys/block/hzram0/writeback"}),
            Lines(MaintainSteps(d[0])));
  EXPECT_TRUE(MaintainSteps(d[0])[4].daily);
  // No limit: writeback_limit_enable written 0 (the setting outlives a
  // reset); a limit of 0: nothing written back at all.
  const std::vector<std::string> s1 = Lines(SetupSteps(d[1]));
  EXPECT_NE(s1.end(), std::find(s1.begin(), s1.end(),
                                "echo 0 > /sys/block/hzram1/writeback_limit_enable"));
  const std::vector<Device> z =
      Resolve("[hzram5]\nwriteback-device = /dev/sdc\nwriteback-limit = 0\n", 1000);
  const std::vector<std::string> s5 = Lines(SetupSteps(z[0]));
  EXPECT_NE(s5.end(), std::find(s5.begin(), s5.end(),
                                "echo 1 > /sys/block/hzram5/writeback_limit_enable"));
  EXPECT_NE(s5.end(), std::find(s5.begin(), s5.end(), "echo 0 > /sys/block/hzram5/writeback_limit"));
  EXPECT_EQ((std::vector<std::string>{"echo 43200 > /sys/block/hzram1/idle",
                                      "echo idle > /sys/block/hzram1/writeback"}),
            Lines(MaintainSteps(d[1])));
  EXPECT_TRUE(MaintainSteps(d[2]).empty());
  EXPECT_EQ(
      "# hzram0: swap, 500 MiB (min(ram / 2, 4096)), lz4, recompression lz4hc, recompression "
      "zstd after 1800 s idle, writeback to /dev/sdb1 after 86400 s idle, at most 100 MiB a "
      "day, priority 100, options discard",
      DescribeDevice(d[0]));
  EXPECT_EQ(
      "# ram = 1000 MiB\n"
      "# hzram1: swap, 500 MiB (min(ram / 2, 4096)), zstd, writeback to /var/lib/hzram/backing "
      "after 43200 s idle, priority 100, options discard\n"
      "echo 43200 > /sys/block/hzram1/idle\n"
      "echo idle > /sys/block/hzram1/writeback\n"
      "# hzram2: swap, 500 MiB (min(ram / 2, 4096)), the default algorithm, priority 100, "
      "options discard\n"
      "# nothing to maintain\n",
      FormatPlan({d[1], d[2]}, 1000, PlanKind::kMaintain));
  // Durations.
  std::uint64_t sec;
  for (const auto& [text, want] : std::vector<std::pair<std::string, std::uint64_t>>{
           {"5", 5}, {"5s", 5}, {"2min", 120}, {"3h", 10800}, {"7d", 604800}}) {
    ASSERT_TRUE(ParseDuration(text, &sec)) << text;
    EXPECT_EQ(want, sec) << text;
  }
  ASSERT_TRUE(ParseDuration("4294967295", &sec));
  for (const char* bad :
       {"", "0", "h", "1m", "1 h", "-1", "1.5h", "9999999999999", "4294967296", "49711d"})
    EXPECT_FALSE(ParseDuration(bad, &sec)) << bad;
  std::vector<Algorithm> algs;
  std::string why;
  ASSERT_TRUE(ParseAlgorithms("  zstd(level=-3)   lz4hc( level=9 ) ", &algs, &why)) << why;
  EXPECT_EQ((std::vector<Algorithm>{{"zstd", -3, ""}, {"lz4hc", 9, ""}}), algs);
  ASSERT_TRUE(ParseAlgorithms("", &algs, &why));
  EXPECT_TRUE(algs.empty());
}

TEST(PlanTest, FileSystemSteps) {
  const std::vector<Device> d = Resolve(
      "[hzram2]\nfs-type = ext4\nmount-point = /mnt/a b\noptions = noatime\nzram-size = 64\n"
      "[hzram3]\nfs-type = btrfs\n",
      1000);
  EXPECT_EQ((std::vector<std::string>{"# create /dev/hzram2 if missing (modprobe hzram, hot_add)",
                                      "echo 67108864 > /sys/block/hzram2/disksize",
                                      "mkfs.ext4 -q /dev/hzram2", "mkdir -p '/mnt/a b'",
                                      "mount -t ext4 -o noatime /dev/hzram2 '/mnt/a b'"}),
            Lines(SetupSteps(d[0])));
  EXPECT_EQ((std::vector<std::string>{"umount '/mnt/a b'", "echo 1 > /sys/block/hzram2/reset"}),
            Lines(ResetSteps(d[0])));
  // Not mounted: formatted only, and reset only.
  EXPECT_EQ((std::vector<std::string>{"# create /dev/hzram3 if missing (modprobe hzram, hot_add)",
                                      "echo 524288000 > /sys/block/hzram3/disksize",
                                      "mkfs.btrfs /dev/hzram3"}),
            Lines(SetupSteps(d[1])));
  EXPECT_EQ((std::vector<std::string>{"echo 1 > /sys/block/hzram3/reset"}),
            Lines(ResetSteps(d[1])));
  Step odd;
  odd.kind = Step::Kind::kRun;
  odd.argv = {"mount", "-o", "it's", ""};
  EXPECT_EQ("mount -o 'it'\\''s' ''", FormatStep(odd));
}

const char kSample[] =
    "[hzram0]\ncompression-algorithm = zstd\nswap-priority = 50\n"
    "[hzram1]\nfs-type = ext4\nmount-point = /var/tmp\nzram-size = ram / 8\n"
    "zram-resident-limit = 16\n"
    "[hzram2]\nhost-memory-limit = 512\n"
    "[hzram3]\nfs-type = ext2\nzram-size = 1.5\n";

const char kSamplePlan[] =
    "# ram = 1000 MiB\n"
    "# hzram0: swap, 500 MiB (min(ram / 2, 4096)), zstd, priority 50, options discard\n"
    "# create /dev/hzram0 if missing (modprobe hzram, hot_add)\n"
    "echo zstd > /sys/block/hzram0/comp_algorithm\n"
    "echo 524288000 > /sys/block/hzram0/disksize\n"
    "mkswap /dev/hzram0\n"
    "swapon -p 50 -o discard /dev/hzram0\n"
    "# hzram1: ext4 on /var/tmp, 125 MiB (ram / 8), the default algorithm, mem_limit 16777216 "
    "bytes, options discard\n"
    "# create /dev/hzram1 if missing (modprobe hzram, hot_add)\n"
    "echo 16777216 > /sys/block/hzram1/mem_limit\n"
    "echo 131072000 > /sys/block/hzram1/disksize\n"
    "mkfs.ext4 -q /dev/hzram1\n"
    "mkdir -p /var/tmp\n"
    "mount -t ext4 -o discard /dev/hzram1 /var/tmp\n"
    "# hzram2: swap: disabled, ram (1000 MiB) is above host-memory-limit (512 MiB)\n"
    "# hzram3: ext2, not mounted, 1.5 MiB (1.5), the default algorithm\n"
    "# create /dev/hzram3 if missing (modprobe hzram, hot_add)\n"
    "echo 1572864 > /sys/block/hzram3/disksize\n"
    "mkfs.ext2 -q /dev/hzram3\n";

const char kSampleResetPlan[] =
    "# ram = 1000 MiB\n"
    "# hzram3: ext2, not mounted, 1.5 MiB (1.5), the default algorithm\n"
    "echo 1 > /sys/block/hzram3/reset\n"
    "# hzram2: swap: disabled, ram (1000 MiB) is above host-memory-limit (512 MiB)\n"
    "# hzram1: ext4 on /var/tmp, 125 MiB (ram / 8), the default algorithm, mem_limit 16777216 "
    "bytes, options discard\n"
    "umount /var/tmp\n"
    "echo 1 > /sys/block/hzram1/reset\n"
    "# hzram0: swap, 500 MiB (min(ram / 2, 4096)), zstd, priority 50, options discard\n"
    "swapoff /dev/hzram0\n"
    "echo 1 > /sys/block/hzram0/reset\n";

TEST(PlanTest, DryRunOutput) {
  const std::vector<Device> d = Resolve(kSample, 1000);
  EXPECT_EQ(kSamplePlan, FormatPlan(d, 1000, PlanKind::kSetUp));
  EXPECT_EQ(kSampleResetPlan, FormatPlan(d, 1000, PlanKind::kReset));
  EXPECT_EQ("# ram = 7 MiB\n# no devices configured\n", FormatPlan({}, 7, PlanKind::kSetUp));
  EXPECT_EQ(
      "# hzram0: swap, 500 MiB (min(ram / 2, 4096)), the default algorithm, priority 100, "
      "no options",
      DescribeDevice(Resolve("[hzram0]\noptions=\n")[0]));
}

TEST(PlanTest, ProcFiles) {
  EXPECT_EQ((std::vector<std::string>{"/dev/hzram0", "/swap file"}),
            ParseSwaps("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
                       "/dev/hzram0                             partition\t255996\t\t0\t\t100\n"
                       "/swap\\040file                            file\t\t1024\t\t0\t\t-2\n"));
  EXPECT_TRUE(ParseSwaps("Filename Type Size Used Priority\n").empty());
  const std::vector<Mount> m = ParseMountinfo(
      "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
      "40 22 251:1 / /mnt/a\\040b rw,relatime shared:1 - ext4 /dev/hzram1 rw,discard\n"
      "garbage\n");
  ASSERT_EQ(2u, m.size());
  EXPECT_EQ(0u, m[0].major);
  EXPECT_EQ(21u, m[0].minor);
  EXPECT_EQ("/proc", m[0].mount_point);
  EXPECT_EQ(251u, m[1].major);
  EXPECT_EQ(1u, m[1].minor);
  EXPECT_EQ("/mnt/a b", m[1].mount_point);
}

// ---------------------------------------------------------------------
// The command line.

ParseResult ParseArgs(std::vector<const char*> args, Options* o, std::string* error) {
  args.insert(args.begin(), "hzram-setup");
  return ParseOptions(static_cast<int>(args.size()), args.data(), o, error);
}

TEST(OptionsTest, Arguments) {
  Options o;
  std::string error;
  ASSERT_EQ(ParseResult::kRun, ParseArgs({}, &o, &error));
  EXPECT_FALSE(o.reset);
  EXPECT_FALSE(o.dry_run);
  EXPECT_EQ("/", o.root);
  EXPECT_TRUE(o.devices.empty());
  ASSERT_EQ(
      ParseResult::kRun,
      ParseArgs({"--reset", "--dry-run", "--root", "/x", "hzram2", "/dev/hzram0"}, &o, &error));
  EXPECT_TRUE(o.reset);
  EXPECT_TRUE(o.dry_run);
  EXPECT_EQ("/x", o.root);
  EXPECT_EQ((std::vector<unsigned>{2, 0}), o.devices);
  ASSERT_EQ(ParseResult::kRun, ParseArgs({"-n", "--root=/y", "--", "hzram7"}, &o, &error));
  EXPECT_TRUE(o.dry_run);
  EXPECT_EQ("/y", o.root);
  EXPECT_EQ(std::vector<unsigned>{7}, o.devices);
  EXPECT_EQ(ParseResult::kHelp, ParseArgs({"--help"}, &o, &error));
  EXPECT_EQ(ParseResult::kHelp, ParseArgs({"-h"}, &o, &error));
  EXPECT_EQ(ParseResult::kVersion, ParseArgs({"--version"}, &o, &error));
  EXPECT_EQ(ParseResult::kVersion, ParseArgs({"-V"}, &o, &error));

  const std::pair<std::vector<const char*>, const char*> bad[] = {
      {{"--bogus"}, "unknown option '--bogus'"},
      {{"-x"}, "unknown option '-x'"},
      {{"--reset=yes"}, "option --reset takes no value"},
      {{"--root"}, "option --root needs a value"},
      {{"--root", "rel"}, "bad value 'rel' for --root: an absolute path"},
      {{"--root="}, "bad value '' for --root: an absolute path"},
      {{"zram0"}, "'zram0' is not a device: hzramN or /dev/hzramN, N from 0 to 255"},
      {{"hzram256"}, "'hzram256' is not a device: hzramN or /dev/hzramN, N from 0 to 255"},
      {{"hzram1", "/dev/hzram1"}, "device hzram1 given twice"},
  };
  for (const auto& [args, message] : bad) {
    EXPECT_EQ(ParseResult::kUsage, ParseArgs(args, &o, &error)) << message;
    EXPECT_EQ(message, error);
  }
}

// ---------------------------------------------------------------------
// The program, on configurations under --root (it changes nothing with
// --dry-run, nor without a configuration).

using hzram::test::Ran;

Ran RunProgram(const std::string& args) {
  return hzram::test::RunProgram(hzram::test::BuiltProgram("hzram-setup"), args);
}

TEST_F(TreeTest, Program) {
  Ran r = RunProgram("--help");
  EXPECT_EQ(0, r.status);
  EXPECT_EQ(UsageText(), r.output);
  r = RunProgram("--version");
  EXPECT_EQ(0, r.status);
  EXPECT_EQ(VersionText(), r.output);
  EXPECT_EQ(0u, r.output.rfind("hzram-setup ", 0));
  r = RunProgram("--frobnicate");
  EXPECT_EQ(2, r.status);
  EXPECT_EQ("hzram-setup: unknown option '--frobnicate'\n" + UsageText(), r.output);

  // No configuration: nothing to do, nothing touched.
  r = RunProgram("--root " + root_);
  EXPECT_EQ(0, r.status);
  EXPECT_EQ("hzram-setup: no configuration (hzram.conf): nothing to do\n", r.output);
  r = RunProgram("--reset --root " + root_);
  EXPECT_EQ(0, r.status);
  r = RunProgram("--dry-run --root " + root_);
  EXPECT_EQ(0, r.status);
  EXPECT_EQ("# ram = 1000 MiB\n# no devices configured\n", r.output);

  Write("/etc/hzram.conf", kSample);
  r = RunProgram("--dry-run --root " + root_);
  EXPECT_EQ(0, r.status);
  EXPECT_EQ(kSamplePlan, r.output);
  r = RunProgram("--reset -n --root=" + root_);
  EXPECT_EQ(0, r.status);
  EXPECT_EQ(kSampleResetPlan, r.output);
  // Some devices, in the order of the configuration.
  r = RunProgram("--dry-run --root " + root_ + " hzram3 /dev/hzram0");
  EXPECT_EQ(0, r.status);
  EXPECT_EQ(std::string(kSamplePlan).substr(0, std::string(kSamplePlan).find("# hzram1")) +
                std::string(kSamplePlan).substr(std::string(kSamplePlan).find("# hzram3")),
            r.output);
  r = RunProgram("--dry-run --root " + root_ + " hzram5");
  EXPECT_EQ(1, r.status);
  EXPECT_EQ("hzram-setup: hzram5 is not in the configuration\n", r.output);

  // Warnings go to stderr, the plan goes on.
  Write("/etc/hzram.conf.d/90-big.conf", "[hzram0]\nzram-size = ram * 40\n");
  r = RunProgram("--dry-run --root " + root_ + " hzram0");
  EXPECT_EQ(0, r.status);
  EXPECT_EQ(0u, r.output.find("hzram-setup: warning: hzram0: a size of 41943040000 bytes "
                              "(ram * 40) would need a compression ratio of 40 with 1000 MiB of "
                              "RAM: sizes are in MiB\n# ram = 1000 MiB\n"))
      << r.output;

  // A bad configuration: exit 1, the file and line, and nothing done.
  Write("/etc/hzram.conf.d/95-bad.conf", "[hzram0]\nswap-priority = 99999\n");
  for (const char* mode : {"", "--reset ", "--dry-run "}) {
    r = RunProgram(std::string(mode) + "--root " + root_);
    EXPECT_EQ(1, r.status) << mode;
    EXPECT_EQ("hzram-setup: " + root_ +
                  "/etc/hzram.conf.d/95-bad.conf:2: [hzram0] swap-priority: '99999' is not a "
                  "number from -1 to 32767\n",
              r.output)
        << mode;
  }
  fs::remove(root_ + "/etc/hzram.conf.d/95-bad.conf");
  Write("/etc/hzram.conf.d/95-bad.conf", "[hzram1]\nzram-size = -ram\n");
  r = RunProgram("--root " + root_);
  EXPECT_EQ(1, r.status);
  EXPECT_EQ("hzram-setup: " + root_ +
                "/etc/hzram.conf.d/95-bad.conf:2: [hzram1] zram-size: '-ram' is -1000: a size "
                "cannot be negative\n",
            r.output);

  // set! runs in a dry run too.
  fs::remove(root_ + "/etc/hzram.conf.d/95-bad.conf");
  fs::remove(root_ + "/etc/hzram.conf.d/90-big.conf");
  Write("/etc/hzram.conf", "set!half = echo ram / 2\n[hzram0]\nzram-size = half + 1\n");
  r = RunProgram("--dry-run --root " + root_);
  EXPECT_EQ(0, r.status);
  EXPECT_NE(std::string::npos, r.output.find("# hzram0: swap, 501 MiB (half + 1)")) << r.output;

  // No MemTotal.
  Write("/proc/meminfo", "MemFree: 1 kB\n");
  r = RunProgram("--dry-run --root " + root_);
  EXPECT_EQ(1, r.status);
  EXPECT_EQ("hzram-setup: " + root_ + "/proc/meminfo: no MemTotal\n", r.output);
}

}  // namespace
}  // namespace hzsetup
