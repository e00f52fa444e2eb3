// SPDX-License-Identifier: GPL-2.0
//
// hzram backends: an asynchronous batch codec (the GPU's, or a test's) and
// the hybrid codec that shares each batch between it and the CPU codec.
//
// Host-only header; all pointers are host memory. Functions return 0 or a
// negative errno and never set errno.
#ifndef HZRAM_BACKEND_H
#define HZRAM_BACKEND_H

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hzram/codec.h"

namespace hzram {

// Where one batch's time went, in milliseconds.
struct BatchTiming {
  double host_ms = 0;    // host copies into and out of the backend's buffers
  double h2d_ms = 0;     // copies to the device
  double kernel_ms = 0;  // the kernels
  double d2h_ms = 0;     // copies back
  double wait_ms = 0;    // the results waited for the host: the kernels
                         // were done, the copy back not yet started (it
                         // starts when the caller polls, Ready() or Wait())
  double total_ms = 0;   // all of the above: submission to results in place
  std::uint64_t h2d_bytes = 0, d2h_bytes = 0;  // what crossed the link
};

// A batch codec that works in the background: Submit*() starts a batch and
// returns a ticket; Wait() finishes it and puts its results in the spans
// given at submission, which must stay valid until then. The same layout
// and per-page errors as Codec.
class AsyncBackend {
 public:
  virtual ~AsyncBackend() = default;

  // Start compressing @pages. Returns a ticket (>= 0), -EINVAL for bad
  // arguments, or -EIO when the backend is unhealthy or failed.
  virtual int SubmitCompress(const PageList& pages, std::span<hzram_page_record> records,
                             std::span<std::uint8_t> arena) = 0;

  // Start decompressing @records into @pages, statuses into @status.
  virtual int SubmitDecompress(std::span<const hzram_page_record> records,
                               std::span<const std::uint8_t> arena, const MutablePageList& pages,
                               std::span<int> status) = 0;

  // Finish batch @ticket. Returns 0 (for a decompression: the number of
  // failed pages, as Codec::Decompress) or -EIO if the backend failed,
  // in which case the batch's outputs are not valid and the backend stays
  // unhealthy from then on. @timing, if not null, gets the batch's times.
  // Whatever it returns, nothing of the batch is written into the
  // caller's memory after it has returned (a copy back already started is
  // waited for), so that the caller may redo the batch there. May block
  // until the batch is done: a caller with a deadline polls Ready() first.
  virtual int Wait(int ticket, BatchTiming* timing) = 0;

  // Whether Wait(@ticket) would return without waiting for the device
  // (the batch is done, or the backend failed). Never blocks.
  virtual bool Ready(int ticket) = 0;

  // Give batch @ticket up without waiting for its work: the backend is
  // unhealthy from then on and why() says @why. For a batch that is hung
  // (the watchdog's way out). As with Wait(), nothing of the batch is
  // written into the caller's memory once it has returned: a batch whose
  // work is not done never writes there, and a copy back already started
  // is waited for.
  virtual void Abandon(int ticket, const std::string& why) = 0;

  // Batches that may be in flight at once (submitted and not yet waited
  // for or abandoned).
  virtual unsigned max_in_flight() const = 0;

  // False once the backend has failed; then why() says how.
  virtual bool healthy() const = 0;
  virtual std::string why() const = 0;

  // The largest batch it takes, in pages.
  virtual std::size_t max_batch() const = 0;

  // Tell the backend that batches will come from (and go to) @bytes of
  // the caller's memory from @p (@read_only: mapped without write
  // access), so that it may prepare it: a GPU page-locks it, and batches
  // in it then cross the link without a copy on the host. Returns 0, or a
  // negative errno if the backend cannot (-EOPNOTSUPP: nothing to
  // prepare); batches work either way. Undo it (UnregisterHostMemory)
  // before the memory goes away, with no batch in flight from it. An
  // output copied straight into such memory is waited for without limit
  // once its copy has started (Wait(), Abandon(): nothing of a batch may
  // land after them): a caller that must not wait for a wedged device
  // registers only memory the device reads.
  virtual int RegisterHostMemory(void* p, std::size_t bytes, bool read_only = false) {
    (void)p, (void)bytes, (void)read_only;
    return -EOPNOTSUPP;
  }
  virtual int UnregisterHostMemory(void* p) {
    (void)p;
    return -EINVAL;
  }
};

// The hybrid codec's speed model, private to the library, its tests and
// hzbench (lib/hybrid_model.h).
struct HybridModel;
struct HybridRates;

// The hybrid codec: each batch goes to the CPU codec, to the backend, or
// is split between them, so that both finish together by their measured
// speeds (pages per second, the backend's fixed cost per batch and its
// host copies, which do not overlap the CPU's work; Split::kMeasured), or
// so that the backend takes all it can (Split::kBackendFirst). A
// calibration at start measures the speeds; every batch then updates them.
// The backend's share of a batch goes to it as several sub-batches in
// flight at once (up to its max_in_flight()), so that its copies overlap
// its kernels.
//
// The watchdog: a backend batch not done within watchdog() seconds of its
// submission, or by the deadline the caller set (set_deadline), is
// abandoned (AsyncBackend::Abandon). A batch the backend
// fails or does not finish in time is redone on the CPU, whole, and the
// backend is dropped for good (a hung or failed device is not trusted
// again); so is a healthy backend that refuses kMaxRefusals batches in a
// row. Pages are never lost nor wrong. The codec prints nothing:
// backend_enabled() turns false and backend_why() says why, for the
// caller to report.
//
// Records to decode are read once, each field once, into memory of the
// codec's own (LoadRecord) before anything looks at them: the caller's
// records may lie in memory that another party writes at any time.
//
// Nothing is allocated per batch (Calibrate() allocates its samples).
class HybridCodec {
 public:
  enum class Split {
    kMeasured,      // by the measured speeds (Calibrate() first)
    kBackendFirst,  // the backend takes all it can (max_batch() pages in
                    // each of max_in_flight() sub-batches), the CPU the rest
  };

