// SPDX-License-Identifier: GPL-2.0
// The single-page LZ4 codec of every ISA: boundary pages, the corpus,
// cross-decoding with liblz4 and with the kernel's LZ4, the output limit,
// and malformed blocks.
#include <gtest/gtest.h>
#include <lz4.h>
#include <lz4hc.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <string>

#include "hzram/page_codec.h"
#include "lz4_format.h"
#include "page_codec_isa.h"
#include "test_util.h"

namespace hzram::test {
namespace {

std::string IsaParamName(const ::testing::TestParamInfo<Isa>& info) {
  return IsaName(info.param);
}

class PageCodecTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!IsaSupported(GetParam()))
      GTEST_SKIP() << "this CPU cannot run the " << IsaName(GetParam()) << " codec";
    k_ = &KernelsFor(GetParam());
    ASSERT_EQ(k_->isa, GetParam());
  }

  // Decode @src with every decoder; all must give back @page.
  void ExpectAllDecode(const std::uint8_t* src, std::size_t len, const Page& page,
                       const std::string& what) {
    Page out(kPageSize + 64, 0xee);
    ASSERT_EQ(0, k_->decompress(src, len, out.data())) << what;
    EXPECT_EQ(0, std::memcmp(out.data(), page.data(), kPageSize)) << what;
    for (std::size_t i = kPageSize; i < out.size(); i++)
      ASSERT_EQ(0xee, out[i]) << what << ": wrote past the page";

    Page lib(kPageSize);
    ASSERT_EQ(static_cast<int>(kPageSize),
              LZ4_decompress_safe(reinterpret_cast<const char*>(src),
                                  reinterpret_cast<char*>(lib.data()), static_cast<int>(len),
                                  static_cast<int>(kPageSize)))
        << what << ": liblz4 rejects it";
    EXPECT_EQ(lib, page) << what;

    Page kern(kPageSize);
    ASSERT_EQ(static_cast<int>(kPageSize),
              kernel_LZ4_decompress_safe(reinterpret_cast<const char*>(src),
                                         reinterpret_cast<char*>(kern.data()),
                                         static_cast<int>(len), static_cast<int>(kPageSize)))
        << what << ": the kernel's LZ4_decompress_safe rejects it";
    EXPECT_EQ(kern, page) << what;
  }

  // Compress @page and check everything that must hold of the result.
  std::size_t RoundTrip(const Page& page, const std::string& what) {
    std::uint64_t word = 0;
    bool same = true;
    for (std::size_t i = 8; i < kPageSize; i += 8) same &= !std::memcmp(&page[i], &page[0], 8);
    EXPECT_EQ(same, k_->same_filled(page.data(), &word)) << what;
    if (same) {
      EXPECT_EQ(0, std::memcmp(&word, page.data(), 8)) << what;
      Page filled(kPageSize, 0x33);
      k_->fill(filled.data(), word);
      EXPECT_EQ(filled, page) << what;
    }

    std::uint8_t out[kCompressBufferSize];
    const std::size_t len = k_->compress(page.data(), out, kPageSize, &table_);
    char lib[LZ4_COMPRESSBOUND(kPageSize)];
    const int lib_len = LZ4_compress_default(reinterpret_cast<const char*>(page.data()), lib,
                                             static_cast<int>(kPageSize), sizeof(lib));
    if (len == 0) {
      // Incompressible: liblz4 does not get under a page by much either.
      EXPECT_GT(lib_len, static_cast<int>(kPageSize) - 64) << what;
      return 0;
    }
    EXPECT_LT(len, kPageSize) << what;
    ExpectAllDecode(out, len, page, what);

    // The output limit: exactly @len bytes need a limit above @len.
    std::uint8_t again[kCompressBufferSize];
    EXPECT_EQ(0u, k_->compress(page.data(), again, len, &table_)) << what;
    EXPECT_EQ(len, k_->compress(page.data(), again, len + 1, &table_)) << what;
    EXPECT_EQ(0, std::memcmp(out, again, len)) << what << ": not deterministic";
    return len;
  }

  const PageKernels* k_ = nullptr;
  Lz4Table table_;
};

