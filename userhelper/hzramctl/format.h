// SPDX-License-Identifier: GPL-2.0
//
// hzramctl's conversions between numbers and text, as util-linux's
// zramctl 2.38.1 makes them (lib/strutils.c): sizes for humans, sizes and
// numbers from the command line, the selection of a sysfs list.
#ifndef HZRAMCTL_FORMAT_H
#define HZRAMCTL_FORMAT_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hzramctl {

// size_to_human_string(SIZE_SUFFIX_1LETTER, bytes): powers of 1024 with a
// one-letter suffix (B, K, M, G, T, P, E) and at most one decimal, rounded
// half up, the locale's decimal point: 1536 -> "1.5K", 2047 -> "2K".
std::string SizeToHumanString(std::uint64_t bytes);

// strtosize(): a number (decimal, or 0x hex / 0 octal as strtoumax reads
// them) with an optional fraction and suffix: K, M, G, T, P, E, Z, Y or
// KiB..YiB for powers of 1024, KB..YB for powers of 1000 (k..y lower case
// accepted too), "1.5G". Returns 0, or -errno (EINVAL, ERANGE), with errno
// set to that errno too.
int ParseSize(const char* str, std::uintmax_t* res);

// ul_strtou64(str, num, 10): a whole decimal number; 0 or -EINVAL, errno
// ERANGE for a negative number or one past 64 bits, else 0.
int ParseU64(const char* str, std::uint64_t* num);

// The text between the last '[' and the last ']' of a sysfs list such as
// comp_algorithm's "lzo lzo-rle [lz4] lz4hc zstd" (zramctl's ALGORITHM);
// nothing when there are no brackets or nothing between them.
std::optional<std::string> BracketedSelection(std::string_view list);

// The selected value of an attribute that prints either the value alone
// ("auto") or a list with it in brackets ("off [auto] on"); nothing for an
// empty one.
std::optional<std::string> SelectedValue(std::string_view value);

}  // namespace hzramctl

#endif  // HZRAMCTL_FORMAT_H
