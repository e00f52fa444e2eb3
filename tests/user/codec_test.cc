// SPDX-License-Identifier: GPL-2.0
// The batch codec: the corpus, fixed-seed random batches of every size
// from 1 to 4096 pages, both page-list forms, every thread count and ISA,
// corrupted records, the record check, and bad arguments.
#include <gtest/gtest.h>
#include <lz4.h>
#include <zstd.h>

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <string>

#include "hzram/codec.h"
#include "page_codec_isa.h"
#include "test_util.h"
#include "thread_pool.h"

namespace hzram::test {
namespace {

// The ISA the tests run the codec on: $HZRAM_ISA's, else BestIsa().
Isa TestIsa() {
  Isa isa;
  return DefaultIsa(&isa) == 0 ? isa : BestIsa();
}

std::unique_ptr<Codec> MakeCodec(unsigned threads, Isa isa = TestIsa(), std::size_t max_batch = 4096) {
  CodecOptions o;
  o.threads = threads;
  o.force_isa = true;
  o.isa = isa;
  o.max_batch = max_batch;
  int err = 1;
  auto c = Codec::Create(o, &err);
  EXPECT_EQ(0, err);
  return c;
}

// Compress @pages, check the records against the pages, decompress and
// compare; returns the arena bytes used.
std::size_t RoundTrip(Codec& codec, const std::vector<const void*>& pages) {
  const std::size_t n = pages.size();
  std::vector<hzram_page_record> rec(n);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(n));
  EXPECT_EQ(0, codec.Compress(PageList(pages.data(), n), rec, arena));

  std::size_t used = 0;
  const PageKernels& k = KernelsFor(Isa::kScalar);
  for (std::size_t i = 0; i < n; i++) {
    std::uint64_t word;
    const bool same = k.same_filled(pages[i], &word);
    EXPECT_EQ(0, rec[i].flags);
    if (same) {
      EXPECT_EQ(HZRAM_PAGE_SAME, rec[i].kind) << i;
      EXPECT_EQ(word, rec[i].value) << i;
      EXPECT_EQ(0u, rec[i].length) << i;
      continue;
    }
    EXPECT_TRUE(rec[i].kind == HZRAM_PAGE_LZ4 || rec[i].kind == HZRAM_PAGE_RAW) << i;
    EXPECT_EQ(rec[i].kind == HZRAM_PAGE_RAW, rec[i].length == kPageSize) << i;
    EXPECT_LE(rec[i].value + rec[i].length, arena.size()) << i;
    used += rec[i].length;
    if (rec[i].kind == HZRAM_PAGE_LZ4) {
      // Every LZ4 record is a block liblz4 decodes.
      std::vector<char> out(kPageSize);
      EXPECT_EQ(static_cast<int>(kPageSize),
                LZ4_decompress_safe(reinterpret_cast<const char*>(&arena[rec[i].value]), out.data(),
                                    static_cast<int>(rec[i].length), static_cast<int>(kPageSize)));
      EXPECT_EQ(0, std::memcmp(out.data(), pages[i], kPageSize)) << i;
    }
  }
  // No two pages' data overlap.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
  for (const auto& r : rec)
    if (r.length) spans.push_back({r.value, r.value + r.length});
  std::sort(spans.begin(), spans.end());
  for (std::size_t i = 1; i < spans.size(); i++) EXPECT_LE(spans[i - 1].second, spans[i].first);

  std::vector<std::uint8_t> out(n * kPageSize, 0xcc);
  std::vector<int> status(n, 1);
  EXPECT_EQ(0, codec.Decompress(rec, arena, MutablePageList(out.data(), n), status));
  for (std::size_t i = 0; i < n; i++) {
    EXPECT_EQ(0, status[i]) << i;
    EXPECT_EQ(0, std::memcmp(&out[i * kPageSize], pages[i], kPageSize)) << "page " << i;
  }
  return used;
}

TEST(CodecTest, CorpusRoundTripsOnEveryThreadCountAndIsa) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  const std::size_t n = std::min<std::size_t>(corpus.size() / kPageSize, 4096);
  std::vector<const void*> pages(n);
  for (std::size_t i = 0; i < n; i++) pages[i] = &corpus[i * kPageSize];
  std::size_t first = 0;
  for (int isa = 0; isa < kIsaCount; isa++) {
    if (!IsaSupported(static_cast<Isa>(isa))) continue;
    for (unsigned threads : {1u, 2u, 3u, 8u}) {
      auto codec = MakeCodec(threads, static_cast<Isa>(isa));
      ASSERT_TRUE(codec);
      EXPECT_EQ(threads, codec->threads());
      const std::size_t used = RoundTrip(*codec, pages);
      // Same bytes whatever the threads and the ISA.
      if (!first) first = used;
      EXPECT_EQ(first, used) << IsaName(static_cast<Isa>(isa)) << " x" << threads;
      if (HasFailure()) return;
    }
  }
}

