// SPDX-License-Identifier: GPL-2.0
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "hybrid_model.h"
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

// The pause between two polls of the backend, for a wait that began at
// @since and must end by @until: a yield for the first kPollSpin, then a
// sleep of a sixteenth of the time waited so far, at most kPollNap and
// never asked past @until (the timer's slack, 50 µs by default, comes on
// top). A batch the device ends soon is seen at once; a long one costs
// the host little CPU, and is seen about a sixteenth of its time late,
// 150 µs at most (its copy back starts at that poll).
constexpr auto kPollSpin = std::chrono::microseconds(20);
constexpr auto kPollNap = std::chrono::microseconds(100);
void PollPause(Clock::time_point since, Clock::time_point until) {
  const auto now = Clock::now();
  const auto waited = now - since;
  if (waited < kPollSpin) {
    std::this_thread::yield();
    return;
  }
  auto nap = std::min<Clock::duration>(waited / 16, kPollNap);
  if (until - now < nap) nap = until - now;
  if (nap > Clock::duration::zero()) std::this_thread::sleep_for(nap);
}

}  // namespace

HybridCodec::HybridCodec(Codec* cpu, AsyncBackend* backend, Split split)
    : cpu_(cpu),
      backend_(backend),
      split_(split),
      model_(std::make_unique<HybridModel>()),
      records_(cpu->max_batch()),
      rebased_(cpu->max_batch()) {
  if (backend_) {
    const unsigned slots = std::max(1u, backend_->max_in_flight());
    parts_.reserve(slots);
    part_timing_.resize(slots);
  }
}

HybridCodec::~HybridCodec() = default;

void HybridCodec::Refused(int err) {
  refusals_++;
  if (!backend_->healthy()) return BackendFailed();
  // -EBUSY or a batch it cannot take leave a healthy backend on, unless it
  // keeps refusing.
  if (++refused_in_a_row_ < kMaxRefusals || backend_failed_) return;
  backend_failed_ = true;
  char why[160];
  std::snprintf(why, sizeof(why), "it refused %u batches in a row (the last: %s)", refused_in_a_row_,
                std::strerror(-err));
  backend_why_ = why;
}

void HybridCodec::Count(std::size_t n, std::size_t backend) {
  last_backend_pages_ = backend;
  backend_pages_ += backend;
  cpu_pages_ += n - backend;
}

void HybridCodec::BackendFailed() {
  if (backend_failed_) return;
  backend_failed_ = true;
  if (!backend_->healthy() || backend_why_.empty()) backend_why_ = backend_->why();
  if (backend_why_.empty()) backend_why_ = "it failed without a reason";
}

std::size_t HybridCodec::Share(const HybridRates& r, const HybridRates& calibrated,
                               const Probe& p, std::size_t n, bool* probe) const {
  *probe = false;
  if (!backend_enabled()) return 0;
  const std::size_t most = backend_->max_batch() * std::max(1u, backend_->max_in_flight());
  if (split_ == Split::kBackendFirst) return std::min(n, most);
  std::size_t g = BackendShare(r, n);
  if (g == 0 && p.idle + 1 >= p.interval) {
    // Half the time the backend has before it is given up (the
    // watchdog's, or what is left to the deadline).
    const double limit_s =
        has_deadline_ ? std::chrono::duration<double>(deadline_ - Clock::now()).count() : watchdog_s_;
    g = ProbeShare(r, calibrated, n, limit_s / 2);
    *probe = g != 0;
  }
  return std::min(g, most);
}

std::size_t ProbeShare(const HybridRates& r, const HybridRates& calibrated, std::size_t n,
                       double max_s) {
  if (r.cpu_pages_per_s <= 0 || r.backend_pages_per_s <= 0 || n == 0) return 0;
  // A quarter of what the device would get at its calibrated speed, with
  // the host's and the CPU's as measured since.
  HybridRates c = r;
  c.backend_pages_per_s = calibrated.backend_pages_per_s;
  c.backend_fixed_s = calibrated.backend_fixed_s;
  const std::size_t quarter = BackendShare(c, n) / 4;
  // No more than the device, as slow as last measured, does in @max_s: a
  // probe that finds it still slow is not taken for a hang, which would
  // drop it.
  const double room = max_s - r.backend_fixed_s;
  const double cap = room > 0 ? room * r.backend_pages_per_s : 0;
  return std::min<std::size_t>(quarter, static_cast<std::size_t>(std::min(cap, 1e18)));
}

