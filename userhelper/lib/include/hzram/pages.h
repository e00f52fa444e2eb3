// SPDX-License-Identifier: GPL-2.0
// Synthetic pages that stand in for what memory holds, made from a seed:
// the same seed gives the same bytes in every process. The codec's ISA
// trial (isa.cc) and hzramd's first calibration measure on them, and the
// tests use them as pages of known kinds. The benchmarks measure on real
// pages (the corpus); only the ISA trial's own figures (IsaTrialSummary())
// come from these.
#ifndef HZRAM_PAGES_H
#define HZRAM_PAGES_H

#include <cstddef>
#include <cstdint>

namespace hzram {

// xorshift64 (Marsaglia): fast and reproducible, not random. The seed
// goes through splitmix64's mixer first, so that small seeds (1, 2, ...)
// do not start with words of few bits.
class PageRng {
 public:
  explicit PageRng(std::uint64_t seed) : s_(Mix(seed)) {}
  std::uint64_t Next() {
    s_ ^= s_ << 13;
    s_ ^= s_ >> 7;
    s_ ^= s_ << 17;
    return s_;
  }

  static constexpr std::uint64_t kDefaultSeed = 0x9e3779b97f4a7c15ull;

 private:
  static constexpr std::uint64_t Mix(std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return z ? z : kDefaultSeed;
  }

  std::uint64_t s_;  // never 0
};

enum class PageKind {
  kText,     // words, spaces, line breaks and numbers (a file cache, strings)
  kStrings,  // short strings and numbers between pointers (small objects)
  kSparse,   // mostly zeros with a few scattered values (a table, a stack)
  kEmpty,    // a header of a few words, zeros but for a value or two
  kRandom,   // incompressible (compressed or encrypted data)
  kRecords,  // an array of records of one size (a heap, a slab)
};

// The largest record of a kRecords page; sizes are multiples of 8.
inline constexpr std::size_t kMaxRecordSize = 256;

// Fill @page (kPageSize bytes) with a page of @kind, drawing from @rng;
// @record_size (8 to kMaxRecordSize, a multiple of 8) for kRecords.
void MakePage(PageKind kind, std::uint8_t* page, PageRng* rng, std::size_t record_size = 64);

// @n pages at @pages, of every kind in turn, as memory mostly is: text,
// strings, sparse, empty, random, then records of 24, 32, 48, 64, 96, 128
// and 256 bytes (kMixedCycle pages), then again; from one generator
// seeded with @seed.
inline constexpr std::size_t kMixedCycle = 12;
void MakeMixedPages(std::uint8_t* pages, std::size_t n,
                    std::uint64_t seed = PageRng::kDefaultSeed);

}  // namespace hzram

#endif  // HZRAM_PAGES_H
