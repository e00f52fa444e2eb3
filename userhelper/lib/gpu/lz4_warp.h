// SPDX-License-Identifier: GPL-2.0
//
// The GPU codec's per-page algorithms: LZ4 compression and decompression of
// one 4 KiB page by one warp of 32 lanes, with the page and the hash chains
// in the warp's scratch (shared memory on the GPU).
//
// The code is written once for two executors:
//   - DeviceLanes (kernels.cu): the 32 threads of a warp run it together;
//   - HostLanes (below): one host thread runs each step for lane 0..31 in
//     turn, so that the tests check the algorithm on any machine.
// The contract that keeps both the same: the code is a sequence of steps,
// L.Each([&](int lane) { ... }), with the warp synchronised between steps.
// Within a step a lane may read anything written in earlier steps, and
// writes only what no other lane reads in the same step. HostLanes runs the
// lanes of alternate steps in reverse order, so that a step that breaks the
// contract gives wrong results in the tests. Values every lane computes the
// same way (warp-uniform) live outside the steps; collectives (Ballot,
// MatchAny) are called by every lane, inside a step, on an array filled in
// an earlier step.
//
// Compression differs from the CPU codec's in how it searches: each
// position's previous occurrence (same 6-byte hash) is computed for the
// whole page first, in parallel; the parse then looks at 32 positions at a
// time for the first one with a match, and there takes the longest of the
// last match's offset and the two previous occurrences. There is no
// skipping ahead on incompressible data: every position is looked at,
// which costs little in parallel. On the page corpus the output is 0.5%
// smaller than the CPU codec's. It is the LZ4 block format, with the
// constants, hash and end rules of lz4_format.h, as the CPU codec's.
#ifndef HZRAM_GPU_LZ4_WARP_H
#define HZRAM_GPU_LZ4_WARP_H

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../lz4_format.h"

#if defined(__CUDACC__)
#define HZ_HD __device__ __forceinline__
#else
#define HZ_HD inline
#endif

namespace hzram::gpu {

constexpr int kLanes = 32;
constexpr std::uint32_t kPage = 4096;
constexpr std::uint32_t kSearchEnd = lz4::MatchStartEnd(kPage);  // matches start before this
constexpr std::uint32_t kMatchLimit = lz4::MatchEnd(kPage);      // and end at most here
constexpr std::uint32_t kFull = 0xffffffffu;

// What a page compressed to.
enum class PageKind : std::uint8_t { kSame = 1, kRaw = 2, kLz4 = 3 };

// A warp's scratch for compression (CompressPageWarp): 20 KiB.
struct CompressScratch {
  alignas(16) std::uint8_t page[kPage];
  std::uint16_t prev[kPage];                // position + 1 of the last earlier
                                            // position with the same hash; 0: none
  std::uint16_t head[1u << lz4::kHashLog];  // hash -> last position + 1 so far
  std::uint32_t value[kLanes];              // per lane, for collectives
  std::uint8_t flag[kLanes];
  std::uint8_t flag2[kLanes];
};

// A warp's scratch for decompression: 8 KiB.
struct DecompressScratch {
  alignas(16) std::uint8_t in[kPage];
  alignas(16) std::uint8_t out[kPage];
};

HZ_HD std::uint32_t Load32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

HZ_HD std::uint64_t Load64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// 8 bytes at an 8-byte aligned address; one load on the device, where
// Load64's memcpy becomes eight byte loads.
HZ_HD std::uint64_t Load64Aligned(const std::uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const std::uint64_t*>(p);
#else
  return Load64(p);
#endif
}

// 4 and 8 bytes at any offset @p of a page that starts 16-byte aligned in
// the warp's scratch and stays readable 8 bytes past its end (the
// scratch's next member): on the device two or three aligned 32-bit loads
// and funnel shifts, where Load32 and Load64 would be four and eight byte
// loads.
HZ_HD std::uint32_t PageLoad32(const std::uint8_t* page, std::uint32_t p) {
#if defined(__CUDA_ARCH__)
  const std::uint32_t* w = reinterpret_cast<const std::uint32_t*>(page) + (p >> 2);
  return __funnelshift_r(w[0], w[1], (p & 3) * 8);
#else
  return Load32(page + p);
#endif
}

HZ_HD std::uint64_t PageLoad64(const std::uint8_t* page, std::uint32_t p) {
#if defined(__CUDA_ARCH__)
  const std::uint32_t* w = reinterpret_cast<const std::uint32_t*>(page) + (p >> 2);
  const std::uint32_t sh = (p & 3) * 8;
  return static_cast<std::uint64_t>(__funnelshift_r(w[1], w[2], sh)) << 32 |
         __funnelshift_r(w[0], w[1], sh);
#else
  return Load64(page + p);
#endif
}

// Copy 16 bytes between 16-byte aligned addresses (pages, in global and
// shared memory, always are): one vector load and store on the device.
HZ_HD void Copy16(std::uint8_t* dst, const std::uint8_t* src) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
#else
  std::memcpy(dst, src, 16);
#endif
}

