// SPDX-License-Identifier: GPL-2.0
#include "encoder.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <vector>

#include "hzram/backend.h"
#ifdef HZRAM_HAVE_CUDA
#include "hzram/gpu_codec.h"
#endif
#include "hzram/pages.h"
#include "log.h"

namespace hzramd {
namespace {

using hzram::kPageSize;

std::string CodecName(const hzram::Codec& c) {
  return std::to_string(c.threads()) + (c.threads() > 1 ? " threads, " : " thread, ") +
         hzram::IsaName(c.isa());
}

// How often a caller waiting for its turn beats its heartbeat.
constexpr auto kTurnBeat = std::chrono::milliseconds(50);

void Beat(void* heartbeat) {
  static_cast<std::atomic<std::int64_t>*>(heartbeat)->store(MonotonicNs(),
                                                             std::memory_order_relaxed);
}

// The encoder's lock: the devices' loops take their turns in the order
// they came, each turn handed to the first in the queue (std::mutex lets
// the loop that just let go take it again before a woken one runs, and on
// a busy machine one device can then starve the others until the module
// takes their batches back). A caller may give up waiting at a time of
// its own, and beats its heartbeat while it waits. The queue's entries
// live on the waiters' stacks: nothing is allocated.
class TurnLock {
 public:
  // Wait for the turn until @until, calling @beat(@arg) (if not null)
  // every kTurnBeat meanwhile. True: the turn is the caller's; false:
  // @until came first, and the caller has left the queue.
  bool LockUntil(Clock::time_point until, void (*beat)(void*), void* arg) {
    std::unique_lock<std::mutex> l(mutex_);
    if (!held_) {
      // A released turn goes to the first waiter, if any: free means no
      // one waits.
      held_ = true;
      return true;
    }
    Waiter w;
    (tail_ ? tail_->next : head_) = &w;
    tail_ = &w;
    while (!w.granted) {
      const Clock::time_point now = Clock::now();
      if (now >= until) {
        Waiter** p = &head_;
        Waiter* prev = nullptr;
        while (*p != &w) prev = *p, p = &(*p)->next;
        *p = w.next;
        if (tail_ == &w) tail_ = prev;
        return false;
      }
      w.cv.wait_until(l, until - now < kTurnBeat ? until : now + kTurnBeat);
      if (!w.granted && beat) beat(arg);
    }
    return true;
  }
  void lock() { LockUntil(Clock::time_point::max(), nullptr, nullptr); }
  void unlock() {
    std::lock_guard<std::mutex> l(mutex_);
    Waiter* w = head_;
    if (!w) {
      held_ = false;
      return;
    }
    head_ = w->next;
    if (!head_) tail_ = nullptr;
    w->granted = true;
    w->cv.notify_one();
  }

 private:
  struct Waiter {
    std::condition_variable cv;
    Waiter* next = nullptr;
    bool granted = false;
  };
  std::mutex mutex_;
  bool held_ = false;
  Waiter *head_ = nullptr, *tail_ = nullptr;
};

// Every backend through one hybrid codec: the CPU codec alone (no
// device), or with a device that it splits batches with (hybrid) or gives
// all it can (gpu), watching the device's batches.
class CodecEncoder final : public BatchEncoder {
 public:
  CodecEncoder(Backend kind, std::unique_ptr<hzram::Codec> cpu,
               std::unique_ptr<hzram::AsyncBackend> device, std::string name)
      : kind_(kind),
        cpu_(std::move(cpu)),
        device_(std::move(device)),
        name_(std::move(name)),
        codec_(cpu_.get(), device_.get(),
               kind == Backend::kGpu ? hzram::HybridCodec::Split::kBackendFirst
                                     : hzram::HybridCodec::Split::kMeasured) {}

