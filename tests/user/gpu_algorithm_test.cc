// SPDX-License-Identifier: GPL-2.0
// The GPU codec's per-page algorithms (userhelper/lib/gpu/lz4_warp.h), run on the host
// by HostLanes: what the kernels compute, checked on any machine, for
// both versions of the compressor (1: CompressPageWarp; 2:
// CompressPageSegments) and the decoder (DecompressPageWarp). Blocks they
// make must decode with the CPU codec, liblz4, the kernel's LZ4 and the
// GPU decoder; it must decode theirs; their ratio must be within 2% of the
// CPU codec's; malformed blocks must fail exactly as they do in the CPU
// decoder.
#include <gtest/gtest.h>
#include <lz4.h>
#include <lz4hc.h>

#include <cerrno>
#include <memory>

#include "gpu/lz4_warp.h"
#include "hzram/page_codec.h"
#include "page_codec_isa.h"
#include "test_util.h"

namespace hzram::test {
namespace {

struct Encoded {
  gpu::PageKind kind;
  std::uint32_t len = 0;
  std::uint64_t word = 0;
  std::vector<std::uint8_t> data;
};

Encoded GpuCompress(int version, const std::uint8_t* page) {
  static auto scratch1 = std::make_unique<gpu::CompressScratch>();
  static auto scratch2 = std::make_unique<gpu::SegmentScratch>();
  gpu::HostLanes lanes;
  Encoded e;
  e.data.assign(gpu::kPage, 0xee);
  e.kind = version == 1
               ? gpu::CompressPageWarp(lanes, *scratch1, page, e.data.data(), &e.len, &e.word)
               : gpu::CompressPageSegments(lanes, *scratch2, page, e.data.data(), &e.len, &e.word);
  return e;
}

int GpuDecompress(const std::uint8_t* src, std::size_t len, std::uint8_t* dst) {
  static auto scratch = std::make_unique<gpu::DecompressScratch>();
  gpu::HostLanes lanes;
  return gpu::DecompressPageWarp(lanes, *scratch, src, static_cast<std::uint32_t>(len), dst);
}

// The tests of the compressor, for each version.
class GpuAlgorithmTest : public ::testing::TestWithParam<int> {
 protected:
  Encoded GpuCompress(const std::uint8_t* page) { return test::GpuCompress(GetParam(), page); }
};

// Every decoder must give @page back from the block.
void ExpectDecodes(const Encoded& e, const Page& page, const std::string& what) {
  ASSERT_EQ(gpu::PageKind::kLz4, e.kind) << what;
  ASSERT_LT(e.len, gpu::kPage) << what;
  Page out(kPageSize);
  ASSERT_EQ(0, KernelsFor(Isa::kScalar).decompress(e.data.data(), e.len, out.data())) << what;
  EXPECT_EQ(out, page) << what << ": CPU codec";
  ASSERT_EQ(static_cast<int>(kPageSize),
            LZ4_decompress_safe(reinterpret_cast<const char*>(e.data.data()),
                                reinterpret_cast<char*>(out.data()), e.len, kPageSize))
      << what << ": liblz4";
  EXPECT_EQ(out, page) << what << ": liblz4";
  ASSERT_EQ(static_cast<int>(kPageSize),
            kernel_LZ4_decompress_safe(reinterpret_cast<const char*>(e.data.data()),
                                       reinterpret_cast<char*>(out.data()), e.len, kPageSize))
      << what << ": kernel";
  EXPECT_EQ(out, page) << what << ": kernel";
  std::fill(out.begin(), out.end(), 0);
  ASSERT_EQ(0, GpuDecompress(e.data.data(), e.len, out.data())) << what;
  EXPECT_EQ(out, page) << what << ": GPU decoder";
}

TEST_P(GpuAlgorithmTest, BoundaryPagesRoundTrip) {
  for (const auto& [name, page] : BoundaryPages()) {
    const Encoded e = GpuCompress(page.data());
    std::uint64_t word;
    if (KernelsFor(Isa::kScalar).same_filled(page.data(), &word)) {
      EXPECT_EQ(gpu::PageKind::kSame, e.kind) << name;
      EXPECT_EQ(word, e.word) << name;
    } else if (e.kind == gpu::PageKind::kRaw) {
      EXPECT_EQ(0, std::memcmp(e.data.data(), page.data(), kPageSize)) << name;
      // Raw only when the CPU codec cannot compress it either.
      std::uint8_t out[kCompressBufferSize];
      Lz4Table table;
      EXPECT_EQ(0u, KernelsFor(Isa::kScalar).compress(page.data(), out, kPageSize, &table)) << name;
    } else {
      ExpectDecodes(e, page, name);
    }
  }
}

// Every fifth page of the corpus, for each version: the whole of it took
// 18 s of the unit tests' 40 (the GPU's algorithms, run here page by page
// on the CPU, are slow there). The ratios measured are in
// Documentation/gpu.rst.
TEST_P(GpuAlgorithmTest, CorpusWithinTwoPercentOfTheCpuCodec) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  std::size_t gpu = 0, cpu = 0;
  Lz4Table table;
  std::uint8_t out[kCompressBufferSize];
  const PageKernels& k = KernelsFor(Isa::kScalar);
  for (std::size_t off = 0; off < corpus.size(); off += 5 * kPageSize) {
    const Page page(corpus.begin() + off, corpus.begin() + off + kPageSize);
    const Encoded e = GpuCompress(page.data());
    std::uint64_t word;
    if (k.same_filled(page.data(), &word)) {
      ASSERT_EQ(gpu::PageKind::kSame, e.kind);
      continue;
    }
    if (e.kind == gpu::PageKind::kLz4) {
      if (off % (65 * kPageSize) == 0) {
        ExpectDecodes(e, page, "corpus page " + std::to_string(off / kPageSize));
      }
      gpu += e.len;
    } else {
      ASSERT_EQ(gpu::PageKind::kRaw, e.kind);
      gpu += kPageSize;
    }
    const std::size_t len = k.compress(page.data(), out, kPageSize, &table);
    cpu += len ? len : kPageSize;
    if (HasFailure()) return;
  }
  RecordProperty("gpu_bytes", std::to_string(gpu));
  RecordProperty("cpu_bytes", std::to_string(cpu));
  EXPECT_LE(gpu, cpu + cpu / 50) << "GPU " << gpu << " bytes, CPU codec " << cpu;
  std::printf("corpus: GPU algorithm %d %zu bytes, CPU codec %zu bytes (%+.2f%%)\n", GetParam(), gpu, cpu,
              100.0 * (static_cast<double>(gpu) / cpu - 1));
}

TEST(GpuDecoderTest, DecodesWhatOthersEncode) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  std::vector<char> wrk(kKernelLz4WorkMem), buf(LZ4_COMPRESSBOUND(kPageSize));
  Lz4Table table;
  std::uint8_t cpu_out[kCompressBufferSize];
  Page out(kPageSize);
  for (std::size_t off = 0; off < corpus.size(); off += 97 * kPageSize) {
    const Page page(corpus.begin() + off, corpus.begin() + off + kPageSize);
    const char* src = reinterpret_cast<const char*>(page.data());
    std::vector<std::pair<std::string, std::vector<std::uint8_t>>> blocks;
    int len = LZ4_compress_default(src, buf.data(), kPageSize, buf.size());
    blocks.push_back({"liblz4", {buf.begin(), buf.begin() + len}});
    len = LZ4_compress_HC(src, buf.data(), kPageSize, buf.size(), LZ4HC_CLEVEL_MAX);
    blocks.push_back({"liblz4 HC", {buf.begin(), buf.begin() + len}});
    len = kernel_LZ4_compress_default(src, buf.data(), kPageSize, buf.size(), wrk.data());
    blocks.push_back({"kernel", {buf.begin(), buf.begin() + len}});
    const std::size_t clen = KernelsFor(Isa::kScalar).compress(page.data(), cpu_out, kPageSize, &table);
    if (clen) blocks.push_back({"CPU codec", {cpu_out, cpu_out + clen}});
    for (const auto& [who, block] : blocks) {
      if (block.size() >= kPageSize) continue;
      std::fill(out.begin(), out.end(), 0);
      ASSERT_EQ(0, GpuDecompress(block.data(), block.size(), out.data())) << who << " page " << off / kPageSize;
      ASSERT_EQ(out, page) << who << " page " << off / kPageSize;
    }
  }
}

