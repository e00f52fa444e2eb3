// SPDX-License-Identifier: GPL-2.0
// The CUDA backend on a real GPU. Every test skips, saying why, where no
// usable CUDA device is present; the algorithm itself is tested on the
// host by gpu_algorithm_test.cc.
#include <gtest/gtest.h>
#include <lz4.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <thread>

#include "gpu/gpu_testing.h"
#include "gpu/lz4_warp.h"
#include "hzram/gpu_codec.h"
#include "page_codec_isa.h"
#include "test_util.h"

namespace hzram::test {
namespace {

class GpuCodecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!GpuAvailable(0, &why)) GTEST_SKIP() << "no usable CUDA device: " << why;
    codec_ = Make(GpuOptions());
    ASSERT_TRUE(codec_);
  }

  // A codec, with @faults if given.
  std::unique_ptr<GpuCodec> Make(const GpuOptions& o, const GpuFaults* faults = nullptr) {
    int err = 0;
    std::string why;
    auto c = faults ? GpuCodecTestPeer::Create(o, *faults, &err, &why)
                    : GpuCodec::Create(o, &err, &why);
    EXPECT_TRUE(c) << err << " " << why;
    return c;
  }

  // Compress @n pages at @pages on the GPU (@codec, else codec_); check
  // every record against the host run of the same algorithm and against
  // liblz4; decode on the GPU and compare.
  void RoundTrip(const std::uint8_t* pages, std::size_t n, GpuCodec* codec = nullptr,
                 unsigned version = GpuOptions().compress_kernel) {
    if (!codec) codec = codec_.get();
    std::vector<hzram_page_record> rec(n);
    std::vector<std::uint8_t> arena(Codec::ArenaBytes(n)), out(n * kPageSize, 0xcc);
    std::vector<int> status(n, 1);
    BatchTiming t;
    ASSERT_EQ(0, codec->Compress(PageList(pages, n), rec, arena, &t));
    EXPECT_GT(t.kernel_ms, 0);
    EXPECT_GE(t.wait_ms, 0);
    EXPECT_GE(t.total_ms, t.host_ms + t.h2d_ms + t.kernel_ms + t.d2h_ms + t.wait_ms - 1e-3);
    EXPECT_EQ(n * kPageSize, t.h2d_bytes);
    // Compacted on the device: the records and the bytes they use, packed
    // in page order, are all that comes back.
    std::uint64_t used = 0;
    for (std::size_t i = 0; i < n; i++) {
      if (rec[i].kind == HZRAM_PAGE_SAME) continue;
      ASSERT_EQ(used, rec[i].value) << i;
      used += rec[i].length;
    }
    EXPECT_EQ(n * sizeof(hzram_page_record) + used, t.d2h_bytes);
    auto scratch1 = std::make_unique<gpu::CompressScratch>();
    auto scratch2 = std::make_unique<gpu::SegmentScratch>();
    std::vector<std::uint8_t> host(gpu::kPage);
    for (std::size_t i = 0; i < n; i++) {
      gpu::HostLanes lanes;
      std::uint32_t len = 0;
      std::uint64_t word = 0;
      const std::uint8_t* page = pages + i * kPageSize;
      const gpu::PageKind kind =
          version == 1 ? gpu::CompressPageWarp(lanes, *scratch1, page, host.data(), &len, &word)
                       : gpu::CompressPageSegments(lanes, *scratch2, page, host.data(), &len, &word);
      ASSERT_EQ(static_cast<int>(kind), rec[i].kind) << i;
      if (kind == gpu::PageKind::kSame) {
        ASSERT_EQ(word, rec[i].value) << i;
        continue;
      }
      if (kind == gpu::PageKind::kLz4) {
        // The GPU ran the same code as the host: the same bytes.
        ASSERT_EQ(len, rec[i].length) << i;
        ASSERT_EQ(0, std::memcmp(host.data(), &arena[rec[i].value], len)) << i;
        std::vector<char> lib(kPageSize);
        ASSERT_EQ(static_cast<int>(kPageSize),
                  LZ4_decompress_safe(reinterpret_cast<const char*>(&arena[rec[i].value]), lib.data(),
                                      len, kPageSize));
        ASSERT_EQ(0, std::memcmp(lib.data(), pages + i * kPageSize, kPageSize)) << i;
      }
    }
    ASSERT_EQ(0, codec->Decompress(rec, arena, MutablePageList(out.data(), n), status));
    for (std::size_t i = 0; i < n; i++) ASSERT_EQ(0, status[i]) << i;
    ASSERT_EQ(0, std::memcmp(out.data(), pages, n * kPageSize));
  }

  void BoundaryPagesOn(GpuCodec* codec, unsigned version) {
    std::vector<std::uint8_t> pages;
    for (const auto& np : BoundaryPages()) pages.insert(pages.end(), np.page.begin(), np.page.end());
    RoundTrip(pages.data(), pages.size() / kPageSize, codec, version);
  }

  std::unique_ptr<GpuCodec> codec_;
};

