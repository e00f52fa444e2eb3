// SPDX-License-Identifier: GPL-2.0
// The hybrid codec with a stand-in backend (a second CPU codec on a thread
// of its own, which reports the times of a modelled device rather than its
// own, so that the split does not depend on this machine's load, and fails
// when told to): how batches are split, that the split follows measured
// speeds, and that a failing backend loses no page.
#include <gtest/gtest.h>

#include <cerrno>
#include <thread>

#include "hzram/backend.h"
#include "test_util.h"

namespace hzram::test {
namespace {

class FakeBackend : public AsyncBackend {
 public:
  FakeBackend() {
    CodecOptions o;
    o.threads = 1;
    codec_ = Codec::Create(o);
  }
  ~FakeBackend() override {
    if (worker_.joinable()) worker_.join();
  }

  double us_per_page = 0;     // the modelled device's speed
  double fixed_us = 0;        // and cost per batch
  double link_bytes_per_s = 0;  // its link, both ways (0: not modelled)
  int fail_at = 0;            // batch number (from 1) that fails; 0: none
  int refuse_at = 0;          // batch number whose submission gets -EBUSY
  int batches = 0;

  int SubmitCompress(const PageList& pages, std::span<hzram_page_record> records,
                     std::span<std::uint8_t> arena) override {
    if (!healthy_) return -EIO;
    if (batches + 1 == refuse_at) return refuse_at = 0, -EBUSY;
    const int n = ++batches;
    pages_ = pages.size();
    h2d_bytes_ = pages.size() * kPageSize;
    d2h_bytes_ = pages.size() * (kPageSize + sizeof(hzram_page_record));
    worker_ = std::thread([=, this] {
      if (n == fail_at) {
        // A failed device leaves garbage behind: the caller must not use it.
        for (auto& r : records) r = {~0ull, 12345, 77, 9};
        return;
      }
      result_ = codec_->Compress(pages, records, arena);
    });
    return n;
  }
  int SubmitDecompress(std::span<const hzram_page_record> records, std::span<const std::uint8_t> arena,
                       const MutablePageList& pages, std::span<int> status) override {
    if (!healthy_) return -EIO;
    if (batches + 1 == refuse_at) return refuse_at = 0, -EBUSY;
    const int n = ++batches;
    pages_ = records.size();
    h2d_bytes_ = records.size_bytes() + arena.size();
    d2h_bytes_ = records.size() * (kPageSize + sizeof(int));
    worker_ = std::thread([=, this] {
      if (n == fail_at) {
        for (std::size_t i = 0; i < pages.size(); i++) std::memset(pages[i], 0xdd, kPageSize);
        return;
      }
      result_ = codec_->Decompress(records, arena, pages, status);
    });
    return n;
  }
  int Wait(int ticket, BatchTiming* t) override {
    worker_.join();
    if (ticket == fail_at) {
      healthy_ = false;
      return -EIO;
    }
    if (t) {
      *t = BatchTiming();
      t->total_ms = (fixed_us + us_per_page * pages_) / 1e3;
      if (link_bytes_per_s > 0) {
        t->h2d_bytes = h2d_bytes_;
        t->d2h_bytes = d2h_bytes_;
        t->h2d_ms = h2d_bytes_ / link_bytes_per_s * 1e3;
        t->d2h_ms = d2h_bytes_ / link_bytes_per_s * 1e3;
      }
    }
    return result_;
  }
  bool healthy() const override { return healthy_; }
  std::string why() const override { return healthy_ ? "" : "fake device lost at batch " + std::to_string(fail_at); }
  std::size_t max_batch() const override { return 4096; }