TEST_P(GpuAlgorithmTest, MalformedBlocksFailAsInTheCpuDecoder) {
  const Page page = TextPage(23);
  const Encoded e = GpuCompress(page.data());
  ASSERT_EQ(gpu::PageKind::kLz4, e.kind);
  const PageKernels& k = KernelsFor(Isa::kScalar);
  Page a(kPageSize), b(kPageSize);
  // Truncations, and every byte changed three ways: the same verdict, and
  // the same page when both accept.
  for (std::uint32_t cut = 1; cut < e.len; cut += 7) {
    EXPECT_EQ(-EBADMSG, GpuDecompress(e.data.data(), cut, a.data())) << "cut " << cut;
  }
  std::uint64_t s = 5;
  for (std::uint32_t i = 0; i < e.len; i++) {
    std::vector<std::uint8_t> c(e.data.begin(), e.data.begin() + e.len);
    c[i] ^= static_cast<std::uint8_t>(1 + Next(&s) % 255);
    const int want = k.decompress(c.data(), c.size(), a.data());
    const int got = GpuDecompress(c.data(), c.size(), b.data());
    ASSERT_EQ(want, got) << "byte " << i;
    if (want == 0) {
      ASSERT_EQ(a, b) << "byte " << i;
    }
  }
  EXPECT_EQ(-EBADMSG, GpuDecompress(e.data.data(), 0, a.data()));
  EXPECT_EQ(-EBADMSG, GpuDecompress(e.data.data(), kPageSize, a.data()));
}

TEST(GpuDecoderTest, RandomPagesAgreeWithTheCpuDecoderOnGarbage) {
  // Random bytes as blocks: both decoders reject or accept alike.
  const PageKernels& k = KernelsFor(Isa::kScalar);
  Page a(kPageSize), b(kPageSize);
  std::uint64_t s = 77;
  for (int n = 0; n < 2000; n++) {
    std::vector<std::uint8_t> blk(1 + Next(&s) % 300);
    for (auto& x : blk) x = static_cast<std::uint8_t>(Next(&s));
    if (n % 3 == 0) blk[0] = 0xf0;  // long literal runs
    const int want = k.decompress(blk.data(), blk.size(), a.data());
    ASSERT_EQ(want, GpuDecompress(blk.data(), blk.size(), b.data())) << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, GpuAlgorithmTest, ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return p.param == 1 ? std::string("stepwise") : std::string("segmented");
                         });

}  // namespace
}  // namespace hzram::test
