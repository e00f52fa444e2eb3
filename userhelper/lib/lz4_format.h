// SPDX-License-Identifier: GPL-2.0
//
// The LZ4 block format as both page codecs write and read it: its
// constants, the hash their compressors index positions by, and the rules
// for the end of a block. The CPU codec (lz4_impl.h) and the GPU's
// (gpu/lz4_warp.h) both use it, so it compiles as host C++ and as CUDA
// device code. Private to the library and its tests.
//
// A block is a series of sequences: a token (the literal length in its
// high 4 bits, the match length less kMinMatch in its low 4; kRunMask in
// either says continuation bytes follow), the literal length's
// continuation bytes, the literals, a 2-byte little-endian offset, the
// match length's continuation bytes. The last sequence is literals alone.
#ifndef HZRAM_LZ4_FORMAT_H
#define HZRAM_LZ4_FORMAT_H

#include <cstdint>

// On the host, internal linkage: the scalar, AVX2 and AVX-512 objects each
// compile these with their own instruction set, and one shared copy (a
// weak symbol, should one not be inlined) could run AVX-512 code on a
// CPU without it.
#if defined(__CUDACC__)
#define HZ_LZ4_HD __host__ __device__ __forceinline__
#else
#define HZ_LZ4_HD [[gnu::always_inline]] static inline
#endif

namespace hzram::lz4 {

inline constexpr unsigned kMinMatch = 4;  // the shortest match
inline constexpr unsigned kMlBits = 4;    // the token's match length bits
inline constexpr unsigned kMlMask = (1u << kMlBits) - 1;
inline constexpr unsigned kRunMask = (1u << (8 - kMlBits)) - 1;  // its literal length's
inline constexpr unsigned kMaxOffset = 65535;

// The end of a block, as LZ4's format description states it and liblz4
// and the kernel's decoders check it: the last kLastLiterals bytes are
// literals, and no match starts in the last kMfLimit bytes. A decoder
// takes literals that reach into the last kMfLimit bytes of output, or
// leave fewer than kInputTail bytes of input (a token, an offset and the
// last literals), as the block's last.
inline constexpr unsigned kLastLiterals = 5;
inline constexpr unsigned kMfLimit = 12;
inline constexpr unsigned kInputTail = 1 + 2 + kLastLiterals;

// Where a compressor of a @size-byte input (at least kMfLimit) may put a
// match: starting before MatchStartEnd(), ending at most at MatchEnd().
HZ_LZ4_HD constexpr std::uint32_t MatchStartEnd(std::uint32_t size) {
  return size - kMfLimit + 1;
}
HZ_LZ4_HD constexpr std::uint32_t MatchEnd(std::uint32_t size) { return size - kLastLiterals; }

// For a decoder, with @out_left bytes of output and @in_left of input left
// after the token and the literal length: whether @lit literals are the
// block's last.
template <class T>
HZ_LZ4_HD bool LiteralsEndBlock(T lit, T out_left, T in_left) {
  return lit + kMfLimit > out_left || lit + kInputTail > in_left;
}

// Whether a match of @ml bytes (kMinMatch added) leaves the last literals
// their room in the @out_left bytes of output left.
template <class T>
HZ_LZ4_HD bool MatchFits(T ml, T out_left) {
  return ml + kLastLiterals <= out_left;
}

// Whether @offset reaches back into the @produced bytes of output written
// so far (0 is no offset).
template <class T>
HZ_LZ4_HD bool OffsetFits(T offset, T produced) {
  return offset - 1 < produced;
}

// Both compressors' hash (hash log 12) of the 6 bytes at a position, given
// the 8 bytes there (little-endian): memory pages are full of 4- and
// 5-byte coincidences (small integers, pointer prefixes) that do not
// extend; hashing 6 bytes skips most of them: fewer, longer matches,
// which is both faster and smaller than LZ4's 4-byte hash here.
inline constexpr int kHashLog = 12;
HZ_LZ4_HD std::uint32_t Hash6(std::uint64_t eight) {
  return static_cast<std::uint32_t>(((eight << 16) * 889523592379ull) >> (64 - kHashLog));
}

// Write a length field's continuation bytes (255, 255, ..., rest) for
// @len, what exceeds the token's kRunMask; returns the end.
template <class T>
HZ_LZ4_HD std::uint8_t* WriteLength(std::uint8_t* op, T len) {
  while (len >= 255) {
    *op++ = 255;
    len -= 255;
  }
  *op++ = static_cast<std::uint8_t>(len);
  return op;
}

}  // namespace hzram::lz4

#undef HZ_LZ4_HD

#endif  // HZRAM_LZ4_FORMAT_H
