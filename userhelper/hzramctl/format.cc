// SPDX-License-Identifier: GPL-2.0
#include "format.h"

#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "hzram-common/number.h"

namespace hzramctl {
namespace {

// Exponent of the largest power of 1024 not above @n: 0, 10, ..., 60.
int PowerOf1024(std::uint64_t n) {
  int shift;
  for (shift = 10; shift <= 60; shift += 10)
    if (n < (1ULL << shift)) break;
  return shift - 10;
}

const char* DecimalPoint() {
  const std::lconv* l = std::localeconv();
  return l && l->decimal_point && *l->decimal_point ? l->decimal_point : ".";
}

int ScaleByPower(std::uintmax_t* x, unsigned base, int power) {
  while (power--) {
    if (UINTMAX_MAX / base < *x) return -ERANGE;
    *x *= base;
  }
  return 0;
}

}  // namespace

std::string SizeToHumanString(std::uint64_t bytes) {
  const int exp = PowerOf1024(bytes);
  const char suffix = "BKMGTPE"[exp / 10];
  int dec = static_cast<int>(exp ? bytes / (1ULL << exp) : bytes);
  std::uint64_t frac = exp ? bytes % (1ULL << exp) : 0;

  if (frac) {
    // Three digits after the point, then rounded half up to one.
    if (frac >= UINT64_MAX / 1000)
      frac = ((frac / 1024) * 1000) / (1ULL << (exp - 10));
    else
      frac = (frac * 1000) / (1ULL << exp);
    frac = ((frac + 50) / 100) * 10;
    if (frac == 100) {  // rounded up to the next whole number
      dec++;
      frac = 0;
    }
  }

  char buf[32];
  if (frac) {
    int len = std::snprintf(buf, sizeof(buf), "%d%s%02" PRIu64, dec, DecimalPoint(), frac);
    if (len <= 0 || static_cast<std::size_t>(len) >= sizeof(buf)) return "";
    if (buf[len - 1] == '0') buf[--len] = '\0';  // "1.50" -> "1.5"
    return std::string(buf, static_cast<std::size_t>(len)) + suffix;
  }
  std::snprintf(buf, sizeof(buf), "%d%c", dec, suffix);
  return buf;
}

int ParseSize(const char* str, std::uintmax_t* res) {
  static const char kSuffixes[] = "KMGTPEZY";
  static const char kLowerSuffixes[] = "kmgtpezy";
  const char* p;
  char* end;
  std::uintmax_t x, frac = 0;
  unsigned base = 1024;
  int rc = 0, pwr = 0, frac_zeros = 0;
  const char* sp;

  *res = 0;
  if (!str || !*str) {
    rc = -EINVAL;
    goto err;
  }
  // Only positive numbers.
  p = str;
  while (std::isspace(static_cast<unsigned char>(*p))) p++;
  if (*p == '-') {
    rc = -EINVAL;
    goto err;
  }

  errno = 0;
  end = nullptr;
  x = std::strtoumax(str, &end, 0);
  if (end == str || (errno != 0 && (x == UINTMAX_MAX || x == 0))) {
    rc = errno ? -errno : -EINVAL;
    goto err;
  }
  if (!end || !*end) goto done;  // no suffix
  p = end;

check_suffix:
  if (!*p) {  // "1." (util-linux reads past the end of the string here)
    rc = -EINVAL;
    goto err;
  }
  if (*(p + 1) == 'i' && (*(p + 2) == 'B' || *(p + 2) == 'b') && !*(p + 3)) {
    base = 1024;  // XiB, 2^N
  } else if ((*(p + 1) == 'B' || *(p + 1) == 'b') && !*(p + 2)) {
    base = 1000;  // XB, 10^N
  } else if (*(p + 1)) {
    const char* dp = DecimalPoint();
    const std::size_t dpsz = std::strlen(dp);

    if (frac == 0 && std::strncmp(dp, p, dpsz) == 0) {
      const char* fstr = p + dpsz;

      for (p = fstr; *p == '0'; p++) frac_zeros++;
      fstr = p;
      if (std::isdigit(static_cast<unsigned char>(*fstr))) {
        errno = 0;
        end = nullptr;
        frac = std::strtoumax(fstr, &end, 0);
        if (end == fstr || (errno != 0 && (frac == UINTMAX_MAX || frac == 0))) {
          rc = errno ? -errno : -EINVAL;
          goto err;
        }
      } else {
        end = const_cast<char*>(p);
      }
      if (frac && (!end || !*end)) {
        rc = -EINVAL;  // a fraction without a suffix
        goto err;
      }
      p = end;
      goto check_suffix;
    }
    rc = -EINVAL;  // an unexpected suffix
    goto err;
  }

  sp = std::strchr(kSuffixes, *p);
  if (sp) {
    pwr = static_cast<int>(sp - kSuffixes) + 1;
  } else {
    sp = std::strchr(kLowerSuffixes, *p);
    if (sp) {
      pwr = static_cast<int>(sp - kLowerSuffixes) + 1;
    } else {
      rc = -EINVAL;
      goto err;
    }
  }

  rc = ScaleByPower(&x, base, pwr);
  if (frac && pwr) {
    std::uintmax_t frac_div = 10, frac_poz = 1, frac_base = 1;

    ScaleByPower(&frac_base, base, pwr);
    // The divisor of the last digit (0.05: 100, 0.054: 1000); frac
    // shortened if it is too long.
    while (frac_div < frac) {
      if (frac_div <= UINTMAX_MAX / 10)
        frac_div *= 10;
      else
        frac /= 10;
    }
    // frac has no leading zeros (5 is 0.5 as well as 0.05).
    for (int i = 0; i < frac_zeros; i++) {
      if (frac_div <= UINTMAX_MAX / 10)
        frac_div *= 10;
      else
        frac /= 10;
    }
    // From the last digit back, add what each digit is worth in frac_base:
    // 0.25G is 1G / (100 / 5) + 1G / (10 / 2).
    do {
      const unsigned seg = static_cast<unsigned>(frac % 10);
      const std::uintmax_t seg_div = frac_div / frac_poz;

      frac /= 10;
      frac_poz *= 10;
      if (seg && seg_div / seg) x += frac_base / (seg_div / seg);
    } while (frac);
  }
done:
  *res = x;
err:
  if (rc < 0) errno = -rc;
  return rc;
}

int ParseU64(const char* str, std::uint64_t* num) {
  errno = 0;
  if (!str) return -EINVAL;
  // As strtoumax() reads: leading white space, then a sign.
  std::string_view s(str);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s[0]))) s.remove_prefix(1);
  const bool minus = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '+' || minus)) s.remove_prefix(1);
  const bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
  if (minus) {
    // "-0" is 0; any other negative number is out of range.
    if (digits && s.find_first_not_of('0') == std::string_view::npos) {
      *num = 0;
      return 0;
    }
    if (digits) errno = ERANGE;
    return -EINVAL;
  }
  if (hzram::ParseDecimal<std::uint64_t>(s, 0, UINT64_MAX, num)) return 0;
  if (digits) errno = ERANGE;  // past 64 bits
  return -EINVAL;
}

std::optional<std::string> BracketedSelection(std::string_view list) {
  const std::size_t lbr = list.rfind('[');
  const std::size_t rbr = list.rfind(']');
  if (lbr == std::string_view::npos || rbr == std::string_view::npos || rbr <= lbr + 1)
    return std::nullopt;
  return std::string(list.substr(lbr + 1, rbr - lbr - 1));
}

std::optional<std::string> SelectedValue(std::string_view value) {
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back())))
    value.remove_suffix(1);
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front())))
    value.remove_prefix(1);
  if (value.find('[') != std::string_view::npos) return BracketedSelection(value);
  if (value.empty()) return std::nullopt;
  return std::string(value);
}

}  // namespace hzramctl