TEST_F(GpuCodecTest, BoundaryPagesRoundTrip) { BoundaryPagesOn(codec_.get(), GpuOptions().compress_kernel); }

TEST_F(GpuCodecTest, CorpusMatchesTheHostAlgorithm) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  for (std::size_t first = 0; first < corpus.size() / kPageSize; first += 4096)
    RoundTrip(&corpus[first * kPageSize], std::min<std::size_t>(4096, corpus.size() / kPageSize - first));
}

// The first version of the compression kernel (GpuOptions::
// compress_kernel 1), on a quarter of the corpus.
TEST_F(GpuCodecTest, StepwiseKernelsMatchTheHostAlgorithm) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  GpuOptions o;
  o.compress_kernel = 1;
  auto v1 = Make(o);
  ASSERT_TRUE(v1);
  RoundTrip(corpus.data(), std::min<std::size_t>(4096, corpus.size() / kPageSize), v1.get(), 1);
  BoundaryPagesOn(v1.get(), 1);
}

TEST_F(GpuCodecTest, DecodesWhatTheCpuCodecAndLiblz4Encode) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  const std::size_t n = 2048;
  std::vector<hzram_page_record> rec(n);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(n)), out(n * kPageSize);
  std::vector<int> status(n);
  auto cpu = Codec::Create(CodecOptions());
  ASSERT_EQ(0, cpu->Compress(PageList(corpus.data(), n), rec, arena));
  ASSERT_EQ(0, codec_->Decompress(rec, arena, MutablePageList(out.data(), n), status));
  EXPECT_EQ(0, std::memcmp(out.data(), corpus.data(), n * kPageSize));
  // liblz4's blocks, one per page slot.
  for (std::size_t i = 0; i < n; i++) {
    const int len = LZ4_compress_default(reinterpret_cast<const char*>(&corpus[i * kPageSize]),
                                         reinterpret_cast<char*>(&arena[i * kPageSize]), kPageSize,
                                         kPageSize - 1);
    rec[i] = len > 0 ? hzram_page_record{i * kPageSize, static_cast<std::uint32_t>(len), HZRAM_PAGE_LZ4, 0}
                     : hzram_page_record{i * kPageSize, kPageSize, HZRAM_PAGE_RAW, 0};
    if (len <= 0) std::memcpy(&arena[i * kPageSize], &corpus[i * kPageSize], kPageSize);
  }
  ASSERT_EQ(0, codec_->Decompress(rec, arena, MutablePageList(out.data(), n), status));
  EXPECT_EQ(0, std::memcmp(out.data(), corpus.data(), n * kPageSize));
}

