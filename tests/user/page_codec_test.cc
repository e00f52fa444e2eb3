// SPDX-License-Identifier: GPL-2.0
// The single-page LZ4 codec of every ISA: boundary pages, the corpus,
// cross-decoding with liblz4 and with the kernel's LZ4, the output limit,
// and malformed blocks.
#include <gtest/gtest.h>
#include <lz4.h>
#include <lz4hc.h>

#include <cerrno>

#include "hzram/page_codec.h"
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
  if (IsaSupported(Isa::kAvx512)) {
    EXPECT_EQ(Isa::kAvx512, BestIsa());
  }
}

TEST(IsaTest, EnvironmentForcesTheIsa) {
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
