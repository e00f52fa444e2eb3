// SPDX-License-Identifier: GPL-2.0
// The hybrid codec with a stand-in backend (a second CPU codec on a thread
// of its own, which reports the times of a modelled device rather than its
// own, so that the split does not depend on this machine's load, and fails
// when told to): how batches are split, that the split follows measured
// speeds, and that a failing backend loses no page.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include <time.h>

#include "access_trace.h"
#include "hybrid_model.h"
#include "hzram/backend.h"
#include "slow_backend.h"
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
    {
      std::lock_guard<std::mutex> l(mu_);
      release_ = true;
    }
    cv_.notify_all();
    for (auto& [t, b] : inflight_)
      if (b->worker.joinable()) b->worker.join();
    for (auto& b : abandoned_)
      if (b->worker.joinable()) b->worker.join();
  }

  double us_per_page = 0;     // the modelled device's speed
  double fixed_us = 0;        // and cost per batch
  double link_bytes_per_s = 0;  // its link, both ways (0: not modelled)
  // How long each batch's results are reported to have waited for the
  // caller to poll them (BatchTiming::wait_ms), on top of its time.
  double wait_us = 0;
  // Modelled times are multiplied by (1 + noise * u), u in [-1, 1) drawn
  // per batch: a device whose timings jitter.
  double noise = 0;
  int fail_at = 0;            // batch number (from 1) that fails; 0: none
  int refuse_at = 0;          // batch number whose submission gets -EBUSY
  int hang_at = 0;            // batch number that never finishes; 0: none
  unsigned slots = 1;         // batches in flight at once
  int batches = 0;
  int most_in_flight = 0;     // the most batches in flight at once, seen
  int abandoned = 0;          // batches given up by the caller

  // As a device's, the outputs are made in buffers of the backend's own
  // and copied to the caller's in Wait(): an abandoned batch writes
  // nothing of the caller's.
  int SubmitCompress(const PageList& pages, std::span<hzram_page_record> records,
                     std::span<std::uint8_t> arena) override {
    return Submit(pages.size(), pages.size() * kPageSize,
                  pages.size() * (kPageSize + sizeof(hzram_page_record)), [=, this](Batch* b) {
                    b->records.resize(pages.size());
                    b->bytes.resize(Codec::ArenaBytes(pages.size()));
                    b->copy_out = [=] {
                      std::copy(b->records.begin(), b->records.end(), records.begin());
                      std::copy(b->bytes.begin(), b->bytes.end(), arena.begin());
                    };
                    if (b->fail) {
                      // A failed device leaves garbage behind: the caller must not use it.
                      for (auto& r : b->records) r = {~0ull, 12345, 77, 9};
                      return 0;
                    }
                    return codec_->Compress(pages, b->records, b->bytes);
                  });
  }
  int SubmitDecompress(std::span<const hzram_page_record> records, std::span<const std::uint8_t> arena,
                       const MutablePageList& pages, std::span<int> status) override {
    return Submit(records.size(), records.size_bytes() + arena.size(),
                  records.size() * (kPageSize + sizeof(int)), [=, this](Batch* b) {
                    const std::size_t n = records.size();
                    b->bytes.resize(n * kPageSize);
                    b->status.resize(n);
                    b->copy_out = [=] {
                      for (std::size_t i = 0; i < n; i++)
                        std::memcpy(pages[i], &b->bytes[i * kPageSize], kPageSize);
                      std::copy(b->status.begin(), b->status.end(), status.begin());
                    };
                    if (b->fail) {
                      std::fill(b->bytes.begin(), b->bytes.end(), 0xdd);
                      return 0;
                    }
                    return codec_->Decompress(records, arena, MutablePageList(b->bytes.data(), n),
                                              b->status);
                  });
  }
  int Wait(int ticket, BatchTiming* t) override {
    auto it = inflight_.find(ticket);
    if (it == inflight_.end()) return -EINVAL;
    std::unique_ptr<Batch> b = std::move(it->second);
    inflight_.erase(it);
    b->worker.join();
    if (ticket == fail_at) {
      healthy_ = false;
      return -EIO;
    }
    if (!healthy_) return -EIO;
    b->copy_out();
    if (t) {
      *t = BatchTiming();
      t->total_ms = (fixed_us + us_per_page * b->pages) * b->jitter / 1e3;
      t->wait_ms = wait_us / 1e3;
      t->total_ms += t->wait_ms;
      if (link_bytes_per_s > 0) {
        t->h2d_bytes = b->h2d;
        t->d2h_bytes = b->d2h;
        t->h2d_ms = b->h2d / link_bytes_per_s * 1e3;
        t->d2h_ms = b->d2h / link_bytes_per_s * 1e3;
      }
    }
    return b->result;
  }
  bool Ready(int ticket) override {
    auto it = inflight_.find(ticket);
    return it == inflight_.end() || !healthy_ || it->second->done.load();
  }
  void Abandon(int ticket, const std::string& why) override {
    auto it = inflight_.find(ticket);
    if (it == inflight_.end()) return;
    abandoned++;
    healthy_ = false;
    why_ = why;
    // The worker of a hung batch stays parked until the destructor; it
    // writes nothing.
    abandoned_.push_back(std::move(it->second));
    inflight_.erase(it);
  }
  unsigned max_in_flight() const override { return slots; }
  bool healthy() const override { return healthy_; }
  std::string why() const override {
    if (healthy_) return "";
    return why_.empty() ? "fake device lost at batch " + std::to_string(fail_at) : why_;
  }
  std::size_t max_batch() const override { return 4096; }

 private:
  struct Batch {
    std::thread worker;
    std::size_t pages = 0;
    std::uint64_t h2d = 0, d2h = 0;
    double jitter = 1;
    bool fail = false;
    int result = 0;
    std::atomic<bool> done{false};
    std::vector<hzram_page_record> records;
    std::vector<std::uint8_t> bytes;
    std::vector<int> status;
    std::function<void()> copy_out;
  };

  template <class Run>
  int Submit(std::size_t pages, std::uint64_t h2d, std::uint64_t d2h, Run run) {
    if (!healthy_) return -EIO;
    if (batches + 1 == refuse_at) return refuse_at = 0, -EBUSY;
    if (inflight_.size() >= slots) return -EBUSY;
    const int n = ++batches;
    auto b = std::make_unique<Batch>();
    b->pages = pages;
    b->h2d = h2d;
    b->d2h = d2h;
    seed_ = seed_ * 6364136223846793005ull + 1442695040888963407ull;
    b->jitter = 1 + noise * (static_cast<double>(seed_ >> 11) / 9007199254740992.0 * 2 - 1);
    b->fail = n == fail_at;
    const bool hang = n == hang_at;
    Batch* raw = b.get();
    b->worker = std::thread([=, this] {
      if (hang) {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [this] { return release_; });
        return;  // never finishes as far as the caller can tell
      }
      raw->result = run(raw);
      raw->done.store(true);
    });
    inflight_.emplace(n, std::move(b));
    most_in_flight = std::max(most_in_flight, static_cast<int>(inflight_.size()));
    return n;
  }

  std::unique_ptr<Codec> codec_;
  std::map<int, std::unique_ptr<Batch>> inflight_;
  std::vector<std::unique_ptr<Batch>> abandoned_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool release_ = false;
  bool healthy_ = true;
  std::string why_;
  std::uint64_t seed_ = 42;
};