TEST(CodecTest, WholeCorpusInBatches) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto codec = MakeCodec(0);
  const std::size_t total = corpus.size() / kPageSize;
  for (std::size_t base = 0; base < total; base += 4096) {
    const std::size_t n = std::min<std::size_t>(4096, total - base);
    std::vector<const void*> pages(n);
    for (std::size_t i = 0; i < n; i++) pages[i] = &corpus[(base + i) * kPageSize];
    RoundTrip(*codec, pages);
    if (HasFailure()) return;
  }
}

// Fixed-seed random batches of every size from 1 to 600, then of sizes
// stepping by 61 up to 4096, and 4095 and 4096 themselves: pages drawn
// from the corpus and from generated pages (zeros, same-filled, random,
// text).
TEST(CodecTest, RandomBatchesOfEverySize) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  std::vector<Page> extra;
  for (const auto& np : BoundaryPages()) extra.push_back(np.page);
  const std::size_t corpus_pages = corpus.size() / kPageSize;
  auto codec = MakeCodec(0);
  std::vector<hzram_page_record> rec(4096);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(4096));
  std::vector<std::uint8_t> out(4096 * kPageSize);
  std::vector<int> status(4096);
  std::vector<const void*> pages(4096);
  std::vector<void*> dst(4096);
  std::uint64_t seed = 12345;

  for (std::size_t n = 1; n <= 4096; n = n < 600 ? n + 1 : n < 4095 ? std::min<std::size_t>(n + 61, 4095) : n + 1) {
    for (std::size_t i = 0; i < n; i++) {
      const std::uint64_t r = Next(&seed);
      pages[i] = r % 8 ? static_cast<const void*>(&corpus[(r >> 8) % corpus_pages * kPageSize])
                       : extra[(r >> 8) % extra.size()].data();
    }
    ASSERT_EQ(0, codec->Compress(PageList(pages.data(), n), std::span(rec.data(), n),
                                 std::span(arena.data(), Codec::ArenaBytes(n))));
    // Decode into pages given by pointers, in reverse order of the buffer.
    for (std::size_t i = 0; i < n; i++) dst[i] = &out[(n - 1 - i) * kPageSize];
    ASSERT_EQ(0, codec->Decompress(std::span(rec.data(), n),
                                   std::span(arena.data(), Codec::ArenaBytes(n)),
                                   MutablePageList(dst.data(), n), std::span(status.data(), n)));
    for (std::size_t i = 0; i < n; i++)
      ASSERT_EQ(0, std::memcmp(dst[i], pages[i], kPageSize)) << "batch " << n << " page " << i;
  }
}

TEST(CodecTest, ContiguousAndPointerListsAgree) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto codec = MakeCodec(2);
  const std::size_t n = 777;
  std::vector<const void*> ptrs(n);
  for (std::size_t i = 0; i < n; i++) ptrs[i] = &corpus[i * kPageSize];
  std::vector<hzram_page_record> a(n), b(n);
  std::vector<std::uint8_t> arena_a(Codec::ArenaBytes(n)), arena_b(Codec::ArenaBytes(n));
  ASSERT_EQ(0, codec->Compress(PageList(corpus.data(), n), a, arena_a));
  ASSERT_EQ(0, codec->Compress(PageList(ptrs.data(), n), b, arena_b));
  for (std::size_t i = 0; i < n; i++) {
    ASSERT_EQ(a[i].kind, b[i].kind);
    ASSERT_EQ(a[i].length, b[i].length);
    ASSERT_EQ(a[i].value, b[i].value);
    if (a[i].length) {
      ASSERT_EQ(0, std::memcmp(&arena_a[a[i].value], &arena_b[b[i].value], a[i].length));
    }
  }
}

