// SPDX-License-Identifier: GPL-2.0
// The GPU codec's host side: devices, streams, events, pinned and device
// buffers (all owned by RAII holders), the ring of slots, error handling.
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>
#include <sched.h>

// The uapi header's functions for the kernels too: before its first include.
#define HZRAM_UAPI_INLINE __host__ __device__ static inline

#include "../thread_pool.h"
#include "gpu_testing.h"
#include "hzram/gpu_codec.h"
#include "kernels.cuh"

namespace hzram {
namespace {

// RAII holders: each frees what it holds, ignoring errors (a device that
// failed must still be torn down without a crash).
struct PinnedDeleter {
  void operator()(void* p) const { cudaFreeHost(p); }
};
struct DeviceDeleter {
  void operator()(void* p) const { cudaFree(p); }
};
template <class T>
using Pinned = std::unique_ptr<T, PinnedDeleter>;
template <class T>
using DeviceBuf = std::unique_ptr<T, DeviceDeleter>;

struct Stream {
  cudaStream_t s = nullptr;
  ~Stream() {
    if (s) cudaStreamDestroy(s);
  }
};
struct Event {
  cudaEvent_t e = nullptr;
  ~Event() {
    if (e) cudaEventDestroy(e);
  }
};

std::string Describe(const char* what, cudaError_t e) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

enum class Op { kNone, kCompress, kDecompress };

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

}  // namespace

struct GpuCodec::Impl {
  struct Slot {
    Stream stream;
    Event ev[6];  // submitted, copied in, computed, records or statuses
                  // back, data back (issued by Collect), Collect's start
                  // (the results waited for the host from ev[3] to it)
    Pinned<std::uint8_t> h_pages, h_arena;
    Pinned<hzram_page_record> h_records;
    Pinned<int> h_status;
    DeviceBuf<std::uint8_t> d_pages, d_arena, d_packed;
    DeviceBuf<hzram_page_record> d_records;
    DeviceBuf<int> d_status;
    DeviceBuf<std::uint64_t> d_offsets;
    // The batch in it.
    Op op = Op::kNone;
    int ticket = -1;
    std::uint64_t number = 0;  // a compression's, from 1 (for the faults)
    std::size_t n = 0;
    std::span<hzram_page_record> out_records;
    std::span<std::uint8_t> out_arena;
    MutablePageList out_pages{static_cast<void*>(nullptr), 0};
    std::span<int> out_status;
    std::uint64_t bytes_in = 0, bytes_out = 0;
    double staging_ms = 0;  // the host copy into the pinned buffers
    // Collect()ed: checked, its output on its way back (out_bytes of it,
    // into the caller's memory if direct_out); whether that copy was
    // issued, and event 4 recorded after it.
    bool collected = false, direct_out = false, copy_issued = false, copy_recorded = false;
    std::uint64_t out_bytes = 0;
  };

  GpuOptions options;
  GpuFaults faults;  // none but in the tests (GpuCodecTestPeer)
  cudaDeviceProp prop{};
  std::vector<Slot> slots;
  std::unique_ptr<ThreadPool> pool;  // the staging threads
  // Page-locked ranges of the caller's (RegisterHostMemory).
  struct Range {
    const std::uint8_t* p;
    std::size_t bytes;
  };
  std::vector<Range> registered;
  int next_ticket = 0;
  std::uint64_t submitted = 0;
  int comp_grid_cap = 0, decomp_grid_cap = 0, pack_grid_cap = 0;  // blocks resident at once
  std::size_t comp_smem = 0, decomp_smem = 0;
  // The compression kernel of options.compress_kernel.
  using CompressFn = void (*)(const std::uint8_t*, std::uint32_t, hzram_page_record*,
                              std::uint8_t*);
  CompressFn comp_kernel = nullptr;
  bool healthy = true;
  // A batch was given up: the device may still be running it, so the
  // buffers are left to the process's exit rather than freed.
  bool abandoned = false;
  std::string why;
  GpuStats stats;

  // GpuCodec::Create(), with @faults.
  static std::unique_ptr<GpuCodec> Create(const GpuOptions& options, const GpuFaults& faults,
                                          int* err, std::string* why);
  // Its steps once the device is selected, in order; each returns 0 or
  // -errno and leaves the reason in why. The kernels' shared memory and
  // grids (as many blocks as are resident at once); the staging threads;
  // each slot's stream, events and buffers; a test batch of one page,
  // which must come back whole.
  int SetUpKernels();
  int StartStagingThreads();
  int AllocateSlots();
  int RunTestBatch(GpuCodec* codec);

  // Mark the codec failed: every later call fails with -EIO.
  int Fail(const std::string& reason) {
    if (healthy) {
      healthy = false;
      why = reason;
    }
    return -EIO;
  }
  int Fail(const char* what, cudaError_t e) { return Fail(Describe(what, e)); }

