// SPDX-License-Identifier: GPL-2.0
// The page codec for CPUs with AVX2 (32-byte moves and compares).
// Compiled with -mavx2 -mbmi -mbmi2: only called when the CPU has them.
#include <immintrin.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "hzram/page_codec.h"
#include "lz4_format.h"

namespace hzram::avx2 {
#include "lz4_vec.h"

namespace {

struct Vec {
  static constexpr std::size_t kWidth = 32;

  static void Copy32(std::uint8_t* dst, const std::uint8_t* src) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)));
  }

  static void CopyExact(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
    CopyExactWords(dst, src, n);
  }

  static std::size_t Prefix(const std::uint8_t* a, const std::uint8_t* b,
                            const std::uint8_t* a_end) {
    const std::uint8_t* const start = a;
    // Most matches end within a word: try that first, without the longer
    // latency of the vector compare.
    if (std::size_t n; PrefixProbe8(a, b, a_end, &n)) return n;
    while (a + 32 <= a_end) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
      const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
      const unsigned eq = static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, y)));
      if (eq != 0xffffffffu) return static_cast<std::size_t>(a - start) + _tzcnt_u32(~eq);
      a += 32;
      b += 32;
    }
    return PrefixTail(start, a, b, a_end);
  }

  static void RepeatPeriod(std::uint8_t* op, std::size_t offset, std::size_t len) {
    RepeatPeriod32(op, offset, len);
  }

  static bool SameFilled(const std::uint8_t* p, std::uint64_t* word) {
    std::uint64_t first;
    std::memcpy(&first, p, 8);
    const __m256i w = _mm256_set1_epi64x(static_cast<long long>(first));
    for (std::size_t i = 0; i < kPageSize; i += 128) {
      const __m256i* v = reinterpret_cast<const __m256i*>(p + i);
      const __m256i e0 = _mm256_cmpeq_epi64(_mm256_loadu_si256(v), w);
      const __m256i e1 = _mm256_cmpeq_epi64(_mm256_loadu_si256(v + 1), w);
      const __m256i e2 = _mm256_cmpeq_epi64(_mm256_loadu_si256(v + 2), w);
      const __m256i e3 = _mm256_cmpeq_epi64(_mm256_loadu_si256(v + 3), w);
      const __m256i all = _mm256_and_si256(_mm256_and_si256(e0, e1), _mm256_and_si256(e2, e3));
      if (_mm256_movemask_epi8(all) != -1) return false;
    }
    *word = first;
    return true;
  }
};

}  // namespace

#include "lz4_impl.h"

extern const PageKernels kKernels;
const PageKernels kKernels = MakeKernels(Isa::kAvx2);

}  // namespace hzram::avx2