TEST(CodecTest, CorruptRecordsFailOnlyTheirPage) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto codec = MakeCodec(2);
  const std::size_t n = 64;
  std::vector<hzram_page_record> rec(n);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(n));
  // Pages 0..63 of the corpus plus known kinds at 10 (same) and 11 (raw).
  std::vector<Page> src;
  for (std::size_t i = 0; i < n; i++) src.emplace_back(corpus.begin() + i * kPageSize, corpus.begin() + (i + 1) * kPageSize);
  src[10] = WordPage(7);
  src[11] = RandomPage(11);
  std::vector<const void*> ptrs;
  for (auto& p : src) ptrs.push_back(p.data());
  ASSERT_EQ(0, codec->Compress(PageList(ptrs.data(), n), rec, arena));
  ASSERT_EQ(HZRAM_PAGE_SAME, rec[10].kind);
  ASSERT_EQ(HZRAM_PAGE_RAW, rec[11].kind);
  std::size_t lz4 = 0;
  while (rec[lz4].kind != HZRAM_PAGE_LZ4) lz4++;

  struct Case {
    const char* what;
    std::size_t page;
    std::function<void(hzram_page_record&, std::vector<std::uint8_t>&)> corrupt;
    int want;
  };
  const std::vector<Case> cases = {
      {"unknown kind", 3, [](auto& r, auto&) { r.kind = 9; }, -EINVAL},
      // A recompression's kind, which only the module decodes: refused,
      // not taken for the LZ4 block it holds here.
      {"zstd", lz4, [](auto& r, auto&) { r.kind = HZRAM_PAGE_ZSTD; }, -EINVAL},
      {"kind 0", 3, [](auto& r, auto&) { r.kind = 0; }, -EINVAL},
      {"flags set", 3, [](auto& r, auto&) { r.flags = 1; }, -EINVAL},
      {"same with a length", 10, [](auto& r, auto&) { r.length = 8; }, -EINVAL},
      {"raw too short", 11, [](auto& r, auto&) { r.length = kPageSize - 1; }, -EINVAL},
      {"raw past the arena", 11, [](auto& r, auto& a) { r.value = a.size() - kPageSize + 1; }, -EINVAL},
      {"lz4 of length 0", lz4, [](auto& r, auto&) { r.length = 0; }, -EINVAL},
      {"lz4 of a page's length", lz4, [](auto& r, auto&) { r.length = kPageSize; }, -EINVAL},
      {"lz4 offset past the arena", lz4, [](auto& r, auto& a) { r.value = a.size(); }, -EINVAL},
      {"lz4 offset wraps", lz4, [](auto& r, auto&) { r.value = ~0ull - 10; }, -EINVAL},
      {"lz4 truncated", lz4, [](auto& r, auto&) { r.length -= 1; }, -EBADMSG},
      {"lz4 first token garbled", lz4, [](auto& r, auto& a) { a[r.value] = 0xff; a[r.value + 1] = 0xff; }, -EBADMSG},
  };
  for (const auto& c : cases) {
    auto r = rec;
    auto a = arena;
    c.corrupt(r[c.page], a);
    std::vector<std::uint8_t> out(n * kPageSize);
    std::vector<int> status(n, 1);
    EXPECT_EQ(1, codec->Decompress(r, a, MutablePageList(out.data(), n), status)) << c.what;
    for (std::size_t i = 0; i < n; i++) {
      if (i == c.page) {
        EXPECT_EQ(c.want, status[i]) << c.what;
      } else {
        EXPECT_EQ(0, status[i]) << c.what << ": page " << i;
        EXPECT_EQ(0, std::memcmp(&out[i * kPageSize], src[i].data(), kPageSize)) << c.what << ": page " << i;
      }
    }
  }
}