  int Select() {
    const cudaError_t e = cudaSetDevice(options.device);
    return e == cudaSuccess ? 0 : Fail("cudaSetDevice", e);
  }

  // Blocks for @n pages: one warp a page, at most @cap blocks (what is
  // resident at once; the warps stride over the rest).
  unsigned Grid(std::size_t n, int cap) const {
    const std::size_t warps = options.warps_per_block;
    const std::size_t blocks = (n + warps - 1) / warps;
    return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(blocks, cap)));
  }

  Slot* SlotFor(int ticket) { return &slots[static_cast<std::size_t>(ticket) % slots.size()]; }

  // Once a batch is collected, its kernels are done and all that may be
  // left on its stream is the copy of its output back. A batch not
  // collected has issued no such copy.
  //
  // Into the caller's memory (direct_out): wait for it, without limit
  // (nothing else can hold the stream up), so that nothing of the batch
  // lands there after Wait() or Abandon() has returned, whatever the
  // codec's health.
  //
  // Into the codec's own pinned buffer (always, in hzramd): nothing of the
  // caller's is at stake, and the codec is failed or being given up, so
  // a wedged device must not hold the caller (every device's loop behind
  // it, the stop) without limit: poll the copy's event for kCopyBackPoll
  // at most; if it has not ended, leave the slot and its buffers to the
  // process's exit, as for an abandoned batch.
  static constexpr auto kCopyBackPoll = std::chrono::milliseconds(20);
  void DrainCopyBack(Slot* s) {
    if (!s->collected) return;
    if (s->direct_out) {
      cudaStreamSynchronize(s->stream.s);
      return;
    }
    if (!s->copy_issued) return;
    if (!s->copy_recorded) {
      // Collect() failed between the copy and its event: nothing tells
      // when the copy ends.
      abandoned = true;
      return;
    }
    const auto until = Clock::now() + kCopyBackPoll;
    for (cudaError_t e; (e = cudaEventQuery(s->ev[4].e)) != cudaSuccess;) {
      if (e != cudaErrorNotReady || Clock::now() >= until) {
        // Not done in time, or the device failed: the copy may still
        // write the slot's pinned buffer, which is then never freed.
        abandoned = true;
        return;
      }
      std::this_thread::yield();
    }
  }

  // Claim the next slot, or -EBUSY if its batch was not waited for.
  // Tickets wrap at a multiple of the slot count, so that ticket t stays
  // in slot t % slots across the wrap.
  int Claim(Slot** out) {
    Slot* s = SlotFor(next_ticket);
    if (s->op != Op::kNone) return -EBUSY;
    s->ticket = next_ticket;
    const int wrap = static_cast<int>(INT_MAX / slots.size() * slots.size());
    next_ticket = next_ticket + 1 == wrap ? 0 : next_ticket + 1;
    *out = s;
    return 0;
  }

  // The slot of a batch in flight, or null.
  Slot* InFlight(int ticket) {
    if (ticket < 0) return nullptr;
    Slot* s = SlotFor(ticket);
    return s->op == Op::kNone || s->ticket != ticket ? nullptr : s;
  }

  // Whether [p, p + bytes) lies in one registered range.
  bool Registered(const void* p, std::size_t bytes) const {
    const auto* b = static_cast<const std::uint8_t*>(p);
    for (const auto& r : registered)
      if (b >= r.p && bytes <= r.bytes && static_cast<std::size_t>(b - r.p) <= r.bytes - bytes)
        return true;
    return false;
  }

  // fn(first, count) over [0, n) pages (or 4 KiB chunks) in runs, on as
  // many staging threads as give each @per_worker of them at least; small
  // jobs on the caller alone. The copies into the pinned buffers hold up
  // the device (and, in the hybrid codec, the CPU's share): they take
  // every thread from kStagingPerWorker on. The copies back come when
  // the device is done, and waking a thread costs more CPU than it saves
  // below kCopyBackPerWorker: with every thread for them, hzramd's gpu
  // backend took 0.226 s of CPU per GiB, with one 0.089, at the same
  // speed (H200, 16 CPUs, batches of 1024 pages, 2026-11-26).
  static constexpr std::size_t kStagingPerWorker = 4;    // 16 KiB
  static constexpr std::size_t kCopyBackPerWorker = 256;  // 1 MiB
  template <class F>
  void Parallel(std::size_t n, std::size_t per_worker, F&& fn) {
    const std::size_t w = std::min<std::size_t>(pool->size(), n / per_worker);
    if (n < 64 || w <= 1) {
      fn(std::size_t{0}, n);
      return;
    }
    auto job = [&](unsigned i) {
      const std::size_t a = n * i / w, b = n * (i + 1) / w;
      if (b > a) fn(a, b - a);
    };
    pool->Run(job, static_cast<unsigned>(w));
  }
};