// The watchdog of the tests that are not about it: the stand-in's
// threads may wait for a CPU for long on a loaded machine.
constexpr double kSlackWatchdog = 30;

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
  HybridRates r;
  r.cpu_pages_per_s = 1000;
  r.backend_pages_per_s = 1000;
  EXPECT_EQ(500u, BackendShare(r, 1000)) << "equal speeds, no fixed cost";
  r.backend_pages_per_s = 3000;
  EXPECT_EQ(750u, BackendShare(r, 1000)) << "three times faster";
  r.backend_fixed_s = 0.5;  // half a CPU-second per batch
  EXPECT_EQ(375u, BackendShare(r, 1000));
  r.backend_fixed_s = 1.0;  // as long as the CPU alone: not worth it
  EXPECT_EQ(0u, BackendShare(r, 1000));
  r.backend_fixed_s = 0.001;
  EXPECT_EQ(0u, BackendShare(r, 1)) << "one page stays on the CPU";
  r.backend_fixed_s = 0;
  r.backend_host_s_per_page = 0.0005;  // host copies: half a CPU page each
  EXPECT_EQ(750u, BackendShare(r, 1000)) << "0.375 + 0.25 s against 1 s";
  r.backend_host_s_per_page = 0.0012;  // dearer than the CPU's own work
  EXPECT_EQ(0u, BackendShare(r, 1000));
  r.backend_host_s_per_page = 0;
  r.backend_pages_per_s = 0;
  EXPECT_EQ(0u, BackendShare(r, 1000)) << "no measurement, no share";
}

TEST(HybridTest, CpuOnlyWithoutBackend) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto cpu = Cpu();
  HybridCodec h(cpu.get(), nullptr);
  EXPECT_FALSE(h.backend_enabled());
  ASSERT_EQ(0, h.Calibrate(PageList(corpus.data(), 256)));
  EXPECT_EQ(0, h.model().link.h2d_bytes_per_s) << "no backend, no link";
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
  h.set_watchdog(kSlackWatchdog);
  ASSERT_EQ(0, h.Calibrate(PageList(corpus.data(), 512)));
  EXPECT_NEAR(500000, h.model().compress.backend_pages_per_s, 1000);
  EXPECT_NEAR(100e-6, h.model().compress.backend_fixed_s, 1e-9);
  EXPECT_NEAR(8e9, h.model().link.h2d_bytes_per_s, 1e6) << "the link, as calibration measured it";
  EXPECT_NEAR(8e9, h.model().link.d2h_bytes_per_s, 1e6);
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
  h.set_watchdog(kSlackWatchdog);
  ASSERT_EQ(0, h.Calibrate(PageList(corpus.data(), 512)));
  RoundTrip(h, 0, 2000);
  const std::size_t fast_share = h.last_backend_pages();
  // The backend becomes 400 times slower (its time is modelled, not
  // spent): its share shrinks. At 40 times, the CPU threads, measured
  // while make check's guests kept this host's two CPUs busy, were no
  // faster, and the share stayed (1024 pages, then 1080).
  fake.us_per_page = 400;
  for (int b = 0; b < 12; b++) RoundTrip(h, 2000, 2000);
  EXPECT_LT(h.last_backend_pages() * 3, fast_share)
      << "share " << fast_share << " -> " << h.last_backend_pages() << " " << h.backend_why();
}