// The uapi header's record check, which the codecs, hzramd and the module
// share: each field out of range is named, the exact limits pass.
TEST(RecordCheckTest, EachFieldOutOfRangeAndEachLimit) {
  constexpr std::uint64_t kMax = ~0ull;
  constexpr std::uint32_t kPage = HZRAM_PAGE_SIZE;
  struct Case {
    const char* what;
    hzram_page_record r;  // value, length, kind, flags
    std::uint64_t arena;
    hzram_record_error want;
  };
  const Case cases[] = {
      {"not encoded", {kMax, ~0u, 0, 0}, 0, HZRAM_RECORD_OK},
      {"not encoded, flags", {0, 0, 0, 1}, kPage, HZRAM_RECORD_FLAGS},
      {"top flag", {0, kPage, HZRAM_PAGE_RAW, 0x8000}, kPage, HZRAM_RECORD_FLAGS},
      {"flags before kind", {0, 0, 9, 1}, kPage, HZRAM_RECORD_FLAGS},
      {"kind 5", {0, 1, HZRAM_PAGE_ZSTD + 1, 0}, kPage, HZRAM_RECORD_KIND},
      {"kind 0xffff", {0, 1, 0xffff, 0}, kPage, HZRAM_RECORD_KIND},
      {"same", {kMax, 0, HZRAM_PAGE_SAME, 0}, 0, HZRAM_RECORD_OK},
      {"same, length 1", {0, 1, HZRAM_PAGE_SAME, 0}, kPage, HZRAM_RECORD_LENGTH},
      {"same, length max", {0, ~0u, HZRAM_PAGE_SAME, 0}, kPage, HZRAM_RECORD_LENGTH},
      {"raw", {0, kPage, HZRAM_PAGE_RAW, 0}, kPage, HZRAM_RECORD_OK},
      {"raw, length - 1", {0, kPage - 1, HZRAM_PAGE_RAW, 0}, kPage, HZRAM_RECORD_LENGTH},
      {"raw, length + 1", {0, kPage + 1, HZRAM_PAGE_RAW, 0}, 2 * kPage, HZRAM_RECORD_LENGTH},
      {"raw, length 0", {0, 0, HZRAM_PAGE_RAW, 0}, kPage, HZRAM_RECORD_LENGTH},
      {"raw, last in the arena", {2 * kPage + 5, kPage, HZRAM_PAGE_RAW, 0}, 3 * kPage + 5,
       HZRAM_RECORD_OK},
      {"raw, a byte past it", {2 * kPage + 6, kPage, HZRAM_PAGE_RAW, 0}, 3 * kPage + 5,
       HZRAM_RECORD_RANGE},
      {"raw, arena a byte short", {0, kPage, HZRAM_PAGE_RAW, 0}, kPage - 1, HZRAM_RECORD_RANGE},
      {"raw, offset wraps", {kMax - 10, kPage, HZRAM_PAGE_RAW, 0}, kMax, HZRAM_RECORD_RANGE},
      {"lz4, length 1", {0, 1, HZRAM_PAGE_LZ4, 0}, 1, HZRAM_RECORD_OK},
      {"lz4, length page - 1", {0, kPage - 1, HZRAM_PAGE_LZ4, 0}, kPage - 1, HZRAM_RECORD_OK},
      {"lz4, length 0", {0, 0, HZRAM_PAGE_LZ4, 0}, kPage, HZRAM_RECORD_LENGTH},
      {"lz4, length page", {0, kPage, HZRAM_PAGE_LZ4, 0}, kPage, HZRAM_RECORD_LENGTH},
      {"lz4, length before range", {kMax, 0, HZRAM_PAGE_LZ4, 0}, 0, HZRAM_RECORD_LENGTH},
      {"lz4, last byte", {99, 1, HZRAM_PAGE_LZ4, 0}, 100, HZRAM_RECORD_OK},
      {"lz4, at the end", {100, 1, HZRAM_PAGE_LZ4, 0}, 100, HZRAM_RECORD_RANGE},
      {"lz4, past the end", {101, 1, HZRAM_PAGE_LZ4, 0}, 100, HZRAM_RECORD_RANGE},
      {"lz4, a byte too long", {90, 11, HZRAM_PAGE_LZ4, 0}, 100, HZRAM_RECORD_RANGE},
      {"lz4, largest arena", {kMax - 1, 1, HZRAM_PAGE_LZ4, 0}, kMax, HZRAM_RECORD_OK},
      {"lz4, offset max", {kMax, 1, HZRAM_PAGE_LZ4, 0}, kMax, HZRAM_RECORD_RANGE},
      {"lz4, empty arena", {0, 1, HZRAM_PAGE_LZ4, 0}, 0, HZRAM_RECORD_RANGE},
      {"zstd, length 1", {0, 1, HZRAM_PAGE_ZSTD, 0}, 1, HZRAM_RECORD_OK},
      {"zstd, length page - 1", {0, kPage - 1, HZRAM_PAGE_ZSTD, 0}, kPage, HZRAM_RECORD_OK},
      {"zstd, length 0", {0, 0, HZRAM_PAGE_ZSTD, 0}, kPage, HZRAM_RECORD_LENGTH},
      {"zstd, length page", {0, kPage, HZRAM_PAGE_ZSTD, 0}, kPage, HZRAM_RECORD_LENGTH},
      {"zstd, a byte too long", {90, 11, HZRAM_PAGE_ZSTD, 0}, 100, HZRAM_RECORD_RANGE},
  };
  for (const Case& c : cases) EXPECT_EQ(c.want, hzram_page_record_check(&c.r, c.arena)) << c.what;
}