TEST_P(PageCodecTest, BoundaryPagesRoundTrip) {
  for (const auto& [name, page] : BoundaryPages()) RoundTrip(page, name);
}

TEST_P(PageCodecTest, IncompressiblePagesAreRefused) {
  std::uint8_t out[kCompressBufferSize];
  for (std::uint64_t seed = 1; seed < 50; seed++) {
    const Page p = RandomPage(seed);
    EXPECT_EQ(0u, k_->compress(p.data(), out, kPageSize, &table_)) << seed;
  }
}

TEST_P(PageCodecTest, DecodesWhatLiblz4AndTheKernelEncode) {
  std::vector<Page> pages;
  for (const auto& np : BoundaryPages()) pages.push_back(np.page);
  HZRAM_CORPUS_OR_SKIP(corpus);
  for (std::size_t i = 0; i < corpus.size(); i += 7 * kPageSize)
    pages.emplace_back(corpus.begin() + i, corpus.begin() + i + kPageSize);

  std::vector<char> wrk(kKernelLz4WorkMem);
  char buf[LZ4_COMPRESSBOUND(kPageSize)];
  for (std::size_t i = 0; i < pages.size(); i++) {
    const char* src = reinterpret_cast<const char*>(pages[i].data());
    const int n = static_cast<int>(kPageSize);
    int len = LZ4_compress_default(src, buf, n, sizeof(buf));
    ExpectAllDecode(reinterpret_cast<std::uint8_t*>(buf), len, pages[i], "liblz4 " + std::to_string(i));
    len = LZ4_compress_fast(src, buf, n, sizeof(buf), 20);
    ExpectAllDecode(reinterpret_cast<std::uint8_t*>(buf), len, pages[i], "liblz4 fast " + std::to_string(i));
    len = LZ4_compress_HC(src, buf, n, sizeof(buf), LZ4HC_CLEVEL_MAX);
    ExpectAllDecode(reinterpret_cast<std::uint8_t*>(buf), len, pages[i], "liblz4 HC " + std::to_string(i));
    len = kernel_LZ4_compress_default(src, buf, n, sizeof(buf), wrk.data());
    ASSERT_GT(len, 0);
    ExpectAllDecode(reinterpret_cast<std::uint8_t*>(buf), len, pages[i], "kernel " + std::to_string(i));
  }
}

TEST_P(PageCodecTest, CorpusRoundTripsAtLiblz4Ratio) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  std::size_t ours = 0, lib = 0;
  char buf[LZ4_COMPRESSBOUND(kPageSize)];
  for (std::size_t off = 0; off < corpus.size(); off += kPageSize) {
    Page page(corpus.begin() + off, corpus.begin() + off + kPageSize);
    std::uint64_t word;
    if (k_->same_filled(page.data(), &word)) continue;
    std::size_t len = RoundTrip(page, "corpus page " + std::to_string(off / kPageSize));
    ours += len ? len : kPageSize;
    int l = LZ4_compress_default(reinterpret_cast<const char*>(page.data()), buf,
                                 static_cast<int>(kPageSize), sizeof(buf));
    lib += std::min<std::size_t>(l, kPageSize);
    if (HasFailure()) return;
  }
  // The target: within 1% of liblz4's ratio, or better.
  EXPECT_LE(ours, lib + lib / 100) << "ours " << ours << " bytes, liblz4 " << lib;
  RecordProperty("compressed_bytes", std::to_string(ours));
}

TEST_P(PageCodecTest, SameOutputAsScalar) {
  // The ISAs differ in how they compare and copy, never in what they emit.
  const PageKernels& scalar = KernelsFor(Isa::kScalar);
  Lz4Table t2;
  HZRAM_CORPUS_OR_SKIP(corpus);
  std::uint8_t a[kCompressBufferSize], b[kCompressBufferSize];
  for (std::size_t off = 0; off < corpus.size(); off += 3 * kPageSize) {
    const std::size_t la = k_->compress(&corpus[off], a, kPageSize, &table_);
    const std::size_t lb = scalar.compress(&corpus[off], b, kPageSize, &t2);
    ASSERT_EQ(la, lb) << off / kPageSize;
    ASSERT_EQ(0, std::memcmp(a, b, la)) << off / kPageSize;
  }
}

