// SPDX-License-Identifier: GPL-2.0
//
// Encoding a batch: the backends that compress pages and decode them (the
// CPU codec, the GPU, both), and the batch descriptors and output slots
// of the helper protocol (include/uapi/linux/hzram.h).
#ifndef HZRAMD_ENCODER_H
#define HZRAMD_ENCODER_H

#include <linux/hzram.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "hzram/backend.h"
#include "hzram/codec.h"
#include "options.h"

namespace hzramd {

using Clock = std::chrono::steady_clock;

// The steady clock, in ns (heartbeats: ServeStats::alive_ns).
std::int64_t MonotonicNs();

// The module's default offload_timeout_ms, for a device whose own cannot
// be read; and the range the module takes.
inline constexpr std::uint32_t kDefaultOffloadTimeoutMs = 1000;
inline constexpr std::uint32_t kMinOffloadTimeoutMs = 10, kMaxOffloadTimeoutMs = 60000;
// The longest the watchdog waits for a backend batch: one that takes this
// long is hung for any purpose.
inline constexpr std::uint32_t kMaxWatchdogMs = 2000;

// The backend watchdog for a device whose offload_timeout_ms is
// @timeout_ms: a quarter of it, at most kMaxWatchdogMs; the rest of the
// module's time is for the wait before the batch was fetched, the CPU's
// redo and the commit. Seconds.
double WatchdogSeconds(std::uint32_t timeout_ms);

// A batch's time. The module takes a batch back offload_timeout_ms after
// it queued it, whatever hzramd was doing: the time the batch then waits
// in hzramd (behind the device's other batches, for its turn at the
// shared encoder) is no backend's to spend. So a backend (GPU) must be
// done with the batch by its deadline, the device's watchdog after the
// batch was fetched; what it has not finished by then is given up and
// redone on the CPU.
struct BatchTime {
  Clock::time_point fetched{};  // when its FETCH completed
  double watchdog_s = 0.25;     // WatchdogSeconds() of the device's offload_timeout_ms
  // Beaten (MonotonicNs()) while the batch waits for its turn at the
  // encoder and while the encoder waits for the backend: the device
  // loop's heartbeat (ServeStats::alive_ns). Null: none.
  std::atomic<std::int64_t>* heartbeat = nullptr;