// Each page in its own zstd frame, as the module's recompression takes
// them: every frame decodes (libzstd) to exactly its page, lies in its
// page's room of the arena and is smaller than a page; random pages,
// which do not shrink, are not encoded. On the corpus, and on generated
// pages, at levels 1, 3 and 19, on one thread and on four.
TEST(CodecTest, ZstdFramesDecodeToTheirPages) {
  std::vector<Page> generated;
  for (int i = 0; i < 64; i++)
    generated.push_back(i % 4 == 0 ? RandomPage(900 + i) : TextPage(900 + i));
  std::vector<const void*> pages;
  for (const auto& p : generated) pages.push_back(p.data());
  if (const char* c = std::getenv("HZRAM_CORPUS"); c && *c) {
    const auto& corpus = hzram::test::Corpus();
    for (std::size_t i = 0; i < corpus.size() / kPageSize && i < 2048; i += 3)
      pages.push_back(&corpus[i * kPageSize]);
  }
  const std::size_t n = pages.size();
  for (unsigned threads : {1u, 4u}) {
    auto codec = MakeCodec(threads);
    for (int level : {1, 3, 19}) {
      std::vector<hzram_page_record> rec(n, hzram_page_record{1, 1, 1, 1});
      std::vector<std::uint8_t> arena(Codec::ArenaBytes(n));
      ASSERT_EQ(0, codec->CompressZstd(PageList(pages.data(), n), level, rec, arena));
      std::size_t encoded = 0;
      Page out(kPageSize);
      for (std::size_t i = 0; i < n; i++) {
        if (i < generated.size() && i % 4 == 0) {
          EXPECT_EQ(0, rec[i].kind) << "random page " << i;
          continue;
        }
        if (rec[i].kind == 0) continue;
        ASSERT_EQ(HZRAM_PAGE_ZSTD, rec[i].kind) << i;
        ASSERT_EQ(HZRAM_RECORD_OK, hzram_page_record_check(&rec[i], arena.size())) << i;
        EXPECT_EQ(i * kPageSize, rec[i].value) << i;
        ASSERT_EQ(kPageSize, ZSTD_decompress(out.data(), kPageSize, arena.data() + rec[i].value,
                                             rec[i].length))
            << i;
        ASSERT_EQ(0, std::memcmp(out.data(), pages[i], kPageSize)) << i;
        encoded++;
      }
      EXPECT_GE(encoded, n / 2) << "level " << level;
    }
  }
}