// Compress @n corpus pages from @first through @h; the backend's share.
std::size_t CompressShare(HybridCodec& h, std::size_t first, std::size_t n) {
  const auto& corpus = Corpus();
  std::vector<hzram_page_record> rec(n);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(n));
  EXPECT_EQ(0, h.Compress(PageList(&corpus[first * kPageSize], n), rec, arena));
  return h.last_backend_pages();
}

// Calibrate @h (the tests' watchdog) and compress 2000 corpus pages; the
// backend's share of them (0 when calibration failed).
std::size_t CalibratedShare(HybridCodec& h) {
  h.set_watchdog(kSlackWatchdog);
  if (h.Calibrate(PageList(Corpus().data(), 512))) return 0;
  return CompressShare(h, 0, 2000);
}

TEST(HybridTest, TheTimeResultsWaitForTheCallerIsNotTheDevices) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto cpu = Cpu();
  // One part in flight, and three (the share in sub-batches).
  for (const unsigned slots : {1u, 3u}) {
    FakeBackend fake;
    fake.us_per_page = 1;
    fake.slots = slots;
    HybridCodec h(cpu.get(), &fake);
    const std::size_t fast_share = CalibratedShare(h);
    ASSERT_GT(fast_share, 0u);
    // The device's results wait for the caller, busy with the CPU's share
    // (a GPU's copy back starts when the caller polls): that is not the
    // device's time, and the share must not shrink for it. Counted as the
    // device's, it took the share to a fifth in 12 batches.
    fake.wait_us = 50000;
    std::size_t share = fast_share;
    for (int b = 0; b < 12; b++) share = CompressShare(h, 2000, 2000);
    EXPECT_GT(share * 2, fast_share) << slots << " slots: share " << fast_share << " -> " << share;
  }
}

TEST(HybridTest, CalibrationLeavesOutTheTimeResultsWait) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto cpu = Cpu();
  FakeBackend fake;
  fake.us_per_page = 2;
  fake.fixed_us = 100;
  fake.wait_us = 20000;
  HybridCodec h(cpu.get(), &fake);
  h.set_watchdog(kSlackWatchdog);
  ASSERT_EQ(0, h.Calibrate(PageList(corpus.data(), 512)));
  for (const auto* r : {&h.model().compress, &h.model().decompress}) {
    EXPECT_NEAR(500000, r->backend_pages_per_s, 500000 * 0.1);
    EXPECT_LT(r->backend_fixed_s, 150e-6);
  }
}

// ProbeShare: a quarter of the calibrated speed's share, with the host's
// cost and the CPU's speed as measured since, and no more than the device
// does at its measured speed in the time given (half the watchdog's).
TEST(HybridTest, AProbeIsAQuarterShareBoundedByTheMeasuredSpeed) {
  HybridRates calibrated;
  calibrated.cpu_pages_per_s = 1e6;
  calibrated.backend_pages_per_s = 1e6;
  calibrated.backend_fixed_s = 100e-6;
  const std::size_t n = 4096, full = BackendShare(calibrated, n);
  ASSERT_GT(full, 1000u);
  // As fast as calibrated: a quarter.
  EXPECT_EQ(full / 4, ProbeShare(calibrated, calibrated, n, 0.125));
  // Measured 1000 times slower: what it does in 0.125 s at that speed,
  // less its fixed cost (124 pages), not a quarter share.
  HybridRates slow = calibrated;
  slow.backend_pages_per_s = 1000;
  EXPECT_EQ(static_cast<std::size_t>((0.125 - 100e-6) * 1000), ProbeShare(slow, calibrated, n, 0.125));
  // Measured so slow that not a page fits: no probe.
  slow.backend_pages_per_s = 5;
  EXPECT_EQ(0u, ProbeShare(slow, calibrated, n, 0.125));
  // Host copies measured dearer than the CPU's own work: no share, no probe.
  HybridRates dear = calibrated;
  dear.backend_host_s_per_page = 2e-6;
  EXPECT_EQ(0u, ProbeShare(dear, calibrated, n, 0.125));
  // Nothing measured: nothing.
  EXPECT_EQ(0u, ProbeShare(HybridRates(), calibrated, n, 0.125));
}