TEST_F(GpuCodecTest, CorruptRecordsFailOnlyTheirPage) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  const std::size_t n = 64;
  std::vector<hzram_page_record> rec(n);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(n)), out(n * kPageSize);
  std::vector<int> status(n);
  ASSERT_EQ(0, codec_->Compress(PageList(corpus.data(), n), rec, arena));
  std::size_t lz4 = 0;
  while (rec[lz4].kind != HZRAM_PAGE_LZ4) lz4++;
  std::size_t data = lz4 + 2;  // a page with data in the arena
  while (rec[data].kind == HZRAM_PAGE_SAME) data++;
  std::size_t zstd = data + 1;  // an LZ4 block labelled as a zstd frame
  while (rec[zstd].kind != HZRAM_PAGE_LZ4) zstd++;
  rec[lz4].length -= 1;  // truncated
  rec[lz4 + 1].kind = 9;
  rec[data].value = arena.size();
  rec[zstd].kind = HZRAM_PAGE_ZSTD;  // the module's to decode
  EXPECT_EQ(4, codec_->Decompress(rec, arena, MutablePageList(out.data(), n), status));
  EXPECT_EQ(-EBADMSG, status[lz4]);
  EXPECT_EQ(-EINVAL, status[lz4 + 1]);
  EXPECT_EQ(-EINVAL, status[data]);
  EXPECT_EQ(-EINVAL, status[zstd]);
  for (std::size_t i = 0; i < n; i++) {
    if (i == lz4 || i == lz4 + 1 || i == data || i == zstd) continue;
    ASSERT_EQ(0, status[i]) << i;
    ASSERT_EQ(0, std::memcmp(&out[i * kPageSize], &corpus[i * kPageSize], kPageSize)) << i;
  }
}

TEST_F(GpuCodecTest, ThousandsOfBatchesThroughTheRing) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  const std::size_t total = corpus.size() / kPageSize, slots = 3;
  struct Batch {
    std::size_t first, n;
    std::vector<hzram_page_record> rec;
    std::vector<std::uint8_t> arena;
    int ticket = -1;
  };
  std::vector<Batch> ring(slots);
  std::uint64_t s = 1;
  std::size_t checked = 0;
  for (int b = 0; b < 3000 + static_cast<int>(slots); b++) {
    Batch& x = ring[b % slots];
    if (x.ticket >= 0) {
      ASSERT_EQ(0, codec_->Wait(x.ticket, nullptr)) << b;
      std::vector<std::uint8_t> out(x.n * kPageSize);
      std::vector<int> status(x.n);
      auto cpu = KernelsFor(Isa::kScalar);
      for (std::size_t i = 0; i < x.n; i++) {
        const auto& r = x.rec[i];
        if (r.kind == HZRAM_PAGE_SAME) continue;
        if (r.kind == HZRAM_PAGE_LZ4)
          ASSERT_EQ(0, cpu.decompress(&x.arena[r.value], r.length, &out[i * kPageSize]));
        else
          std::memcpy(&out[i * kPageSize], &x.arena[r.value], kPageSize);
        ASSERT_EQ(0, std::memcmp(&out[i * kPageSize], &corpus[(x.first + i) * kPageSize], kPageSize));
      }
      checked++;
      x.ticket = -1;
    }
    if (b >= 3000) continue;
    x.n = 1 + Next(&s) % 256;
    x.first = Next(&s) % (total - x.n);
    x.rec.resize(x.n);
    x.arena.resize(Codec::ArenaBytes(x.n));
    x.ticket = codec_->SubmitCompress(PageList(&corpus[x.first * kPageSize], x.n), x.rec, x.arena);
    ASSERT_GE(x.ticket, 0) << b;
  }
  EXPECT_EQ(3000u, checked);
  EXPECT_EQ(3000u, codec_->stats().batches);  // (Create resets the stats after its test batch)
}

// A batch whose kernel faults (a real illegal address), in a hybrid
// codec: every page still comes back, the GPU is disabled with a reason.
void FaultRun() {
  GpuFaults f;
  f.fault_at_batch = 19;
  int err = 0;
  std::string why;
  auto faulty = GpuCodecTestPeer::Create(GpuOptions(), f, &err, &why);
  ASSERT_TRUE(faulty) << err << " " << why;
  // One CPU thread, so that the GPU surely gets a share of every batch;
  // calibration makes the first 18 compressions (6 runs of 3 sizes), the
  // loop's first compression is the 19th.
  CodecOptions co;
  co.threads = 1;
  auto cpu = Codec::Create(co);
  HybridCodec h(cpu.get(), faulty.get());
  const auto& corpus = Corpus();
  ASSERT_FALSE(corpus.empty());
  ASSERT_EQ(0, h.Calibrate(PageList(corpus.data(), 512)));
  const std::size_t n = 4096;
  std::vector<hzram_page_record> rec(n);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(n)), out(n * kPageSize);
  std::vector<int> status(n);
  for (int b = 0; b < 4; b++) {
    ASSERT_EQ(0, h.Compress(PageList(&corpus[b * n * kPageSize], n), rec, arena));
    ASSERT_EQ(0, h.Decompress(rec, arena, MutablePageList(out.data(), n), status));
    ASSERT_EQ(0, std::memcmp(out.data(), &corpus[b * n * kPageSize], n * kPageSize)) << b;
  }
  EXPECT_FALSE(faulty->healthy());
  EXPECT_FALSE(h.backend_enabled());
  EXPECT_NE(std::string::npos, h.backend_why().find("cuda")) << h.backend_why();
  // The codec that failed is torn down without a crash (its destructor).
}