HZ_HD int Ctz(std::uint32_t v) {
#if defined(__CUDA_ARCH__)
  return __ffs(v) - 1;
#else
  return __builtin_ctz(v);
#endif
}

HZ_HD int Clz(std::uint32_t v) {
#if defined(__CUDA_ARCH__)
  return __clz(v);
#else
  return __builtin_clz(v);
#endif
}

// The hash of the 6 bytes at @p of @page (of an 8-byte read).
HZ_HD std::uint32_t PageHash(const std::uint8_t* page, std::uint32_t p) {
  return lz4::Hash6(PageLoad64(page, p));
}

// Bytes of a length's continuation (255, ..., rest) for a field of @len;
// none below the token's 15 (kRunMask and kMlMask alike).
HZ_HD std::uint32_t LengthBytes(std::uint32_t len) {
  return len >= lz4::kRunMask ? (len - lz4::kRunMask) / 255 + 1 : 0;
}

// Write the continuation bytes of a field of @len, if it has any, at dst.
HZ_HD void PutLength(std::uint8_t* dst, std::uint32_t len) {
  if (len >= lz4::kRunMask) lz4::WriteLength(dst, len - lz4::kRunMask);
}

#if !defined(__CUDACC__)
// The host executor: runs each step for every lane, alternating the order.
class HostLanes {
 public:
  template <class F>
  void Each(F&& f) {
    if (reverse_)
      for (int l = kLanes - 1; l >= 0; l--) f(l);
    else
      for (int l = 0; l < kLanes; l++) f(l);
    reverse_ = !reverse_;
  }
  std::uint32_t Ballot(int, const std::uint8_t* v) const {
    std::uint32_t m = 0;
    for (int i = 0; i < kLanes; i++) m |= static_cast<std::uint32_t>(v[i] != 0) << i;
    return m;
  }
  std::uint32_t MatchAny(int lane, const std::uint32_t* v) const {
    std::uint32_t m = 0;
    for (int i = 0; i < kLanes; i++) m |= static_cast<std::uint32_t>(v[i] == v[lane]) << i;
    return m;
  }

 private:
  bool reverse_ = false;
};
#endif

// How many bytes from @x equal those from @y (y < x), up to kMatchLimit:
// 4 bytes a lane, 128 a step.
template <class L, class S>
HZ_HD std::uint32_t MatchTail(L& lanes, S& s, std::uint32_t x0, std::uint32_t y0) {
  std::uint32_t a = x0, b = y0;
  for (;;) {
    lanes.Each([&](int lane) {
      const std::uint32_t x = a + 4 * lane, y = b + 4 * lane;
      s.flag[lane] = !(x + 4 <= kMatchLimit && PageLoad32(s.page, x) == PageLoad32(s.page, y));
    });
    std::uint32_t miss = 0;
    lanes.Each([&](int lane) { miss = lanes.Ballot(lane, s.flag); });
    if (!miss) {
      a += 4 * kLanes;
      b += 4 * kLanes;
      continue;
    }
    const std::uint32_t l = static_cast<std::uint32_t>(Ctz(miss));
    a += 4 * l;
    b += 4 * l;
    while (a < kMatchLimit && s.page[a] == s.page[b]) {
      a++;
      b++;
    }
    return a - x0;
  }
}