  // By when the backend must be done with it.
  Clock::time_point deadline() const;
  // The last moment the backend may be given it: half the watchdog after
  // the fetch. Later, the CPU does the whole batch at once (the backend,
  // given less than half its time, would be dropped for a hang it does
  // not have); a batch still waiting for its turn then leaves the queue
  // for the CPU codec.
  Clock::time_point latest_start() const;
};

// The time of a batch of a device whose offload_timeout_ms is
// @timeout_ms, fetched at @fetched.
BatchTime TimeOfBatch(std::uint32_t timeout_ms, Clock::time_point fetched,
                      std::atomic<std::int64_t>* heartbeat = nullptr);

struct Regions;

// Compresses batches of pages into the codec's record layout.
class BatchEncoder {
 public:
  virtual ~BatchEncoder() = default;
  // As hzram::Codec::Compress: records[i] for pages[i], their data in
  // @data (Codec::ArenaBytes(n) bytes). Returns 0 or a negative errno.
  // May be called from several threads: the callers take turns, in the
  // order they came; @time (see BatchTime) bounds the backend's part and
  // the wait for the turn.
  virtual int Encode(const hzram::PageList& pages, std::span<hzram_page_record> records,
                     std::span<std::uint8_t> data, const BatchTime& time) = 0;
  // As hzram::Codec::Decompress: @records (their data in @data) into
  // @pages, a status per page. Returns the number of pages that failed,
  // or a negative errno if the backend did.
  virtual int Decode(std::span<const hzram_page_record> records,
                     std::span<const std::uint8_t> data, const hzram::MutablePageList& pages,
                     std::span<int> status, const BatchTime& time) = 0;
  // As hzram::Codec::CompressZstd: @pages with zstd at @level, for the
  // module's recompression. Returns 0 or a negative errno.
  virtual int Recompress(const hzram::PageList& pages, int level,
                         std::span<hzram_page_record> records, std::span<std::uint8_t> data) = 0;
  // What it runs on, e.g. "cpu, 2 threads, avx2".
  virtual std::string Describe() const = 0;
  // Whether a backend (a GPU) works beside the CPU codec, still.
  virtual bool has_backend() const { return false; }
  // The memory a device shares with hzramd that the backend reads (its
  // descriptors and staging, mapped read-only), while the device is
  // served (ServeLent()): a GPU backend page-locks it, so that batches'
  // pages cross the link without a copy on the host. Not the output
  // slots: a copy back straight into them could not be given up when a
  // device wedges after its kernels (AsyncBackend::RegisterHostMemory),
  // and the module reuses a slot it took back. Returns 0, or the
  // backend's negative errno (-EOPNOTSUPP: no backend, or nothing to
  // do): the pages then go through the backend's own buffers. Unshare
  // (0 or a negative errno) before the memory is unmapped. Both wait for
  // the turn at the encoder, as a batch does, beating @heartbeat (if not
  // null) meanwhile.
  virtual int ShareMemory(const Regions& r, std::atomic<std::int64_t>* heartbeat = nullptr) {
    (void)r, (void)heartbeat;
    return -EOPNOTSUPP;
  }
  virtual int UnshareMemory(const Regions& r, std::atomic<std::int64_t>* heartbeat = nullptr) {
    (void)r, (void)heartbeat;
    return -EOPNOTSUPP;
  }
};

// The largest batch an encoder takes, in pages.
inline constexpr std::uint32_t kMaxBatchPages = 4096;

// The CPU codec of the encoders: @threads threads (0: one per CPU the
// caller may run on). nullptr and *error if it cannot start.
std::unique_ptr<hzram::Codec> MakeCodec(unsigned threads, std::string* error);

// The encoder of @backend, its threads started and its buffers allocated:
// @threads codec threads (0: one per CPU the caller may run on; for
// --backend gpu, also the threads that stage pages for the GPU). auto is
// hybrid where a GPU is usable, else cpu. Returns nullptr and sets
// *error when @backend cannot run here.
std::unique_ptr<BatchEncoder> MakeEncoder(Backend backend, unsigned threads, std::string* error);

// The encoder of @backend (cpu, gpu or hybrid) on @cpu and, for gpu and
// hybrid, @device named @name (the GPU's, or a stand-in): every batch goes
// through one hzram::HybridCodec, which splits it (hybrid: by measured
// speeds, calibrated here; gpu: the device takes all it can), watches the
// device's batches (until each batch's deadline, BatchTime), redoes on
// the CPU what the device failed or did not finish in time, and drops
// the device for the CPU when it fails, hangs or keeps refusing batches;
// the encoder logs that, once. The callers (the devices' loops) take
// turns in the order they came. While the device is in use, a turn may
// last up to the watchdog of the batch in hand (2 s at most): a batch
// still waiting for its turn at its latest start leaves the queue and is
// encoded on the CPU codec at once, beside the turn, so that one
// device's hung batch makes no other device late. nullptr and *error on
// failure.
std::unique_ptr<BatchEncoder> MakeEncoderOn(Backend backend, std::unique_ptr<hzram::Codec> cpu,
                                            std::unique_ptr<hzram::AsyncBackend> device,
                                            const std::string& name, std::string* error);

// A device's regions: its attach reply and where the two are mapped.
struct Regions {
  hzram_attach info{};
  const std::uint8_t* ro = nullptr;  // info.ro_size bytes: descriptors, then staging
  std::uint8_t* rw = nullptr;        // info.rw_size bytes: output slots
  // The device's offload_timeout_ms at attach: a batch not committed by
  // then is the module's again. It may change while the device is
  // attached: DeviceIo::offload_timeout_ms() is the current one.
  std::uint32_t offload_timeout_ms = kDefaultOffloadTimeoutMs;
};

// Bytes of an output slot: @batch_pages records, then the data area.
constexpr std::uint64_t SlotBytes(std::uint32_t batch_pages) {
  return batch_pages * (sizeof(hzram_page_record) + std::uint64_t{HZRAM_PAGE_SIZE});
}

// The attach reply of a device laid out as the module lays one out:
// @nr_batches descriptors, then @staging_pages pages of staging from the
// next page boundary; @nr_batches output slots back to back. For helpers
// of the pipeline that stand in for the module (--bench, tests).
hzram_attach LayoutLikeModule(std::uint32_t nr_batches, std::uint32_t batch_pages,
                              std::size_t staging_pages);

// The most batches a device may have: a FETCH and a COMMIT of each, and
// the stop's poll, must fit the io_uring completion queue (at most 65536
// entries; kernel_io.cc).
inline constexpr std::uint32_t kMaxBatches = 16384;

// Whether an attach reply describes regions this helper can use (not the
// features: see AttachFailure). If not, *why says what is wrong.
bool CheckGeometry(const hzram_attach& info, std::string* why);

// A batch's descriptor, read once, field by field (volatile loads), from
// the read-only region, which the module writes.
hzram_batch_desc LoadDescriptor(const Regions& r, std::uint32_t batch);

// What EncodeBatch() did.
struct BatchResult {
  enum Outcome {
    kEncoded,        // the records are written: commit
    kNotEncoded,     // every record is kind 0 (not encoded): commit, and
                     // the module compresses, decodes or recompresses the
                     // pages itself
    kBadDescriptor,  // the descriptor lies outside the regions: nothing
                     // was written, do not commit (the module takes the
                     // batch back after its timeout)
  };
  Outcome outcome = kEncoded;
  // kNotEncoded: why: -EOPNOTSUPP for an op or level this helper does not
  // know, else the encoder's negative errno.
  int err = 0;
};

// Do batch @batch of @r as its descriptor says. HZRAM_OP_COMPRESS:
// nr_pages pages read in place from the staging arena, their records and
// data written in place into the batch's output slot. HZRAM_OP_DECOMPRESS:
// nr_pages LZ4 records (and their data) read in place from the staging
// arena, page i decoded into page i of the slot's data area, its record
// HZRAM_PAGE_RAW, or kind 0 if it did not decode; HZRAM_OP_RECOMPRESS
// (HZRAM_FEAT_RECOMPRESS granted): nr_pages pages read in place, each
// compressed with zstd at the descriptor's level (the encoder's
// Recompress()), record HZRAM_PAGE_ZSTD or kind 0; @status (at least
// kMaxBatchPages entries, the caller's, so that nothing is allocated per
// batch) gets the pages' statuses. *desc gets the descriptor as read (its
// seq goes into the COMMIT). A decoded batch where only some pages failed
// is kEncoded. @batch must be below info.nr_batches. @time: the batch's
// (BatchTime), for the encoder.
BatchResult EncodeBatch(BatchEncoder& encoder, const Regions& r, std::uint32_t batch,
                        hzram_batch_desc* desc, std::span<int> status, const BatchTime& time);

}  // namespace hzramd

#endif  // HZRAMD_ENCODER_H