TEST_F(GpuCodecTest, AFaultFallsBackToTheCpuWithEveryPageIntact) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  // A device fault is sticky: it leaves the process's CUDA context
  // unusable. So it runs in a process of its own (re-executed, not forked,
  // as CUDA does not survive fork), and the other tests keep the GPU.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        FaultRun();
        std::exit(::testing::Test::HasFailure() ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(GpuCodecTest, RegisteredMemoryGoesStraightToTheDevice) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  const std::size_t n = 1024;
  std::vector<std::uint8_t> pages(&corpus[0], &corpus[n * kPageSize]);
  std::vector<hzram_page_record> rec(n), rec2(n);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(n)), arena2(Codec::ArenaBytes(n));
  std::vector<std::uint8_t> out(n * kPageSize);
  std::vector<int> status(n);
  ASSERT_EQ(0, codec_->Compress(PageList(pages.data(), n), rec, arena));
  EXPECT_EQ(0u, codec_->stats().direct);
  ASSERT_EQ(0, codec_->RegisterHostMemory(pages.data(), pages.size()));
  ASSERT_EQ(0, codec_->RegisterHostMemory(arena2.data(), arena2.size()));
  EXPECT_EQ(-EINVAL, codec_->RegisterHostMemory(pages.data() + kPageSize, kPageSize)) << "overlaps";
  EXPECT_EQ(-EINVAL, codec_->RegisterHostMemory(nullptr, kPageSize));
  // The same output, read from the caller's memory.
  ASSERT_EQ(0, codec_->Compress(PageList(pages.data(), n), rec2, arena2));
  EXPECT_EQ(1u, codec_->stats().direct);
  for (std::size_t i = 0; i < n; i++) {
    ASSERT_EQ(rec[i].kind, rec2[i].kind) << i;
    ASSERT_EQ(rec[i].value, rec2[i].value) << i;
    ASSERT_EQ(rec[i].length, rec2[i].length) << i;
  }
  ASSERT_EQ(0, std::memcmp(arena.data(), arena2.data(), arena.size()));
  EXPECT_EQ(1u, codec_->stats().direct_out) << "the packed bytes, into the registered arena";
  // A decompression from the registered arena into unregistered pages,
  // then into registered ones.
  ASSERT_EQ(0, codec_->Decompress(rec2, arena2, MutablePageList(out.data(), n), status));
  EXPECT_EQ(2u, codec_->stats().direct);
  EXPECT_EQ(1u, codec_->stats().direct_out);
  ASSERT_EQ(0, std::memcmp(out.data(), pages.data(), out.size()));
  ASSERT_EQ(0, codec_->RegisterHostMemory(out.data(), out.size()));
  std::memset(out.data(), 0xcc, out.size());
  ASSERT_EQ(0, codec_->Decompress(rec2, arena2, MutablePageList(out.data(), n), status));
  EXPECT_EQ(3u, codec_->stats().direct);
  EXPECT_EQ(2u, codec_->stats().direct_out);
  ASSERT_EQ(0, std::memcmp(out.data(), pages.data(), out.size()));
  EXPECT_EQ(0, codec_->UnregisterHostMemory(out.data()));
  // A list of pointers is staged, registered or not.
  std::vector<const void*> ptrs(n);
  for (std::size_t i = 0; i < n; i++) ptrs[i] = &pages[(n - 1 - i) * kPageSize];
  ASSERT_EQ(0, codec_->Compress(PageList(ptrs.data(), n), rec, arena));
  EXPECT_EQ(3u, codec_->stats().direct);
  ASSERT_EQ(0, codec_->Decompress(rec, arena, MutablePageList(out.data(), n), status));
  for (std::size_t i = 0; i < n; i++)
    ASSERT_EQ(0, std::memcmp(&out[i * kPageSize], ptrs[i], kPageSize)) << i;
  EXPECT_EQ(0, codec_->UnregisterHostMemory(pages.data()));
  EXPECT_EQ(0, codec_->UnregisterHostMemory(arena2.data()));
  EXPECT_EQ(-EINVAL, codec_->UnregisterHostMemory(pages.data()));
}