TEST_P(PageCodecTest, MalformedBlocksFailCleanly) {
  const Page page = TextPage(17);
  std::uint8_t out[kCompressBufferSize];
  const std::size_t len = k_->compress(page.data(), out, kPageSize, &table_);
  ASSERT_GT(len, 0u);
  Page dst(kPageSize + 64);

  // Truncated: never a whole page.
  for (std::size_t cut = 0; cut < len; cut++) {
    std::vector<std::uint8_t> t(out, out + cut);
    std::fill(dst.begin(), dst.end(), 0xee);
    EXPECT_EQ(-EBADMSG, k_->decompress(t.data(), cut, dst.data())) << "cut at " << cut;
    for (std::size_t i = kPageSize; i < dst.size(); i++) ASSERT_EQ(0xee, dst[i]);
  }
  // Extended with garbage: the block must end where its last literals do.
  std::vector<std::uint8_t> longer(out, out + len);
  longer.push_back(0);
  EXPECT_EQ(-EBADMSG, k_->decompress(longer.data(), longer.size(), dst.data()));
  // Every single-byte change: no crash, no write past the page, and when
  // it still decodes, the decoders agree (LZ4 has no checksum: a changed
  // literal decodes to a changed page).
  for (std::size_t i = 0; i < len; i++) {
    for (std::uint8_t x : {0x01, 0x80, 0xff}) {
      std::vector<std::uint8_t> c(out, out + len);
      c[i] ^= x;
      std::fill(dst.begin(), dst.end(), 0xee);
      const int ret = k_->decompress(c.data(), len, dst.data());
      ASSERT_TRUE(ret == 0 || ret == -EBADMSG);
      for (std::size_t j = kPageSize; j < dst.size(); j++) ASSERT_EQ(0xee, dst[j]);
      Page lib(kPageSize);
      const int lret = LZ4_decompress_safe(reinterpret_cast<const char*>(c.data()),
                                           reinterpret_cast<char*>(lib.data()),
                                           static_cast<int>(len), static_cast<int>(kPageSize));
      if (ret == 0) {
        EXPECT_EQ(static_cast<int>(kPageSize), lret) << "byte " << i;
        EXPECT_EQ(0, std::memcmp(lib.data(), dst.data(), kPageSize)) << "byte " << i;
      }
    }
  }
  // Offsets that reach before the page, and a zero offset.
  const std::uint8_t before[] = {0x10, 'a', 0x05, 0x00, 0x00};      // offset 5 after 1 byte
  EXPECT_EQ(-EBADMSG, k_->decompress(before, sizeof(before), dst.data()));
  const std::uint8_t zero_off[] = {0x10, 'a', 0x00, 0x00, 0x00};
  EXPECT_EQ(-EBADMSG, k_->decompress(zero_off, sizeof(zero_off), dst.data()));
  // A length that runs off the input, and empty input.
  const std::uint8_t runaway[] = {0xf0, 0xff, 0xff};
  EXPECT_EQ(-EBADMSG, k_->decompress(runaway, sizeof(runaway), dst.data()));
  EXPECT_EQ(-EBADMSG, k_->decompress(out, 0, dst.data()));
  // More output than a page.
  std::vector<std::uint8_t> big = {0x1f, 'x', 0x01, 0x00, 0xff, 0xff, 0xff, 0xff,
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x50, 1, 2, 3, 4, 5};
  EXPECT_EQ(-EBADMSG, k_->decompress(big.data(), big.size(), dst.data()));
}

