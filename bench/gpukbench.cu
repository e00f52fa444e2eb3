// SPDX-License-Identifier: GPL-2.0
//
// gpukbench: the GPU codec's kernels alone, phase by phase, on real memory
// pages: where a page's time goes on the device. No copies are timed: the
// corpus goes to the device once, then each kernel runs over all of it
// (as many blocks as are resident at once, the warps striding over the
// pages), best of five runs, timed with CUDA events.
//
// Compression, the segmented kernel (lz4_warp.h) cut after each phase:
//   load      the page into shared memory (and the hash table cleared)
//   same      + the same-filled check
//   chains    + each position's previous occurrence (ChainPositions)
//   segments  + each lane's matches over its segment (SegmentMatches,
//             MarkMatches)
//   full      + the parse and the output (CompressPageSegments)
// and the stepwise kernel (CompressPageWarp) whole; the compaction
// (PackOffsetsKernel and PackKernel) on its own. Decompression: the
// decoder (DecompressPageWarp) over the blocks of the full segmented
// kernel, checked against the corpus.
//
// Usage: gpukbench --corpus FILE [--warps 1,2,...] [--json FILE]
// FILE is a file of 4 KiB pages.
#include <cuda_runtime.h>
#include <getopt.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define HZRAM_UAPI_INLINE __host__ __device__ static inline

#include "gpu/kernels.cuh"

namespace {

using namespace hzram::gpu;

// The segmented compressor cut after phase @kStop (0 load, 1 same,
// 2 chains, 3 segments); what it computed goes to the record, so that
// nothing is left out as unused.
template <int kStop>
__global__ void PhaseKernel(const std::uint8_t* pages, std::uint32_t n, hzram_page_record* records) {
  extern __shared__ __align__(16) unsigned char smem[];
  const unsigned warp = threadIdx.x / 32, warps = blockDim.x / 32;
  SegmentScratch& s = reinterpret_cast<SegmentScratch*>(smem)[warp];
  DeviceLanes lanes;
  for (std::uint32_t i = blockIdx.x * warps + warp; i < n; i += gridDim.x * warps) {
    LoadPage(lanes, s, pages + static_cast<std::uint64_t>(i) * kPage);
    std::uint64_t v = s.page[(i * 7) % kPage];
    // A same-filled page ends here, as in the whole kernel.
    const bool same = kStop >= 1 && SameFilled(lanes, s);
    v += same;
    if (kStop >= 2 && !same) {
      ChainPositions(lanes, s);
      v += s.prev[(i * 13) % kPage];
    }
    if (kStop >= 3 && !same) {
      SegmentMatches(lanes, s);
      MarkMatches(lanes, s);
      v += s.has[i % (kPage / 32)] + MatchCodes(s)[(i * 17) % kPage];
    }
    if ((threadIdx.x & 31) == 0) records[i].value = v;
    __syncwarp();
  }
}

#define CUDA_OK(call)                                                                        \
  do {                                                                                       \
    const cudaError_t e = (call);                                                            \
    if (e != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "gpukbench: %s: %s\n", #call, cudaGetErrorString(e));             \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

struct Row {
  std::string kernel;
  unsigned warps;
  int blocks_per_sm;
  double ms, gbs;
};

// Best of five runs of @launch(grid, threads, smem), in ms.
template <class K, class F>
Row Time(const char* name, K kernel, std::size_t smem, unsigned warps, int sms, std::uint32_t n,
         F&& launch) {
  Row r{name, warps, 0, 0, 0};
  const int threads = static_cast<int>(warps * 32);
  CUDA_OK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.blocks_per_sm, kernel, threads, smem));
  const unsigned grid = static_cast<unsigned>(
      std::min<std::size_t>((n + warps - 1) / warps, static_cast<std::size_t>(std::max(1, r.blocks_per_sm)) * sms));
  cudaEvent_t a, b;
  CUDA_OK(cudaEventCreate(&a));
  CUDA_OK(cudaEventCreate(&b));
  for (int run = 0; run < 6; run++) {  // the first warms up
    CUDA_OK(cudaEventRecord(a));
    launch(grid, threads, smem);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaEventRecord(b));
    CUDA_OK(cudaEventSynchronize(b));
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, a, b));
    if (run && (r.ms == 0 || ms < r.ms)) r.ms = ms;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  r.gbs = n * double(kPage) / (r.ms / 1e3) / 1e9;
  return r;
}