 private:
  std::unique_ptr<Codec> codec_;
  std::thread worker_;
  std::size_t pages_ = 0;
  std::uint64_t h2d_bytes_ = 0, d2h_bytes_ = 0;
  int result_ = 0;
  bool healthy_ = true;
};

std::unique_ptr<Codec> Cpu() {
  CodecOptions o;
  o.threads = 1;
  o.max_batch = 4096;
  return Codec::Create(o);
}

// Compress and decompress @n corpus pages from @first through @h; every
// page must come back.
void RoundTrip(HybridCodec& h, std::size_t first, std::size_t n) {
  const auto& corpus = Corpus();
  ASSERT_FALSE(corpus.empty());
  std::vector<hzram_page_record> rec(n);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(n)), out(n * kPageSize, 0xcc);
  std::vector<int> status(n, 1);
  const PageList pages(&corpus[first * kPageSize], n);
  ASSERT_EQ(0, h.Compress(pages, rec, arena));
  for (std::size_t i = 0; i < n; i++) {
    if (rec[i].kind == HZRAM_PAGE_SAME) continue;
    ASSERT_LE(rec[i].value + rec[i].length, arena.size()) << i;
  }
  ASSERT_EQ(0, h.Decompress(rec, arena, MutablePageList(out.data(), n), status));
  for (std::size_t i = 0; i < n; i++) ASSERT_EQ(0, status[i]) << i;
  ASSERT_EQ(0, std::memcmp(out.data(), &corpus[first * kPageSize], n * kPageSize));
}

TEST(HybridTest, ShareBalancesTheTwoSides) {
  HybridCodec::Rates r;
  r.cpu_pages_per_s = 1000;
  r.backend_pages_per_s = 1000;
  EXPECT_EQ(500u, HybridCodec::BackendShare(r, 1000)) << "equal speeds, no fixed cost";
  r.backend_pages_per_s = 3000;
  EXPECT_EQ(750u, HybridCodec::BackendShare(r, 1000)) << "three times faster";
  r.backend_fixed_s = 0.5;  // half a CPU-second per batch
  EXPECT_EQ(375u, HybridCodec::BackendShare(r, 1000));
  r.backend_fixed_s = 1.0;  // as long as the CPU alone: not worth it
  EXPECT_EQ(0u, HybridCodec::BackendShare(r, 1000));
  r.backend_fixed_s = 0.001;
  EXPECT_EQ(0u, HybridCodec::BackendShare(r, 1)) << "one page stays on the CPU";
  r.backend_fixed_s = 0;
  r.backend_host_s_per_page = 0.0005;  // host copies: half a CPU page each
  EXPECT_EQ(750u, HybridCodec::BackendShare(r, 1000)) << "0.375 + 0.25 s against 1 s";
  r.backend_host_s_per_page = 0.0012;  // dearer than the CPU's own work
  EXPECT_EQ(0u, HybridCodec::BackendShare(r, 1000));
  r.backend_host_s_per_page = 0;
  r.backend_pages_per_s = 0;
  EXPECT_EQ(0u, HybridCodec::BackendShare(r, 1000)) << "no measurement, no share";
}

TEST(HybridTest, CpuOnlyWithoutBackend) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto cpu = Cpu();
  HybridCodec h(cpu.get(), nullptr);
  EXPECT_FALSE(h.backend_enabled());
  ASSERT_EQ(0, h.Calibrate(PageList(corpus.data(), 256)));
  EXPECT_EQ(0, h.link().h2d_bytes_per_s) << "no backend, no link";
  RoundTrip(h, 0, 1000);
  EXPECT_EQ(0u, h.backend_pages());
  EXPECT_EQ(2000u, h.cpu_pages());
}

TEST(HybridTest, SplitsBetweenBothAndLosesNothing) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto cpu = Cpu();
  FakeBackend fake;
  fake.us_per_page = 2;  // about twice as fast as a CPU thread
  fake.fixed_us = 100;
  fake.link_bytes_per_s = 8e9;
  HybridCodec h(cpu.get(), &fake);
  ASSERT_EQ(0, h.Calibrate(PageList(corpus.data(), 512)));
  EXPECT_NEAR(500000, h.compress_rates().backend_pages_per_s, 1000);
  EXPECT_NEAR(100e-6, h.compress_rates().backend_fixed_s, 1e-9);
  EXPECT_NEAR(8e9, h.link().h2d_bytes_per_s, 1e6) << "the link, as calibration measured it";
  EXPECT_NEAR(8e9, h.link().d2h_bytes_per_s, 1e6);
  for (std::size_t b = 0; b < 8; b++) {
    RoundTrip(h, b * 1500, 1500);
    EXPECT_GT(h.last_backend_pages(), 0u) << b;
    EXPECT_LT(h.last_backend_pages(), 1500u) << b;
  }
  EXPECT_TRUE(h.backend_enabled());
}

