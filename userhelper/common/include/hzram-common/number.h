// SPDX-License-Identifier: GPL-2.0
// Numbers in the programs' options and configuration files: one parser.
#ifndef HZRAM_COMMON_NUMBER_H
#define HZRAM_COMMON_NUMBER_H

#include <charconv>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace hzram {

// A whole decimal number in [lo, hi]: digits only, with a '-' first for a
// signed type; no space, no '+', no base prefix, nothing after it, no
// overflow. *out is set only on success.
template <typename T>
bool ParseDecimal(std::string_view s, T lo, T hi, T* out) {
  static_assert(std::is_integral_v<T>);
  const std::size_t digit = std::is_signed_v<T> && !s.empty() && s[0] == '-' ? 1 : 0;
  if (s.size() <= digit || s[digit] < '0' || s[digit] > '9') return false;
  T v{};
  const char* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || p != end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

}  // namespace hzram

#endif  // HZRAM_COMMON_NUMBER_H
