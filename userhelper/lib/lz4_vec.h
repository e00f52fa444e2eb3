// SPDX-License-Identifier: GPL-2.0
//
// Pieces of the `Vec` policies (see lz4_impl.h) that more than one ISA
// shares. Included inside each ISA's namespace, before its `Vec`, and
// compiled with that ISA's flags; internal linkage only.

namespace {

// The start of Vec::Prefix() for the vector ISAs: one 8-byte compare at
// @a (if 8 bytes are left before @a_end). True, with *n the bytes in
// common, if they differ there; else @a and @b move past the 8 bytes.
inline bool PrefixProbe8(const std::uint8_t*& a, const std::uint8_t*& b, const std::uint8_t* a_end,
                         std::size_t* n) {
  if (a + 8 > a_end) return false;
  std::uint64_t x, y;
  std::memcpy(&x, a, 8);
  std::memcpy(&y, b, 8);
  if (x != y) {
    *n = static_cast<std::size_t>(__builtin_ctzll(x ^ y)) / 8;
    return true;
  }
  a += 8;
  b += 8;
  return false;
}

// The end of Vec::Prefix() for every ISA: 8 bytes at a time, then one at
// a time, from a to a_end; the count returned is from start.
inline std::size_t PrefixTail(const std::uint8_t* start, const std::uint8_t* a,
                              const std::uint8_t* b, const std::uint8_t* a_end) {
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

// Vec::CopyExact() without masked moves: exactly n <= 32 bytes (no
// overlap) in at most two moves of one size, which overlap in the middle.
inline void CopyExactWords(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  if (n >= 16) {
    std::uint8_t a[16], b[16];
    std::memcpy(a, src, 16);
    std::memcpy(b, src + n - 16, 16);
    std::memcpy(dst, a, 16);
    std::memcpy(dst + n - 16, b, 16);
  } else if (n >= 8) {
    std::uint64_t a, b;
    std::memcpy(&a, src, 8);
    std::memcpy(&b, src + n - 8, 8);
    std::memcpy(dst, &a, 8);
    std::memcpy(dst + n - 8, &b, 8);
  } else if (n >= 4) {
    std::uint32_t a, b;
    std::memcpy(&a, src, 4);
    std::memcpy(&b, src + n - 4, 4);
    std::memcpy(dst, &a, 4);
    std::memcpy(dst + n - 4, &b, 4);
  } else if (n) {
    dst[0] = src[0];
    dst[n / 2] = src[n / 2];
    dst[n - 1] = src[n - 1];
  }
}

#ifdef __AVX2__
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

// Vec::RepeatPeriod() for AVX2 and AVX-512: a 32-byte vector of whole
// periods, by one shuffle of the period's bytes, stored at a stride that
// keeps the period. Writes up to 31 bytes past op + len.
inline void RepeatPeriod32(std::uint8_t* op, std::size_t offset, std::size_t len) {
  const __m128i src = _mm_loadu_si128(reinterpret_cast<const __m128i*>(op - offset));
  const __m256i both = _mm256_broadcastsi128_si256(src);
  const __m256i pat = _mm256_shuffle_epi8(
      both, _mm256_load_si256(reinterpret_cast<const __m256i*>(kPeriodMasks.m[offset])));
  const std::size_t stride = 32 - 32 % offset;
  for (std::size_t done = 0; done < len; done += stride)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(op + done), pat);
}
#endif

}  // namespace