TEST(CodecTest, ZstdBadArguments) {
  auto codec = MakeCodec(2, TestIsa(), 16);
  std::vector<std::uint8_t> pages(17 * kPageSize, 7);
  std::vector<hzram_page_record> rec(17);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(17));
  EXPECT_EQ(-EINVAL, codec->CompressZstd(PageList(pages.data(), 17), 3, rec, arena))
      << "over max_batch";
  EXPECT_EQ(-EINVAL,
            codec->CompressZstd(PageList(pages.data(), 4), 3, std::span(rec.data(), 3), arena));
  EXPECT_EQ(-EINVAL, codec->CompressZstd(PageList(pages.data(), 4), 3, rec,
                                         std::span(arena.data(), Codec::ArenaBytes(4) - 1)));
  EXPECT_EQ(-EINVAL, codec->CompressZstd(PageList(pages.data(), 4), ZSTD_maxCLevel() + 1, rec,
                                         arena));
  EXPECT_EQ(-EINVAL, codec->CompressZstd(PageList(pages.data(), 4), ZSTD_minCLevel() - 1, rec,
                                         arena));
  EXPECT_TRUE(Codec::ZstdLevelValid(ZSTD_maxCLevel()));
  EXPECT_TRUE(Codec::ZstdLevelValid(ZSTD_minCLevel()));
  EXPECT_EQ(0, codec->CompressZstd(PageList(pages.data(), 4), ZSTD_maxCLevel(), rec, arena));
  EXPECT_EQ(HZRAM_PAGE_ZSTD, rec[3].kind);
}

TEST(CodecTest, BadArguments) {
  auto codec = MakeCodec(2, TestIsa(), 16);
  std::vector<std::uint8_t> pages(17 * kPageSize);
  std::vector<hzram_page_record> rec(17);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(17));
  std::vector<int> status(17);
  EXPECT_EQ(-EINVAL, codec->Compress(PageList(pages.data(), 17), rec, arena)) << "over max_batch";
  EXPECT_EQ(-EINVAL, codec->Compress(PageList(pages.data(), 4), std::span(rec.data(), 3), arena));
  EXPECT_EQ(-EINVAL, codec->Compress(PageList(pages.data(), 4), rec,
                                     std::span(arena.data(), Codec::ArenaBytes(4) - 1)));
  EXPECT_EQ(0, codec->Compress(PageList(pages.data(), 0), rec, arena)) << "an empty batch is fine";
  EXPECT_EQ(-EINVAL, codec->Decompress(std::span(rec.data(), 4), arena,
                                       MutablePageList(pages.data(), 3), std::span(status.data(), 4)));
  EXPECT_EQ(-EINVAL, codec->Decompress(std::span(rec.data(), 4), arena,
                                       MutablePageList(pages.data(), 4), std::span(status.data(), 5)));
  EXPECT_EQ(-EINVAL, codec->Decompress(rec, arena, MutablePageList(pages.data(), 17), status));

  int err = 0;
  CodecOptions o;
  o.max_batch = 0;
  EXPECT_EQ(nullptr, Codec::Create(o, &err));
  EXPECT_EQ(-EINVAL, err);
  if (!IsaSupported(Isa::kAvx512)) {
    o = CodecOptions();
    o.force_isa = true;
    o.isa = Isa::kAvx512;
    EXPECT_EQ(nullptr, Codec::Create(o, &err));
    EXPECT_EQ(-ENOTSUP, err);
    o.isa = Isa::kScalar;
    o.decompress_isa = Isa::kAvx512;
    EXPECT_EQ(nullptr, Codec::Create(o, &err));
    EXPECT_EQ(-ENOTSUP, err);
  }
  o = CodecOptions();
  o.force_isa = true;
  o.decompress_isa = static_cast<Isa>(kIsaCount);
  EXPECT_EQ(nullptr, Codec::Create(o, &err));
  EXPECT_EQ(-EINVAL, err);
}

TEST(CodecTest, CodecFollowsHzramIsa) {
  SavedIsaEnv saved;
  setenv("HZRAM_ISA", "scalar", 1);
  CodecOptions o;
  o.threads = 1;
  int err = 1;
  auto codec = Codec::Create(o, &err);
  ASSERT_TRUE(codec);
  EXPECT_EQ(Isa::kScalar, codec->isa());
  EXPECT_EQ(Isa::kScalar, codec->decompress_isa());
  setenv("HZRAM_ISA", "bogus", 1);
  EXPECT_EQ(nullptr, Codec::Create(o, &err));
  EXPECT_EQ(-EINVAL, err);
}