// A valid LZ4 block that decodes to one page, of random sequences: literal
// runs of 0 to 300 bytes, offsets from 1 to the whole page, matches of 4
// to hundreds of bytes, and often a match that runs up to the last bytes
// the format allows, where the decoders' fast paths give way to exact
// copies. *page gets what it decodes to.
std::vector<std::uint8_t> RandomBlock(std::uint64_t seed, Page* page) {
  std::uint64_t s = seed * 0x9e3779b97f4a7c15ull | 1;
  auto below = [&](std::size_t n) { return static_cast<std::size_t>(Next(&s) % n); };
  auto in = [&](std::size_t lo, std::size_t hi) { return lo + below(hi - lo + 1); };
  std::vector<std::uint8_t> blk;
  Page& out = *page;
  out.clear();
  auto length = [&](std::size_t v) {
    for (; v >= 255; v -= 255) blk.push_back(255);
    blk.push_back(static_cast<std::uint8_t>(v));
  };
  auto literals = [&](std::size_t n) {
    const bool zeros = below(4) == 0;
    for (std::size_t i = 0; i < n; i++) {
      const std::uint8_t b = zeros ? 0 : static_cast<std::uint8_t>(Next(&s));
      blk.push_back(b);
      out.push_back(b);
    }
  };
  for (;;) {
    const std::size_t room = kPageSize - out.size();
    // A sequence with a match needs its literals to end kMfLimit bytes or
    // more before the page does, and its match kLastLiterals or more.
    if (room < lz4::kMfLimit + 1 || below(40) == 0) {
      blk.push_back(
          static_cast<std::uint8_t>(std::min<std::size_t>(room, lz4::kRunMask) << lz4::kMlBits));
      if (room >= lz4::kRunMask) length(room - lz4::kRunMask);
      literals(room);
      return blk;
    }
    std::size_t lit;
    switch (below(10)) {
      case 0: case 1: case 2: case 3: case 4: lit = in(0, 3); break;
      case 5: case 6: case 7: lit = in(4, 20); break;
      case 8: lit = in(14, 64); break;
      default: lit = in(0, 300); break;
    }
    lit = std::min<std::size_t>(lit, room - lz4::kMfLimit);
    if (out.empty() && lit == 0) lit = 1;  // a match needs something behind it
    const std::size_t behind = out.size() + lit;
    std::size_t offset;
    switch (below(10)) {
      case 0: case 1: case 2: case 3: offset = in(1, 16); break;
      case 4: case 5: case 6: offset = in(17, 64); break;
      default: offset = in(1, kPageSize); break;
    }
    offset = std::min(offset, behind);
    const std::size_t most = room - lit - lz4::kLastLiterals;
    std::size_t ml;
    switch (below(10)) {
      case 0: case 1: case 2: case 3: ml = in(4, 18); break;
      case 4: case 5: case 6: ml = in(19, 64); break;
      case 7: case 8: ml = in(65, 400); break;
      default: ml = most - std::min<std::size_t>(most, in(0, 40)); break;  // up to the end
    }
    ml = std::clamp<std::size_t>(ml, lz4::kMinMatch, most);
    const std::size_t mcode = ml - lz4::kMinMatch;
    blk.push_back(
        static_cast<std::uint8_t>(std::min<std::size_t>(lit, lz4::kRunMask) << lz4::kMlBits |
                                  std::min<std::size_t>(mcode, lz4::kMlMask)));
    if (lit >= lz4::kRunMask) length(lit - lz4::kRunMask);
    literals(lit);
    blk.push_back(static_cast<std::uint8_t>(offset));
    blk.push_back(static_cast<std::uint8_t>(offset >> 8));
    if (mcode >= lz4::kMlMask) length(mcode - lz4::kMlMask);
    for (std::size_t i = 0; i < ml; i++) out.push_back(out[out.size() - offset]);
  }
}

TEST_P(PageCodecTest, DecodesRandomSequencesExactly) {
  Page page, ref(kPageSize);
  for (std::uint64_t seed = 1; seed <= 3000; seed++) {
    const std::vector<std::uint8_t> blk = RandomBlock(seed, &page);
    ASSERT_EQ(kPageSize, page.size());
    ASSERT_EQ(static_cast<int>(kPageSize),
              LZ4_decompress_safe(reinterpret_cast<const char*>(blk.data()),
                                  reinterpret_cast<char*>(ref.data()),
                                  static_cast<int>(blk.size()), static_cast<int>(kPageSize)))
        << "seed " << seed << ": not a valid block";
    ASSERT_EQ(ref, page) << "seed " << seed;
    // An exact-size copy of the block (any read past it is a bug the
    // sanitizers see), and guard bytes around the page.
    std::unique_ptr<std::uint8_t[]> in(new std::uint8_t[blk.size()]);
    std::memcpy(in.get(), blk.data(), blk.size());
    Page out(kPageSize + 128, 0xee);
    ASSERT_EQ(0, k_->decompress(in.get(), blk.size(), out.data() + 64)) << "seed " << seed;
    ASSERT_EQ(0, std::memcmp(out.data() + 64, page.data(), kPageSize)) << "seed " << seed;
    for (std::size_t i = 0; i < 64; i++) {
      ASSERT_EQ(0xee, out[i]) << "seed " << seed << ": wrote before the page";
      ASSERT_EQ(0xee, out[64 + kPageSize + i]) << "seed " << seed << ": wrote past the page";
    }
    // Cut short, it must fail, without reading past what is left.
    const std::size_t cut = blk.size() - 1 - seed % std::min<std::size_t>(blk.size(), 40);
    std::unique_ptr<std::uint8_t[]> part(new std::uint8_t[cut ? cut : 1]);
    std::memcpy(part.get(), blk.data(), cut);
    EXPECT_EQ(-EBADMSG, k_->decompress(part.get(), cut, out.data() + 64)) << "seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, PageCodecTest,
                         ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512), IsaParamName);