// The time a batch's results wait for the caller to look (the copy back
// starts then) is wait_ms, not the copies' nor the kernels': the hybrid
// codec's model leaves it out of the device's time.
TEST_F(GpuCodecTest, TheWaitForTheCallerIsTimedApart) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  const std::size_t n = 1024;
  std::vector<hzram_page_record> rec(n);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(n)), out(n * kPageSize);
  std::vector<int> status(n);
  BatchTiming quick, late;
  ASSERT_EQ(0, codec_->Compress(PageList(corpus.data(), n), rec, arena, &quick));
  const int ticket = codec_->SubmitCompress(PageList(corpus.data(), n), rec, arena);
  ASSERT_GE(ticket, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the kernels end meanwhile
  ASSERT_EQ(0, codec_->Wait(ticket, &late));
  EXPECT_GE(late.wait_ms, 40) << "kernels " << late.kernel_ms << " ms";
  EXPECT_LT(late.d2h_ms, 10);
  EXPECT_LT(late.kernel_ms, 10);
  EXPECT_GE(late.total_ms, late.h2d_ms + late.kernel_ms + late.d2h_ms + late.wait_ms - 1e-3);
  EXPECT_LT(quick.wait_ms, 10);
  // A decompression's the same way.
  const int dticket = codec_->SubmitDecompress(rec, arena, MutablePageList(out.data(), n), status);
  ASSERT_GE(dticket, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(0, codec_->Wait(dticket, &late));
  EXPECT_GE(late.wait_ms, 40);
  EXPECT_LT(late.d2h_ms, 10);
  ASSERT_EQ(0, std::memcmp(out.data(), corpus.data(), out.size()));
}

TEST_F(GpuCodecTest, StagingThreadsGiveTheSameOutput) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  const std::size_t n = 4096;
  std::vector<hzram_page_record> rec[2] = {std::vector<hzram_page_record>(n), std::vector<hzram_page_record>(n)};
  std::vector<std::uint8_t> arena[2] = {std::vector<std::uint8_t>(Codec::ArenaBytes(n)),
                                        std::vector<std::uint8_t>(Codec::ArenaBytes(n))};
  for (unsigned threads : {1u, 7u}) {
    GpuOptions o;
    o.staging_threads = threads;
    auto c = Make(o);
    ASSERT_TRUE(c);
    const int k = threads == 1 ? 0 : 1;
    ASSERT_EQ(0, c->Compress(PageList(corpus.data(), n), rec[k], arena[k]));
    std::vector<std::uint8_t> out(n * kPageSize);
    std::vector<int> status(n);
    ASSERT_EQ(0, c->Decompress(rec[k], arena[k], MutablePageList(out.data(), n), status));
    ASSERT_EQ(0, std::memcmp(out.data(), corpus.data(), out.size())) << threads;
  }
  for (std::size_t i = 0; i < n; i++) ASSERT_EQ(rec[0][i].value, rec[1][i].value) << i;
  ASSERT_EQ(0, std::memcmp(arena[0].data(), arena[1].data(), arena[0].size()));
}