// The page at @src (kPage bytes, 16-byte aligned on the device) into
// scratch, 16 bytes a lane at a time; the hash table emptied.
template <class L, class S>
HZ_HD void LoadPage(L& lanes, S& s, const std::uint8_t* src) {
  lanes.Each([&](int lane) {
    for (std::uint32_t k = 0; k < kPage / (16 * kLanes); k++) {
      const std::uint32_t o = (k * kLanes + lane) * 16;
      Copy16(s.page + o, src + o);
    }
    for (std::uint32_t i = lane; i < (1u << lz4::kHashLog); i += kLanes) s.head[i] = 0;
  });
}

// Whether the page in scratch is one 8-byte word repeated.
template <class L, class S>
HZ_HD bool SameFilled(L& lanes, S& s) {
  lanes.Each([&](int lane) {
    const std::uint64_t w0 = Load64Aligned(s.page);
    bool same = true;
    for (std::uint32_t k = 0; k < kPage / (8 * kLanes); k++)
      same &= Load64Aligned(s.page + (k * kLanes + lane) * 8) == w0;
    s.flag[lane] = same;
  });
  std::uint32_t all = 0;
  lanes.Each([&](int lane) { all = lanes.Ballot(lane, s.flag); });
  return all == kFull;
}

// s.prev: each position's last earlier position with the same hash, 32 at
// a time: within the 32 by MatchAny, before them from the table.
template <class L, class S>
HZ_HD void ChainPositions(L& lanes, S& s) {
  for (std::uint32_t base = 0; base < kSearchEnd; base += kLanes) {
    lanes.Each([&](int lane) {
      const std::uint32_t p = base + lane;
      // Out-of-range lanes get a value no other lane has.
      s.value[lane] = p < kSearchEnd ? PageHash(s.page, p) : (0x80000000u | lane);
    });
    lanes.Each([&](int lane) {
      const std::uint32_t p = base + lane;
      const std::uint32_t group = lanes.MatchAny(lane, s.value);
      const std::uint32_t below = group & ((1u << lane) - 1);
      if (p < kSearchEnd)
        s.prev[p] = below ? static_cast<std::uint16_t>(base + 31 - Clz(below) + 1)
                          : s.head[s.value[lane]];
      // The last lane of its group indexes the position (next step).
      s.flag[lane] = p < kSearchEnd && (group >> lane) == 1;
    });
    lanes.Each([&](int lane) {
      if (s.flag[lane]) s.head[s.value[lane]] = static_cast<std::uint16_t>(base + lane + 1);
    });
  }
}

// The first position from @ip with a match, 32 positions a step: at the
// last offset @rep (0: none yet), else at the previous occurrence. False
// if there is none before kSearchEnd; else *mpos is the position and
// *mfrom where its match is.
template <class L>
HZ_HD bool FindMatch(L& lanes, CompressScratch& s, std::uint32_t ip, std::uint32_t rep,
                     std::uint32_t* mpos, std::uint32_t* mfrom) {
  for (; ip < kSearchEnd; ip += kLanes) {
    lanes.Each([&](int lane) {
      const std::uint32_t p = ip + lane;
      bool r = false, h = false;
      if (p < kSearchEnd) {
        const std::uint32_t v = PageLoad32(s.page, p);
        r = rep && p >= rep && PageLoad32(s.page, p - rep) == v;
        const std::uint32_t q = s.prev[p];
        h = q && PageLoad32(s.page, q - 1) == v;
      }
      s.flag[lane] = r;
      s.flag2[lane] = h;
    });
    std::uint32_t mr = 0, mh = 0;
    lanes.Each([&](int lane) {
      mr = lanes.Ballot(lane, s.flag);
      mh = lanes.Ballot(lane, s.flag2);
    });
    if (mr | mh) {
      const int l = Ctz(mr | mh);
      *mpos = ip + l;
      *mfrom = (mr >> l) & 1 ? *mpos - rep : s.prev[*mpos] - 1u;
      return true;
    }
  }
  return false;
}