std::size_t HybridCodec::ShareNow(const HybridRates& r, const HybridRates& calibrated, Probe& p,
                                  std::size_t n) {
  bool probe;
  const std::size_t g = Share(r, calibrated, p, n, &probe);
  if (g && has_deadline_ && Clock::now() > latest_start_) {
    late_starts_++;
    return 0;  // a probe waits for a batch that can take it
  }
  if (probe) {
    // Each probe that the model's share does not follow waits twice as
    // long for the next: a device that stays slow costs ever less.
    probes_++;
    p.interval = std::min(2 * p.interval, kReprobeMax);
  } else if (g) {
    p.interval = kReprobe;
  }
  p.idle = g ? 0 : p.idle + 1;
  return g;
}

std::size_t BackendShare(const HybridRates& r, std::size_t n) {
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

void HybridCodec::Update(HybridRates& r, std::size_t cpu_pages, double cpu_s,
                         std::size_t backend_pages, const BatchTiming& backend) {
  auto blend = [](double& v, double x) { v = v > 0 ? (1 - kAlpha) * v + kAlpha * x : x; };
  if (cpu_pages >= 16 && cpu_s > 0) blend(r.cpu_pages_per_s, cpu_pages / cpu_s);
  if (backend_pages == 0) return;
  // The device's time: not the host's copies (WaitParts() has left out
  // the time its results waited for the caller).
  const double device_s = (backend.total_ms - backend.host_ms) / 1e3;
  if (device_s > r.backend_fixed_s)
    blend(r.backend_pages_per_s, backend_pages / (device_s - r.backend_fixed_s));
  blend(r.backend_host_s_per_page, backend.host_ms / 1e3 / backend_pages);
}

namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Calibration runs of each kind, after one that warms up.
constexpr int kRuns = 5;

}  // namespace

// A direction's calibration runs on the backend, per batch size: the
// times, in seconds, of the device, of the host copies and of the copies
// to and from the device; and the largest batches' timings.
struct HybridCodec::Samples {
  std::vector<double> device[3], host[3], copies[3];
  std::vector<BatchTiming> largest;
};

int HybridCodec::Calibrate(const PageList& sample_in) {
  const std::size_t n = std::min(sample_in.size(), cpu_->max_batch());
  if (n < 2) return -EINVAL;
  const PageList sample = sample_in.Sub(0, n);
  std::vector<std::uint8_t> out(n * kPageSize);
  std::vector<int> status(n);
  if (int ret = CalibrateCpu(sample, MutablePageList(out.data(), n), status)) return ret;
  if (!backend_enabled()) return 0;

  // The backend: batches of 1, m / 2 and m pages, several runs each; a
  // line through the medians of its device time gives its cost per page
  // and per batch, bounded (see HybridRates).
  const std::size_t m = std::min(n, backend_->max_batch());
  const std::size_t sizes[3] = {1, std::max<std::size_t>(1, m / 2), m};
  Samples sc, sd;
  if (SampleBackend(sample, sizes, MutablePageList(out.data(), n), status, &sc, &sd) < 0)
    return BackendFailed(), 0;
  Fit(sizes, sc, &model_->compress);
  Fit(sizes, sd, &model_->decompress);
  model_->calibrated_compress = model_->compress;
  model_->calibrated_decompress = model_->decompress;
  double h2d_ms = 0, d2h_ms = 0, h2d_b = 0, d2h_b = 0;
  for (const auto* v : {&sc.largest, &sd.largest})
    for (const auto& t : *v)
      h2d_ms += t.h2d_ms, d2h_ms += t.d2h_ms, h2d_b += t.h2d_bytes, d2h_b += t.d2h_bytes;
  if (h2d_ms > 0) model_->link.h2d_bytes_per_s = h2d_b / (h2d_ms / 1e3);
  if (d2h_ms > 0) model_->link.d2h_bytes_per_s = d2h_b / (d2h_ms / 1e3);
  return 0;
}

