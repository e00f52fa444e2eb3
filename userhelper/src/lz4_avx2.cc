// SPDX-License-Identifier: GPL-2.0
// The page codec for CPUs with AVX2 (32-byte moves and compares).
// Compiled with -mavx2 -mbmi -mbmi2: only called when the CPU has them.
#include <immintrin.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "hzram/page_codec.h"

namespace hzram::avx2 {
namespace {

// kPeriodMask[p][i] = i % p: shuffle masks that repeat a period of p < 16
// bytes over 32 (each 128-bit lane shuffles its own copy of the period).
struct PeriodMasks {
  alignas(32) std::uint8_t m[16][32];
  constexpr PeriodMasks() : m() {
    for (int p = 1; p < 16; p++)
      for (int i = 0; i < 32; i++) m[p][i] = static_cast<std::uint8_t>(i % p);
  }
};
constexpr PeriodMasks kPeriodMasks;
constexpr const auto& kPeriodMask = kPeriodMasks.m;

struct Vec {
  static constexpr std::size_t kWidth = 32;

  static std::size_t Prefix(const std::uint8_t* a, const std::uint8_t* b,
                            const std::uint8_t* a_end) {
    const std::uint8_t* const start = a;
    // Most matches end within a word: try that first, without the longer
    // latency of the vector compare.
    if (a + 8 <= a_end) {
      std::uint64_t x, y;
      std::memcpy(&x, a, 8);
      std::memcpy(&y, b, 8);
      if (x != y) return _tzcnt_u64(x ^ y) / 8;
      a += 8;
      b += 8;
    }
    while (a + 32 <= a_end) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
      const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
      const unsigned eq = static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, y)));
      if (eq != 0xffffffffu) return static_cast<std::size_t>(a - start) + _tzcnt_u32(~eq);
      a += 32;
      b += 32;
    }
    while (a + 8 <= a_end) {
      std::uint64_t x, y;
      std::memcpy(&x, a, 8);
      std::memcpy(&y, b, 8);
      if (x != y) return static_cast<std::size_t>(a - start) + _tzcnt_u64(x ^ y) / 8;
      a += 8;
      b += 8;
    }
    while (a < a_end && *a == *b) {
      a++;
      b++;
    }
    return static_cast<std::size_t>(a - start);
  }

  // A 32-byte vector of whole periods, by one shuffle of the period's
  // bytes, stored at a stride that keeps the period.
  static void RepeatPeriod(std::uint8_t* op, std::size_t offset, std::size_t len) {
    const __m128i src = _mm_loadu_si128(reinterpret_cast<const __m128i*>(op - offset));
    const __m256i both = _mm256_broadcastsi128_si256(src);
    const __m256i pat = _mm256_shuffle_epi8(
        both, _mm256_load_si256(reinterpret_cast<const __m256i*>(kPeriodMask[offset])));
    const std::size_t stride = 32 - 32 % offset;
    for (std::size_t done = 0; done < len; done += stride)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(op + done), pat);
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