// A batch that the device holds up (a kernel spinning for 3 s before it),
// in a hybrid codec with a 0.3 s watchdog: given up, redone on the CPU,
// every page intact, the GPU disabled with the reason.
TEST_F(GpuCodecTest, AHungBatchIsRedoneOnTheCpu) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  GpuFaults f;
  f.hang_at_batch = 19;  // the first compression after calibration
  f.hang_ms = 3000;
  auto hung = Make(GpuOptions(), &f);
  ASSERT_TRUE(hung);
  CodecOptions co;
  co.threads = 1;
  auto cpu = Codec::Create(co);
  HybridCodec h(cpu.get(), hung.get());
  h.set_watchdog(0.3);
  ASSERT_EQ(0, h.Calibrate(PageList(corpus.data(), 512)));
  ASSERT_TRUE(h.backend_enabled());
  const std::size_t n = 4096;
  std::vector<hzram_page_record> rec(n);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(n)), out(n * kPageSize);
  std::vector<int> status(n);
  const auto t = std::chrono::steady_clock::now();
  for (int b = 0; b < 3; b++) {
    ASSERT_EQ(0, h.Compress(PageList(&corpus[b * n * kPageSize], n), rec, arena));
    ASSERT_EQ(0, h.Decompress(rec, arena, MutablePageList(out.data(), n), status));
    ASSERT_EQ(0, std::memcmp(out.data(), &corpus[b * n * kPageSize], n * kPageSize)) << b;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t, std::chrono::milliseconds(2500))
      << "the caller waited for the hung batch";
  EXPECT_EQ(1u, h.timeouts());
  EXPECT_FALSE(h.backend_enabled());
  EXPECT_FALSE(hung->healthy());
  EXPECT_NE(std::string::npos, h.backend_why().find("watchdog")) << h.backend_why();
  // Its destructor neither waits for the device nor frees what it may
  // still use.
}

// Memory the device reads (hzramd's staging), lent while a batch from it
// hangs: once the batch is abandoned, giving the memory back and
// destroying the codec return at once, the memory left locked rather
// than waited for (cudaHostUnregister would wait for the hung batch).
TEST_F(GpuCodecTest, AnAbandonedBatchHoldsUpNeitherUnregisteringNorTheEnd) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  GpuFaults f;
  f.hang_at_batch = 1;
  f.hang_ms = 3000;
  auto c = Make(GpuOptions(), &f);
  ASSERT_TRUE(c);
  const std::size_t n = 1024;
  // Left locked, so never freed (a range locked still would keep its
  // addresses from being locked again in this process).
  auto& pages = *new std::vector<std::uint8_t>(corpus.begin(), corpus.begin() + n * kPageSize);
  std::vector<hzram_page_record> rec(n);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(n));
  int r = c->RegisterHostMemory(pages.data(), pages.size(), true);
  if (r == -EOPNOTSUPP) r = c->RegisterHostMemory(pages.data(), pages.size());
  ASSERT_EQ(0, r);
  const int t = c->SubmitCompress(PageList(pages.data(), n), rec, arena);
  ASSERT_GE(t, 0);
  EXPECT_FALSE(c->Ready(t));
  const auto t0 = std::chrono::steady_clock::now();
  c->Abandon(t, "given up by the test");
  EXPECT_EQ(0, c->UnregisterHostMemory(pages.data()));
  c.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500));
}

// A batch whose output is on its way back into the caller's registered
// memory when another batch is abandoned (which fails the codec) is still
// waited for: once Wait() has returned, nothing lands there, and the
// caller may redo the batch in that memory. (If the copy is over before
// the abandon, this proves nothing and passes.)
TEST_F(GpuCodecTest, NoCopyLandsAfterWaitOnAFailedCodec) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  GpuFaults f;
  f.hang_at_batch = 2;  // the second batch waits 2 s behind a spinning kernel
  f.hang_ms = 2000;
  auto c = Make(GpuOptions(), &f);
  ASSERT_TRUE(c);
  const std::size_t n = 4096;
  std::vector<hzram_page_record> rec(n), rec2(n);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(n), 0xcc), arena2(Codec::ArenaBytes(n));
  ASSERT_EQ(0, c->RegisterHostMemory(arena.data(), arena.size()));
  const int t1 = c->SubmitCompress(PageList(corpus.data(), n), rec, arena);
  const int t2 = c->SubmitCompress(PageList(&corpus[n * kPageSize], n), rec2, arena2);
  ASSERT_GE(t1, 0);
  ASSERT_GE(t2, 0);
  // Ready() starts the copy back once the kernels are done: watch for its
  // first bytes in the arena.
  const auto* head = reinterpret_cast<const volatile std::uint64_t*>(arena.data());
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (*head == 0xccccccccccccccccull && std::chrono::steady_clock::now() < give_up) c->Ready(t1);
  c->Abandon(t2, "given up by the test");
  EXPECT_FALSE(c->healthy());
  EXPECT_EQ(-EIO, c->Wait(t1, nullptr));
  // The caller's memory is the caller's again.
  std::memset(arena.data(), 0x55, arena.size());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (std::size_t i = 0; i < arena.size(); i++)
    ASSERT_EQ(0x55, static_cast<const volatile std::uint8_t*>(arena.data())[i]) << i;
}