  // Calibrate on built-in pages of every kind (hzram/pages.h): every
  // batch updates the speeds afterwards.
  int Calibrate() {
    std::vector<std::uint8_t> pages(512 * kPageSize);
    hzram::MakeMixedPages(pages.data(), 512);
    std::lock_guard<TurnLock> lock(mutex_);
    const int ret = codec_.Calibrate(hzram::PageList(pages.data(), pages.size() / kPageSize));
    Report();
    return ret;
  }
  int Encode(const hzram::PageList& pages, std::span<hzram_page_record> records,
             std::span<std::uint8_t> data, const BatchTime& t) override {
    Turn turn(this, t);
    if (!turn.held) return cpu_->Compress(pages, records, data);
    const int ret = codec_.Compress(pages, records, data);
    Report();
    return ret;
  }
  int Decode(std::span<const hzram_page_record> records, std::span<const std::uint8_t> data,
             const hzram::MutablePageList& pages, std::span<int> status,
             const BatchTime& t) override {
    Turn turn(this, t);
    if (!turn.held) return cpu_->Decompress(records, data, pages, status);
    const int ret = codec_.Decompress(records, data, pages, status);
    Report();
    return ret;
  }
  // zstd on the CPU codec's threads, without the turn: the device has no
  // part in it.
  int Recompress(const hzram::PageList& pages, int level, std::span<hzram_page_record> records,
                 std::span<std::uint8_t> data) override {
    return cpu_->CompressZstd(pages, level, records, data);
  }
  // Without the turn, which a batch the device hangs on holds for its
  // watchdog's time: the daemon's main thread asks.
  std::string Describe() const override {
    std::lock_guard<std::mutex> lock(dropped_mutex_);
    const std::string dropped = dropped_why_.empty() ? "" : " (gpu dropped: " + dropped_why_ + ")";
    switch (kind_) {
      case Backend::kGpu:
        return "gpu, " + name_ + ", cpu " + CodecName(*cpu_) + " if it fails" + dropped;
      case Backend::kHybrid:
        return "hybrid, cpu " + CodecName(*cpu_) + " and gpu " + name_ + dropped;
      default:
        return "cpu, " + CodecName(*cpu_);
    }
  }
  bool has_backend() const override { return backend_on_.load(std::memory_order_relaxed); }
  // Under the turn: no batch is in flight meanwhile. (A GPU dropped
  // for a hang leaves the memory locked rather than wait for it.)
  int ShareMemory(const Regions& r, std::atomic<std::int64_t>* heartbeat) override {
    if (!device_) return -EOPNOTSUPP;
    mutex_.LockUntil(Clock::time_point::max(), heartbeat ? Beat : nullptr, heartbeat);
    std::lock_guard<TurnLock> lock(mutex_, std::adopt_lock);
    return device_->RegisterHostMemory(const_cast<std::uint8_t*>(r.ro), r.info.ro_size, true);
  }
  int UnshareMemory(const Regions& r, std::atomic<std::int64_t>* heartbeat) override {
    if (!device_) return -EOPNOTSUPP;
    mutex_.LockUntil(Clock::time_point::max(), heartbeat ? Beat : nullptr, heartbeat);
    std::lock_guard<TurnLock> lock(mutex_, std::adopt_lock);
    return device_->UnregisterHostMemory(const_cast<std::uint8_t*>(r.ro));
  }

 private:
  // A batch's turn at the codec, waited for while the device is in use
  // until the batch's latest start (a turn may then last a watchdog's
  // time: see MakeEncoderOn), else without limit. Taken, it sets the
  // codec up for the batch: its deadline and the heartbeat. Not taken
  // (held false), the caller encodes the batch on the CPU codec, beside
  // the turn: the backend would not get it anyway.
  struct Turn {
    CodecEncoder* e;
    bool held;
    Turn(CodecEncoder* enc, const BatchTime& t)
        : e(enc),
          held(enc->mutex_.LockUntil(enc->backend_on_.load(std::memory_order_relaxed)
                                         ? t.latest_start()
                                         : Clock::time_point::max(),
                                     t.heartbeat ? Beat : nullptr, t.heartbeat)) {
      if (!held) return;
      e->codec_.set_deadline(t.deadline(), t.latest_start());
      e->codec_.set_progress(t.heartbeat ? Beat : nullptr, t.heartbeat);
    }
    ~Turn() {
      if (held) e->mutex_.unlock();
    }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;
  };

  // The library reports; the daemon says it, once.
  void Report() {
    if (reported_ || !device_ || codec_.backend_enabled()) return;
    reported_ = true;
    backend_on_.store(false, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(dropped_mutex_);
      dropped_why_ = codec_.backend_why();
    }
    HZ_WARN("--backend %s: %s dropped, the CPU encodes and decodes from now on: %s",
            BackendName(kind_), name_.c_str(), codec_.backend_why().c_str());
  }