#define HZ_CUDA(call)                                   \
  do {                                                  \
    const cudaError_t hz_err = (call);                  \
    if (hz_err != cudaSuccess) return impl_->Fail(#call, hz_err); \
  } while (0)

bool GpuAvailable(int device, std::string* why) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  std::string reason;
  if (e != cudaSuccess) {
    reason = Describe("cudaGetDeviceCount", e);
  } else if (device < 0 || device >= count) {
    reason = "no CUDA device " + std::to_string(device) + " (" + std::to_string(count) + " present)";
  } else if ((e = cudaSetDevice(device)) != cudaSuccess) {
    reason = Describe("cudaSetDevice", e);
  } else {
    int* d = nullptr;
    int h = 0;
    if ((e = cudaMalloc(&d, sizeof(int))) != cudaSuccess) {
      reason = Describe("cudaMalloc", e);
    } else {
      gpu::ProbeKernel<<<1, 32>>>(d);
      if ((e = cudaGetLastError()) != cudaSuccess ||
          (e = cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost)) != cudaSuccess)
        reason = Describe("probe kernel", e);
      else if (h != 42)
        reason = "the probe kernel did not run";
      cudaFree(d);
    }
  }
  if (why) *why = reason;
  return reason.empty();
}

GpuCodec::GpuCodec(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GpuCodec::~GpuCodec() {
  if (!impl_) return;
  // Let every batch still queued finish before its buffers are freed;
  // after a failure these calls fail too, and that is ignored.
  cudaSetDevice(impl_->options.device);
  if (impl_->abandoned) {
    // The device may never finish: neither wait for it nor free what it
    // may still use (freeing synchronises); the process's exit does.
    for (auto& s : impl_->slots) {
      (void)s.h_pages.release(), (void)s.h_arena.release(), (void)s.h_records.release();
      (void)s.h_status.release(), (void)s.d_pages.release(), (void)s.d_arena.release();
      (void)s.d_packed.release(), (void)s.d_records.release(), (void)s.d_status.release();
      (void)s.d_offsets.release();
      s.stream.s = nullptr;
      for (auto& e : s.ev) e.e = nullptr;
    }
  } else {
    for (auto& s : impl_->slots)
      if (s.stream.s) cudaStreamSynchronize(s.stream.s);
  }
  // After an abandoned batch, unregistering would wait for the device:
  // the ranges stay locked until the process exits.
  if (!impl_->abandoned)
    for (const auto& r : impl_->registered) cudaHostUnregister(const_cast<std::uint8_t*>(r.p));
}

std::unique_ptr<GpuCodec> GpuCodec::Create(const GpuOptions& options, int* err, std::string* why) {
  return Impl::Create(options, GpuFaults(), err, why);
}

std::unique_ptr<GpuCodec> GpuCodecTestPeer::Create(const GpuOptions& options,
                                                   const GpuFaults& faults, int* err,
                                                   std::string* why) {
  return GpuCodec::Impl::Create(options, faults, err, why);
}

int GpuCodec::Impl::SetUpKernels() {
  cudaError_t e = cudaGetDeviceProperties(&prop, options.device);
  if (e != cudaSuccess) return Fail("cudaGetDeviceProperties", e);
  const bool c1 = options.compress_kernel == 1;
  comp_kernel = c1 ? gpu::CompressKernel<1> : gpu::CompressKernel<2>;
  comp_smem = options.warps_per_block *
              (c1 ? sizeof(gpu::CompressScratchOf<1>) : sizeof(gpu::CompressScratchOf<2>));
  decomp_smem = options.warps_per_block * sizeof(gpu::DecompressScratch);
  if (comp_smem > prop.sharedMemPerBlockOptin) {
    Fail(std::to_string(options.warps_per_block) + " warps per block need " +
         std::to_string(comp_smem) + " bytes of shared memory; " + prop.name + " has " +
         std::to_string(prop.sharedMemPerBlockOptin) + " per block");
    return -EINVAL;
  }
  if ((e = cudaFuncSetAttribute(comp_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                static_cast<int>(comp_smem))) != cudaSuccess)
    return Fail("cudaFuncSetAttribute(CompressKernel)", e);
  if ((e = cudaFuncSetAttribute(gpu::DecompressKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                static_cast<int>(decomp_smem))) != cudaSuccess)
    return Fail("cudaFuncSetAttribute(DecompressKernel)", e);
  // Each kernel's grid: as many blocks as are resident at once.
  const int threads = static_cast<int>(options.warps_per_block * 32);
  auto resident = [&](auto kernel, std::size_t smem, int* cap) {
    int per_sm = 0;
    const cudaError_t o =
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem);
    if (o != cudaSuccess) return Fail("cudaOccupancyMaxActiveBlocksPerMultiprocessor", o);
    *cap = std::max(1, per_sm) * prop.multiProcessorCount;
    return 0;
  };
  int ret;
  if ((ret = resident(comp_kernel, comp_smem, &comp_grid_cap)) ||
      (ret = resident(gpu::DecompressKernel, decomp_smem, &decomp_grid_cap)) ||
      (ret = resident(gpu::PackKernel, 0, &pack_grid_cap)))
    return ret;
  return 0;
}