TEST(HybridTest, ABackendLeftWithoutAShareIsProbedAndComesBack) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto cpu = Cpu();
  FakeBackend fake;
  fake.us_per_page = 1;
  HybridCodec h(cpu.get(), &fake);
  const std::size_t fast_share = CalibratedShare(h);
  ASSERT_GT(fast_share, 0u);
  // A slow spell (its time is modelled, not spent): each batch takes
  // the backend's rate down by a quarter, and its share falls to nothing
  // (a page now and then while the CPU's measured speed wobbles).
  fake.us_per_page = 100000;
  int b = 0;
  while (CompressShare(h, 2000, 2000) && ++b < 100) {
  }
  ASSERT_LT(b, 100) << "the share never fell to nothing";
  // Then it gets a probe after kReprobe batches without a share, the
  // next after twice as many, and so on: at 16, 48 and 112 batches of
  // 150 (every 16, 9 probes); each a quarter share.
  const std::uint64_t probes = h.probes();
  std::size_t probe_share = 0;
  for (int i = 0; i < 150; i++) {
    const std::uint64_t before = h.probes();
    const std::size_t g = CompressShare(h, 2000, 2000);
    if (h.probes() > before) probe_share = std::max(probe_share, g);
  }
  EXPECT_GE(h.probes(), probes + 2) << "the backend was not probed";
  EXPECT_LE(h.probes(), probes + 5) << "the probes did not back off";
  EXPECT_GT(probe_share, 0u);
  EXPECT_LE(probe_share * 3, fast_share) << "a probe is a quarter share";
  // The spell ends: the next probe finds the backend fast again, and the
  // share comes back.
  fake.us_per_page = 1;
  std::size_t share = 0;
  for (unsigned i = 0; i < 8 * HybridCodec::kReprobe + 8 && share * 2 < fast_share; i++)
    share = CompressShare(h, 2000, 2000);
  EXPECT_GE(share * 2, fast_share) << "share " << fast_share << " -> " << share;
}

TEST(HybridTest, CalibrationIsRobustToJitter) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto cpu = Cpu();
  FakeBackend fake;
  fake.us_per_page = 2;
  fake.fixed_us = 100;
  fake.link_bytes_per_s = 8e9;
  fake.noise = 0.2;  // each batch's time off by up to 20%
  HybridCodec h(cpu.get(), &fake);
  h.set_watchdog(kSlackWatchdog);
  ASSERT_EQ(0, h.Calibrate(PageList(corpus.data(), 512)));
  EXPECT_NEAR(500000, h.model().compress.backend_pages_per_s, 500000 * 0.3);
  EXPECT_NEAR(500000, h.model().decompress.backend_pages_per_s, 500000 * 0.3);
  EXPECT_GE(h.model().compress.backend_fixed_s, 0);
  EXPECT_LT(h.model().compress.backend_fixed_s, 300e-6);
}

TEST(HybridTest, CalibrationNeverFindsTheDeviceFree) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto cpu = Cpu();
  // A device whose fixed cost hides its cost per page, and jitters: a
  // line through its times can have any slope, even a negative one.
  FakeBackend fake;
  fake.us_per_page = 0.01;
  fake.fixed_us = 5000;
  fake.noise = 0.05;
  fake.link_bytes_per_s = 10e9;
  HybridCodec h(cpu.get(), &fake);
  h.set_watchdog(kSlackWatchdog);
  ASSERT_EQ(0, h.Calibrate(PageList(corpus.data(), 512)));
  // Bounded by what the copies of a page take on its link (about 0.8 us
  // for a compression's 8 KiB, 0.4 us for a decompression's).
  EXPECT_LE(h.model().compress.backend_pages_per_s, 10e9 / (2 * kPageSize) * 1.01);
  EXPECT_LE(h.model().decompress.backend_pages_per_s, 10e9 / kPageSize * 1.01);
  for (const auto* r : {&h.model().compress, &h.model().decompress}) {
    EXPECT_GT(r->backend_pages_per_s, 0);
    EXPECT_GE(r->backend_fixed_s, 0);
    EXPECT_LE(r->backend_fixed_s, 5000e-6 * 1.06);
  }
}

TEST(HybridTest, SharesGoAsSeveralBatchesInFlight) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto cpu = Cpu();
  FakeBackend fake;
  fake.us_per_page = 0.5;  // much faster than the CPU: it takes most pages
  fake.slots = 3;
  HybridCodec h(cpu.get(), &fake);
  h.set_watchdog(kSlackWatchdog);
  ASSERT_EQ(0, h.Calibrate(PageList(corpus.data(), 512)));
  for (std::size_t b = 0; b < 4; b++) {
    RoundTrip(h, b * 4000, 4000);
    EXPECT_GT(h.last_backend_pages(), 3 * HybridCodec::kMinSubBatch) << b;
  }
  EXPECT_EQ(3, fake.most_in_flight);
  EXPECT_TRUE(h.backend_enabled());
}

