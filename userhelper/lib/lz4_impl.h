// SPDX-License-Identifier: GPL-2.0
//
// LZ4 block compression and decompression specialised for one 4 KiB page.
//
// This file is included once per ISA (lz4_scalar.cc, lz4_avx2.cc,
// lz4_avx512.cc), inside a namespace of that ISA and after the standard
// headers and lz4_format.h (the format's constants and end rules), with a
// policy class `Vec` that provides:
//
//   static constexpr std::size_t kWidth;     // bytes per wide copy: 16 or 32
//   static void Copy32(std::uint8_t* dst, const std::uint8_t* src);
//       // one 32-byte move (no overlap)
//   static void CopyExact(std::uint8_t* dst, const std::uint8_t* src, std::size_t n);
//       // exactly n <= 32 bytes (no overlap), touching nothing around them
//   static std::size_t Prefix(const std::uint8_t* a, const std::uint8_t* b,
//                             const std::uint8_t* a_end);
//       // how many bytes a and b have in common, counting from a and
//       // stopping at a_end (a < a_end; b may lag behind a and overlap)
//   static bool SameFilled(const std::uint8_t* page, std::uint64_t* word);
//   static void RepeatPeriod(std::uint8_t* op, std::size_t offset, std::size_t len);
//       // op[i] = op[i - offset] for i < len, 1 <= offset < 16; may write
//       // up to 31 bytes past op + len
//
// Each TU is compiled with its ISA's flags, so the fixed-size memcpy()s
// below become that ISA's vector moves. Everything here has internal
// linkage: the instances of different ISAs must never be merged.
//
// The compressor is LZ4's (LZ4_compress_generic() of lz4 1.9, acceleration
// 1) specialised for one page and for what memory pages hold: a 6-byte
// hash (lz4::Hash6()) in a 4096-entry table, and the last match's offset
// tried before the table. On real memory pages it is faster than liblz4
// and its output smaller (Documentation/codec.rst has the figures). The
// output is the LZ4 block format, which any LZ4 decoder reads (liblz4,
// the kernel's LZ4_decompress_safe).

namespace {

using std::size_t;
using std::uint16_t;
using std::uint32_t;
using std::uint64_t;
using std::uint8_t;

using lz4::kLastLiterals;
using lz4::kMinMatch;
using lz4::kMlMask;
using lz4::kRunMask;
using lz4::WriteLength;

constexpr unsigned kSkipStrength = 6;  // as LZ4's acceleration 1
static_assert(kLz4HashLog == lz4::kHashLog, "Lz4Table has a slot per hash");
static_assert(kPageSize - 1 <= lz4::kMaxOffset, "any offset in a page fits");

inline uint32_t Read32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline uint16_t Read16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;  // LZ4 offsets are little-endian, as is x86
}

inline void Write16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }

// The hash of the 6 bytes at @p (of the 8 read: a page's last candidate
// position is 11 bytes before its end).
inline uint32_t Hash(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return lz4::Hash6(v);
}

// One N-byte move (memcpy() semantics: no overlap). 32-byte ones go
// through the ISA, as one vector where it has them (GCC splits a 32-byte
// memcpy() in two).
template <size_t N>
inline void Move(uint8_t* dst, const uint8_t* src) {
  if constexpr (N == 32) {
    Vec::Copy32(dst, src);
  } else {
    std::memcpy(dst, src, N);
  }
}

// Copy [src, src + len) to dst in N-byte steps: may write up to N - 1
// bytes past dst + len and read as far past src + len; the caller
// guarantees both stay within their buffers. With dst - src >= N it also
// copies overlapping ranges right (each step reads final bytes).
template <size_t N = Vec::kWidth>
inline void WildCopy(uint8_t* dst, const uint8_t* src, size_t len) {
  uint8_t* const end = dst + len;
  do {
    Move<N>(dst, src);
    dst += N;
    src += N;
  } while (dst < end);
}