int GpuCodec::Impl::StartStagingThreads() {
  unsigned n = options.staging_threads;
  if (n == 0) {
    cpu_set_t set;
    n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
    n = std::clamp(n, 1u, 8u);
  }
  int err = 0;
  // Their runs are a batch's device time apart: no spinning between them.
  pool = ThreadPool::Create(n, false, &err, std::chrono::microseconds(0));
  if (!pool) {
    Fail("staging threads: " + std::string(std::strerror(-err)));
    return err;
  }
  return 0;
}

int GpuCodec::Impl::AllocateSlots() {
  // -ENOMEM when there is not enough memory, -EIO for any other CUDA error.
  auto alloc = [&](auto& holder, std::size_t bytes, bool pinned) {
    void* p = nullptr;
    const cudaError_t a = pinned ? cudaMallocHost(&p, bytes) : cudaMalloc(&p, bytes);
    if (a != cudaSuccess) {
      Fail(pinned ? "cudaMallocHost" : "cudaMalloc", a);
      return a == cudaErrorMemoryAllocation ? -ENOMEM : -EIO;
    }
    holder.reset(static_cast<typename std::remove_reference_t<decltype(holder)>::pointer>(p));
    return 0;
  };
  const std::size_t pages_bytes = options.max_batch * gpu::kPage;
  const std::size_t records_bytes = options.max_batch * sizeof(hzram_page_record);
  const std::size_t status_bytes = options.max_batch * sizeof(int);
  slots.resize(options.slots);
  for (auto& s : slots) {
    cudaError_t e;
    if ((e = cudaStreamCreateWithFlags(&s.stream.s, cudaStreamNonBlocking)) != cudaSuccess)
      return Fail("cudaStreamCreateWithFlags", e);
    for (auto& ev : s.ev)
      if ((e = cudaEventCreate(&ev.e)) != cudaSuccess) return Fail("cudaEventCreate", e);
    int ret;
    if ((ret = alloc(s.h_pages, pages_bytes, true)) || (ret = alloc(s.h_arena, pages_bytes, true)) ||
        (ret = alloc(s.h_records, records_bytes, true)) || (ret = alloc(s.h_status, status_bytes, true)) ||
        (ret = alloc(s.d_pages, pages_bytes, false)) || (ret = alloc(s.d_arena, pages_bytes, false)) ||
        (ret = alloc(s.d_records, records_bytes, false)) || (ret = alloc(s.d_status, status_bytes, false)) ||
        (ret = alloc(s.d_packed, pages_bytes, false)) ||
        (ret = alloc(s.d_offsets, (options.max_batch + 1) * sizeof(std::uint64_t), false)))
      return ret;
  }
  return 0;
}

int GpuCodec::Impl::RunTestBatch(GpuCodec* codec) {
  std::vector<std::uint8_t> page(gpu::kPage), back(gpu::kPage);
  for (std::size_t i = 0; i < page.size(); i++) page[i] = "hzram gpu test "[i % 15];
  hzram_page_record rec;
  std::vector<std::uint8_t> arena(gpu::kPage);
  int status = 1;
  if (codec->Compress(PageList(page.data(), 1), std::span(&rec, 1), arena) ||
      codec->Decompress(std::span(&rec, 1), arena, MutablePageList(back.data(), 1),
                        std::span(&status, 1)) != 0 ||
      page != back)
    return Fail("the test batch did not come back whole");
  return 0;
}

std::unique_ptr<GpuCodec> GpuCodec::Impl::Create(const GpuOptions& options, const GpuFaults& faults,
                                                 int* err, std::string* why) {
  int e_local;
  std::string why_local;
  if (!err) err = &e_local;
  if (!why) why = &why_local;
  if (options.slots == 0 || options.max_batch == 0 || options.warps_per_block == 0 ||
      options.warps_per_block > 32 || options.staging_threads > 1024 ||
      options.compress_kernel < 1 || options.compress_kernel > 2 ||
      ((faults.hang_at_batch || faults.hang_copy_back_at_batch) && faults.hang_ms == 0)) {
    *err = -EINVAL;
    *why = "bad options";
    return nullptr;
  }
  if (!GpuAvailable(options.device, why)) {
    *err = -ENODEV;
    return nullptr;
  }
  std::unique_ptr<GpuCodec> codec(new GpuCodec(std::make_unique<Impl>()));
  Impl& m = *codec->impl_;
  m.options = options;
  m.faults = faults;
  int ret;
  if ((ret = m.Select()) || (ret = m.SetUpKernels()) || (ret = m.StartStagingThreads()) ||
      (ret = m.AllocateSlots()) || (ret = m.RunTestBatch(codec.get()))) {
    *err = ret;
    *why = m.why;
    return nullptr;
  }
  // The test batch counts neither in the stats nor in the batch numbers.
  m.stats = GpuStats();
  m.submitted = 0;
  *err = 0;
  return codec;
}