  const Backend kind_;
  std::unique_ptr<hzram::Codec> cpu_;
  std::unique_ptr<hzram::AsyncBackend> device_;
  const std::string name_;
  TurnLock mutex_;
  hzram::HybridCodec codec_;
  bool reported_ = false;
  // Why the device was dropped (empty: it was not), for Describe().
  mutable std::mutex dropped_mutex_;
  std::string dropped_why_;
  // Whether the device still takes part (what has_backend() says): false
  // once dropped, or if there is none.
  std::atomic<bool> backend_on_{device_ != nullptr};
};

}  // namespace

std::unique_ptr<hzram::Codec> MakeCodec(unsigned threads, std::string* error) {
  hzram::CodecOptions opt;
  opt.threads = threads;
  opt.max_batch = kMaxBatchPages;
  int err = 0;
  auto codec = hzram::Codec::Create(opt, &err);
  if (!codec) *error = std::string("cannot start the codec: ") + std::strerror(-err);
  return codec;
}

std::unique_ptr<BatchEncoder> MakeEncoderOn(Backend backend, std::unique_ptr<hzram::Codec> cpu,
                                            std::unique_ptr<hzram::AsyncBackend> device,
                                            const std::string& name, std::string* error) {
  const bool with_device = backend == Backend::kGpu || backend == Backend::kHybrid;
  if (!cpu || with_device != static_cast<bool>(device) || backend == Backend::kAuto ||
      (device && device->max_batch() == 0)) {
    *error = std::string("--backend ") + BackendName(backend) + ": no encoder for these parts";
    return nullptr;
  }
  auto e = std::make_unique<CodecEncoder>(backend, std::move(cpu), std::move(device), name);
  if (backend == Backend::kHybrid) {
    if (int err = e->Calibrate()) {
      *error = std::string("--backend hybrid: calibration failed: ") + std::strerror(-err);
      return nullptr;
    }
  }
  return e;
}

std::unique_ptr<BatchEncoder> MakeEncoder(Backend backend, unsigned threads, std::string* error) {
  const char* asked = BackendName(backend);
  std::unique_ptr<hzram::AsyncBackend> device;
  std::string name;
#ifdef HZRAM_HAVE_CUDA
  std::string why;
  if (backend == Backend::kAuto) {
    if (hzram::GpuAvailable(0, &why)) {
      backend = Backend::kHybrid;
    } else {
      HZ_INFO("--backend auto: no usable GPU (%s): cpu", why.c_str());
      backend = Backend::kCpu;
    }
  }
  if (backend == Backend::kGpu || backend == Backend::kHybrid) {
    hzram::GpuOptions go;
    go.max_batch = kMaxBatchPages;
    if (backend == Backend::kGpu) go.staging_threads = threads;
    int err = 0;
    auto gpu = hzram::GpuCodec::Create(go, &err, &why);
    if (!gpu) {
      *error = std::string("--backend ") + asked + ": no usable GPU: " + why;
      return nullptr;
    }
    name = gpu->device_name();
    device = std::move(gpu);
  }
#else
  if (backend == Backend::kAuto) backend = Backend::kCpu;
  if (backend != Backend::kCpu) {
    *error = std::string("--backend ") + asked +
             ": this hzramd was built without the CUDA backend (nvcc was not found)";
    return nullptr;
  }
#endif
  auto codec = MakeCodec(threads, error);
  if (!codec) return nullptr;
  return MakeEncoderOn(backend, std::move(codec), std::move(device), name, error);
}

std::int64_t MonotonicNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

double WatchdogSeconds(std::uint32_t timeout_ms) {
  return std::min(timeout_ms / 4.0, double{kMaxWatchdogMs}) / 1e3;
}

Clock::time_point BatchTime::deadline() const {
  return fetched + std::chrono::duration_cast<Clock::duration>(
                       std::chrono::duration<double>(watchdog_s));
}

Clock::time_point BatchTime::latest_start() const {
  return fetched + std::chrono::duration_cast<Clock::duration>(
                       std::chrono::duration<double>(watchdog_s / 2));
}

BatchTime TimeOfBatch(std::uint32_t timeout_ms, Clock::time_point fetched,
                      std::atomic<std::int64_t>* heartbeat) {
  BatchTime t;
  t.fetched = fetched;
  t.watchdog_s = WatchdogSeconds(timeout_ms);
  t.heartbeat = heartbeat;
  return t;
}

hzram_attach LayoutLikeModule(std::uint32_t nr_batches, std::uint32_t batch_pages,
                              std::size_t staging_pages) {
  hzram_attach a{};
  a.size = sizeof(a);
  a.version = HZRAM_UAPI_VERSION;
  a.features = HZRAM_FEAT_COMPRESS | HZRAM_FEAT_DECOMPRESS | HZRAM_FEAT_RECOMPRESS;
  a.nr_batches = nr_batches;
  a.batch_pages = batch_pages;
  a.staging_offset =
      (nr_batches * sizeof(hzram_batch_desc) + kPageSize - 1) / kPageSize * kPageSize;
  a.ro_size = a.staging_offset + staging_pages * kPageSize;
  a.rw_size = nr_batches * SlotBytes(batch_pages);
  return a;
}

bool CheckGeometry(const hzram_attach& a, std::string* why) {
  char buf[160];
  auto fail = [&](const char* what) {
    std::snprintf(
        buf, sizeof(buf),
        "%s (nr_batches %u, batch_pages %u, ro_size %llu, staging_offset %llu, rw_size %llu)", what,
        a.nr_batches, a.batch_pages, static_cast<unsigned long long>(a.ro_size),
        static_cast<unsigned long long>(a.staging_offset),
        static_cast<unsigned long long>(a.rw_size));
    *why = buf;
    return false;
  };
  static_assert(kMaxBatches == 16384, "the message below");
  if (a.nr_batches == 0 || a.nr_batches > kMaxBatches) return fail("nr_batches is not 1..16384");
  if (a.batch_pages == 0 || a.batch_pages > kMaxBatchPages)
    return fail("batch_pages is not 1..4096");
  if (a.ro_offset % HZRAM_PAGE_SIZE || a.rw_offset % HZRAM_PAGE_SIZE)
    return fail("a region's mmap offset is not page-aligned");
  const std::uint64_t descs = std::uint64_t{a.nr_batches} * sizeof(hzram_batch_desc);
  if (a.staging_offset < descs || a.staging_offset > a.ro_size)
    return fail("the staging arena overlaps the descriptors or lies past the region");
  if (a.rw_size < SlotBytes(a.batch_pages)) return fail("the output arena holds no slot");
  return true;
}

hzram_batch_desc LoadDescriptor(const Regions& r, std::uint32_t batch) {
  const volatile hzram_batch_desc& v =
      reinterpret_cast<const hzram_batch_desc*>(r.ro)[batch];
  hzram_batch_desc d;
  d.seq = v.seq;
  d.nr_pages = v.nr_pages;
  d.op = v.op;
  d.level = v.level;
  d.staging_offset = v.staging_offset;
  d.output_offset = v.output_offset;
  return d;
}

BatchResult EncodeBatch(BatchEncoder& encoder, const Regions& r, std::uint32_t batch,
                        hzram_batch_desc* desc, std::span<int> status, const BatchTime& time) {
  const hzram_attach& a = r.info;
  // One read of the descriptor: the checks and the work use this copy.
  const hzram_batch_desc d = *desc = LoadDescriptor(r, batch);
  const std::uint64_t staging = a.ro_size - a.staging_offset;
  const std::uint64_t pages = d.nr_pages;
  if (pages == 0 || pages > a.batch_pages || d.staging_offset > staging ||
      pages * kPageSize > staging - d.staging_offset || d.output_offset > a.rw_size ||
      SlotBytes(a.batch_pages) > a.rw_size - d.output_offset ||
      d.output_offset % alignof(hzram_page_record))
    return {BatchResult::kBadDescriptor, -EINVAL};

  std::uint8_t* const slot = r.rw + d.output_offset;
  std::uint8_t* const out = slot + a.batch_pages * sizeof(hzram_page_record);
  const std::uint8_t* const in = r.ro + a.staging_offset + d.staging_offset;
  const std::span<hzram_page_record> records(reinterpret_cast<hzram_page_record*>(slot), pages);
  int ret = -EOPNOTSUPP;
  if (d.op == HZRAM_OP_COMPRESS && d.level == 0) {
    ret = encoder.Encode(hzram::PageList(in, pages), records,
                         std::span<std::uint8_t>(out, hzram::Codec::ArenaBytes(pages)), time);
  } else if (d.op == HZRAM_OP_RECOMPRESS && (a.features & HZRAM_FEAT_RECOMPRESS)) {
    ret = encoder.Recompress(hzram::PageList(in, pages), d.level, records,
                             std::span<std::uint8_t>(out, hzram::Codec::ArenaBytes(pages)));
  } else if (d.op == HZRAM_OP_DECOMPRESS && d.level == 0 &&
             (a.features & HZRAM_FEAT_DECOMPRESS)) {
    // The input: records from the start of the batch's staging cells,
    // batch_pages of them, then the data. One status per page, in the
    // caller's buffer.
    const std::uint64_t in_records = std::uint64_t{a.batch_pages} * sizeof(hzram_page_record);
    if (std::uint64_t{a.batch_pages} * kPageSize > staging - d.staging_offset)
      return {BatchResult::kBadDescriptor, -EINVAL};
    ret = status.size() < pages
              ? -EINVAL
              : encoder.Decode(std::span<const hzram_page_record>(
                                   reinterpret_cast<const hzram_page_record*>(in), pages),
                               std::span<const std::uint8_t>(
                                   in + in_records,
                                   std::uint64_t{a.batch_pages} * kPageSize - in_records),
                               hzram::MutablePageList(out, pages), status.first(pages), time);
    if (ret >= 0) {
      for (std::uint64_t i = 0; i < pages; i++) {
        hzram_page_record rec{};
        if (status[i] == 0) {
          rec.value = i * kPageSize;
          rec.length = HZRAM_PAGE_SIZE;
          rec.kind = HZRAM_PAGE_RAW;
        }
        records[i] = rec;
      }
      ret = 0;
    }
  }
  if (ret == 0) return {BatchResult::kEncoded, 0};
  std::memset(records.data(), 0, records.size_bytes());  // kind 0: not encoded
  return {BatchResult::kNotEncoded, ret};
}

}  // namespace hzramd