size_t CompressPage(const void* page, void* dst_v, size_t limit, Lz4Table* table) {
  const uint8_t* const base = static_cast<const uint8_t*>(page);
  const uint8_t* const iend = base + kPageSize;
  const uint8_t* const mflimit_plus_one = base + lz4::MatchStartEnd(kPageSize);
  const uint8_t* const match_limit = base + lz4::MatchEnd(kPageSize);
  // dst has room for the worst case (kCompressBufferSize exceeds
  // LZ4_COMPRESSBOUND(kPageSize) plus the wide copies' overrun): no output
  // checks in the loop; @limit is applied to the result.
  uint8_t* const dst = static_cast<uint8_t*>(dst_v);
  uint16_t* const slot = table->slot;

  const uint8_t* ip = base;
  const uint8_t* anchor = base;
  const uint8_t* match;
  uint8_t* op = dst;
  uint8_t* token;
  uint32_t forward_h;
  // The last match's offset; 1 (a run of one byte) before any match. The
  // search starts at base + 1 and an offset never exceeds its match's
  // position, so ip - rep_offset is always inside the page.
  size_t rep_offset = 1;

  std::memset(slot, 0, sizeof(table->slot));
  auto get = [&](uint32_t h) -> const uint8_t* { return base + slot[h]; };
  auto put = [&](uint32_t h, const uint8_t* p) {
    slot[h] = static_cast<uint16_t>(p - base);
  };

  put(Hash(ip), ip);
  ip++;
  forward_h = Hash(ip);

  for (;;) {
    // Find a match: probe positions at a stride that grows while nothing
    // matches, as LZ4 does.
    {
      const uint8_t* forward_ip = ip;
      unsigned step = 1;
      unsigned attempts = 1u << kSkipStrength;
      do {
        const uint32_t h = forward_h;
        ip = forward_ip;
        forward_ip += step;
        step = attempts++ >> kSkipStrength;
        if (forward_ip > mflimit_plus_one) goto last_literals;
        // First the last match's offset: memory is full of arrays of
        // records, whose fields repeat at the record's size.
        if (Read32(ip - rep_offset) == Read32(ip)) {
          match = ip - rep_offset;  // (not indexed: the table keeps other offsets)
          break;
        }
        match = get(h);
        forward_h = Hash(forward_ip);
        put(h, ip);
      } while (Read32(match) != Read32(ip));
    }

    // Extend the match backwards over equal literals.
    while (ip > anchor && match > base && ip[-1] == match[-1]) {
      ip--;
      match--;
    }

    // Literals: token, length, bytes.
    {
      const size_t lit = static_cast<size_t>(ip - anchor);
      token = op++;
      if (lit >= kRunMask) {
        *token = kRunMask << lz4::kMlBits;
        op = WriteLength(op, lit - kRunMask);
      } else {
        *token = static_cast<uint8_t>(lit << lz4::kMlBits);
      }
      // A wide copy reads up to kWidth - 1 bytes past the literals: only
      // where that stays inside the page.
      if (anchor + lit + Vec::kWidth <= iend) {
        WildCopy(op, anchor, lit);
      } else {
        std::memcpy(op, anchor, lit);
      }
      op += lit;
    }

    for (;;) {
      // Offset and match length.
      rep_offset = static_cast<size_t>(ip - match);
      Write16(op, static_cast<uint16_t>(rep_offset));
      op += 2;
      {
        ip += kMinMatch;
        const size_t ml = Vec::Prefix(ip, match + kMinMatch, match_limit);
        ip += ml;
        if (ml >= kMlMask) {
          *token += kMlMask;
          op = WriteLength(op, ml - kMlMask);
        } else {
          *token += static_cast<uint8_t>(ml);
        }
      }
      anchor = ip;
      if (ip >= mflimit_plus_one) goto last_literals;

      // Try the next position at once. (LZ4 also indexes ip - 2 here; in
      // a 4096-entry table that mostly displaces better candidates: on
      // memory pages, leaving it out is faster and smaller.)
      const uint32_t h = Hash(ip);
      match = get(h);
      put(h, ip);
      if (Read32(match) == Read32(ip)) {
        token = op++;
        *token = 0;
        continue;
      }
      break;
    }
    forward_h = Hash(++ip);
  }

last_literals : {
  const size_t lit = static_cast<size_t>(iend - anchor);
  if (lit >= kRunMask) {
    *op++ = kRunMask << lz4::kMlBits;
    op = WriteLength(op, lit - kRunMask);
  } else {
    *op++ = static_cast<uint8_t>(lit << lz4::kMlBits);
  }
  std::memcpy(op, anchor, lit);
  op += lit;
}
  const size_t len = static_cast<size_t>(op - dst);
  return len < limit ? len : 0;
}