TEST(HybridTest, AHungBatchIsRedoneOnTheCpuAndTheBackendDisabled) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto cpu = Cpu();
  for (const bool compress : {true, false}) {
    FakeBackend fake;
    fake.us_per_page = 1;
    fake.slots = 2;
    HybridCodec h(cpu.get(), &fake);
    h.set_watchdog(0.5);
    ASSERT_EQ(0, h.Calibrate(PageList(corpus.data(), 512)));
    // The next compression's first part, or the next decompression's.
    fake.hang_at = fake.batches + 1 + (compress ? 0 : 2);
    const auto t = std::chrono::steady_clock::now();
    RoundTrip(h, 0, 3000);  // every page back, intact
    RoundTrip(h, 3000, 3000);
    EXPECT_LT(std::chrono::steady_clock::now() - t, std::chrono::seconds(20));
    EXPECT_EQ(1u, h.timeouts()) << compress;
    EXPECT_GE(fake.abandoned, 1) << compress;
    EXPECT_FALSE(h.backend_enabled()) << compress;
    EXPECT_NE(std::string::npos, h.backend_why().find("watchdog")) << h.backend_why();
    EXPECT_EQ(0u, h.last_backend_pages());
  }
}

TEST(HybridTest, FailingBackendFallsBackToTheCpu) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto cpu = Cpu();
  FakeBackend fake;
  fake.us_per_page = 1;
  HybridCodec h(cpu.get(), &fake);
  h.set_watchdog(kSlackWatchdog);
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
  h2.set_watchdog(kSlackWatchdog);
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
  h.set_watchdog(kSlackWatchdog);
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
  h.set_watchdog(kSlackWatchdog);
  ASSERT_EQ(0, h.Calibrate(PageList(corpus.data(), 256)));
  const std::size_t n = 1000;
  std::vector<hzram_page_record> rec(n);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(n)), out(n * kPageSize);
  std::vector<int> status(n);
  ASSERT_EQ(0, h.Compress(PageList(corpus.data(), n), rec, arena));
  ASSERT_GT(h.last_backend_pages(), 2u) << h.model().compress.cpu_pages_per_s << " " << h.model().compress.backend_pages_per_s << " " << h.model().compress.backend_fixed_s;
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


// ---------------------------------------------------------------------
// The watchdog and falling back to the CPU, with the stand-in device of
// slow_backend.h (no threads, its times set by the test).

// @n pages of every kind, the same for a seed.
std::vector<std::uint8_t> MixedPages(std::size_t n, std::uint64_t seed) {
  std::vector<std::uint8_t> v(n * kPageSize);
  for (std::size_t i = 0; i < n; i++) {
    Page p = (i + seed) % 3 == 0 ? RandomPage(seed * 31 + i)
             : (i + seed) % 3 == 1 ? TextPage(seed * 7 + i)
                                   : PeriodicPage(1 + i % 50, seed + i);
    std::memcpy(&v[i * kPageSize], p.data(), kPageSize);
  }
  return v;
}

// Compress @pages and decompress them again through @h: every page back.
void RoundTripPages(HybridCodec& h, const std::vector<std::uint8_t>& pages) {
  const std::size_t n = pages.size() / kPageSize;
  std::vector<hzram_page_record> rec(n);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(n)), out(pages.size(), 0xcc);
  std::vector<int> status(n, 1);
  ASSERT_EQ(0, h.Compress(PageList(pages.data(), n), rec, arena));
  ASSERT_EQ(0, h.Decompress(rec, arena, MutablePageList(out.data(), n), status));
  for (std::size_t i = 0; i < n; i++) ASSERT_EQ(0, status[i]) << i;
  ASSERT_TRUE(out == pages);
}

// Waiting for the device costs the host little CPU: the poll naps once
// the batch has taken a while (hzramd --backend gpu's CPU time per GiB is
// what a GPU saves), and still sees the batch done soon after it is.
TEST(HybridWatchdogTest, WaitingForTheDeviceTakesLittleCpu) {
  auto cpu = Cpu();
  SlowBackend dev(1, 64);
  dev.delay_s = 0.2;
  HybridCodec h(cpu.get(), &dev, HybridCodec::Split::kBackendFirst);
  h.set_watchdog(5);
  const auto pages = MixedPages(64, 7);
  std::vector<hzram_page_record> rec(64);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(64));
  auto thread_cpu = [] {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + t.tv_nsec / 1e9;
  };
  const double c0 = thread_cpu();
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(0, h.Compress(PageList(pages.data(), 64), rec, arena));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double used = thread_cpu() - c0;
  EXPECT_EQ(64u, h.last_backend_pages());
  EXPECT_GE(wall, 0.2);
  EXPECT_LT(wall, 1.0);
  // Polling with yields the whole time looked hundreds of thousands of
  // times and took all of the 0.2 s; napping, about 2000 naps of 100 µs.
  EXPECT_LT(dev.polls, 5000) << "in " << wall << " s";
  EXPECT_LT(used, 0.1) << "the calling thread used " << used << " s of CPU in " << wall << " s";
}

