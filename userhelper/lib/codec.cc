// SPDX-License-Identifier: GPL-2.0
#include "hzram/codec.h"

#include <atomic>
#include <cerrno>
#include <cstring>

#include <zstd.h>

#include "page_codec_isa.h"
#include "thread_pool.h"

namespace hzram {

// Per-thread state, allocated once (the zstd context at the thread's
// first zstd batch).
struct alignas(64) CodecWorker {
  Lz4Table table;
  alignas(64) std::uint8_t out[kCompressBufferSize];
  ZSTD_CCtx* zstd = nullptr;

  CodecWorker() = default;
  CodecWorker(const CodecWorker&) = delete;
  CodecWorker& operator=(const CodecWorker&) = delete;
  ~CodecWorker() { ZSTD_freeCCtx(zstd); }
};

namespace {

// More threads than this is a mistake, not a machine.
constexpr unsigned kMaxThreads = 1024;

// Batches smaller than this run on the calling thread: waking the pool
// costs more than it saves.
constexpr std::size_t kInlinePages = 16;

// Pages per chunk of work: small enough that the threads finish together
// (each takes chunks until none are left), large enough to amortise the
// shared counter.
std::size_t ChunkPages(std::size_t n, unsigned threads) {
  std::size_t c = n / (static_cast<std::size_t>(threads) * 8);
  if (c < 4) c = 4;
  if (c > 64) c = 64;
  return c;
}

}  // namespace

std::unique_ptr<Codec> Codec::Create(const CodecOptions& options, int* err) {
  int e = 0;
  std::unique_ptr<Codec> codec(new Codec());
  IsaChoice isas{options.isa, options.decompress_isa.value_or(options.isa)};

  if (!err) err = &e;
  if (options.max_batch == 0 || options.threads > kMaxThreads) {
    *err = -EINVAL;
    return nullptr;
  }
  if (options.force_isa) {
    for (Isa isa : {isas.compress, isas.decompress}) {
      if (static_cast<unsigned>(isa) >= static_cast<unsigned>(kIsaCount)) {
        *err = -EINVAL;
        return nullptr;
      }
      if (!IsaSupported(isa)) {
        *err = -ENOTSUP;
        return nullptr;
      }
    }
  } else if ((*err = DefaultIsas(&isas))) {
    return nullptr;
  }
  codec->options_ = options;
  codec->compress_kernels_ = &KernelsFor(isas.compress);
  codec->decompress_kernels_ = &KernelsFor(isas.decompress);

  unsigned threads = options.threads;
  if (threads == 0) {
    cpu_set_t set;
    threads = sched_getaffinity(0, sizeof(set), &set) ? 1 : CPU_COUNT(&set);
  }
  codec->pool_ = ThreadPool::Create(threads, options.pin_threads, err);
  if (!codec->pool_) return nullptr;
  codec->workers_.reset(new CodecWorker[threads]);
  *err = 0;
  return codec;
}

Codec::~Codec() = default;

unsigned Codec::threads() const { return pool_->size(); }

std::uint64_t Codec::pool_runs() const { return pool_->runs(); }

// Run job(chunk_begin, chunk_end, worker) over [0, n) in chunks: on the
// pool, the calling thread being worker 0, or on the calling thread alone
// for small batches and one-thread pools.
template <class Job>
void Codec::Dispatch(std::size_t n, Job& job) {
  const unsigned threads = pool_->size();
  const std::size_t chunk = ChunkPages(n, threads);
  const std::size_t chunks = (n + chunk - 1) / chunk;

  if (threads == 1 || n < kInlinePages) {
    for (std::size_t c = 0; c < chunks; c++)
      job(c * chunk, std::min(n, (c + 1) * chunk), workers_[0]);
    return;
  }
  std::atomic<std::size_t> next{0};
  auto work = [&](unsigned w) {
    for (;;) {
      const std::size_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks) return;
      job(c * chunk, std::min(n, (c + 1) * chunk), workers_[w]);
    }
  };
  pool_->Run(work);
}