TEST(IsaTest, NamesParseBack) {
  for (int i = 0; i < kIsaCount; i++) {
    Isa isa;
    ASSERT_EQ(0, ParseIsa(IsaName(static_cast<Isa>(i)), &isa));
    EXPECT_EQ(static_cast<Isa>(i), isa);
  }
  Isa isa;
  EXPECT_EQ(-EINVAL, ParseIsa("sse9", &isa));
  EXPECT_EQ(-EINVAL, ParseIsa("", &isa));
}

TEST(IsaTest, BestIsSupportedAndScalarAlwaysIs) {
  EXPECT_TRUE(IsaSupported(Isa::kScalar));
  EXPECT_TRUE(IsaSupported(BestIsa()));
  EXPECT_EQ(IsaTrialResult().best, BestIsa());
}

TEST(IsaTest, TrialMeasuresEverySupportedIsaAndPicksTheFastest) {
  const IsaTrial& t = IsaTrialResult();
  EXPECT_EQ(&t, &IsaTrialResult()) << "the trial runs once";
  for (int i = 0; i < kIsaCount; i++) {
    const Isa isa = static_cast<Isa>(i);
    if (IsaSupported(isa)) {
      EXPECT_GT(t.compress_gbs[i], 0.01) << IsaName(isa);
      EXPECT_GT(t.decompress_gbs[i], 0.01) << IsaName(isa);
      EXPECT_LT(t.compress_gbs[i], 1000) << IsaName(isa);
      EXPECT_LT(t.decompress_gbs[i], 1000) << IsaName(isa);
    } else {
      EXPECT_EQ(0, t.compress_gbs[i]) << IsaName(isa);
      EXPECT_EQ(0, t.decompress_gbs[i]) << IsaName(isa);
    }
  }
  EXPECT_TRUE(IsaSupported(t.choice.compress));
  EXPECT_TRUE(IsaSupported(t.choice.decompress));
  EXPECT_TRUE(IsaSupported(t.best));
  // The choice is the fastest, unless a narrower one is within 2%.
  for (int i = 0; i < kIsaCount; i++) {
    EXPECT_GE(t.compress_gbs[static_cast<int>(t.choice.compress)] * 1.02, t.compress_gbs[i]) << i;
    EXPECT_GE(t.decompress_gbs[static_cast<int>(t.choice.decompress)] * 1.02, t.decompress_gbs[i]) << i;
  }
  // A few milliseconds where the machine is quiet; generous here, where
  // it may not be.
  EXPECT_GT(t.seconds, 0);
  EXPECT_LT(t.seconds, 0.5);
  const std::string summary = IsaTrialSummary();
  for (int i = 0; i < kIsaCount; i++)
    EXPECT_NE(std::string::npos, summary.find(IsaName(static_cast<Isa>(i)))) << summary;
}

