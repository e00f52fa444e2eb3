// SPDX-License-Identifier: GPL-2.0
// The GPU codec's kernels: one warp per page, its scratch in shared memory,
// the per-page algorithms of lz4_warp.h run by the warp's 32 threads. The
// including file defines HZRAM_UAPI_INLINE for the device before its
// first include of <linux/hzram.h> (gpu_codec.cu).
#ifndef HZRAM_GPU_KERNELS_CUH
#define HZRAM_GPU_KERNELS_CUH

#include <linux/hzram.h>

#include <cstdint>
#include <type_traits>

#include "lz4_warp.h"

namespace hzram::gpu {

// The device executor of lz4_warp.h: every lane runs each step, then the
// warp synchronises.
struct DeviceLanes {
  template <class F>
  __device__ void Each(F&& f) {
    f(static_cast<int>(threadIdx.x & 31));
    __syncwarp();
  }
  __device__ std::uint32_t Ballot(int lane, const std::uint8_t* v) const {
    return __ballot_sync(kFull, v[lane] != 0);
  }
  __device__ std::uint32_t MatchAny(int lane, const std::uint32_t* v) const {
    return __match_any_sync(kFull, v[lane]);
  }
};

// The compression kernel's algorithm (GpuOptions::compress_kernel): 1,
// the stepwise one (CompressPageWarp); 2, the segmented one
// (CompressPageSegments).
template <int kVersion>
using CompressScratchOf = std::conditional_t<kVersion == 1, CompressScratch, SegmentScratch>;

// Compress pages [0, n) of @pages (device, n * kPage bytes) into @arena
// (device, n * kPage bytes: page i's data at i * kPage) and @records.
// Dynamic shared memory: one CompressScratchOf<kVersion> per warp.
template <int kVersion>
__global__ void CompressKernel(const std::uint8_t* pages, std::uint32_t n,
                               hzram_page_record* records, std::uint8_t* arena) {
  extern __shared__ __align__(16) unsigned char smem[];
  const unsigned warp = threadIdx.x / 32, warps = blockDim.x / 32;
  auto& s = reinterpret_cast<CompressScratchOf<kVersion>*>(smem)[warp];
  DeviceLanes lanes;
  for (std::uint32_t i = blockIdx.x * warps + warp; i < n; i += gridDim.x * warps) {
    std::uint32_t len = 0;
    std::uint64_t word = 0;
    const std::uint64_t at = static_cast<std::uint64_t>(i) * kPage;
    PageKind kind;
    if constexpr (kVersion == 1)
      kind = CompressPageWarp(lanes, s, pages + at, arena + at, &len, &word);
    else
      kind = CompressPageSegments(lanes, s, pages + at, arena + at, &len, &word);
    if ((threadIdx.x & 31) == 0) {
      hzram_page_record r;
      r.flags = 0;
      r.kind = static_cast<std::uint16_t>(kind);
      if (kind == PageKind::kSame) {
        r.value = word;
        r.length = 0;
      } else {
        r.value = at;
        r.length = kind == PageKind::kRaw ? kPage : len;
      }
      records[i] = r;
    }
    __syncwarp();
  }
}

// Decode @records (with their data in @arena, @arena_len bytes) into
// @pages (device, n * kPage bytes); @status gets 0, -EINVAL (22) or
// -EBADMSG (74) per page, as Codec::Decompress. Dynamic shared memory: one
// DecompressScratch per warp.
__global__ void DecompressKernel(const hzram_page_record* records, std::uint32_t n,
                                 const std::uint8_t* arena, std::uint64_t arena_len,
                                 std::uint8_t* pages, int* status) {
  extern __shared__ __align__(16) unsigned char smem[];
  const unsigned warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const int lane = static_cast<int>(threadIdx.x & 31);
  DecompressScratch& s = reinterpret_cast<DecompressScratch*>(smem)[warp];
  DeviceLanes lanes;
  for (std::uint32_t i = blockIdx.x * warps + warp; i < n; i += gridDim.x * warps) {
    const hzram_page_record r = records[i];
    std::uint8_t* dst = pages + static_cast<std::uint64_t>(i) * kPage;
    int ret = -22;  // -EINVAL: a record that does not fit the layout
    if (hzram_page_record_check(&r, arena_len) != HZRAM_RECORD_OK || r.kind == 0) {
      // not a record of a page
    } else if (r.kind == HZRAM_PAGE_SAME) {
      for (std::uint32_t k = lane; k < kPage / 8; k += 32)
        reinterpret_cast<std::uint64_t*>(dst)[k] = r.value;
      ret = 0;
    } else if (r.kind == HZRAM_PAGE_RAW) {
      for (std::uint32_t k = lane; k < kPage; k += 32) dst[k] = arena[r.value + k];
      ret = 0;
    } else if (r.kind == HZRAM_PAGE_LZ4) {  // a zstd frame: -EINVAL, as the CPU codec
      ret = DecompressPageWarp(lanes, s, arena + r.value, r.length, dst);
    }
    if (lane == 0) status[i] = ret;
    __syncwarp();
  }
}

// Compaction, step 1: @offsets[i] = where page i's data goes in the packed
// arena (the data lengths of the records before it added up), and
// offsets[n] the packed arena's size. One block of kScanThreads threads,
// each adding up a run of consecutive records.
constexpr unsigned kScanThreads = 1024;
__global__ void PackOffsetsKernel(const hzram_page_record* records, std::uint32_t n,
                                  std::uint64_t* offsets) {
  __shared__ std::uint64_t warp_sums[kScanThreads / 32];
  const unsigned t = threadIdx.x, lane = t & 31, warp = t / 32;
  const std::uint32_t per = (n + kScanThreads - 1) / kScanThreads;
  const std::uint32_t first = min(n, t * per), last = min(n, first + per);
  std::uint64_t mine = 0;
  for (std::uint32_t i = first; i < last; i++) mine += records[i].kind == HZRAM_PAGE_SAME ? 0 : records[i].length;
  // Inclusive scan of the threads' sums: within each warp, then of the
  // warps' totals.
  std::uint64_t incl = mine;
  for (unsigned d = 1; d < 32; d *= 2) {
    const std::uint64_t v = __shfl_up_sync(kFull, incl, d);
    if (lane >= d) incl += v;
  }
  if (lane == 31) warp_sums[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    std::uint64_t w = warp_sums[lane];
    for (unsigned d = 1; d < 32; d *= 2) {
      const std::uint64_t v = __shfl_up_sync(kFull, w, d);
      if (lane >= d) w += v;
    }
    warp_sums[lane] = w;
  }
  __syncthreads();
  std::uint64_t at = incl - mine + (warp ? warp_sums[warp - 1] : 0);
  for (std::uint32_t i = first; i < last; i++) {
    offsets[i] = at;
    at += records[i].kind == HZRAM_PAGE_SAME ? 0 : records[i].length;
  }
  if (t == kScanThreads - 1) offsets[n] = at;
}

// Compaction, step 2: one warp a page moves its data from i * kPage of
// @arena to offsets[i] of @packed and points its record there.
__global__ void PackKernel(hzram_page_record* records, std::uint32_t n, const std::uint64_t* offsets,
                           const std::uint8_t* arena, std::uint8_t* packed) {
  const unsigned warp = threadIdx.x / 32, warps = blockDim.x / 32, lane = threadIdx.x & 31;
  for (std::uint32_t i = blockIdx.x * warps + warp; i < n; i += gridDim.x * warps) {
    hzram_page_record r = records[i];
    if (r.kind == HZRAM_PAGE_SAME) continue;
    const std::uint8_t* from = arena + static_cast<std::uint64_t>(i) * kPage;
    std::uint8_t* to = packed + offsets[i];
    for (std::uint32_t k = lane; k < r.length; k += 32) to[k] = from[k];
    if (lane == 0) {
      r.value = offsets[i];
      records[i] = r;
    }
  }
}

// The test hook for a hung batch: one thread spins for @ns nanoseconds of
// the GPU's clock, holding up its stream.
__global__ void SpinKernel(std::uint64_t ns) {
  std::uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

// A kernel that does nothing but prove the device runs kernels.
__global__ void ProbeKernel(int* out) {
  if (threadIdx.x == 0) *out = 42;
}

}  // namespace hzram::gpu

#endif  // HZRAM_GPU_KERNELS_CUH