// The longest match at @mpos among the last offset @rep, the previous
// occurrence and the one before it: sets *mfrom to where it is, returns
// where it ends.
template <class L>
HZ_HD std::uint32_t LongestMatch(L& lanes, CompressScratch& s, std::uint32_t mpos,
                                 std::uint32_t rep, std::uint32_t* mfrom) {
  std::uint32_t cand[3];
  int ncand = 0;
  const std::uint32_t at = PageLoad32(s.page, mpos);
  if (rep && mpos >= rep && PageLoad32(s.page, mpos - rep) == at) cand[ncand++] = mpos - rep;
  for (std::uint32_t q = s.prev[mpos], depth = 0; q && depth < 2; q = s.prev[q - 1], depth++)
    if (PageLoad32(s.page, q - 1) == at && (ncand == 0 || cand[0] != q - 1))
      cand[ncand++] = q - 1;
  std::uint32_t a = 0;
  for (int c = 0; c < ncand; c++) {
    std::uint32_t x = mpos + lz4::kMinMatch;
    const std::uint32_t y0 = cand[c] + lz4::kMinMatch;
    x = x + MatchTail(lanes, s, x, y0);
    if (x > a) {
      a = x;
      *mfrom = cand[c];
    }
  }
  return a;
}

// Extend the match at *mpos (from *mfrom) backwards over equal literals,
// down to @anchor at most.
template <class S>
HZ_HD void ExtendBackwards(const S& s, std::uint32_t anchor, std::uint32_t* mpos,
                           std::uint32_t* mfrom) {
  std::uint32_t back = 0;
  while (*mpos - back > anchor && *mfrom - back > 0 &&
         s.page[*mpos - back - 1] == s.page[*mfrom - back - 1])
    back++;
  *mpos -= back;
  *mfrom -= back;
}

// A sequence at @op of @dst: token, literal length, the @lit literals from
// @anchor, @offset, match length (@ml bytes). Returns where it ends; if
// that is kPage or more, the block would be no smaller than the page and
// nothing is written.
template <class L>
HZ_HD std::uint32_t EmitSequence(L& lanes, const CompressScratch& s, std::uint8_t* dst,
                                 std::uint32_t op, std::uint32_t anchor, std::uint32_t lit,
                                 std::uint32_t offset, std::uint32_t ml) {
  const std::uint32_t mcode = ml - lz4::kMinMatch;
  const std::uint32_t lit_at = op + 1 + LengthBytes(lit);
  const std::uint32_t off_at = lit_at + lit;
  const std::uint32_t end = off_at + 2 + LengthBytes(mcode);
  if (end >= kPage) return end;
  lanes.Each([&](int lane) {
    for (std::uint32_t i = lane; i < lit; i += kLanes) dst[lit_at + i] = s.page[anchor + i];
    if (lane == 0) {
      dst[op] = static_cast<std::uint8_t>(
          (lit < lz4::kRunMask ? lit : lz4::kRunMask) << lz4::kMlBits |
          (mcode < lz4::kMlMask ? mcode : lz4::kMlMask));
      PutLength(dst + op + 1, lit);
      dst[off_at] = static_cast<std::uint8_t>(offset);
      dst[off_at + 1] = static_cast<std::uint8_t>(offset >> 8);
      PutLength(dst + off_at + 2, mcode);
    }
  });
  return end;
}

// The block's end at @op of @dst: the last literals, from @anchor; or,
// when @raw or when they would make the block no smaller than the page,
// the page itself. Returns kLz4 (*len the block's length) or kRaw.
template <class L, class S>
HZ_HD PageKind EmitLastLiterals(L& lanes, const S& s, std::uint8_t* dst,
                                std::uint32_t op, std::uint32_t anchor, bool raw,
                                std::uint32_t* len) {
  const std::uint32_t lit = kPage - anchor;
  const std::uint32_t lit_at = op + 1 + LengthBytes(lit);
  const bool fits = !raw && lit_at + lit < kPage;
  lanes.Each([&](int lane) {
    if (fits) {
      for (std::uint32_t i = lane; i < lit; i += kLanes) dst[lit_at + i] = s.page[anchor + i];
      if (lane == 0) {
        dst[op] = static_cast<std::uint8_t>((lit < lz4::kRunMask ? lit : lz4::kRunMask)
                                            << lz4::kMlBits);
        PutLength(dst + op + 1, lit);
      }
    } else {
      for (std::uint32_t k = 0; k < kPage / (16 * kLanes); k++) {
        const std::uint32_t o = (k * kLanes + lane) * 16;
        Copy16(dst + o, s.page + o);
      }
    }
  });
  if (!fits) return PageKind::kRaw;
  *len = lit_at + lit;
  return PageKind::kLz4;
}