int HybridCodec::CalibrateCpu(const PageList& sample, const MutablePageList& out,
                              std::span<int> status) {
  // The CPU, warm: the median of several runs.
  const std::size_t n = sample.size();
  std::vector<hzram_page_record> rec(n);
  std::vector<std::uint8_t> arena(Codec::ArenaBytes(n));
  std::vector<double> cs, ds;
  for (int pass = 0; pass < kRuns + 1; pass++) {
    auto t = Clock::now();
    if (int ret = cpu_->Compress(sample, rec, arena)) return ret;
    const double c = Since(t);
    t = Clock::now();
    if (cpu_->Decompress(rec, arena, out, status) < 0) return -EINVAL;
    const double d = Since(t);
    if (pass) cs.push_back(c), ds.push_back(d);  // the first run warms up
  }
  model_->compress.cpu_pages_per_s = n / Median(cs);
  model_->decompress.cpu_pages_per_s = n / Median(ds);
  return 0;
}

int HybridCodec::SampleBackend(const PageList& sample, const std::size_t (&sizes)[3],
                               const MutablePageList& out, std::span<int> status, Samples* sc,
                               Samples* sd) {
  const std::size_t m = sizes[2];
  std::vector<hzram_page_record> brec(m);
  std::vector<std::uint8_t> barena(Codec::ArenaBytes(m));
  auto wait = [&](int ticket, BatchTiming* t) {
    if (ticket < 0) {
      refusals_++;
      if (backend_->healthy())
        backend_why_ = std::string("it refused a calibration batch: ") + std::strerror(-ticket);
      return -EIO;
    }
    const auto deadline = Clock::now() + std::chrono::duration<double>(watchdog_s_);
    while (!backend_->Ready(ticket)) {
      if (Clock::now() > deadline) {
        timeouts_++;
        backend_->Abandon(ticket, "a calibration batch did not finish within the watchdog's " +
                                      std::to_string(watchdog_s_) + " s");
        return -ETIMEDOUT;
      }
      std::this_thread::yield();
    }
    return backend_->Wait(ticket, t);
  };
  auto add = [](Samples& s, int k, const BatchTiming& t) {
    s.device[k].push_back((t.total_ms - t.host_ms - t.wait_ms) / 1e3);
    s.host[k].push_back(t.host_ms / 1e3);
    s.copies[k].push_back((t.h2d_ms + t.d2h_ms) / 1e3);
  };
  for (int pass = 0; pass < kRuns + 1; pass++) {
    for (int k = 0; k < 3; k++) {
      const std::size_t count = sizes[k];
      BatchTiming tc, td;
      int ret = wait(backend_->SubmitCompress(sample.Sub(0, count), std::span(brec.data(), count),
                                              std::span(barena.data(), Codec::ArenaBytes(count))),
                     &tc);
      if (ret >= 0)
        ret = wait(backend_->SubmitDecompress(std::span(brec.data(), count),
                                              std::span(barena.data(), Codec::ArenaBytes(count)),
                                              out.Sub(0, count), status.first(count)),
                   &td);
      if (ret < 0) return ret;
      if (pass == 0) continue;  // warm-up
      add(*sc, k, tc);
      add(*sd, k, td);
      if (k == 2) sc->largest.push_back(tc), sd->largest.push_back(td);
    }
  }
  return 0;
}

void HybridCodec::Fit(const std::size_t (&sizes)[3], const Samples& s, HybridRates* r) {
  double x[3], y[3], mx = 0, my = 0;
  for (int k = 0; k < 3; k++) {
    x[k] = static_cast<double>(sizes[k]);
    y[k] = Median(s.device[k]);
    mx += x[k] / 3;
    my += y[k] / 3;
  }
  double sxy = 0, sxx = 0;
  for (int k = 0; k < 3; k++) sxy += (x[k] - mx) * (y[k] - my), sxx += (x[k] - mx) * (x[k] - mx);
  const double slope = sxx > 0 ? sxy / sxx : y[2] / x[2];
  // Bounds: no less than the largest batch's copies per page, no more
  // than its whole time per page.
  const double lo = Median(s.copies[2]) / x[2], hi = y[2] / x[2];
  const double per_page = std::max(1e-12, std::clamp(slope, std::min(lo, hi), hi));
  r->backend_pages_per_s = 1 / per_page;
  r->backend_fixed_s = std::max(0.0, y[2] - per_page * x[2]);
  r->backend_host_s_per_page = Median(s.host[2]) / x[2];
}

// The batch whose backend share SubmitParts() submits: a compression's
// pages, records and arena, or a decompression's records (the codec's own
// copy), arena, pages and statuses.
struct HybridCodec::Batch {
  const PageList* pages = nullptr;  // null for a decompression
  std::span<hzram_page_record> records = {};
  std::span<std::uint8_t> arena = {};
  std::span<const hzram_page_record> drecords = {};
  std::span<const std::uint8_t> darena = {};
  const MutablePageList* dpages = nullptr;
  std::span<int> status = {};
};