// A batch whose copy back into the codec's own pinned buffer the device
// does not finish (it waits behind a kernel spinning for 3 s: a device
// wedged after the kernels) holds neither Abandon() nor Wait() on the
// failed codec, nor the codec's destruction: nothing of the caller's is
// at stake, and the codec is being given up. (hzramd registers no
// memory: all its copies back go through the pinned buffers.)
TEST_F(GpuCodecTest, AWedgedCopyBackIntoThePinnedBufferHoldsNoCaller) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  using Clock = std::chrono::steady_clock;
  for (const bool abandon : {true, false}) {
    GpuFaults f;
    f.hang_copy_back_at_batch = 2;
    f.hang_ms = 3000;
    auto c = Make(GpuOptions(), &f);
    ASSERT_TRUE(c);
    const std::size_t n = 1024;
    std::vector<hzram_page_record> rec(n);
    std::vector<std::uint8_t> arena(Codec::ArenaBytes(n));
    ASSERT_EQ(0, c->Compress(PageList(corpus.data(), n), rec, arena));  // batch 1
    const int t2 = c->SubmitCompress(PageList(&corpus[n * kPageSize], n), rec, arena);
    ASSERT_GE(t2, 0);
    // Polled until its kernels are done and its copy back is issued (and
    // then held up); the kernels take milliseconds.
    const auto polled = Clock::now();
    while (Clock::now() - polled < std::chrono::milliseconds(500)) EXPECT_FALSE(c->Ready(t2));
    const auto t = Clock::now();
    if (abandon) {
      c->Abandon(t2, "given up by the test");
    } else {
      // Failed by another batch given up: Wait() on this one.
      const int t3 = c->SubmitCompress(PageList(&corpus[2 * n * kPageSize], n), rec, arena);
      ASSERT_GE(t3, 0);
      c->Abandon(t3, "given up by the test");
      EXPECT_EQ(-EIO, c->Wait(t2, nullptr));
    }
    EXPECT_LT(Clock::now() - t, std::chrono::seconds(1)) << abandon;
    EXPECT_FALSE(c->healthy());
    const auto destroyed = Clock::now();
    c.reset();
    EXPECT_LT(Clock::now() - destroyed, std::chrono::seconds(1)) << abandon;
  }
}

TEST_F(GpuCodecTest, BadArguments) {
  std::vector<hzram_page_record> rec(8);
  std::vector<std::uint8_t> pages(8 * kPageSize), arena(Codec::ArenaBytes(8));
  std::vector<int> status(8);
  EXPECT_EQ(-EINVAL, codec_->SubmitCompress(PageList(pages.data(), 0), rec, arena));
  EXPECT_EQ(-EINVAL, codec_->SubmitCompress(PageList(pages.data(), 8), std::span(rec.data(), 4), arena));
  EXPECT_EQ(-EINVAL, codec_->Wait(12345, nullptr));
  GpuOptions o;
  o.slots = 0;
  int err = 0;
  EXPECT_EQ(nullptr, GpuCodec::Create(o, &err));
  EXPECT_EQ(-EINVAL, err);
  GpuFaults f;
  f.hang_at_batch = 3;  // a hang needs its length
  EXPECT_EQ(nullptr, GpuCodecTestPeer::Create(GpuOptions(), f, &err));
  EXPECT_EQ(-EINVAL, err);
  for (unsigned k : {0u, 3u}) {
    o = GpuOptions();
    o.compress_kernel = k;
    EXPECT_EQ(nullptr, GpuCodec::Create(o, &err)) << k;
    EXPECT_EQ(-EINVAL, err);
  }
  o = GpuOptions();
  o.device = 1000;
  EXPECT_EQ(nullptr, GpuCodec::Create(o, &err));
  EXPECT_EQ(-ENODEV, err);
}

}  // namespace
}  // namespace hzram::test