int GpuCodec::SubmitCompress(const PageList& pages, std::span<hzram_page_record> records,
                             std::span<std::uint8_t> arena) {
  Impl& m = *impl_;
  const std::size_t n = pages.size();
  if (n == 0 || n > m.options.max_batch || records.size() < n || arena.size() < Codec::ArenaBytes(n))
    return -EINVAL;
  if (!m.healthy || m.Select()) return -EIO;
  Impl::Slot* s;
  if (int ret = m.Claim(&s)) return ret;

  const std::size_t bytes = n * gpu::kPage;
  const auto staged = Clock::now();
  const std::uint8_t* from = static_cast<const std::uint8_t*>(pages.contiguous());
  if (!from || !m.Registered(from, bytes)) {
    std::uint8_t* to = s->h_pages.get();
    m.Parallel(n, Impl::kStagingPerWorker, [&](std::size_t first, std::size_t count) {
      for (std::size_t i = first; i < first + count; i++) std::memcpy(to + i * gpu::kPage, pages[i], gpu::kPage);
    });
    from = to;
  } else {
    m.stats.direct++;
  }
  s->staging_ms = MsSince(staged);
  // The tests' faults: a real one, from an invalid device pointer; a hang.
  s->number = ++m.submitted;
  const bool fault = m.faults.fault_at_batch && m.submitted == m.faults.fault_at_batch;
  const std::uint8_t* src = fault ? reinterpret_cast<const std::uint8_t*>(16) : s->d_pages.get();
  const std::uint32_t n32 = static_cast<std::uint32_t>(n);

  HZ_CUDA(cudaEventRecord(s->ev[0].e, s->stream.s));
  if (m.faults.hang_at_batch && m.submitted == m.faults.hang_at_batch) {
    gpu::SpinKernel<<<1, 1, 0, s->stream.s>>>(std::uint64_t{m.faults.hang_ms} * 1000000);
    HZ_CUDA(cudaGetLastError());
  }
  HZ_CUDA(cudaMemcpyAsync(s->d_pages.get(), from, bytes, cudaMemcpyHostToDevice, s->stream.s));
  HZ_CUDA(cudaEventRecord(s->ev[1].e, s->stream.s));
  m.comp_kernel<<<m.Grid(n, m.comp_grid_cap), m.options.warps_per_block * 32, m.comp_smem, s->stream.s>>>(
      src, n32, s->d_records.get(), s->d_arena.get());
  HZ_CUDA(cudaGetLastError());
  // Compaction: the data packed in page order, the records pointed there.
  gpu::PackOffsetsKernel<<<1, gpu::kScanThreads, 0, s->stream.s>>>(s->d_records.get(), n32,
                                                                   s->d_offsets.get());
  HZ_CUDA(cudaGetLastError());
  gpu::PackKernel<<<m.Grid(n, m.pack_grid_cap), m.options.warps_per_block * 32, 0, s->stream.s>>>(
      s->d_records.get(), n32, s->d_offsets.get(), s->d_arena.get(), s->d_packed.get());
  HZ_CUDA(cudaGetLastError());
  HZ_CUDA(cudaEventRecord(s->ev[2].e, s->stream.s));
  HZ_CUDA(cudaMemcpyAsync(s->h_records.get(), s->d_records.get(), n * sizeof(hzram_page_record),
                          cudaMemcpyDeviceToHost, s->stream.s));
  HZ_CUDA(cudaEventRecord(s->ev[3].e, s->stream.s));

  s->op = Op::kCompress;
  s->collected = false;
  s->n = n;
  s->out_records = records;
  s->out_arena = arena;
  s->bytes_in = bytes;
  s->bytes_out = n * sizeof(hzram_page_record);  // and the packed data, in Wait
  return s->ticket;
}

