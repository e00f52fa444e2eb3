// SPDX-License-Identifier: GPL-2.0
// What the programs share (userhelper/common/): the JSON string escaper
// and the number parser.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "hzram-common/json.h"
#include "hzram-common/number.h"

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
