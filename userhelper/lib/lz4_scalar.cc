// SPDX-License-Identifier: GPL-2.0
// The page codec for any x86-64 CPU (SSE2, 16-byte moves).
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "hzram/page_codec.h"
#include "lz4_format.h"

namespace hzram::scalar {
#include "lz4_vec.h"

namespace {

struct Vec {
  static constexpr std::size_t kWidth = 16;

  static void Copy32(std::uint8_t* dst, const std::uint8_t* src) { std::memcpy(dst, src, 32); }

  static void CopyExact(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
    CopyExactWords(dst, src, n);
  }

  static std::size_t Prefix(const std::uint8_t* a, const std::uint8_t* b,
                            const std::uint8_t* a_end) {
    return PrefixTail(a, a, b, a_end);
  }

  // LZ4's own way: the first 8 bytes one by one or by a table that makes
  // the distance at least 8, then 8-byte steps; periods 1, 2 and 4 as a
  // repeated word.
  static void RepeatPeriod(std::uint8_t* op, std::size_t offset, std::size_t len) {
    const std::uint8_t* match = op - offset;
    std::uint8_t* const end = op + len;
    std::uint64_t v;
    if (offset == 1 || offset == 2 || offset == 4) {
      std::uint32_t w = 0;
      std::memcpy(&w, match, offset);
      v = offset == 1 ? w * 0x0101010101010101ull
                      : offset == 2 ? w * 0x0001000100010001ull : w * 0x0000000100000001ull;
      for (; op < end; op += 8) std::memcpy(op, &v, 8);
      return;
    }
    static constexpr unsigned kInc[8] = {0, 1, 2, 1, 0, 4, 4, 4};
    static constexpr int kDec[8] = {0, 0, 0, -1, -4, 1, 2, 3};
    if (offset < 8) {
      op[0] = match[0];
      op[1] = match[1];
      op[2] = match[2];
      op[3] = match[3];
      match += kInc[offset];
      std::memcpy(op + 4, match, 4);
      match -= kDec[offset];
    } else {
      std::memcpy(op, match, 8);
      match += 8;
    }
    op += 8;
    for (; op < end; op += 8, match += 8) std::memcpy(op, match, 8);
  }

  static bool SameFilled(const std::uint8_t* p, std::uint64_t* word) {
    // Word by word, from the first: most pages differ within a few words.
    std::uint64_t first, last;
    std::memcpy(&first, p, 8);
    std::memcpy(&last, p + kPageSize - 8, 8);
    if (first != last) return false;
    for (std::size_t i = 8; i < kPageSize - 8; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      if (w != first) return false;
    }
    *word = first;
    return true;
  }
};

}  // namespace

#include "lz4_impl.h"

extern const PageKernels kKernels;
const PageKernels kKernels = MakeKernels(Isa::kScalar);

}  // namespace hzram::scalar