int HybridCodec::SubmitParts(std::size_t g, const Batch& batch) {
  const auto& [pages, records, arena, drecords, darena, dpages, status] = batch;
  parts_.clear();
  // As many parts as may be in flight, none under kMinSubBatch pages
  // unless the share is, none over the backend's max_batch.
  const std::size_t max = backend_->max_batch(), slots = std::max(1u, backend_->max_in_flight());
  const std::size_t k = std::min(slots, std::max((g + max - 1) / max,
                                                 std::clamp<std::size_t>(g / kMinSubBatch, 1, slots)));
  std::size_t first = 0;
  watch_start_ = Clock::now();
  for (std::size_t j = 0; j < k; j++) {
    const std::size_t n = std::min(max, g * (j + 1) / k - first);
    int ticket;
    if (pages) {
      ticket = backend_->SubmitCompress(pages->Sub(first, n), records.subspan(first, n),
                                        arena.subspan(Codec::ArenaBytes(first), Codec::ArenaBytes(n)));
    } else {
      // Its records (the codec's own copy), with the part of the arena
      // they use: valid records move with their part, the others stay
      // invalid.
      std::uint64_t lo = darena.size(), hi = 0;
      for (std::size_t i = first; i < first + n; i++) {
        const auto& r = drecords[i];
        if (HasData(r) && hzram_page_record_check(&r, darena.size()) == HZRAM_RECORD_OK) {
          lo = std::min<std::uint64_t>(lo, r.value);
          hi = std::max<std::uint64_t>(hi, r.value + r.length);
        }
      }
      if (lo > hi) lo = hi = 0;
      for (std::size_t i = first; i < first + n; i++) {
        rebased_[i] = drecords[i];
        if (HasData(drecords[i]) && drecords[i].value >= lo && drecords[i].value <= darena.size())
          rebased_[i].value -= lo;
      }
      ticket = backend_->SubmitDecompress(std::span(rebased_.data() + first, n),
                                          darena.subspan(lo, hi - lo), dpages->Sub(first, n),
                                          status.subspan(first, n));
    }
    if (ticket < 0) {
      Refused(ticket);
      break;
    }
    refused_in_a_row_ = 0;
    const auto now = Clock::now();
    if (parts_.empty()) first_submit_ = now;
    parts_.push_back({ticket, first, n, std::chrono::duration<double>(now - first_submit_).count()});
    first += n;
  }
  return static_cast<int>(first);  // the pages the backend took
}

int HybridCodec::WaitParts(BatchTiming* timing) {
  // The watchdog runs from the submission, not from here: the CPU's share
  // came in between, and the batch's time is the module's. Or to the
  // caller's deadline, which counts from before the call.
  const auto deadline =
      has_deadline_ ? deadline_
                    : watch_start_ + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(watchdog_s_));
  int ret = 0, sum = 0;
  for (std::size_t j = 0; j < parts_.size(); j++) {
    const int ticket = parts_[j].ticket;
    part_timing_[j] = BatchTiming();
    if (ret == 0) {
      // Polling every part lets each start its copy back soon after its
      // kernels are done (PollPause).
      const auto since = Clock::now();
      for (;;) {
        bool ready = backend_->Ready(ticket);
        for (std::size_t k = j + 1; k < parts_.size(); k++) backend_->Ready(parts_[k].ticket);
        if (ready || Clock::now() > deadline) break;
        if (progress_) progress_(progress_arg_);
        PollPause(since, deadline);
      }
      if (!backend_->Ready(ticket)) {
        timeouts_++;
        char why[160];
        if (has_deadline_)
          std::snprintf(why, sizeof(why),
                        "a batch of %zu pages did not finish by its deadline, %.3f s after its "
                        "submission",
                        parts_[j].n,
                        std::chrono::duration<double>(deadline_ - watch_start_).count());
        else
          std::snprintf(why, sizeof(why),
                        "a batch of %zu pages did not finish within the watchdog's %.3f s",
                        parts_[j].n, watchdog_s_);
        backend_->Abandon(ticket, why);
        ret = -ETIMEDOUT;
        continue;
      }
      const int r = backend_->Wait(ticket, &part_timing_[j]);
      if (r < 0)
        ret = -EIO;
      else
        sum += r;
    } else if (backend_->Ready(ticket)) {
      backend_->Wait(ticket, nullptr);  // frees it; its outputs are not used
    } else {
      backend_->Abandon(ticket, backend_->why());
    }
  }
  if (ret) return ret;
  if (timing) {
    // The parts overlap on the device: the share took from the first
    // part's submission to the end of the part that ended last, each
    // starting no earlier than its own submission; less the time its
    // results waited for this thread, busy with the CPU's share (it
    // polls only after it), which is not the device's.
    *timing = BatchTiming();
    double device_ms = 0;
    for (std::size_t j = 0; j < parts_.size(); j++) {
      const BatchTiming& t = part_timing_[j];
      timing->host_ms += t.host_ms;
      device_ms = std::max(device_ms, parts_[j].submitted_s * 1e3 + t.total_ms - t.host_ms - t.wait_ms);
    }
    timing->total_ms = device_ms + timing->host_ms;
  }
  return sum;
}