// Compress the page at @src (kPage bytes) into @dst (kPage bytes); on the
// device both are 16-byte aligned. Returns the kind: kSame (then *word is
// the fill word), kLz4 (then *len is the block's length, < kPage) or kRaw
// (the page is copied to @dst).
template <class L>
HZ_HD PageKind CompressPageWarp(L& lanes, CompressScratch& s, const std::uint8_t* src,
                                std::uint8_t* dst, std::uint32_t* len, std::uint64_t* word) {
  LoadPage(lanes, s, src);
  if (SameFilled(lanes, s)) {
    *word = Load64(s.page);
    return PageKind::kSame;
  }
  ChainPositions(lanes, s);

  // The parse: a sequence for each match, while one can start.
  std::uint32_t ip = 1, anchor = 0, op = 0, rep = 0;
  bool raw = false;
  for (;;) {
    std::uint32_t mpos, mfrom;
    if (!FindMatch(lanes, s, ip, rep, &mpos, &mfrom)) break;
    const std::uint32_t end = LongestMatch(lanes, s, mpos, rep, &mfrom);
    ExtendBackwards(s, anchor, &mpos, &mfrom);
    const std::uint32_t offset = mpos - mfrom;
    const std::uint32_t next =
        EmitSequence(lanes, s, dst, op, anchor, mpos - anchor, offset, end - mpos);
    if (next >= kPage) {  // no smaller than the page: store it raw
      raw = true;
      break;
    }
    op = next;
    ip = anchor = end;
    rep = offset;
    if (ip >= kSearchEnd) break;
  }
  return EmitLastLiterals(lanes, s, dst, op, anchor, raw, len);
}

// The segmented compressor (CompressPageSegments), its scratch: 21 KiB.
// Once the chains are made, the hash table's space holds each position's
// match (MatchCode()). (Written over s.prev in place, which would save 8
// KiB and let more warps be resident, the matches could not look two
// occurrences back: on the page corpus that costs 2.4% of the ratio.)
struct Sequence {
  std::uint16_t anchor, lit, offset, ml, op;  // literals from anchor; the
                                              // sequence's place in dst
};
struct SegmentScratch {
  alignas(16) std::uint8_t page[kPage];
  std::uint16_t prev[kPage];                // as CompressScratch's
  std::uint16_t head[1u << lz4::kHashLog];  // hash -> last position + 1 so far;
                                            // then each position's MatchCode()
  std::uint32_t has[kPage / 32];            // bit p: position p has a match
  Sequence seq[kLanes];                     // sequences not yet written
  std::uint32_t value[kLanes];              // per lane, for collectives
  std::uint8_t flag[kLanes];
  std::uint8_t flag2[kLanes];
};

// MarkMatches reads the codes 16 bytes at a time.
static_assert(offsetof(SegmentScratch, head) % 16 == 0);

// A position's match in 16 bits: its source + 1 in the low 12 (a match
// starts before kSearchEnd, so its source is below 4084), and its length
// less kMinMatch in the high 4 when under kLongMatch, else 15: at least
// kLongMatch bytes.
constexpr std::uint32_t kLongMatch = lz4::kMinMatch + 15;
HZ_HD std::uint16_t MatchCode(std::uint32_t from, std::uint32_t len) {
  const std::uint32_t l = len < kLongMatch ? len - lz4::kMinMatch : 15;
  return static_cast<std::uint16_t>((from + 1) | l << 12);
}

// Each position's MatchCode() (the hash table's space, once the chains
// are made).
HZ_HD std::uint16_t* MatchCodes(SegmentScratch& s) { return s.head; }

// How many bytes from @p equal those from @c (c < p), at most @cap and
// not past kMatchLimit; 4 at a time. Less than @cap: the match's end.
HZ_HD std::uint32_t MatchLength(const std::uint8_t* page, std::uint32_t p, std::uint32_t c,
                                std::uint32_t cap) {
  const std::uint32_t limit = kMatchLimit - p < cap ? kMatchLimit - p : cap;
  std::uint32_t n = 0;
  while (n + 4 <= limit) {
    const std::uint32_t x = PageLoad32(page, p + n) ^ PageLoad32(page, c + n);
    if (x) return n + static_cast<std::uint32_t>(Ctz(x)) / 8;
    n += 4;
  }
  while (n < limit && page[p + n] == page[c + n]) n++;
  return n;
}

