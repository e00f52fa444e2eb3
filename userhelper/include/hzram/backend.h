// SPDX-License-Identifier: GPL-2.0
//
// hzram backends: an asynchronous batch codec (the GPU's, or a test's) and
// the hybrid codec that shares each batch between it and the CPU codec.
//
// Host-only header; all pointers are host memory. Functions return 0 or a
// negative errno and never set errno.
#ifndef HZRAM_BACKEND_H
#define HZRAM_BACKEND_H

#include <chrono>
#include <cstddef>
#include <cstdint>
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
  virtual int Wait(int ticket, BatchTiming* timing) = 0;

  // Whether Wait(@ticket) would return without waiting for the device
  // (the batch is done, or the backend failed). Never blocks.
  virtual bool Ready(int ticket) = 0;

  // Give batch @ticket up without waiting for it: its outputs are never
  // written, the backend is unhealthy from then on and why() says @why.
  // For a batch that is hung (the watchdog's way out).
  virtual void Abandon(int ticket, const std::string& why) = 0;

  // Batches that may be in flight at once (submitted and not yet waited
  // for or abandoned).
  virtual unsigned max_in_flight() const = 0;

  // False once the backend has failed; then why() says how.
  virtual bool healthy() const = 0;
  virtual std::string why() const = 0;

  // The largest batch it takes, in pages.
  virtual std::size_t max_batch() const = 0;
};

// The hybrid codec: each batch goes to the CPU codec, to the backend, or
// is split between them so that both finish together, by their measured
// speeds (pages per second, the backend's fixed cost per batch and its
// host copies, which do not overlap the CPU's work). A calibration at
// start measures them; every batch then updates them. The backend's share
// of a batch goes to it as several sub-batches in flight at once (up to
// its max_in_flight()), so that its copies overlap its kernels. A batch
// the backend fails, or does not finish within the watchdog's time, is
// redone on the CPU, whole, and the backend is not used again: the reason
// is logged once to stderr and kept in backend_why(). Pages are never
// lost nor wrong.
class HybridCodec {
 public:
  // @cpu is required; @backend may be null (CPU only). Neither is owned.
  HybridCodec(Codec* cpu, AsyncBackend* backend);

  // Measure both on @sample (a few hundred real pages is enough; a batch
  // of more than max_batch pages is cut): several runs of each size, the
  // median of each, and a fit bounded by what the batches' own copies
  // took (see Rates). Returns 0 or -errno.
  int Calibrate(const PageList& sample);

  // How long a backend batch may take before the watchdog gives it up
  // (default kDefaultWatchdog). Seconds, > 0.
  static constexpr double kDefaultWatchdog = 1.0;
  void set_watchdog(double seconds) { watchdog_s_ = seconds; }
  double watchdog() const { return watchdog_s_; }

  // Smallest sub-batch the backend's share is cut into.
  static constexpr std::size_t kMinSubBatch = 256;

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

  // The speed model, for tests and hzbench. Calibration bounds the
  // backend's cost per page between what the largest sample's copies to
  // and from the device took per page (they grow with the batch) and that
  // batch's whole time per page (no fixed cost at all), so that noise can
  // never make the device look free.
  struct Rates {
    double cpu_pages_per_s = 0;
    double backend_pages_per_s = 0;  // the device's part, beside the CPU
    double backend_fixed_s = 0;      // per batch, whatever its size
    double backend_host_s_per_page = 0;  // the backend's host copies, which
                                         // the calling thread makes before
                                         // and after the CPU's part
  };
  const Rates& compress_rates() const { return comp_; }
  const Rates& decompress_rates() const { return decomp_; }

  // The link to the backend as calibration measured it (bytes per second
  // each way, from the largest calibration batches); 0 if not measured.
  struct Link {
    double h2d_bytes_per_s = 0;
    double d2h_bytes_per_s = 0;
  };
  const Link& link() const { return link_; }

  // How many of @n pages go to the backend under @r.
  static std::size_t BackendShare(const Rates& r, std::size_t n);

  // How many backend batches timed out (each one disables the backend).
  std::uint64_t timeouts() const { return timeouts_; }

 private:
  // The backend's share [0, g) of a batch, as sub-batches in flight.
  struct Part {
    int ticket;
    std::size_t first, n;
    double submitted_s;  // after the first part's submission
  };
  int SubmitParts(std::size_t g, bool compress, const PageList* pages,
                  std::span<hzram_page_record> records, std::span<std::uint8_t> arena,
                  std::span<const hzram_page_record> drecords, std::span<const std::uint8_t> darena,
                  const MutablePageList* dpages, std::span<int> status);
  // Wait for every part; -ETIMEDOUT or -EIO (then the backend is off and
  // the parts' outputs are not valid), else the sum of Wait()'s results.
  int WaitParts(BatchTiming* timing);
  void BackendFailed();
  void Refused();
  void Count(std::size_t n, std::size_t backend);
  void Update(Rates& r, std::size_t cpu_pages, double cpu_s, std::size_t backend_pages,
              const BatchTiming& backend);

  Codec* cpu_;
  AsyncBackend* backend_;
  bool backend_failed_ = false;
  std::string backend_why_;
  Rates comp_, decomp_;
  Link link_;
  std::size_t last_backend_pages_ = 0;
  std::uint64_t backend_pages_ = 0, cpu_pages_ = 0, timeouts_ = 0;
  double watchdog_s_ = kDefaultWatchdog;
  std::vector<Part> parts_;
  std::chrono::steady_clock::time_point first_submit_;
  // Scratch for the backend's share of a decompression: its records with
  // offsets rebased on its part of the arena.
  std::vector<hzram_page_record> rebased_;
};

}  // namespace hzram

#endif  // HZRAM_BACKEND_H