// The watchdog's time runs from the backend's submission, not from the end
// of the CPU's share: a hung part is given up as soon as the CPU's share is
// done when that took longer than the watchdog, not a watchdog later.
TEST(HybridWatchdogTest, RunsFromTheSubmission) {
  EXPECT_LE(HybridCodec::kDefaultWatchdog, 0.25) << "a quarter of the module's 1000 ms";
  auto cpu = Cpu();
  SlowBackend dev(1, 256);  // takes 256 pages; the CPU the other 3840
  dev.hang_all = true;
  HybridCodec h(cpu.get(), &dev, HybridCodec::Split::kBackendFirst);
  h.set_watchdog(0.001);
  const auto pages = MixedPages(4096, 1);
  std::vector<hzram_page_record> rec(4096);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(4096));
  ASSERT_EQ(0, h.Compress(PageList(pages.data(), 4096), rec, arena));
  ASSERT_EQ(1, dev.abandoned);
  // The CPU's 3840 pages took longer than the watchdog's millisecond ...
  ASSERT_GT(dev.first_poll_after_s, 0.001);
  // ... so the hung part was given up at the first look (one poll, and
  // the one that finds it still not done), not polled for a watchdog's
  // time after the CPU's share.
  EXPECT_EQ(2, dev.hung_polls);
  EXPECT_EQ(1u, h.timeouts());
  EXPECT_FALSE(h.backend_enabled());
  // Every page intact, redone on the CPU.
  std::vector<std::uint8_t> out(pages.size());
  std::vector<int> status(4096);
  ASSERT_EQ(0, h.Decompress(rec, arena, MutablePageList(out.data(), 4096), status));
  EXPECT_TRUE(out == pages);
}

// With Split::kBackendFirst (hzramd's --backend gpu) the device takes all
// it can; a hung batch is given up within the watchdog's time of its
// submission, redone on the CPU, and the device dropped for good.
TEST(HybridWatchdogTest, AHungDeviceIsDroppedForTheCpu) {
  auto cpu = Cpu();
  for (const bool compress : {true, false}) {
    SlowBackend dev(3, 1024);
    HybridCodec h(cpu.get(), &dev, HybridCodec::Split::kBackendFirst);
    h.set_watchdog(0.05);
    RoundTripPages(h, MixedPages(2000, 2));
    EXPECT_EQ(2000u, h.last_backend_pages()) << "the device took the whole batch";
    EXPECT_EQ(0u, h.cpu_pages());
    // The first part of the next compression, or of the decompression
    // after it (each in three parts).
    dev.hang_at = dev.submitted + (compress ? 1 : 4);
    const auto t = std::chrono::steady_clock::now();
    RoundTripPages(h, MixedPages(2000, 3));
    EXPECT_LT(std::chrono::steady_clock::now() - t, std::chrono::seconds(5));
    EXPECT_EQ(1, dev.abandoned) << compress;
    EXPECT_GT(dev.abandon_after_s, 0.045) << compress;
    EXPECT_LT(dev.abandon_after_s, 5.0) << compress;
    EXPECT_EQ(1u, h.timeouts());
    EXPECT_FALSE(h.backend_enabled());
    EXPECT_NE(std::string::npos, h.backend_why().find("watchdog's 0.050 s")) << h.backend_why();
    // Not used again.
    const int submitted = dev.submitted;
    RoundTripPages(h, MixedPages(500, 4));
    EXPECT_EQ(submitted, dev.submitted);
    EXPECT_EQ(0u, h.last_backend_pages());
  }
}

// A deadline of the caller's in place of the watchdog from the
// submission (hzramd's: the batch's fetch plus the device's watchdog):
// the time before the call counts. A call that starts after its latest
// start gives the device nothing and keeps it; one that starts in time
// has until the deadline, not the watchdog's time after its submission,
// and the progress hook is called while the device is polled.
TEST(HybridWatchdogTest, ADeadlineCountsFromBeforeTheCall) {
  using Clock = std::chrono::steady_clock;
  using std::chrono::milliseconds;
  auto cpu = Cpu();
  SlowBackend dev(2, 512);
  HybridCodec h(cpu.get(), &dev, HybridCodec::Split::kBackendFirst);
  h.set_watchdog(30);
  const auto pages = MixedPages(300, 11);
  auto now = Clock::now();
  h.set_deadline(now + std::chrono::seconds(1), now - milliseconds(1));
  RoundTripPages(h, pages);  // a compression and a decompression
  EXPECT_EQ(0, dev.submitted);
  EXPECT_EQ(2u, h.late_starts());
  EXPECT_EQ(0u, h.timeouts());
  EXPECT_EQ(0u, h.refusals());
  EXPECT_TRUE(h.backend_enabled());
  // set_watchdog() goes back to the watchdog from the submission.
  h.set_watchdog(30);
  RoundTripPages(h, pages);
  EXPECT_GT(dev.submitted, 0);
  EXPECT_EQ(2u, h.late_starts());

  dev.hang_all = true;
  int polls = 0;
  h.set_progress([](void* n) { ++*static_cast<int*>(n); }, &polls);
  now = Clock::now();
  h.set_deadline(now + milliseconds(600), now + milliseconds(500));
  std::vector<hzram_page_record> rec(300);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(300)), out(pages.size());
  ASSERT_EQ(0, h.Compress(PageList(pages.data(), 300), rec, arena));
  const auto took = Clock::now() - now;
  EXPECT_EQ(1, dev.abandoned);
  EXPECT_GE(took, milliseconds(600));
  EXPECT_GT(dev.abandon_after_s, 0.09);
  EXPECT_LT(dev.abandon_after_s, 10.0) << "the watchdog's 30 s, not the deadline";
  EXPECT_GT(polls, 0);
  EXPECT_EQ(1u, h.timeouts());
  EXPECT_FALSE(h.backend_enabled());
  EXPECT_NE(std::string::npos, h.backend_why().find("did not finish by its deadline, 0."))
      << h.backend_why();
  std::vector<int> status(300);
  ASSERT_EQ(0, h.Decompress(rec, arena, MutablePageList(out.data(), 300), status));
  EXPECT_TRUE(out == pages);
}