// Each lane, for its segment of kSegment positions in turn: the match at
// each position, the longest of the lane's last offset, the previous
// occurrence and the one before it (s.prev), compared over kLongMatch
// bytes; inside a match found at an earlier position of the lane, that
// match's continuation, with no search. The winner's length is measured
// on to kSegmentCap bytes, so that a long match is carried over as many
// positions without a search. Fills MatchCodes(), each lane its own
// positions. Segments of 132 bytes, not 128: the lanes' reads of the page
// at the same step fall in different banks of shared memory (of
// MatchCodes() and s.prev, two lanes a bank), not all in one; the 32nd
// lane's segment is the last 4 positions.
constexpr std::uint32_t kSegment = 132;
constexpr std::uint32_t kSegmentCap = 64;
template <class L>
HZ_HD void SegmentMatches(L& lanes, SegmentScratch& s) {
  lanes.Each([&](int lane) {
    const std::uint32_t lo = static_cast<std::uint32_t>(lane) * kSegment;
    const std::uint32_t hi = lo + kSegment < kPage ? lo + kSegment : kPage;
    // The match carried from the position before: source, length, and
    // whether the length is exact (else at least that).
    std::uint32_t cf = 0, cl = 0, rep = 0;
    bool exact = true;
    for (std::uint32_t p = lo; p < hi; p++) {
      std::uint32_t f = 0, l = 0;
      if (p < kSearchEnd) {
        if (cl > lz4::kMinMatch && (exact || cl > kLongMatch)) {
          f = cf + 1;
          l = cl - 1;
        } else if (cl > lz4::kMinMatch) {
          // Carried, but no longer known to be long: measure it again.
          f = cf + 1;
          l = lz4::kMinMatch + MatchLength(s.page, p + 4, f + 4, kSegmentCap - 4);
          exact = l < kSegmentCap;
        } else {
          const std::uint32_t v = PageLoad32(s.page, p);
          auto consider = [&](std::uint32_t c) {
            if (PageLoad32(s.page, c) != v) return;
            const std::uint32_t n =
                lz4::kMinMatch + MatchLength(s.page, p + 4, c + 4, kLongMatch - lz4::kMinMatch);
            if (n > l) {
              l = n;
              f = c;
            }
          };
          if (rep && p >= rep) consider(p - rep);
          const std::uint32_t q = s.prev[p];
          if (q) {
            if (q - 1 != p - rep) consider(q - 1);
            const std::uint32_t q2 = s.prev[q - 1];
            if (q2 && q2 - 1 != p - rep) consider(q2 - 1);
          }
          exact = l < kLongMatch;
          if (!exact) {
            l += MatchLength(s.page, p + kLongMatch, f + kLongMatch, kSegmentCap - kLongMatch);
            exact = l < kSegmentCap;
          }
        }
      }
      MatchCodes(s)[p] = l ? MatchCode(f, l) : 0;
      if (l) rep = p - f;
      cf = f;
      cl = l;
    }
  });
}

// s.has from MatchCodes(): each lane four of its words, 32 codes each,
// read 16 bytes at a time.
template <class L>
HZ_HD void MarkMatches(L& lanes, SegmentScratch& s) {
  lanes.Each([&](int lane) {
    const std::uint8_t* codes = reinterpret_cast<const std::uint8_t*>(MatchCodes(s));
    for (std::uint32_t w = static_cast<std::uint32_t>(lane); w < kPage / 32; w += kLanes) {
      std::uint32_t bits = 0;
      for (std::uint32_t k = 0; k < 4; k++) {
        std::uint32_t c[4];  // 8 codes, two a word (little-endian)
#if defined(__CUDA_ARCH__)
        const uint4 v = *reinterpret_cast<const uint4*>(codes + w * 64 + k * 16);
        c[0] = v.x, c[1] = v.y, c[2] = v.z, c[3] = v.w;
#else
        std::memcpy(c, codes + w * 64 + k * 16, 16);
#endif
        for (std::uint32_t i = 0; i < 4; i++)
          bits |= static_cast<std::uint32_t>((c[i] & 0xffff) != 0) << (k * 8 + 2 * i) |
                  static_cast<std::uint32_t>((c[i] >> 16) != 0) << (k * 8 + 2 * i + 1);
      }
      s.has[w] = bits;
    }
  });
}

