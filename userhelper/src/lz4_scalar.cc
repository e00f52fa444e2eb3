// SPDX-License-Identifier: GPL-2.0
// The page codec for any x86-64 CPU (SSE2, 16-byte moves).
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "hzram/page_codec.h"

namespace hzram::scalar {
namespace {

struct Vec {
  static constexpr std::size_t kWidth = 16;

  static std::size_t Prefix(const std::uint8_t* a, const std::uint8_t* b,
                            const std::uint8_t* a_end) {
    const std::uint8_t* const start = a;
    while (a + 8 <= a_end) {
      std::uint64_t x, y;
      std::memcpy(&x, a, 8);
      std::memcpy(&y, b, 8);
      if (x != y) return static_cast<std::size_t>(a - start) + __builtin_ctzll(x ^ y) / 8;
      a += 8;
      b += 8;
    }
    while (a < a_end && *a == *b) {
      a++;
      b++;
    }
    return static_cast<std::size_t>(a - start);
  }

  static bool SameFilled(const std::uint8_t* p, std::uint64_t* word) {
    std::uint64_t w[kPageSize / 8];
    std::memcpy(w, p, kPageSize);
    if (w[0] != w[kPageSize / 8 - 1]) return false;
    for (std::size_t i = 1; i < kPageSize / 8 - 1; i++)
      if (w[i] != w[0]) return false;
    *word = w[0];
    return true;
  }
};

}  // namespace

#include "lz4_impl.h"

extern const PageKernels kKernels;
const PageKernels kKernels = MakeKernels(Isa::kScalar);

}  // namespace hzram::scalar
