// SPDX-License-Identifier: GPL-2.0
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>

#include "hzram/backend.h"

namespace hzram {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Weight of a new observation in the running rates.
constexpr double kAlpha = 0.25;

bool HasData(const hzram_page_record& r) {
  return r.kind == HZRAM_PAGE_RAW || r.kind == HZRAM_PAGE_LZ4;
}

}  // namespace

HybridCodec::HybridCodec(Codec* cpu, AsyncBackend* backend)
    : cpu_(cpu), backend_(backend), rebased_(cpu->max_batch()) {}

void HybridCodec::Refused() {
  // -EBUSY or a batch it cannot take leave a healthy backend on.
  if (!backend_->healthy()) BackendFailed();
}

void HybridCodec::Count(std::size_t n, std::size_t backend) {
  last_backend_pages_ = backend;
  backend_pages_ += backend;
  cpu_pages_ += n - backend;
}

void HybridCodec::BackendFailed() {
  if (backend_failed_) return;
  backend_failed_ = true;
  backend_why_ = backend_->why();
  std::fprintf(stderr, "hzram: backend disabled, the CPU takes over: %s\n", backend_why_.c_str());
}

std::size_t HybridCodec::BackendShare(const Rates& r, std::size_t n) {
  if (r.cpu_pages_per_s <= 0 || r.backend_pages_per_s <= 0 || n == 0) return 0;
  // Both finish together: t0 + g / Rb = (n - g) / Rc. The host copies
  // (h a page) come on top, on the calling thread: the batch takes
  // g h + max(t0 + g / Rb, (n - g) / Rc), least at that g when h < 1 / Rc.
  const double rc = r.cpu_pages_per_s, rb = r.backend_pages_per_s, h = r.backend_host_s_per_page;
  const double g = (n / rc - r.backend_fixed_s) / (1 / rb + 1 / rc);
  if (g < 1) return 0;
  const std::size_t share = std::min<std::size_t>(n, static_cast<std::size_t>(g + 0.5));
  // Only if it beats the CPU alone.
  const double split = share * h + std::max(r.backend_fixed_s + share / rb, (n - share) / rc);
  return split < n / rc ? share : 0;
}

void HybridCodec::Update(Rates& r, std::size_t cpu_pages, double cpu_s, std::size_t backend_pages,
                         const BatchTiming& backend) {
  auto blend = [](double& v, double x) { v = v > 0 ? (1 - kAlpha) * v + kAlpha * x : x; };
  if (cpu_pages >= 16 && cpu_s > 0) blend(r.cpu_pages_per_s, cpu_pages / cpu_s);
  if (backend_pages == 0) return;
  const double device_s = (backend.total_ms - backend.host_ms) / 1e3;
  if (device_s > r.backend_fixed_s)
    blend(r.backend_pages_per_s, backend_pages / (device_s - r.backend_fixed_s));
  blend(r.backend_host_s_per_page, backend.host_ms / 1e3 / backend_pages);
}

int HybridCodec::Calibrate(const PageList& sample_in) {
  const std::size_t n = std::min(sample_in.size(), cpu_->max_batch());
  if (n < 2) return -EINVAL;
  const PageList sample = sample_in.Sub(0, n);
  std::vector<hzram_page_record> rec(n);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(n)), out(n * kPageSize);
  std::vector<int> status(n);

  // The CPU, warm.
  for (int pass = 0; pass < 2; pass++) {
    auto t = Clock::now();
    if (int ret = cpu_->Compress(sample, rec, arena)) return ret;
    comp_.cpu_pages_per_s = n / Since(t);
    t = Clock::now();
    if (cpu_->Decompress(rec, arena, MutablePageList(out.data(), n), status) < 0) return -EINVAL;
    decomp_.cpu_pages_per_s = n / Since(t);
  }
  if (!backend_enabled()) return 0;

  // The backend: a line through its times for one page and for the sample
  // gives its cost per page and per batch.
  const std::size_t m = std::min(n, backend_->max_batch());
  std::vector<hzram_page_record> brec(m);
  std::vector<std::uint8_t> barena(Codec::ArenaBytes(m));
  for (int pass = 0; pass < 2; pass++) {
    BatchTiming tc[2], td[2];
    const std::size_t counts[2] = {1, m};
    for (int k = 0; k < 2; k++) {
      const std::size_t count = counts[k];
      int ticket = backend_->SubmitCompress(sample.Sub(0, count), std::span(brec.data(), count),
                                            std::span(barena.data(), Codec::ArenaBytes(count)));
      if (ticket < 0 || backend_->Wait(ticket, &tc[k]) < 0) return BackendFailed(), 0;
      ticket = backend_->SubmitDecompress(std::span(brec.data(), count),
                                          std::span(barena.data(), Codec::ArenaBytes(count)),
                                          MutablePageList(out.data(), count),
                                          std::span(status.data(), count));
      if (ticket < 0 || backend_->Wait(ticket, &td[k]) < 0) return BackendFailed(), 0;
    }
    // The device's part (all but the host copies) on a line through the
    // two batches; the host copies per page from the larger.
    auto fit = [&](Rates& r, const BatchTiming* t) {
      const double d0 = (t[0].total_ms - t[0].host_ms) / 1e3, d1 = (t[1].total_ms - t[1].host_ms) / 1e3;
      const double per_page = std::max(1e-12, (d1 - d0) / (m - 1));
      r.backend_pages_per_s = 1 / per_page;
      r.backend_fixed_s = std::max(0.0, d0 - per_page);
      r.backend_host_s_per_page = t[1].host_ms / 1e3 / m;
    };
    fit(comp_, tc);
    fit(decomp_, td);
    const double h2d_s = (tc[1].h2d_ms + td[1].h2d_ms) / 1e3, d2h_s = (tc[1].d2h_ms + td[1].d2h_ms) / 1e3;
    if (h2d_s > 0) link_.h2d_bytes_per_s = (tc[1].h2d_bytes + td[1].h2d_bytes) / h2d_s;
    if (d2h_s > 0) link_.d2h_bytes_per_s = (tc[1].d2h_bytes + td[1].d2h_bytes) / d2h_s;
  }
  return 0;
}