  // @cpu is required; @backend may be null (CPU only). Neither is owned.
  HybridCodec(Codec* cpu, AsyncBackend* backend, Split split = Split::kMeasured);
  ~HybridCodec();
  HybridCodec(const HybridCodec&) = delete;
  HybridCodec& operator=(const HybridCodec&) = delete;

  // Measure both on @sample (a few hundred real pages is enough; a batch
  // of more than max_batch pages is cut): several runs of each size, the
  // median of each, and a fit bounded by what the batches' own copies
  // took, so that noise cannot make the backend look free. Returns 0 or
  // -errno.
  int Calibrate(const PageList& sample);

  // How long a backend batch may take from its submission before the
  // watchdog gives it up, in seconds (> 0). The default is a quarter of
  // the module's default offload_timeout_ms (1000 ms): a batch the
  // backend does not finish is redone on the CPU well before the module
  // takes it back. hzramd sets it per batch from the device's own
  // offload_timeout_ms.
  static constexpr double kDefaultWatchdog = 0.25;
  void set_watchdog(double seconds) {
    watchdog_s_ = seconds;
    has_deadline_ = false;
  }
  double watchdog() const { return watchdog_s_; }

  // For the calls that follow, a deadline in place of watchdog() from the
  // submission: the backend's parts not done by @deadline are abandoned
  // as above (hzramd: the batch's FETCH plus the device's watchdog, so
  // that the time the batch waited before the call counts). A call that
  // starts after @latest_start gives the backend nothing and does the
  // whole batch on the CPU at once (late_starts() counts them; neither a
  // time-out nor a refusal): given only what is left, the backend would
  // be dropped for a hang it does not have. set_watchdog() goes back to
  // the watchdog from the submission.
  void set_deadline(std::chrono::steady_clock::time_point deadline,
                    std::chrono::steady_clock::time_point latest_start) {
    deadline_ = deadline;
    latest_start_ = latest_start;
    has_deadline_ = true;
  }
  std::uint64_t late_starts() const { return late_starts_; }

  // Called with @arg each time the codec polls the backend's parts while
  // it waits for them (up to the watchdog's time): hzramd's loops beat
  // their heartbeat there. Null: nothing.
  void set_progress(void (*fn)(void*), void* arg) {
    progress_ = fn;
    progress_arg_ = arg;
  }

  // Smallest sub-batch the backend's share is cut into.
  static constexpr std::size_t kMinSubBatch = 256;

  // A backend that the model gives no pages is measured again: the
  // kReprobe-th batch in a row without a share gives it a probe
  // (ProbeShare() in hybrid_model.h: a quarter of what its calibrated
  // speed would give it, no more than it does at its last measured speed
  // in half the watchdog's time, or half what is left to the deadline: a
  // probe that finds it still slow must not be taken for a hang). Each
  // probe that leaves it without a
  // share doubles the wait for the next, up to kReprobeMax batches; a
  // share starts it again from kReprobe. Without probes, one slow spell
  // would leave the backend out for good: the rates are learnt only from
  // the batches it takes.
  static constexpr unsigned kReprobe = 16;
  static constexpr unsigned kReprobeMax = 1024;

  // Submissions a healthy backend may refuse in a row (-EBUSY, a batch it
  // cannot take) before it is dropped: one that keeps refusing is of no
  // use. A refused share goes to the CPU.
  static constexpr unsigned kMaxRefusals = 8;

  // As Codec::Compress / Decompress, for batches up to the CPU codec's
  // max_batch.
  int Compress(const PageList& pages, std::span<hzram_page_record> records,
               std::span<std::uint8_t> arena);
  int Decompress(std::span<const hzram_page_record> records, std::span<const std::uint8_t> arena,
                 const MutablePageList& pages, std::span<int> status);

