// SPDX-License-Identifier: GPL-2.0
// What the programs share (userhelper/common/): the JSON string escaper,
// the number parser and the option walker.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hzram-common/json.h"
#include "hzram-common/number.h"
#include "hzram-common/options.h"

namespace {

TEST(JsonTest, Strings) {
  EXPECT_EQ(R"("lz4")", hzram::JsonString("lz4"));
  EXPECT_EQ(R"("")", hzram::JsonString(""));
  EXPECT_EQ(R"("a\"b\\c\nd\te\u0001\r\u001f")",
            hzram::JsonString("a\"b\\c\nd\te\x01\r\x1f"));
  // Control characters are escaped, not dropped; UTF-8 passes as it is.
  EXPECT_EQ("\"\\u0000x\"", hzram::JsonString(std::string("\0x", 2)));
  EXPECT_EQ("\"\xc3\xa9\"", hzram::JsonString("\xc3\xa9"));
}

TEST(NumberTest, Unsigned) {
  std::uint64_t n = 7;
  EXPECT_TRUE(hzram::ParseDecimal<std::uint64_t>("0", 0, UINT64_MAX, &n));
  EXPECT_EQ(0u, n);
  EXPECT_TRUE(hzram::ParseDecimal<std::uint64_t>("18446744073709551615", 0, UINT64_MAX, &n));
  EXPECT_EQ(UINT64_MAX, n);
  for (const char* s : {"", "-1", "+1", " 1", "1 ", "0x10", "1e3", "18446744073709551616", "-"}) {
    n = 7;
    EXPECT_FALSE(hzram::ParseDecimal<std::uint64_t>(s, 0, UINT64_MAX, &n)) << s;
    EXPECT_EQ(7u, n) << s;  // untouched
  }
  unsigned long v = 0;
  EXPECT_TRUE(hzram::ParseDecimal<unsigned long>("1024", 1, 1024, &v));
  EXPECT_EQ(1024u, v);
  EXPECT_FALSE(hzram::ParseDecimal<unsigned long>("1025", 1, 1024, &v));
  EXPECT_FALSE(hzram::ParseDecimal<unsigned long>("0", 1, 1024, &v));
  EXPECT_TRUE(hzram::ParseDecimal<unsigned long>("007", 1, 1024, &v));
  EXPECT_EQ(7u, v);
}

TEST(NumberTest, Signed) {
  int n = 0;
  EXPECT_TRUE(hzram::ParseDecimal<int>("-1", -1, 32767, &n));
  EXPECT_EQ(-1, n);
  EXPECT_TRUE(hzram::ParseDecimal<int>("32767", -1, 32767, &n));
  EXPECT_EQ(32767, n);
  for (const char* s : {"-2", "32768", "+5", "--1", "- 1", "-", "2147483648", "5x"})
    EXPECT_FALSE(hzram::ParseDecimal<int>(s, -1, 32767, &n)) << s;
}

}  // namespace

namespace {

enum { kOptFlag = 256, kOptValue, kOptValuable };
const option kLong[] = {
    {"help", no_argument, nullptr, 'h'},       {"flag", no_argument, nullptr, kOptFlag},
    {"value", required_argument, nullptr, kOptValue},
    {"valuable", no_argument, nullptr, kOptValuable}, {nullptr, 0, nullptr, 0},
};

// WalkOptions over @args (argv[0] added); what it took, as "id=value ...".
std::string Walk(std::vector<const char*> args, bool positional, std::string* taken) {
  args.insert(args.begin(), "prog");
  taken->clear();
  return hzram::WalkOptions(static_cast<int>(args.size()), args.data(), "hn", kLong, positional,
                            [&](int id, const char* value, std::string* error) {
                              if (id == 'h') return false;
                              if (value && std::string(value) == "bad") {
                                *error = "bad value";
                                return false;
                              }
                              *taken += std::to_string(id) + "=" + (value ? value : "") + " ";
                              return true;
                            });
}

TEST(OptionsTest, TakesOptionsInOrder) {
  std::string t;
  EXPECT_EQ("", Walk({"--flag", "--value", "a", "--value=b", "-n", "--"}, false, &t));
  EXPECT_EQ("256= 257=a 257=b 110= ", t);
  // An unambiguous abbreviation; a value that looks like an option.
  EXPECT_EQ("", Walk({"--fl", "--value", "--flag"}, false, &t));
  EXPECT_EQ("256= 257=--flag ", t);
  // @take stops the walk: what follows is not looked at.
  EXPECT_EQ("", Walk({"--flag", "-h", "--bogus"}, false, &t));
  EXPECT_EQ("256= ", t);
  EXPECT_EQ("bad value", Walk({"--value", "bad", "--flag"}, false, &t));
  // A second walk in one process starts over.
  EXPECT_EQ("", Walk({"--flag"}, false, &t));
  EXPECT_EQ("256= ", t);
}

TEST(OptionsTest, Positional) {
  std::string t;
  EXPECT_EQ("", Walk({"a", "--flag", "b", "--", "--value", "-"}, true, &t));
  EXPECT_EQ("1=a 256= 1=b 1=--value 1=- ", t);
  EXPECT_EQ("unexpected argument 'a'", Walk({"--flag", "a"}, false, &t));
  EXPECT_EQ("unexpected argument '--flag'", Walk({"--", "--flag"}, false, &t));
}

TEST(OptionsTest, Errors) {
  std::string t;
  const std::pair<std::vector<const char*>, std::string> cases[] = {
      {{"--bogus"}, "unknown option '--bogus'"},
      {{"--bogus=1"}, "unknown option '--bogus'"},
      {{"-x"}, "unknown option '-x'"},
      {{"-nx"}, "unknown option '-x'"},
      // The group, not the option before it, is the one at fault.
      {{"--flag", "-xn"}, "unknown option '-x'"},
      {{"--value=1", "-value", "2"}, "unknown option '-v'"},
      {{"--flag=1"}, "option --flag takes no value"},
      {{"--fl=1"}, "option --flag takes no value"},
      {{"--value"}, "option --value needs a value"},
      {{"--val"}, "option '--val' is ambiguous: --value, --valuable"},
      {{"--valu"}, "option '--valu' is ambiguous: --value, --valuable"},
  };
  for (const auto& [args, message] : cases) EXPECT_EQ(message, Walk(args, false, &t)) << args[0];
}

}  // namespace