int HybridCodec::Compress(const PageList& pages, std::span<hzram_page_record> records,
                          std::span<std::uint8_t> arena) {
  const std::size_t n = pages.size();
  if (n > cpu_->max_batch() || records.size() < n || arena.size() < Codec::ArenaBytes(n))
    return -EINVAL;
  std::size_t g = 0;
  if (backend_enabled()) g = std::min(BackendShare(comp_, n), backend_->max_batch());

  // The backend's share is pages [0, g) in arena [0, g pages); the CPU's
  // the rest, its offsets moved past the backend's part.
  int ticket = -1;
  if (g) {
    ticket = backend_->SubmitCompress(pages.Sub(0, g), records.subspan(0, g),
                                      arena.subspan(0, Codec::ArenaBytes(g)));
    if (ticket < 0) {
      Refused();
      g = 0;
    }
  }
  const auto t = Clock::now();
  int ret = cpu_->Compress(pages.Sub(g, n - g), records.subspan(g, n - g),
                           arena.subspan(Codec::ArenaBytes(g)));
  const double cpu_s = Since(t);
  if (ret) {
    if (g) backend_->Wait(ticket, nullptr);  // the slot is freed either way
    return ret;
  }
  for (std::size_t i = g; i < n; i++)
    if (HasData(records[i])) records[i].value += Codec::ArenaBytes(g);

  BatchTiming timing;
  if (g && backend_->Wait(ticket, &timing) < 0) {
    // The backend's part, again on the CPU; the speeds are not updated
    // from a batch done twice (and the backend is off from now on).
    BackendFailed();
    if ((ret = cpu_->Compress(pages.Sub(0, g), records.subspan(0, g),
                              arena.subspan(0, Codec::ArenaBytes(g)))))
      return ret;
    Count(n, 0);
    return 0;
  }
  Update(comp_, n - g, cpu_s, g, timing);
  Count(n, g);
  return 0;
}

int HybridCodec::Decompress(std::span<const hzram_page_record> records,
                            std::span<const std::uint8_t> arena, const MutablePageList& pages,
                            std::span<int> status) {
  const std::size_t n = records.size();
  if (n > cpu_->max_batch() || pages.size() != n || status.size() != n) return -EINVAL;
  std::size_t g = 0;
  if (backend_enabled()) g = std::min(BackendShare(decomp_, n), backend_->max_batch());

  // The backend gets its records with the part of the arena they use.
  int ticket = -1;
  if (g) {
    std::uint64_t lo = arena.size(), hi = 0;
    for (std::size_t i = 0; i < g; i++) {
      const auto& r = records[i];
      if (HasData(r) && r.value <= arena.size() && r.length <= arena.size() - r.value) {
        lo = std::min<std::uint64_t>(lo, r.value);
        hi = std::max<std::uint64_t>(hi, r.value + r.length);
      }
    }
    if (lo > hi) lo = hi = 0;
    for (std::size_t i = 0; i < g; i++) {
      rebased_[i] = records[i];
      // In-range records move with their part; the others stay out of range.
      if (HasData(records[i]) && records[i].value >= lo && records[i].value <= arena.size())
        rebased_[i].value -= lo;
    }
    ticket = backend_->SubmitDecompress(std::span(rebased_.data(), g), arena.subspan(lo, hi - lo),
                                        pages.Sub(0, g), status.subspan(0, g));
    if (ticket < 0) {
      Refused();
      g = 0;
    }
  }
  const auto t = Clock::now();
  int failed = cpu_->Decompress(records.subspan(g), arena, pages.Sub(g, n - g), status.subspan(g));
  const double cpu_s = Since(t);
  if (failed < 0) {
    if (g) backend_->Wait(ticket, nullptr);
    return failed;
  }

  BatchTiming timing;
  if (g) {
    const int ret = backend_->Wait(ticket, &timing);
    if (ret < 0) {
      BackendFailed();
      const int redo = cpu_->Decompress(records.subspan(0, g), arena, pages.Sub(0, g),
                                        status.subspan(0, g));
      if (redo < 0) return redo;
      Count(n, 0);
      return failed + redo;
    }
    failed += ret;
  }
  Update(decomp_, n - g, cpu_s, g, timing);
  Count(n, g);
  return failed;
}

}  // namespace hzram