int GpuCodec::SubmitDecompress(std::span<const hzram_page_record> records,
                               std::span<const std::uint8_t> arena, const MutablePageList& pages,
                               std::span<int> status) {
  Impl& m = *impl_;
  const std::size_t n = records.size();
  if (n == 0 || n > m.options.max_batch || pages.size() != n || status.size() != n ||
      arena.size() > m.options.max_batch * gpu::kPage)
    return -EINVAL;
  if (!m.healthy || m.Select()) return -EIO;
  Impl::Slot* s;
  if (int ret = m.Claim(&s)) return ret;

  const auto staged = Clock::now();
  std::memcpy(s->h_records.get(), records.data(), n * sizeof(hzram_page_record));
  const std::uint8_t* from = arena.data();
  if (!arena.empty() && !m.Registered(from, arena.size())) {
    std::uint8_t* to = s->h_arena.get();
    const std::size_t chunks = (arena.size() + gpu::kPage - 1) / gpu::kPage;
    m.Parallel(chunks, Impl::kStagingPerWorker, [&](std::size_t first, std::size_t count) {
      const std::size_t a = first * gpu::kPage, b = std::min(arena.size(), (first + count) * gpu::kPage);
      std::memcpy(to + a, from + a, b - a);
    });
    from = to;
  } else if (!arena.empty()) {
    m.stats.direct++;
  }
  s->staging_ms = MsSince(staged);
  HZ_CUDA(cudaEventRecord(s->ev[0].e, s->stream.s));
  HZ_CUDA(cudaMemcpyAsync(s->d_records.get(), s->h_records.get(), n * sizeof(hzram_page_record),
                          cudaMemcpyHostToDevice, s->stream.s));
  if (!arena.empty())
    HZ_CUDA(cudaMemcpyAsync(s->d_arena.get(), from, arena.size(), cudaMemcpyHostToDevice, s->stream.s));
  HZ_CUDA(cudaEventRecord(s->ev[1].e, s->stream.s));
  gpu::DecompressKernel<<<m.Grid(n, m.decomp_grid_cap), m.options.warps_per_block * 32, m.decomp_smem, s->stream.s>>>(
      s->d_records.get(), static_cast<std::uint32_t>(n), s->d_arena.get(), arena.size(),
      s->d_pages.get(), s->d_status.get());
  HZ_CUDA(cudaGetLastError());
  HZ_CUDA(cudaEventRecord(s->ev[2].e, s->stream.s));
  HZ_CUDA(cudaMemcpyAsync(s->h_status.get(), s->d_status.get(), n * sizeof(int), cudaMemcpyDeviceToHost,
                          s->stream.s));
  HZ_CUDA(cudaEventRecord(s->ev[3].e, s->stream.s));

  s->op = Op::kDecompress;
  s->number = 0;
  s->collected = false;
  s->n = n;
  s->out_pages = pages;
  s->out_status = status;
  s->bytes_in = n * sizeof(hzram_page_record) + arena.size();
  s->bytes_out = n * sizeof(int);  // and the pages, in Wait
  return s->ticket;
}

// Once a batch's kernels are done (event 3): check what the device wrote
// (a device that went wrong must fail the batch, not overwrite the
// caller's memory) and start the copy of its output back, straight into
// the caller's memory where that is contiguous and registered, else into
// the pinned buffer. Called by Ready() as soon as it sees the kernels
// done, or by Wait(); never before the kernels are done, so that an
// abandoned batch writes nothing of the caller's.
int GpuCodec::Collect(void* slot) {
  Impl& m = *impl_;
  auto* s = static_cast<Impl::Slot*>(slot);
  s->collected = true;
  s->direct_out = false;
  s->copy_issued = false;
  s->copy_recorded = false;
  HZ_CUDA(cudaEventRecord(s->ev[5].e, s->stream.s));
  if (s->op == Op::kCompress) {
    // The records, packed in page order: each page's data right after the
    // previous page's.
    const hzram_page_record* rec = s->h_records.get();
    std::uint64_t at = 0;
    for (std::size_t i = 0; i < s->n; i++) {
      const hzram_page_record& r = rec[i];
      const bool ok = hzram_page_record_check(&r, s->n * gpu::kPage) == HZRAM_RECORD_OK &&
                      r.kind != 0 && (r.kind == HZRAM_PAGE_SAME || r.value == at);
      if (!ok) return m.Fail("the device returned a malformed record for page " + std::to_string(i));
      if (r.kind != HZRAM_PAGE_SAME) at += r.length;
    }
    // Only what the records use crosses the link.
    s->out_bytes = at;
    s->direct_out = at && m.Registered(s->out_arena.data(), at);
    s->copy_issued = at != 0;
    if (at && m.faults.hang_copy_back_at_batch == s->number) {
      gpu::SpinKernel<<<1, 1, 0, s->stream.s>>>(std::uint64_t{m.faults.hang_ms} * 1000000);
      HZ_CUDA(cudaGetLastError());
    }
    if (at)
      HZ_CUDA(cudaMemcpyAsync(s->direct_out ? s->out_arena.data() : s->h_arena.get(), s->d_packed.get(), at,
                              cudaMemcpyDeviceToHost, s->stream.s));
  } else {
    for (std::size_t i = 0; i < s->n; i++) {
      const int st = s->h_status.get()[i];
      if (st != 0 && st != -EINVAL && st != -EBADMSG)
        return m.Fail("the device returned status " + std::to_string(st) + " for page " + std::to_string(i));
    }
    // A failed page's destination is undefined either way.
    const std::size_t bytes = s->n * gpu::kPage;
    void* to = s->out_pages.contiguous();
    s->out_bytes = bytes;
    s->direct_out = to && m.Registered(to, bytes);
    s->copy_issued = true;
    HZ_CUDA(cudaMemcpyAsync(s->direct_out ? to : s->h_pages.get(), s->d_pages.get(), bytes,
                            cudaMemcpyDeviceToHost, s->stream.s));
  }
  HZ_CUDA(cudaEventRecord(s->ev[4].e, s->stream.s));
  s->copy_recorded = true;
  return 0;
}

