// SPDX-License-Identifier: GPL-2.0
// JSON output for the programs (hzramctl --monitor --json, hzramd --bench
// --json): one string escaper.
#ifndef HZRAM_COMMON_JSON_H
#define HZRAM_COMMON_JSON_H

#include <cstdio>
#include <string>
#include <string_view>

namespace hzram {

// @s as a JSON string, quoted and escaped (RFC 8259: '"', '\\' and every
// control character; bytes from 0x80 up as they are).
inline std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace hzram

#endif  // HZRAM_COMMON_JSON_H
