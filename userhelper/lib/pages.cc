// SPDX-License-Identifier: GPL-2.0
// Synthetic pages (hzram/pages.h).
#include "hzram/pages.h"

#include <cstdio>
#include <cstring>

#include "hzram/page_codec.h"

namespace hzram {
namespace {

// Text: words, spaces, line breaks and numbers, as in a file cache or a
// heap of strings.
void TextPage(std::uint8_t* p, PageRng* s) {
  static const char* const kWords[] = {
      "the ",     "memory ",  "page ",  "kernel ", "of ",      "swap ",   "and ",
      "to ",      "a ",       "in ",    "block ",  "return ",  "struct ", "int ",
      "const ",   "if (",     ") {\n",  "}\n",     "error: ",  "value ", "= ",
      "compress ", "<div class=\"", "\">", "\n    ", "http://", ".com/", "; "};
  constexpr std::size_t kCount = sizeof(kWords) / sizeof(kWords[0]);
  std::size_t i = 0;
  while (i < kPageSize) {
    const std::uint64_t r = s->Next();
    if (r % 9 == 0) {
      // A number: a few random digits.
      for (unsigned d = 0; d < 1 + (r >> 8) % 6 && i < kPageSize; d++)
        p[i++] = static_cast<std::uint8_t>('0' + (r >> (12 + 4 * d)) % 10);
      if (i < kPageSize) p[i++] = ' ';
      continue;
    }
    const char* w = kWords[(r >> 8) % kCount];
    for (std::size_t j = 0; w[j] && i < kPageSize; j++) p[i++] = static_cast<std::uint8_t>(w[j]);
  }
}

// An array of records of @size bytes, as a heap or a slab holds them:
// each record is one template (a type pointer, pointers into one region,
// small counts and flags, zero padding) with some fields changed: a link
// to the next record, a counter, and now and then a pointer or a hash.
void RecordPage(std::uint8_t* p, PageRng* s, std::size_t size) {
  const std::uint64_t heap = 0x00005581c2000000ull + (s->Next() & 0xfffff0);
  std::uint64_t tmpl[32] = {};
  const std::size_t words = size / 8;
  for (std::size_t w = 0; w < words; w++) {
    const std::uint64_t r = s->Next();
    switch (r % 5) {
      case 0: tmpl[w] = heap + (r >> 8) % 0x100000 * 16; break;  // a pointer
      case 1: tmpl[w] = (r >> 8) % 16; break;                    // a small number
      case 2: tmpl[w] = (r >> 8) & 0xffffffff00000000ull; break; // a flag word
      default: tmpl[w] = 0; break;                               // padding
    }
  }
  for (std::size_t off = 0, i = 0; off + size <= kPageSize; off += size, i++) {
    std::uint64_t rec[32];
    std::memcpy(rec, tmpl, size);
    const std::uint64_t r = s->Next();
    rec[0] = heap + (i + 1) * size;                  // the next record
    rec[words / 2] = i + (r >> 32) % 4;              // a counter
    if (r % 3 == 0) rec[words - 1] = s->Next();        // a hash or a key
    if (r % 5 == 0) rec[1] = heap + (r >> 8) % 0x100000 * 16;
    std::memcpy(p + off, rec, size);
  }
  std::memset(p + kPageSize / size * size, 0, kPageSize % size);
}

// Short strings and numbers between pointers, as a heap of small objects.
void StringPage(std::uint8_t* p, PageRng* s) {
  const std::uint64_t heap = 0x0000115a2ac80000ull + (s->Next() & 0xfff0);
  for (std::size_t off = 0; off < kPageSize; off += 16) {
    const std::uint64_t r = s->Next();
    const std::uint64_t ptr = heap + (r & 0xfff) * 16;
    char text[9];
    std::snprintf(text, sizeof(text), "%c%06u", r % 4 ? '5' : 'k', static_cast<unsigned>((r >> 20) % 1000000));
    std::memcpy(p + off, &ptr, 8);
    std::memcpy(p + off + 8, text, 8);
  }
}

// Mostly zeros with a few scattered values: a sparse table, a stack.
void SparsePage(std::uint8_t* p, PageRng* s) {
  std::memset(p, 0, kPageSize);
  for (int i = 0; i < 40; i++) {
    const std::uint64_t r = s->Next();
    const std::uint64_t v = r % 2 ? r >> 40 : 0x00007ffd00000000ull + (r & 0xffffff);
    std::memcpy(p + (r >> 20) % (kPageSize / 8) * 8, &v, 8);
  }
}

// A page barely used: a header of a few words, and zeros but for a
// value or two (a fresh allocation, a stack's far end).
void EmptyPage(std::uint8_t* p, PageRng* s) {
  std::memset(p, 0, kPageSize);
  const std::uint64_t head[6] = {0x40000, s->Next() % 64, ~0ull, 0, 0, 0x00003cb4cb200000ull};
  std::memcpy(p, head, sizeof(head));
  for (int i = 0; i < 2; i++) {
    const std::uint64_t r = s->Next();
    std::memcpy(p + 256 + (r >> 16) % ((kPageSize - 512) / 8) * 8, &r, 8);
  }
}

// Incompressible: already compressed or encrypted data.
void RandomPage(std::uint8_t* p, PageRng* s) {
  for (std::size_t i = 0; i < kPageSize; i += 8) {
    const std::uint64_t v = s->Next();
    std::memcpy(p + i, &v, 8);
  }
}

constexpr std::size_t kRecordSizes[] = {24, 32, 48, 64, 96, 128, 256};
static_assert(5 + sizeof(kRecordSizes) / sizeof(kRecordSizes[0]) == kMixedCycle);

}  // namespace

void MakePage(PageKind kind, std::uint8_t* page, PageRng* rng, std::size_t record_size) {
  switch (kind) {
    case PageKind::kText: TextPage(page, rng); break;
    case PageKind::kStrings: StringPage(page, rng); break;
    case PageKind::kSparse: SparsePage(page, rng); break;
    case PageKind::kEmpty: EmptyPage(page, rng); break;
    case PageKind::kRandom: RandomPage(page, rng); break;
    case PageKind::kRecords:
      if (record_size < 8 || record_size > kMaxRecordSize || record_size % 8) record_size = 64;
      RecordPage(page, rng, record_size);
      break;
  }
}

void MakeMixedPages(std::uint8_t* pages, std::size_t n, std::uint64_t seed) {
  static constexpr PageKind kFirst[] = {PageKind::kText, PageKind::kStrings, PageKind::kSparse,
                                        PageKind::kEmpty, PageKind::kRandom};
  constexpr std::size_t kKinds = sizeof(kFirst) / sizeof(kFirst[0]);
  PageRng rng(seed);
  for (std::size_t i = 0; i < n; i++) {
    const std::size_t k = i % kMixedCycle;
    std::uint8_t* p = pages + i * kPageSize;
    if (k < kKinds)
      MakePage(kFirst[k], p, &rng);
    else
      MakePage(PageKind::kRecords, p, &rng, kRecordSizes[k - kKinds]);
  }
}

}  // namespace hzram