int GpuCodec::Wait(int ticket, BatchTiming* timing) {
  Impl& m = *impl_;
  Impl::Slot* s = m.InFlight(ticket);
  if (!s) return -EINVAL;
  const Op op = s->op;
  struct Free {
    Impl::Slot* s;
    ~Free() { s->op = Op::kNone; }
  } free_slot{s};
  if (!m.healthy || m.Select()) {
    // Failed, maybe by another batch abandoned: this one's copy back may
    // be on its way into the caller's memory, which the caller is about
    // to use for something else.
    m.DrainCopyBack(s);
    return -EIO;
  }
  if (!s->collected) {
    HZ_CUDA(cudaEventSynchronize(s->ev[3].e));
    if (int ret = Collect(s)) {
      m.DrainCopyBack(s);
      return ret;
    }
  }
  if (const cudaError_t e = cudaEventSynchronize(s->ev[4].e); e != cudaSuccess) {
    m.DrainCopyBack(s);
    return m.Fail("cudaEventSynchronize", e);
  }

  BatchTiming t;
  float ms = 0;
  HZ_CUDA(cudaEventElapsedTime(&ms, s->ev[0].e, s->ev[1].e));
  t.h2d_ms = ms;
  HZ_CUDA(cudaEventElapsedTime(&ms, s->ev[1].e, s->ev[2].e));
  t.kernel_ms = ms;
  // The copies back: the records or statuses (ev[2] to ev[3]), then the
  // data, which Collect() issued when the caller polled (ev[5] to ev[4]);
  // between them the results waited for the host.
  HZ_CUDA(cudaEventElapsedTime(&ms, s->ev[2].e, s->ev[3].e));
  t.d2h_ms = ms;
  HZ_CUDA(cudaEventElapsedTime(&ms, s->ev[5].e, s->ev[4].e));
  t.d2h_ms += ms;
  HZ_CUDA(cudaEventElapsedTime(&ms, s->ev[3].e, s->ev[5].e));
  t.wait_ms = ms;
  HZ_CUDA(cudaEventElapsedTime(&ms, s->ev[0].e, s->ev[4].e));
  t.total_ms = ms;
  s->bytes_out += s->out_bytes;
  m.stats.direct_out += s->direct_out;

  double host_ms = s->staging_ms;
  int ret = 0;
  const auto unstaged = Clock::now();
  if (op == Op::kCompress) {
    const hzram_page_record* rec = s->h_records.get();
    std::copy(rec, rec + s->n, s->out_records.begin());
    const std::size_t at = s->out_bytes;
    std::uint8_t* to = s->out_arena.data();
    const std::uint8_t* packed = s->h_arena.get();
    const std::size_t chunks = s->direct_out ? 0 : (at + gpu::kPage - 1) / gpu::kPage;
    m.Parallel(chunks, Impl::kCopyBackPerWorker, [&](std::size_t first, std::size_t count) {
      const std::size_t a = first * gpu::kPage, b = std::min<std::size_t>(at, (first + count) * gpu::kPage);
      std::memcpy(to + a, packed + a, b - a);
    });
  } else {
    const int* st = s->h_status.get();
    for (std::size_t i = 0; i < s->n; i++) {
      s->out_status[i] = st[i];
      if (st[i]) ret++;
    }
    const std::uint8_t* from = s->h_pages.get();
    m.Parallel(s->direct_out ? 0 : s->n, Impl::kCopyBackPerWorker, [&](std::size_t first, std::size_t count) {
      for (std::size_t i = first; i < first + count; i++)
        if (st[i] == 0) std::memcpy(s->out_pages[i], from + i * gpu::kPage, gpu::kPage);
    });
  }
  host_ms += MsSince(unstaged);
  t.h2d_bytes = s->bytes_in;
  t.d2h_bytes = s->bytes_out;
  t.host_ms = host_ms;
  t.total_ms += t.host_ms;
  m.stats.batches++;
  m.stats.pages += s->n;
  m.stats.bytes_in += s->bytes_in;
  m.stats.bytes_out += s->bytes_out;
  m.stats.h2d_ms += t.h2d_ms;
  m.stats.kernel_ms += t.kernel_ms;
  m.stats.d2h_ms += t.d2h_ms;
  m.stats.wait_ms += t.wait_ms;
  m.stats.host_ms += t.host_ms;
  m.stats.total_ms += t.total_ms;
  if (timing) *timing = t;
  return ret;
}