int Codec::Compress(const PageList& pages, std::span<hzram_page_record> records,
                    std::span<std::uint8_t> arena) {
  const std::size_t n = pages.size();
  if (n > options_.max_batch || records.size() < n || arena.size() < ArenaBytes(n))
    return -EINVAL;
  std::lock_guard<std::mutex> lock(call_mutex_);
  const PageKernels& k = *compress_kernels_;

  // A chunk's pages are packed into the arena from the start of the
  // chunk's own region, [begin * kPageSize, end * kPageSize): no page
  // takes more than kPageSize, so chunks never overlap. Pages are
  // compressed in place while the region has room for the compressor's
  // worst case, else through the worker's buffer.
  auto job = [&](std::size_t begin, std::size_t end, CodecWorker& w) {
    std::size_t off = begin * kPageSize;
    const std::size_t region_end = end * kPageSize;
    for (std::size_t i = begin; i < end; i++) {
      const void* src = pages[i];
      hzram_page_record& r = records[i];
      std::uint64_t word;
      if (k.same_filled(src, &word)) {
        r = {word, 0, HZRAM_PAGE_SAME, 0};
        continue;
      }
      std::uint8_t* const out = arena.data() + off;
      const bool in_place = off + kCompressBufferSize <= region_end;
      std::size_t len = k.compress(src, in_place ? out : w.out, kPageSize, &w.table);
      if (len) {
        if (!in_place) std::memcpy(out, w.out, len);
        r = {off, static_cast<std::uint32_t>(len), HZRAM_PAGE_LZ4, 0};
      } else {
        std::memcpy(out, src, kPageSize);
        r = {off, static_cast<std::uint32_t>(kPageSize), HZRAM_PAGE_RAW, 0};
        len = kPageSize;
      }
      off += len;
    }
  };
  Dispatch(n, job);
  return 0;
}

bool Codec::ZstdLevelValid(int level) {
  return level >= ZSTD_minCLevel() && level <= ZSTD_maxCLevel();
}

int Codec::CompressZstd(const PageList& pages, int level, std::span<hzram_page_record> records,
                        std::span<std::uint8_t> arena) {
  const std::size_t n = pages.size();
  if (n > options_.max_batch || records.size() < n || arena.size() < ArenaBytes(n) ||
      !ZstdLevelValid(level))
    return -EINVAL;
  std::lock_guard<std::mutex> lock(call_mutex_);
  std::atomic<bool> no_memory{false};

  // Page i's frame goes to [i * kPageSize, ...): a frame is kept only if
  // it is smaller than a page, so no page reaches into the next's room.
  auto job = [&](std::size_t begin, std::size_t end, CodecWorker& w) {
    if (!w.zstd) w.zstd = ZSTD_createCCtx();
    for (std::size_t i = begin; i < end; i++) {
      hzram_page_record& r = records[i];
      const std::size_t off = i * kPageSize;
      r = {};
      if (!w.zstd) continue;
      const std::size_t len = ZSTD_compressCCtx(w.zstd, arena.data() + off, kPageSize - 1,
                                                pages[i], kPageSize, level);
      if (!ZSTD_isError(len)) r = {off, static_cast<std::uint32_t>(len), HZRAM_PAGE_ZSTD, 0};
    }
    if (!w.zstd) no_memory.store(true, std::memory_order_relaxed);
  };
  Dispatch(n, job);
  if (!no_memory.load(std::memory_order_relaxed)) return 0;
  std::memset(records.data(), 0, n * sizeof(hzram_page_record));
  return -ENOMEM;
}

int Codec::Decompress(std::span<const hzram_page_record> records,
                      std::span<const std::uint8_t> arena, const MutablePageList& pages,
                      std::span<int> status) {
  const std::size_t n = records.size();
  if (n > options_.max_batch || pages.size() != n || status.size() != n) return -EINVAL;
  std::lock_guard<std::mutex> lock(call_mutex_);
  const PageKernels& k = *decompress_kernels_;
  std::atomic<int> failed{0};

  auto job = [&](std::size_t begin, std::size_t end, CodecWorker& w) {
    int bad = 0;
    for (std::size_t i = begin; i < end; i++) {
      // One read of the record: the checks and the work use this copy.
      const hzram_page_record r = LoadRecord(records[i]);
      void* dst = pages[i];
      int ret = -EINVAL;
      if (hzram_page_record_check(&r, arena.size()) != HZRAM_RECORD_OK || r.kind == 0) {
        // not a record of a page
      } else if (r.kind == HZRAM_PAGE_SAME) {
        k.fill(dst, r.value);
        ret = 0;
      } else if (r.kind == HZRAM_PAGE_RAW) {
        std::memcpy(dst, arena.data() + r.value, kPageSize);
        ret = 0;
      } else if (r.kind == HZRAM_PAGE_LZ4) {
        // Decoded from a copy of the block, made in one pass: the
        // decoder's checks hold for what it reads. (A zstd frame, a
        // recompression's output, is the module's to decode: -EINVAL.)
        std::memcpy(w.out, arena.data() + r.value, r.length);
        ret = k.decompress(w.out, r.length, dst);
      }
      status[i] = ret;
      bad += ret != 0;
    }
    if (bad) failed.fetch_add(bad, std::memory_order_relaxed);
  };
  Dispatch(n, job);
  return failed.load(std::memory_order_relaxed);
}

}  // namespace hzram