// The first position from @ip with a match (s.has), or kPage if none.
HZ_HD std::uint32_t NextMatch(const SegmentScratch& s, std::uint32_t ip) {
  if (ip >= kSearchEnd) return kPage;
  std::uint32_t w = ip >> 5, m = s.has[w] & (kFull << (ip & 31));
  while (!m) {
    if (++w == kPage / 32) return kPage;
    m = s.has[w];
  }
  return w * 32 + static_cast<std::uint32_t>(Ctz(m));
}

// Write the @n sequences of s.seq into @dst, in one step (no two write
// the same byte): each lane one sequence's token, lengths and offset, and
// its literals if they are few; the longer runs of literals by all lanes.
constexpr std::uint32_t kLaneLiterals = 32;
template <class L>
HZ_HD void WriteSequences(L& lanes, const SegmentScratch& s, std::uint8_t* dst, std::uint32_t n) {
  lanes.Each([&](int lane) {
    if (static_cast<std::uint32_t>(lane) < n) {
      const Sequence& q = s.seq[lane];
      const std::uint32_t mcode = q.ml - lz4::kMinMatch;
      const std::uint32_t lit_at = q.op + 1 + LengthBytes(q.lit);
      const std::uint32_t off_at = lit_at + q.lit;
      dst[q.op] = static_cast<std::uint8_t>(
          (q.lit < lz4::kRunMask ? q.lit : lz4::kRunMask) << lz4::kMlBits |
          (mcode < lz4::kMlMask ? mcode : lz4::kMlMask));
      PutLength(dst + q.op + 1, q.lit);
      if (q.lit <= kLaneLiterals)
        for (std::uint32_t i = 0; i < q.lit; i++) dst[lit_at + i] = s.page[q.anchor + i];
      dst[off_at] = static_cast<std::uint8_t>(q.offset);
      dst[off_at + 1] = static_cast<std::uint8_t>(q.offset >> 8);
      PutLength(dst + off_at + 2, mcode);
    }
    for (std::uint32_t j = 0; j < n; j++) {
      const Sequence& q = s.seq[j];
      if (q.lit <= kLaneLiterals) continue;
      const std::uint32_t lit_at = q.op + 1 + LengthBytes(q.lit);
      for (std::uint32_t i = lane; i < q.lit; i += kLanes) dst[lit_at + i] = s.page[q.anchor + i];
    }
  });
}

// The segmented compressor's parse, from MatchCodes() and s.has: walks from match to match, takes each one's length from its
// code (measuring on with MatchTail only past kLongMatch bytes), and
// collects the sequences, written 32 at a time by WriteSequences.
// Returns as CompressPageWarp.
template <class L>
HZ_HD PageKind WriteMatches(L& lanes, SegmentScratch& s, std::uint8_t* dst, std::uint32_t* len) {
  std::uint32_t ip = 1, anchor = 0, op = 0, n = 0;
  bool raw = false;
  for (;;) {
    std::uint32_t mpos = NextMatch(s, ip);
    if (mpos >= kSearchEnd) break;
    const std::uint32_t code = MatchCodes(s)[mpos];
    std::uint32_t mfrom = (code & 0xfff) - 1u;
    std::uint32_t end = mpos + lz4::kMinMatch + (code >> 12);
    if (code >> 12 == 15)
      end = mpos + kLongMatch + MatchTail(lanes, s, mpos + kLongMatch, mfrom + kLongMatch);
    ExtendBackwards(s, anchor, &mpos, &mfrom);
    const std::uint32_t lit = mpos - anchor, ml = end - mpos;
    const std::uint32_t next =
        op + 1 + LengthBytes(lit) + lit + 2 + LengthBytes(ml - lz4::kMinMatch);
    if (next >= kPage) {  // no smaller than the page: store it raw
      raw = true;
      break;
    }
    // Warp-uniform: on the device every lane stores the same value to the
    // same address, one store, and reads it back after the next step's
    // synchronisation.
    s.seq[n] = {static_cast<std::uint16_t>(anchor), static_cast<std::uint16_t>(lit),
                static_cast<std::uint16_t>(mpos - mfrom), static_cast<std::uint16_t>(ml),
                static_cast<std::uint16_t>(op)};
    if (++n == kLanes) {
      WriteSequences(lanes, s, dst, n);
      n = 0;
    }
    op = next;
    ip = anchor = end;
  }
  if (!raw && n) WriteSequences(lanes, s, dst, n);
  return EmitLastLiterals(lanes, s, dst, op, anchor, raw, len);
}