// A device that fails cleanly (Wait() returns -EIO) is dropped as well:
// the batch is redone on the CPU, every later one goes to the CPU.
TEST(HybridWatchdogTest, AFailedDeviceIsDroppedForTheCpu) {
  auto cpu = Cpu();
  SlowBackend dev(2, 512);
  HybridCodec h(cpu.get(), &dev, HybridCodec::Split::kBackendFirst);
  dev.fail_at = 2;  // the first decompression's first part
  RoundTripPages(h, MixedPages(1000, 5));
  EXPECT_FALSE(h.backend_enabled());
  EXPECT_NE(std::string::npos, h.backend_why().find("failed at batch 2")) << h.backend_why();
  const int submitted = dev.submitted;
  for (int b = 0; b < 3; b++) RoundTripPages(h, MixedPages(300, 6 + b));
  EXPECT_EQ(submitted, dev.submitted);
}

// A healthy device that refuses a submission keeps its place; one that
// keeps refusing (kMaxRefusals in a row) is dropped.
TEST(HybridWatchdogTest, ADeviceThatKeepsRefusingIsDropped) {
  auto cpu = Cpu();
  SlowBackend dev(1, 1024);
  HybridCodec h(cpu.get(), &dev, HybridCodec::Split::kBackendFirst);
  dev.refuse_from = 1;
  dev.refuse_count = HybridCodec::kMaxRefusals - 1;
  const auto pages = MixedPages(64, 7);
  // kMaxRefusals - 1 refusals (each batch two submissions: compress and
  // decompress), then one taken: the count starts again.
  for (unsigned i = 0; i < HybridCodec::kMaxRefusals; i++) RoundTripPages(h, pages);
  EXPECT_TRUE(h.backend_enabled());
  EXPECT_EQ(HybridCodec::kMaxRefusals - 1, h.refusals());
  EXPECT_GT(dev.submitted, 0);
  // Now every one refused.
  dev.refuse_from = dev.submitted + dev.refused + 1;
  dev.refuse_count = 0;
  for (unsigned i = 0; i < HybridCodec::kMaxRefusals; i++) RoundTripPages(h, pages);
  EXPECT_FALSE(h.backend_enabled());
  EXPECT_NE(std::string::npos, h.backend_why().find("refused 8 batches in a row")) << h.backend_why();
  EXPECT_NE(std::string::npos, h.backend_why().find("Device or resource busy")) << h.backend_why();
}

// The library reports a dropped backend (backend_why()); it prints
// nothing: what a daemon logs is the daemon's to say.
TEST(HybridWatchdogTest, NothingIsPrinted) {
  auto cpu = Cpu();
  SlowBackend dev(2, 512);
  HybridCodec h(cpu.get(), &dev, HybridCodec::Split::kBackendFirst);
  dev.fail_at = 1;
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  RoundTripPages(h, MixedPages(600, 8));
  const std::string err = ::testing::internal::GetCapturedStderr();
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_FALSE(h.backend_enabled());
  EXPECT_EQ("", err);
  EXPECT_EQ("", out);
}

// ---------------------------------------------------------------------
// Records in memory another party writes (the kernel's, in hzramd) are
// read once: each record's fields one after another, never again. The
// access trace sees every load from the records' page, and after each
// one rewrites the field it read, as the kernel could (a batch taken
// back and its cells reused): a length becomes 0xffffffff, an offset
// points 4 GiB further, LZ4 and RAW swap, a flag flips. Code that
// reads each field once uses the values it found, all from one snapshot
// (the records before the call); code that reads a field again gets the
// rewritten value, and decodes a page differently, fails it, or reads
// out of bounds (a crash; under AddressSanitizer, a report).

// The field of a record at @offset rewritten, if a field starts there.
void RewriteField(std::uint8_t* base, std::size_t offset, void*) {
  auto* r = reinterpret_cast<hzram_page_record*>(base + offset / sizeof(hzram_page_record) *
                                                   sizeof(hzram_page_record));
  switch (offset % sizeof(hzram_page_record)) {
    case offsetof(hzram_page_record, value):
      r->value += std::uint64_t{1} << 32;
      break;
    case offsetof(hzram_page_record, length):
      r->length = 0xffffffff;
      break;
    case offsetof(hzram_page_record, kind):
      r->kind = r->kind == HZRAM_PAGE_LZ4 ? HZRAM_PAGE_RAW : HZRAM_PAGE_LZ4;
      break;
    case offsetof(hzram_page_record, flags):
      r->flags ^= 1;
      break;
  }
}