int HybridCodec::Compress(const PageList& pages, std::span<hzram_page_record> records,
                          std::span<std::uint8_t> arena) {
  const std::size_t n = pages.size();
  if (n > cpu_->max_batch() || records.size() < n || arena.size() < Codec::ArenaBytes(n))
    return -EINVAL;
  std::size_t g = ShareNow(model_->compress, model_->calibrated_compress, probe_compress_, n);

  // The backend's share is pages [0, g) in arena [0, g pages), part by
  // part; the CPU's the rest, its offsets moved past the backend's part.
  parts_.clear();
  if (g) g = SubmitParts(g, {.pages = &pages, .records = records, .arena = arena});
  const auto t = Clock::now();
  int ret = g < n ? cpu_->Compress(pages.Sub(g, n - g), records.subspan(g, n - g),
                                   arena.subspan(Codec::ArenaBytes(g)))
                  : 0;
  const double cpu_s = Since(t);
  for (std::size_t i = g; i < n; i++)
    if (HasData(records[i])) records[i].value += Codec::ArenaBytes(g);

  BatchTiming timing;
  const int waited = g ? WaitParts(&timing) : 0;
  if (ret) return ret;
  if (waited < 0) {
    // The backend's part, again on the CPU; the speeds are not updated
    // from a batch done twice (and the backend is off from now on).
    BackendFailed();
    if ((ret = cpu_->Compress(pages.Sub(0, g), records.subspan(0, g),
                              arena.subspan(0, Codec::ArenaBytes(g)))))
      return ret;
    Count(n, 0);
    return 0;
  }
  // Each part's offsets are within its own piece of the arena.
  for (const auto& p : parts_)
    for (std::size_t i = p.first; i < p.first + p.n; i++)
      if (HasData(records[i])) records[i].value += Codec::ArenaBytes(p.first);
  Update(model_->compress, n - g, cpu_s, g, timing);
  Count(n, g);
  return 0;
}

int HybridCodec::Decompress(std::span<const hzram_page_record> shared,
                            std::span<const std::uint8_t> arena, const MutablePageList& pages,
                            std::span<int> status) {
  const std::size_t n = shared.size();
  if (n > cpu_->max_batch() || pages.size() != n || status.size() != n) return -EINVAL;
  // The records, once: both shares, the rebasing and a redo use this copy.
  for (std::size_t i = 0; i < n; i++) records_[i] = LoadRecord(shared[i]);
  const std::span<const hzram_page_record> records(records_.data(), n);
  std::size_t g = ShareNow(model_->decompress, model_->calibrated_decompress, probe_decompress_, n);

  parts_.clear();
  if (g)
    g = SubmitParts(g, {.drecords = records, .darena = arena, .dpages = &pages, .status = status});
  const auto t = Clock::now();
  int failed = g < n ? cpu_->Decompress(records.subspan(g), arena, pages.Sub(g, n - g),
                                        status.subspan(g))
                     : 0;
  const double cpu_s = Since(t);

  BatchTiming timing;
  const int waited = g ? WaitParts(&timing) : 0;
  if (failed < 0) return failed;
  if (waited < 0) {
    BackendFailed();
    const int redo = cpu_->Decompress(records.subspan(0, g), arena, pages.Sub(0, g),
                                      status.subspan(0, g));
    if (redo < 0) return redo;
    Count(n, 0);
    return failed + redo;
  }
  failed += waited;
  Update(model_->decompress, n - g, cpu_s, g, timing);
  Count(n, g);
  return failed;
}

}  // namespace hzram