TEST(HybridTest, FollowsTheObservedSpeed) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto cpu = Cpu();
  FakeBackend fake;
  fake.us_per_page = 1;
  HybridCodec h(cpu.get(), &fake);
  ASSERT_EQ(0, h.Calibrate(PageList(corpus.data(), 512)));
  RoundTrip(h, 0, 2000);
  const std::size_t fast_share = h.last_backend_pages();
  // The backend becomes ten times slower: its share shrinks.
  fake.us_per_page = 40;
  for (int b = 0; b < 12; b++) RoundTrip(h, 2000, 2000);
  EXPECT_LT(h.last_backend_pages() * 3, fast_share)
      << "share " << fast_share << " -> " << h.last_backend_pages();
}

TEST(HybridTest, FailingBackendFallsBackToTheCpu) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto cpu = Cpu();
  FakeBackend fake;
  fake.us_per_page = 1;
  HybridCodec h(cpu.get(), &fake);
  ASSERT_EQ(0, h.Calibrate(PageList(corpus.data(), 256)));
  fake.fail_at = fake.batches + 3;  // the second compression after calibration fails
  for (std::size_t b = 0; b < 6; b++) RoundTrip(h, b * 1000, 1000);
  EXPECT_FALSE(h.backend_enabled());
  EXPECT_NE(std::string::npos, h.backend_why().find("fake device lost")) << h.backend_why();
  EXPECT_EQ(0u, h.last_backend_pages());
  // And a failure in a decompression.
  FakeBackend fake2;
  fake2.us_per_page = 1;
  HybridCodec h2(cpu.get(), &fake2);
  ASSERT_EQ(0, h2.Calibrate(PageList(corpus.data(), 256)));
  fake2.fail_at = fake2.batches + 2;  // the first decompression after calibration
  RoundTrip(h2, 0, 1000);
  EXPECT_FALSE(h2.backend_enabled());
}

TEST(HybridTest, ARefusedBatchGoesToTheCpuAndKeepsTheBackend) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto cpu = Cpu();
  FakeBackend fake;
  fake.us_per_page = 1;
  HybridCodec h(cpu.get(), &fake);
  ASSERT_EQ(0, h.Calibrate(PageList(corpus.data(), 256)));
  fake.refuse_at = fake.batches + 1;  // the next compression: -EBUSY
  const std::uint64_t before = h.backend_pages();
  RoundTrip(h, 0, 1000);  // compression refused, decompression split
  EXPECT_EQ(0, fake.refuse_at) << "a submission was refused";
  EXPECT_TRUE(h.backend_enabled()) << "-EBUSY is not a failure";
  EXPECT_TRUE(h.backend_why().empty());
  EXPECT_GT(h.backend_pages(), before) << "the decompression still used it";
}

TEST(HybridTest, CorruptRecordsFailOnEitherSide) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto cpu = Cpu();
  FakeBackend fake;
  fake.us_per_page = 1;
  HybridCodec h(cpu.get(), &fake);
  ASSERT_EQ(0, h.Calibrate(PageList(corpus.data(), 256)));
  const std::size_t n = 1000;
  std::vector<hzram_page_record> rec(n);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(n)), out(n * kPageSize);
  std::vector<int> status(n);
  ASSERT_EQ(0, h.Compress(PageList(corpus.data(), n), rec, arena));
  ASSERT_GT(h.last_backend_pages(), 2u) << h.compress_rates().cpu_pages_per_s << " " << h.compress_rates().backend_pages_per_s << " " << h.compress_rates().backend_fixed_s;
  // One bad record in each share.
  const std::size_t a = 1, b = n - 2;
  rec[a] = {arena.size() + 1, 100, HZRAM_PAGE_LZ4, 0};
  rec[b].kind = 42;
  EXPECT_EQ(2, h.Decompress(rec, arena, MutablePageList(out.data(), n), status));
  for (std::size_t i = 0; i < n; i++) {
    if (i == a || i == b) {
      EXPECT_EQ(-EINVAL, status[i]) << i;
    } else {
      ASSERT_EQ(0, status[i]) << i;
      ASSERT_EQ(0, std::memcmp(&out[i * kPageSize], &corpus[i * kPageSize], kPageSize)) << i;
    }
  }
}

}  // namespace
}  // namespace hzram::test