// Read a length's continuation bytes; false if the input ends first.
inline bool ReadLength(const uint8_t*& ip, const uint8_t* iend, size_t* len) {
  unsigned s;
  do {
    if (ip >= iend) return false;
    s = *ip++;
    *len += s;
  } while (s == 255);
  return true;
}

// Copy a match of @ml bytes from @offset bytes back, writing up to 31
// bytes past op + ml (the caller has checked there is room).
inline void CopyMatch(uint8_t* op, size_t offset, size_t ml) {
  // Steps no longer than the offset read only final bytes.
  if (offset >= Vec::kWidth) {
    WildCopy(op, op - offset, ml);
  } else if (offset >= 16) {
    WildCopy<16>(op, op - offset, ml);
  } else {
    // A period under 16 (runs of zeros, say): the ISA repeats it.
    Vec::RepeatPeriod(op, offset, ml);
  }
}

// Copy exactly @n bytes (no overlap): short ones without a call.
inline void CopySmall(uint8_t* dst, const uint8_t* src, size_t n) {
  if (n <= 32) {
    Vec::CopyExact(dst, src, n);
  } else {
    std::memcpy(dst, src, n);
  }
}

// Copy a match of @ml bytes from @offset bytes back, writing exactly
// [op, op + ml).
inline void CopyMatchExact(uint8_t* op, size_t offset, size_t ml) {
  size_t i = 0;
  if (offset < 8) {
    // Byte by byte up to a whole number of periods of at least 8 bytes:
    // from there on, the match also repeats at that distance.
    const uint8_t* const match = op - offset;
    const size_t period = (7 + offset) / offset * offset;
    for (; i < period && i < ml; i++) op[i] = match[i];
    offset = period;
  }
  if (ml - i >= 8) {
    // Words, each from bytes already final; the last one overlaps the one
    // before rather than writing past the end.
    for (; i + 8 <= ml; i += 8) std::memcpy(op + i, op + i - offset, 8);
    if (i < ml) std::memcpy(op + ml - 8, op + ml - 8 - offset, 8);
  } else {
    for (; i < ml; i++) op[i] = *(op + i - offset);
  }
}

// CopyMatch() for a match that may end anywhere up to @oend: wide copies
// while they stay 32 bytes clear of it, exact ones after. Pages often end
// in a long run of zeros: that run must not go byte by byte.
inline void CopyMatchNearEnd(uint8_t* op, size_t offset, size_t ml, uint8_t* oend) {
  const size_t room = static_cast<size_t>(oend - op);
  const size_t wide = room < 32 ? 0 : ml < room - 32 ? ml : room - 32;
  if (wide) CopyMatch(op, offset, wide);
  if (wide < ml) CopyMatchExact(op + wide, offset, ml - wide);
}

