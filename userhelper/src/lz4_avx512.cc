// SPDX-License-Identifier: GPL-2.0
// The page codec for CPUs with AVX-512 F and BW (64-byte moves, masked
// compares). Compiled with -mavx512f -mavx512bw -mavx512vl -mbmi -mbmi2:
// only called when the CPU has them.
#include <immintrin.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "hzram/page_codec.h"

namespace hzram::avx512 {
#include "lz4_vec.h"

namespace {

struct Vec {
  static constexpr std::size_t kWidth = 64;

  static std::size_t Prefix(const std::uint8_t* a, const std::uint8_t* b,
                            const std::uint8_t* a_end) {
    const std::uint8_t* const start = a;
    while (a + 64 <= a_end) {
      const __m512i x = _mm512_loadu_si512(a);
      const __m512i y = _mm512_loadu_si512(b);
      const __mmask64 ne = _mm512_cmpneq_epi8_mask(x, y);
      if (ne) return static_cast<std::size_t>(a - start) + _tzcnt_u64(ne);
      a += 64;
      b += 64;
    }
    return PrefixTail(start, a, b, a_end);
  }

  static void RepeatPeriod(std::uint8_t* op, std::size_t offset, std::size_t len) {
    RepeatPeriod32(op, offset, len);
  }

  static bool SameFilled(const std::uint8_t* p, std::uint64_t* word) {
    std::uint64_t first;
    std::memcpy(&first, p, 8);
    const __m512i w = _mm512_set1_epi64(static_cast<long long>(first));
    for (std::size_t i = 0; i < kPageSize; i += 256) {
      __mmask8 ne = _mm512_cmpneq_epi64_mask(_mm512_loadu_si512(p + i), w);
      ne |= _mm512_cmpneq_epi64_mask(_mm512_loadu_si512(p + i + 64), w);
      ne |= _mm512_cmpneq_epi64_mask(_mm512_loadu_si512(p + i + 128), w);
      ne |= _mm512_cmpneq_epi64_mask(_mm512_loadu_si512(p + i + 192), w);
      if (ne) return false;
    }
    *word = first;
    return true;
  }
};

}  // namespace

#include "lz4_impl.h"

extern const PageKernels kKernels;
const PageKernels kKernels = MakeKernels(Isa::kAvx512);

}  // namespace hzram::avx512