bool GpuCodec::Ready(int ticket) {
  Impl& m = *impl_;
  Impl::Slot* s = m.InFlight(ticket);
  if (!s || !m.healthy) return true;  // Wait() answers at once
  if (!s->collected) {
    const cudaError_t e = cudaEventQuery(s->ev[3].e);
    if (e == cudaErrorNotReady) return false;
    if (e != cudaSuccess || m.Select() || Collect(s)) return true;  // Wait() reports it
  }
  return cudaEventQuery(s->ev[4].e) != cudaErrorNotReady;
}

void GpuCodec::Abandon(int ticket, const std::string& why) {
  Impl& m = *impl_;
  Impl::Slot* s = m.InFlight(ticket);
  if (!s) return;
  // Once collected, the kernels are done and only the copy back may be
  // running, possibly into the caller's memory: let it end first.
  m.DrainCopyBack(s);
  s->op = Op::kNone;
  m.abandoned = true;
  m.Fail(why);
}

unsigned GpuCodec::max_in_flight() const { return static_cast<unsigned>(impl_->slots.size()); }

int GpuCodec::RegisterHostMemory(void* p, std::size_t bytes, bool read_only) {
  Impl& m = *impl_;
  if (!p || bytes == 0) return -EINVAL;
  const auto* b = static_cast<const std::uint8_t*>(p);
  for (const auto& r : m.registered)
    if (b < r.p + r.bytes && r.p < b + bytes) return -EINVAL;
  if (!m.healthy || m.Select()) return -EIO;
  const cudaError_t e =
      cudaHostRegister(p, bytes, read_only ? cudaHostRegisterReadOnly : cudaHostRegisterDefault);
  if (e != cudaSuccess) {
    // Not a device failure: the memory cannot be locked (its kind, a
    // limit). The codec goes on through its pinned buffers; the error is
    // cleared, so that the next check of a launch does not take it for
    // its own.
    cudaGetLastError();
    if (e == cudaErrorMemoryAllocation) return -ENOMEM;
    if (e == cudaErrorNotSupported) return -EOPNOTSUPP;  // read-only, here
    return e == cudaErrorInvalidValue || e == cudaErrorHostMemoryAlreadyRegistered ? -EINVAL : -EIO;
  }
  m.registered.push_back({b, bytes});
  return 0;
}

int GpuCodec::UnregisterHostMemory(void* p) {
  Impl& m = *impl_;
  for (auto it = m.registered.begin(); it != m.registered.end(); ++it) {
    if (it->p != p) continue;
    if (m.abandoned) {
      // The device may still be running the abandoned batch, and
      // cudaHostUnregister would wait for it: the range stays locked
      // until the process exits, and no batch reads it any more.
      m.registered.erase(it);
      return 0;
    }
    if (m.Select()) return -EIO;
    if (cudaHostUnregister(p) != cudaSuccess) {
      cudaGetLastError();
      return -EIO;
    }
    m.registered.erase(it);
    return 0;
  }
  return -EINVAL;
}

int GpuCodec::Compress(const PageList& pages, std::span<hzram_page_record> records,
                       std::span<std::uint8_t> arena, BatchTiming* timing) {
  const int ticket = SubmitCompress(pages, records, arena);
  return ticket < 0 ? ticket : Wait(ticket, timing);
}

int GpuCodec::Decompress(std::span<const hzram_page_record> records, std::span<const std::uint8_t> arena,
                         const MutablePageList& pages, std::span<int> status, BatchTiming* timing) {
  const int ticket = SubmitDecompress(records, arena, pages, status);
  return ticket < 0 ? ticket : Wait(ticket, timing);
}

bool GpuCodec::healthy() const { return impl_->healthy; }
std::string GpuCodec::why() const { return impl_->why; }
std::size_t GpuCodec::max_batch() const { return impl_->options.max_batch; }
GpuStats GpuCodec::stats() const { return impl_->stats; }
std::string GpuCodec::device_name() const { return impl_->prop.name; }

}  // namespace hzram