// @n records of @pages (compressed by @cpu) in a traced page, the arena
// beside; the records as they were before anything read them, and what
// decoding those gives (statuses, pages).
struct TracedBatch {
  std::unique_ptr<AccessTrace> trace;
  std::vector<std::uint8_t> arena;
  std::span<const hzram_page_record> records;
  std::vector<hzram_page_record> snapshot;
  std::vector<int> want_status;
  std::vector<std::uint8_t> want_pages;
  TracedBatch(Codec& cpu, const std::vector<std::uint8_t>& pages) {
    const std::size_t n = pages.size() / kPageSize;
    trace = std::make_unique<AccessTrace>(n * sizeof(hzram_page_record));
    auto* rec = reinterpret_cast<hzram_page_record*>(trace->data());
    arena.resize(Codec::ArenaBytes(n));
    EXPECT_EQ(0, cpu.Compress(PageList(pages.data(), n), std::span(rec, n), arena));
    // One of each way to be wrong, among them.
    rec[1] = {arena.size() + 1, 100, HZRAM_PAGE_LZ4, 0};
    rec[3].flags = 1;
    rec[5].kind = 9;
    records = std::span<const hzram_page_record>(rec, n);
    snapshot.assign(rec, rec + n);
    want_status.resize(n);
    want_pages.resize(pages.size());
    EXPECT_EQ(3, cpu.Decompress(snapshot, arena, MutablePageList(want_pages.data(), n),
                                want_status));
    trace->set_after_access(RewriteField, nullptr);
  }
  // Whether @status and @out are what the snapshot decodes to.
  void ExpectTheSnapshots(const std::vector<int>& status, const std::vector<std::uint8_t>& out) {
    for (std::size_t i = 0; i < status.size(); i++) {
      EXPECT_EQ(want_status[i], status[i]) << "page " << i;
      if (want_status[i] == 0 && status[i] == 0) {
        EXPECT_EQ(0, std::memcmp(&want_pages[i * kPageSize], &out[i * kPageSize], kPageSize))
            << "page " << i;
      }
    }
  }
};

TEST(RecordsReadOnceTest, ByTheCodec) {
  auto cpu = Cpu();
  const auto pages = MixedPages(15, 9);  // under 16: on the calling thread
  TracedBatch b(*cpu, pages);
  std::vector<std::uint8_t> out(pages.size());
  std::vector<int> status(15);
  ASSERT_TRUE(b.trace->Start());
  const int failed = cpu->Decompress(b.records, b.arena, MutablePageList(out.data(), 15), status);
  b.trace->Stop();
  EXPECT_EQ(3, failed);
  b.ExpectTheSnapshots(status, out);
  std::string why;
  EXPECT_TRUE(b.trace->EachItemReadOnce(sizeof(hzram_page_record), &why)) << why;
  EXPECT_GE(b.trace->Offsets().size(), 15u);
  // Every record was read, and every field read was rewritten after.
  for (std::size_t i = 0; i < 15; i++)
    EXPECT_NE(0, std::memcmp(&b.snapshot[i], &b.records[i], sizeof(hzram_page_record))) << i;
}

// The hybrid codec splits the records between the device (rebased) and
// the CPU, and redoes the device's on the CPU when it fails: from one
// copy, read once.
TEST(RecordsReadOnceTest, ByTheHybridCodecAndItsRedo) {
  auto cpu = Cpu();
  for (const bool fail : {false, true}) {
    SlowBackend dev(2, 4);  // two parts of 4 pages; the CPU the other 7
    HybridCodec h(cpu.get(), &dev, HybridCodec::Split::kBackendFirst);
    const auto pages = MixedPages(15, 10);
    TracedBatch b(*cpu, pages);
    if (fail) dev.fail_at = 1;
    std::vector<std::uint8_t> out(pages.size());
    std::vector<int> status(15);
    ASSERT_TRUE(b.trace->Start());
    const int failed = h.Decompress(b.records, b.arena, MutablePageList(out.data(), 15), status);
    b.trace->Stop();
    EXPECT_EQ(3, failed) << fail;
    EXPECT_EQ(fail ? 0u : 8u, h.last_backend_pages());
    b.ExpectTheSnapshots(status, out);
    for (std::size_t i : {0, 2, 4, 6, 8, 14})
      EXPECT_EQ(0, std::memcmp(&out[i * kPageSize], &pages[i * kPageSize], kPageSize)) << i;
    std::string why;
    EXPECT_TRUE(b.trace->EachItemReadOnce(sizeof(hzram_page_record), &why)) << fail << ": " << why;
  }
}

}  // namespace
}  // namespace hzram::test