TEST(CodecTest, EveryPairOfIsasGivesTheSameBytesAndPages) {
  // One ISA may compress and another decompress (each direction takes its
  // fastest): every pair must round-trip, and the arena must not depend
  // on the ISA.
  HZRAM_CORPUS_OR_SKIP(corpus);
  const std::size_t n = std::min<std::size_t>(corpus.size() / kPageSize, 1000);
  std::vector<const void*> pages(n);
  for (std::size_t i = 0; i < n; i++) pages[i] = &corpus[(i * 13 % (corpus.size() / kPageSize)) * kPageSize];
  std::vector<hzram_page_record> first_rec;
  std::vector<std::uint8_t> first_arena;
  for (int c = 0; c < kIsaCount; c++) {
    for (int d = 0; d < kIsaCount; d++) {
      const Isa ci = static_cast<Isa>(c), di = static_cast<Isa>(d);
      if (!IsaSupported(ci) || !IsaSupported(di)) continue;
      CodecOptions o;
      o.threads = 2;
      o.force_isa = true;
      o.isa = ci;
      o.decompress_isa = di;
      int err = 1;
      auto codec = Codec::Create(o, &err);
      ASSERT_TRUE(codec) << err;
      EXPECT_EQ(ci, codec->isa());
      EXPECT_EQ(di, codec->decompress_isa());
      RoundTrip(*codec, pages);
      std::vector<hzram_page_record> rec(n);
      std::vector<std::uint8_t> arena(Codec::ArenaBytes(n));
      ASSERT_EQ(0, codec->Compress(PageList(pages.data(), n), rec, arena));
      if (first_rec.empty()) {
        first_rec = rec;
        first_arena = arena;
      }
      for (std::size_t i = 0; i < n; i++) {
        ASSERT_EQ(first_rec[i].kind, rec[i].kind) << IsaName(ci) << " page " << i;
        ASSERT_EQ(first_rec[i].length, rec[i].length) << IsaName(ci) << " page " << i;
        ASSERT_EQ(first_rec[i].value, rec[i].value) << IsaName(ci) << " page " << i;
        if (rec[i].length) {
          ASSERT_EQ(0, std::memcmp(&first_arena[rec[i].value], &arena[rec[i].value], rec[i].length))
              << IsaName(ci) << " page " << i;
        }
      }
      if (HasFailure()) return;
    }
  }
}

TEST(CodecTest, UnforcedCodecTakesTheTrialsChoice) {
  SavedIsaEnv saved;
  unsetenv("HZRAM_ISA");
  CodecOptions o;
  o.threads = 1;
  int err = 1;
  auto codec = Codec::Create(o, &err);
  ASSERT_TRUE(codec);
  EXPECT_EQ(0, err);
  EXPECT_EQ(IsaTrialResult().choice.compress, codec->isa());
  EXPECT_EQ(IsaTrialResult().choice.decompress, codec->decompress_isa());
  // Forcing one ISA forces it both ways.
  o.force_isa = true;
  o.isa = Isa::kScalar;
  codec = Codec::Create(o, &err);
  ASSERT_TRUE(codec);
  EXPECT_EQ(Isa::kScalar, codec->isa());
  EXPECT_EQ(Isa::kScalar, codec->decompress_isa());
  // $HZRAM_ISA forces both ways too.
  o = CodecOptions();
  setenv("HZRAM_ISA", "scalar", 1);
  codec = Codec::Create(o, &err);
  ASSERT_TRUE(codec);
  EXPECT_EQ(Isa::kScalar, codec->isa());
  EXPECT_EQ(Isa::kScalar, codec->decompress_isa());
}

TEST(CodecTest, SmallBatchesRunOnTheCaller) {
  auto codec = MakeCodec(2);
  const Page p = TextPage(1);
  std::vector<const void*> pages(4, p.data());
  const std::uint64_t before = codec->pool_runs();
  RoundTrip(*codec, pages);
  EXPECT_EQ(before, codec->pool_runs());
  pages.assign(200, p.data());
  RoundTrip(*codec, pages);
  EXPECT_EQ(before + 2, codec->pool_runs()) << "compress and decompress use the pool";
}

}  // namespace
}  // namespace hzram::test
