// SPDX-License-Identifier: GPL-2.0
// The page codec for CPUs with AVX-512 F, BW and VL: AVX2's 32-byte
// moves, with AVX-512's masked compares and masked (exact) short copies.
// Compiled with -mavx512f -mavx512bw -mavx512vl -mbmi -mbmi2: only called
// when the CPU has them.
//
// Nothing here uses 512-bit registers. On the Xeons that have AVX-512,
// 512-bit instructions lower the core's clock (the "license") for a
// while after each use, and a 64-byte move that is not aligned (as every
// copy of LZ4 is) splits across two cache lines nearly always; and LZ4's
// copies and compares are short: most matches end within 8 bytes, most
// literal runs are 0 to 2 bytes. On a Xeon, the 64-byte version of this
// file was slower than AVX2 at both compression and decompression; this
// one does what AVX2 does, with AVX-512VL's mask registers where they
// save an instruction, and the start-up trial (isa.cc) takes whichever
// of the two is faster.
#include <immintrin.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "hzram/page_codec.h"
#include "lz4_format.h"

namespace hzram::avx512 {
#include "lz4_vec.h"

namespace {

struct Vec {
  static constexpr std::size_t kWidth = 32;

  static void Copy32(std::uint8_t* dst, const std::uint8_t* src) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)));
  }

  // Exactly n <= 32 bytes, by one masked load and store: the masked-off
  // bytes are neither read (no fault, whatever lies there) nor written.
  static void CopyExact(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
    const __mmask32 m = _bzhi_u32(0xffffffffu, static_cast<unsigned>(n));
    _mm256_mask_storeu_epi8(dst, m, _mm256_maskz_loadu_epi8(m, src));
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
      const __mmask32 ne = _mm256_cmpneq_epi8_mask(x, y);
      if (ne) return static_cast<std::size_t>(a - start) + _tzcnt_u32(ne);
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
      const __m256i d0 = _mm256_xor_si256(_mm256_loadu_si256(v), w);
      const __m256i d1 = _mm256_xor_si256(_mm256_loadu_si256(v + 1), w);
      const __m256i d2 = _mm256_xor_si256(_mm256_loadu_si256(v + 2), w);
      const __m256i d3 = _mm256_xor_si256(_mm256_loadu_si256(v + 3), w);
      const __m256i any = _mm256_or_si256(_mm256_or_si256(d0, d1), _mm256_or_si256(d2, d3));
      if (!_mm256_testz_si256(any, any)) return false;
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