int DecompressPage(const void* src_v, size_t len, void* page) {
  const uint8_t* ip = static_cast<const uint8_t*>(src_v);
  const uint8_t* const iend = ip + len;
  uint8_t* const dst = static_cast<uint8_t*>(page);
  uint8_t* op = dst;
  uint8_t* const oend = dst + kPageSize;

  // The fast loop runs while a sequence starts at least kInMargin bytes
  // before the end of the input and kOutMargin before the end of the page,
  // so that its copies can be wide and unchecked. Literals under 15 (all
  // but 1%) are one 16-byte move; with those margins they cannot be the
  // block's last (see the careful loop), so a match follows. A match is
  // copied with moves that may write up to 31 bytes past its end: only
  // where that stays inside the page. The careful loop does the rest.
  constexpr size_t kInMargin = 1 + 14 + lz4::kInputTail;  // token, literals, the end rule's
  constexpr size_t kOutMargin = 14 + 18 + kLastLiterals;  // literals, a short match, the end rule's
  if (len >= kInMargin) {
    const uint8_t* const ilimit = iend - kInMargin;
    uint8_t* const olimit = oend - kOutMargin;
    while (ip <= ilimit && op <= olimit) {
      const unsigned token = *ip;
      size_t lit = token >> lz4::kMlBits;
      size_t offset;
      if (lit != kRunMask) [[likely]] {
        // Up to 14 literals in one move. With kInMargin, at least 8 bytes
        // of input follow them: a match follows, and its offset is there.
        std::memcpy(op, ip + 1, 16);
        offset = Read16(ip + 1 + lit);
        ip += 1 + lit + 2;
      } else {
        const uint8_t* const seq = ip++;
        if (!ReadLength(ip, iend, &lit)) return -EBADMSG;
        if (lit + 32 > static_cast<size_t>(iend - ip) || lit + 32 > static_cast<size_t>(oend - op)) {
          ip = seq;  // a long run near an end: do it carefully
          break;
        }
        WildCopy<32>(op, ip, lit);
        offset = Read16(ip + lit);
        ip += lit + 2;
      }
      op += lit;
      if (!lz4::OffsetFits(offset, static_cast<size_t>(op - dst))) [[unlikely]]
        return -EBADMSG;  // 0, or before the page
      const uint8_t* const match = op - offset;
      size_t ml = token & kMlMask;
      if (ml != kMlMask && offset >= 8) [[likely]] {
        // The common short match (4 to 18 bytes), as LZ4 copies it: in
        // words, which the store buffer forwards from the writes just
        // before. kOutMargin leaves room for it and for the 5 bytes the
        // format's end rule wants after it.
        std::memcpy(op, match, 8);
        std::memcpy(op + 8, match + 8, 8);
        std::memcpy(op + 16, match + 16, 2);
        op += ml + kMinMatch;
        continue;
      }
      if (ml == kMlMask) {
        // The first length byte is within the 8 bytes left after the
        // literals; more are rare.
        const unsigned b = *ip++;
        ml += b;
        if (b == 255 && !ReadLength(ip, iend, &ml)) [[unlikely]]
          return -EBADMSG;
      }
      ml += kMinMatch;
      if (ml + 32 > static_cast<size_t>(oend - op)) [[unlikely]] {
        // A match that reaches the last 32 bytes: the format's end rule
        // (as liblz4 and the kernel check it: a match leaves at least the
        // last 5 bytes to literals), then a careful copy.
        if (!lz4::MatchFits(ml, static_cast<size_t>(oend - op))) return -EBADMSG;
        CopyMatchNearEnd(op, offset, ml, oend);
        op += ml;
        break;
      }
      if (offset >= 32) {
        WildCopy<32>(op, match, ml);
      } else if (offset >= 16) {
        WildCopy<16>(op, match, ml);
      } else {
        Vec::RepeatPeriod(op, offset, ml);
      }
      op += ml;
    }
  }

  // The careful loop: every length checked against both ends.
  for (;;) {
    if (ip >= iend) return -EBADMSG;  // a block ends with literals, never a match
    const unsigned token = *ip++;

    size_t lit = token >> lz4::kMlBits;
    if (lit == kRunMask && !ReadLength(ip, iend, &lit)) return -EBADMSG;
    if (lit > static_cast<size_t>(iend - ip) || lit > static_cast<size_t>(oend - op))
      return -EBADMSG;
    const bool last = lz4::LiteralsEndBlock(lit, static_cast<size_t>(oend - op),
                                            static_cast<size_t>(iend - ip));
    CopySmall(op, ip, lit);
    ip += lit;
    op += lit;
    if (last) return ip == iend && op == oend ? 0 : -EBADMSG;

    if (iend - ip < 2) return -EBADMSG;
    const size_t offset = Read16(ip);
    ip += 2;
    if (!lz4::OffsetFits(offset, static_cast<size_t>(op - dst))) return -EBADMSG;
    size_t ml = token & kMlMask;
    if (ml == kMlMask && !ReadLength(ip, iend, &ml)) return -EBADMSG;
    ml += kMinMatch;
    if (!lz4::MatchFits(ml, static_cast<size_t>(oend - op))) return -EBADMSG;
    CopyMatchNearEnd(op, offset, ml, oend);
    op += ml;
  }
}

bool SameFilledPage(const void* page, uint64_t* word) {
  return Vec::SameFilled(static_cast<const uint8_t*>(page), word);
}

void FillPage(void* page, uint64_t word) {
  constexpr size_t W = Vec::kWidth;
  uint8_t pattern[W];
  for (size_t i = 0; i < W; i += 8) std::memcpy(pattern + i, &word, 8);
  uint8_t* p = static_cast<uint8_t*>(page);
  for (size_t i = 0; i < kPageSize; i += W) Move<W>(p + i, pattern);
}

constexpr PageKernels MakeKernels(Isa isa) {
  return PageKernels{isa, SameFilledPage, FillPage, CompressPage, DecompressPage};
}

}  // namespace