void Usage() {
  std::fprintf(stderr, "usage: gpukbench --corpus FILE [--warps 1,2,...] [--json FILE]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  static const option opts[] = {{"corpus", 1, nullptr, 'c'}, {"warps", 1, nullptr, 'w'},
                                {"json", 1, nullptr, 'j'}, {nullptr, 0, nullptr, 0}};
  std::string corpus, json;
  std::vector<unsigned> warps_list;
  for (int c; (c = getopt_long(argc, argv, "", opts, nullptr)) != -1;) {
    switch (c) {
      case 'c': corpus = optarg; break;
      case 'j': json = optarg; break;
      case 'w':
        for (char* p = optarg; *p;) {
          const long v = std::strtol(p, &p, 10);
          if (v < 1 || v > 32) Usage();
          warps_list.push_back(static_cast<unsigned>(v));
          if (*p == ',') p++;
          else if (*p) Usage();
        }
        break;
      default: Usage();
    }
  }
  if (corpus.empty()) Usage();
  if (warps_list.empty()) warps_list = {1, 2, 4, 8};

  std::vector<std::uint8_t> pages;
  if (FILE* f = std::fopen(corpus.c_str(), "rb")) {
    std::vector<std::uint8_t> buf(1 << 20);
    for (std::size_t got; (got = std::fread(buf.data(), 1, buf.size(), f)) > 0;)
      pages.insert(pages.end(), buf.begin(), buf.begin() + got);
    std::fclose(f);
  }
  const auto n = static_cast<std::uint32_t>(pages.size() / kPage);
  if (n == 0) {
    std::fprintf(stderr, "gpukbench: no pages in %s\n", corpus.c_str());
    return 1;
  }
  cudaDeviceProp prop;
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  std::uint8_t *d_pages, *d_arena, *d_packed, *d_out;
  hzram_page_record* d_rec;
  std::uint64_t* d_off;
  int* d_status;
  const std::size_t bytes = std::size_t{n} * kPage;
  CUDA_OK(cudaMalloc(&d_pages, bytes));
  CUDA_OK(cudaMalloc(&d_arena, bytes));
  CUDA_OK(cudaMalloc(&d_packed, bytes));
  CUDA_OK(cudaMalloc(&d_out, bytes));
  CUDA_OK(cudaMalloc(&d_rec, n * sizeof(hzram_page_record)));
  CUDA_OK(cudaMalloc(&d_off, (n + 1) * sizeof(std::uint64_t)));
  CUDA_OK(cudaMalloc(&d_status, n * sizeof(int)));
  CUDA_OK(cudaMemcpy(d_pages, pages.data(), bytes, cudaMemcpyHostToDevice));

  std::printf("gpukbench: %u pages (%.1f MiB) of %s on %s, %d SMs; kernels alone, best of 5\n\n", n,
              bytes / 1048576.0, corpus.c_str(), prop.name, sms);
  std::vector<Row> rows;
  const std::size_t seg = sizeof(SegmentScratch), step = sizeof(CompressScratch);
  bool ok = true;
  for (unsigned w : warps_list) {
    if (w * seg > prop.sharedMemPerBlockOptin) continue;
    rows.push_back(Time("comp load", PhaseKernel<0>, w * seg, w, sms, n, [&](unsigned g, int t, std::size_t m) {
      PhaseKernel<0><<<g, t, m>>>(d_pages, n, d_rec);
    }));
    rows.push_back(Time("comp +same", PhaseKernel<1>, w * seg, w, sms, n, [&](unsigned g, int t, std::size_t m) {
      PhaseKernel<1><<<g, t, m>>>(d_pages, n, d_rec);
    }));
    rows.push_back(Time("comp +chains", PhaseKernel<2>, w * seg, w, sms, n, [&](unsigned g, int t, std::size_t m) {
      PhaseKernel<2><<<g, t, m>>>(d_pages, n, d_rec);
    }));
    rows.push_back(Time("comp +segments", PhaseKernel<3>, w * seg, w, sms, n, [&](unsigned g, int t, std::size_t m) {
      PhaseKernel<3><<<g, t, m>>>(d_pages, n, d_rec);
    }));
    rows.push_back(Time("comp stepwise", CompressKernel<1>, w * step, w, sms, n, [&](unsigned g, int t, std::size_t m) {
      CompressKernel<1><<<g, t, m>>>(d_pages, n, d_rec, d_arena);
    }));
    rows.push_back(Time("comp segmented", CompressKernel<2>, w * seg, w, sms, n, [&](unsigned g, int t, std::size_t m) {
      CompressKernel<2><<<g, t, m>>>(d_pages, n, d_rec, d_arena);
    }));
    // The compaction of the segmented kernel's output: it reads each
    // page's data at i * kPage, whatever its record says, so it can run
    // again and again.
    rows.push_back(Time("pack", PackKernel, 0, w, sms, n, [&](unsigned g, int t, std::size_t) {
      PackOffsetsKernel<<<1, kScanThreads>>>(d_rec, n, d_off);
      PackKernel<<<g, t>>>(d_rec, n, d_off, d_arena, d_packed);
    }));
    // The records pointed at d_arena again, for the decoder.
    CUDA_OK(cudaFuncSetAttribute(CompressKernel<2>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(w * seg)));
    CompressKernel<2><<<sms, w * 32, w * seg>>>(d_pages, n, d_rec, d_arena);
    CUDA_OK(cudaDeviceSynchronize());
    {
      const std::size_t dm = w * sizeof(DecompressScratch);
      rows.push_back(Time("dec", DecompressKernel, dm, w, sms, n, [&](unsigned g, int t, std::size_t m) {
        DecompressKernel<<<g, t, m>>>(d_rec, n, d_arena, bytes, d_out, d_status);
      }));
      std::vector<std::uint8_t> back(bytes);
      std::vector<int> st(n);
      CUDA_OK(cudaMemcpy(back.data(), d_out, bytes, cudaMemcpyDeviceToHost));
      CUDA_OK(cudaMemcpy(st.data(), d_status, n * sizeof(int), cudaMemcpyDeviceToHost));
      const bool same = back == pages && std::all_of(st.begin(), st.end(), [](int x) { return x == 0; });
      if (!same) {
        std::fprintf(stderr, "gpukbench: the decoder, %u warps: the pages did not come back\n", w);
        ok = false;
      }
      CUDA_OK(cudaMemset(d_out, 0, bytes));
    }
  }
  std::printf("%-22s %6s %12s %10s %10s %14s\n", "kernel", "warps", "blocks/SM", "ms", "GB/s", "us/page/warp");
  for (const auto& r : rows) {
    const double resident = double(r.blocks_per_sm) * r.warps * sms;
    std::printf("%-22s %6u %12d %10.3f %10.2f %14.1f\n", r.kernel.c_str(), r.warps, r.blocks_per_sm, r.ms,
                r.gbs, r.ms * 1e3 * std::min(resident, double(n)) / n);
  }
  if (!json.empty()) {
    FILE* f = std::fopen(json.c_str(), "w");
    if (!f) {
      std::perror(json.c_str());
      return 1;
    }
    std::fprintf(f, "{\n  \"device\": \"%s\", \"sms\": %d, \"pages\": %u,\n  \"rows\": [", prop.name, sms, n);
    for (std::size_t i = 0; i < rows.size(); i++)
      std::fprintf(f, "%s\n    {\"kernel\": \"%s\", \"warps\": %u, \"blocks_per_sm\": %d, \"ms\": %.4f, \"gbs\": %.3f}",
                   i ? "," : "", rows[i].kernel.c_str(), rows[i].warps, rows[i].blocks_per_sm, rows[i].ms,
                   rows[i].gbs);
    std::fprintf(f, "\n  ]\n}\n");
    std::fclose(f);
  }
  return ok ? 0 : 1;
}