  // The backend's share of the last batch, in pages, and of all batches.
  std::size_t last_backend_pages() const { return last_backend_pages_; }
  std::uint64_t backend_pages() const { return backend_pages_; }
  std::uint64_t cpu_pages() const { return cpu_pages_; }
  bool backend_enabled() const { return backend_ && !backend_failed_; }
  const std::string& backend_why() const { return backend_why_; }

  // The speed model as calibrated and updated since (for the tests and
  // hzbench, which see lib/hybrid_model.h).
  const HybridModel& model() const { return *model_; }

  // How many backend batches timed out (each one drops the backend), and
  // how many submissions it refused.
  std::uint64_t timeouts() const { return timeouts_; }
  std::uint64_t refusals() const { return refusals_; }
  // How many batches gave the backend a probe share (kReprobe), a
  // refused one included.
  std::uint64_t probes() const { return probes_; }
  Split split() const { return split_; }

 private:
  // The backend's share [0, g) of a batch, as sub-batches in flight.
  struct Part {
    int ticket;
    std::size_t first, n;
    double submitted_s;  // after the first part's submission (for the speeds)
  };
  // Submit the share [0, g) of @batch (hybrid.cc) as parts; returns the
  // pages the backend took.
  struct Batch;
  int SubmitParts(std::size_t g, const Batch& batch);
  // Wait for every part, each until watchdog() after the first part's
  // submission or the deadline; -ETIMEDOUT or -EIO (then the backend is
  // off and the parts' outputs are not valid), else the sum of Wait()'s
  // results.
  int WaitParts(BatchTiming* timing);
  // A direction's probing (kReprobe): its batches in a row without a
  // share, and how many make the next probe.
  struct Probe {
    unsigned idle = 0;
    unsigned interval = kReprobe;
  };
  // The backend's share of a batch of @n under @r (a direction's rates;
  // @calibrated and @p as for Share()), or 0 if the call started after
  // the latest start; counts the batch in @p.
  std::size_t ShareNow(const HybridRates& r, const HybridRates& calibrated, Probe& p,
                       std::size_t n);
  // The pages of a batch of @n that go to the backend under @r; when
  // they are none and @p says a probe is due, a probe's share from @r and
  // the @calibrated rates (*@probe says so).
  std::size_t Share(const HybridRates& r, const HybridRates& calibrated, const Probe& p,
                    std::size_t n, bool* probe) const;
  void BackendFailed();
  void Refused(int err);
  void Count(std::size_t n, std::size_t backend);
  void Update(HybridRates& r, std::size_t cpu_pages, double cpu_s, std::size_t backend_pages,
              const BatchTiming& backend);
  // Calibrate()'s steps (hybrid.cc): the CPU codec's speeds; the
  // backend's runs, per direction, of batches of each of @sizes pages;
  // a direction's rates fitted to its runs.
  struct Samples;
  int CalibrateCpu(const PageList& sample, const MutablePageList& out, std::span<int> status);
  int SampleBackend(const PageList& sample, const std::size_t (&sizes)[3],
                    const MutablePageList& out, std::span<int> status, Samples* sc, Samples* sd);
  static void Fit(const std::size_t (&sizes)[3], const Samples& s, HybridRates* r);

  Codec* cpu_;
  AsyncBackend* backend_;
  Split split_;
  bool backend_failed_ = false;
  unsigned refused_in_a_row_ = 0;
  std::string backend_why_;
  std::unique_ptr<HybridModel> model_;
  std::size_t last_backend_pages_ = 0;
  Probe probe_compress_, probe_decompress_;
  std::uint64_t probes_ = 0;
  std::uint64_t backend_pages_ = 0, cpu_pages_ = 0, timeouts_ = 0, refusals_ = 0;
  double watchdog_s_ = kDefaultWatchdog;
  bool has_deadline_ = false;
  std::chrono::steady_clock::time_point deadline_, latest_start_;
  std::uint64_t late_starts_ = 0;
  void (*progress_)(void*) = nullptr;
  void* progress_arg_ = nullptr;
  // Allocated once, by the constructor: the parts in flight (at most
  // max_in_flight()) and their timings.
  std::vector<Part> parts_;
  std::vector<BatchTiming> part_timing_;
  // When the first part's submission began (the watchdog's start), and
  // when it returned (the parts' device times start from there).
  std::chrono::steady_clock::time_point watch_start_, first_submit_;
  // A decompression's records, read once from the caller's (max_batch of
  // the CPU codec); and the backend's share of them with offsets rebased
  // on its part of the arena.
  std::vector<hzram_page_record> records_;
  std::vector<hzram_page_record> rebased_;
};

}  // namespace hzram

#endif  // HZRAM_BACKEND_H