// CompressPageWarp's contract and output format, by another search: each
// lane finds the matches of its own 132 positions (SegmentMatches), with
// no step between positions; the parse then walks from match to match
// (WriteMatches).
template <class L>
HZ_HD PageKind CompressPageSegments(L& lanes, SegmentScratch& s, const std::uint8_t* src,
                                    std::uint8_t* dst, std::uint32_t* len, std::uint64_t* word) {
  LoadPage(lanes, s, src);
  if (SameFilled(lanes, s)) {
    *word = Load64(s.page);
    return PageKind::kSame;
  }
  ChainPositions(lanes, s);
  SegmentMatches(lanes, s);
  MarkMatches(lanes, s);
  return WriteMatches(lanes, s, dst, len);
}

// Add a length field's continuation bytes (255, ..., last) at in[*ip..len)
// to *v; false if they run off the input.
HZ_HD bool ReadLength(const std::uint8_t* in, std::uint32_t len, std::uint32_t* ip, std::uint32_t* v) {
  std::uint32_t b;
  do {
    if (*ip >= len) return false;
    b = in[(*ip)++];
    *v += b;
  } while (b == 255);
  return true;
}

// Decode the LZ4 block at @src (@len bytes, 1..kPage - 1, any alignment)
// into @dst (kPage bytes, 16-byte aligned on the device). Returns 0, or
// -EBADMSG (74) for a malformed block or one that does not decode to
// exactly one page; the checks are the CPU decoder's.
template <class L>
HZ_HD int DecompressPageWarp(L& lanes, DecompressScratch& s, const std::uint8_t* src,
                             std::uint32_t len, std::uint8_t* dst) {
  constexpr int kBad = -74;  // -EBADMSG
  if (len == 0 || len >= kPage) return kBad;
  lanes.Each([&](int lane) {
    for (std::uint32_t i = lane; i < len; i += kLanes) s.in[i] = src[i];
  });

  std::uint32_t ip = 0, op = 0;
  int ret = kBad;
  for (;;) {
    if (ip >= len) break;  // a block ends with literals
    const std::uint32_t token = s.in[ip++];
    std::uint32_t lit = token >> lz4::kMlBits;
    if (!(lit < lz4::kRunMask || ReadLength(s.in, len, &ip, &lit)) || lit > len - ip ||
        lit > kPage - op)
      break;
    const bool last = lz4::LiteralsEndBlock(lit, kPage - op, len - ip);
    lanes.Each([&](int lane) {
      for (std::uint32_t i = lane; i < lit; i += kLanes) s.out[op + i] = s.in[ip + i];
    });
    ip += lit;
    op += lit;
    if (last) {
      ret = ip == len && op == kPage ? 0 : kBad;
      break;
    }

    if (len - ip < 2) break;
    const std::uint32_t offset = s.in[ip] | static_cast<std::uint32_t>(s.in[ip + 1]) << 8;
    ip += 2;
    if (!lz4::OffsetFits(offset, op)) break;
    std::uint32_t ml = token & lz4::kMlMask;
    const bool ok = ml < lz4::kMlMask || ReadLength(s.in, len, &ip, &ml);
    ml += lz4::kMinMatch;
    if (!ok || !lz4::MatchFits(ml, kPage - op)) break;
    // A match repeats the offset's period: each byte depends only on bytes
    // before op, so all can be written at once.
    lanes.Each([&](int lane) {
      const std::uint32_t from = op - offset;
      if (offset >= ml) {
        for (std::uint32_t i = lane; i < ml; i += kLanes) s.out[op + i] = s.out[from + i];
      } else {
        for (std::uint32_t i = lane; i < ml; i += kLanes) s.out[op + i] = s.out[from + i % offset];
      }
    });
    op += ml;
  }
  if (ret == 0) {
    lanes.Each([&](int lane) {
      for (std::uint32_t k = 0; k < kPage / (16 * kLanes); k++) {
        const std::uint32_t o = (k * kLanes + lane) * 16;
        Copy16(dst + o, s.out + o);
      }
    });
  }
  return ret;
}

}  // namespace hzram::gpu

#endif  // HZRAM_GPU_LZ4_WARP_H