TEST(IsaTest, DefaultIsasAreTheTrialsUnlessForced) {
  SavedIsaEnv saved;
  unsetenv("HZRAM_ISA");
  IsaChoice c;
  std::string why;
  ASSERT_EQ(0, DefaultIsas(&c, &why));
  EXPECT_EQ(IsaTrialResult().choice.compress, c.compress);
  EXPECT_EQ(IsaTrialResult().choice.decompress, c.decompress);
  EXPECT_EQ(IsaTrialSummary(), why);
  for (int i = 0; i < kIsaCount; i++) {
    const Isa want = static_cast<Isa>(i);
    setenv("HZRAM_ISA", IsaName(want), 1);
    if (IsaSupported(want)) {
      ASSERT_EQ(0, DefaultIsas(&c, &why));
      EXPECT_EQ(want, c.compress);
      EXPECT_EQ(want, c.decompress);
      EXPECT_EQ(std::string("HZRAM_ISA=") + IsaName(want), why);
    } else {
      EXPECT_EQ(-ENOTSUP, DefaultIsas(&c, &why));
    }
  }
  setenv("HZRAM_ISA", "nonsense", 1);
  EXPECT_EQ(-EINVAL, DefaultIsas(&c));
  unsetenv("HZRAM_ISA");
}

TEST(IsaTest, EnvironmentForcesTheIsa) {
  SavedIsaEnv saved;
  Isa isa;
  setenv("HZRAM_ISA", "scalar", 1);
  EXPECT_EQ(0, DefaultIsa(&isa));
  EXPECT_EQ(Isa::kScalar, isa);
  setenv("HZRAM_ISA", "nonsense", 1);
  EXPECT_EQ(-EINVAL, DefaultIsa(&isa));
  for (int i = 0; i < kIsaCount; i++) {
    const Isa want = static_cast<Isa>(i);
    setenv("HZRAM_ISA", IsaName(want), 1);
    if (IsaSupported(want)) {
      EXPECT_EQ(0, DefaultIsa(&isa));
      EXPECT_EQ(want, isa);
    } else {
      EXPECT_EQ(-ENOTSUP, DefaultIsa(&isa));
    }
  }
  unsetenv("HZRAM_ISA");
  EXPECT_EQ(0, DefaultIsa(&isa));
  EXPECT_EQ(BestIsa(), isa);
}

}  // namespace
}  // namespace hzram::test

// The library's synthetic pages (hzram/pages.h).
namespace {

TEST(PagesTest, SameSeedSameBytes) {
  constexpr std::size_t n = 2 * hzram::kMixedCycle;
  std::vector<std::uint8_t> a(n * hzram::kPageSize), b(a.size()), c(a.size());
  hzram::MakeMixedPages(a.data(), n, 7);
  hzram::MakeMixedPages(b.data(), n, 7);
  hzram::MakeMixedPages(c.data(), n, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // The second cycle is not the first again.
  EXPECT_NE(0, std::memcmp(a.data(), a.data() + hzram::kMixedCycle * hzram::kPageSize,
                           hzram::kMixedCycle * hzram::kPageSize));
}

TEST(PagesTest, KindsCompressAsTheyShould) {
  const hzram::PageKernels& k = hzram::KernelsFor(hzram::Isa::kScalar);
  hzram::Lz4Table table;
  std::vector<std::uint8_t> page(hzram::kPageSize), out(hzram::kCompressBufferSize);
  hzram::PageRng rng(1);
  auto size = [&](hzram::PageKind kind, std::size_t record) {
    hzram::MakePage(kind, page.data(), &rng, record);
    return k.compress(page.data(), out.data(), hzram::kPageSize, &table);
  };
  // compress() gives 0 for a page that does not compress.
  EXPECT_EQ(0u, size(hzram::PageKind::kRandom, 0));
  auto within = [](std::size_t n, std::size_t most) { return n > 0 && n < most; };
  EXPECT_TRUE(within(size(hzram::PageKind::kText, 0), hzram::kPageSize * 3 / 4));
  EXPECT_TRUE(within(size(hzram::PageKind::kStrings, 0), hzram::kPageSize));
  EXPECT_TRUE(within(size(hzram::PageKind::kSparse, 0), hzram::kPageSize / 4));
  EXPECT_TRUE(within(size(hzram::PageKind::kEmpty, 0), hzram::kPageSize / 16));
  for (std::size_t r : {8ul, 24ul, 256ul})
    EXPECT_TRUE(within(size(hzram::PageKind::kRecords, r), hzram::kPageSize)) << r;
}

}  // namespace
