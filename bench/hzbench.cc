// SPDX-License-Identifier: GPL-2.0
//
// hzbench: the batch page codec against liblz4, on real memory pages.
//
// In one run it measures
//   - the baseline: liblz4's LZ4_compress_default and LZ4_decompress_safe,
//     one thread, page by page;
//   - the hzram codec at each thread count asked for, in batches;
//   - the time per batch (p50, p99) for batches of 1, 32, 256, 1024 and
//     4096 pages at the largest thread count;
//   - memory bandwidth (memcpy), one thread and all threads, which bounds
//     what the codec can reach;
// and prints a table; --json writes the same figures.
//
// With --backend gpu, it also runs the CUDA backend over the corpus,
// streaming batches through its ring of slots: end-to-end GB/s (copies
// included), kernel-only GB/s (from CUDA events) and where each batch's
// time went. With --backend hybrid, the hybrid codec (every CPU thread and
// the GPU, each batch split by measured speed). With lists for --warps
// and --kernels, the GPU runs once for each pair of them, a row each (the
// compression kernel's version: GpuOptions::compress_kernel).
//
// Usage: hzbench --corpus FILE [--threads 1,2,...] [--batch PAGES]
//                [--seconds S] [--isa scalar|avx2|avx512] [--json FILE]
//                [--backend cpu|gpu|hybrid] [--device N] [--slots N]
//                [--warps N,...] [--kernels 1|2,...] [--staging-threads N]
//                [--register]
// --register page-locks the corpus and the arena for the GPU run
// (cudaHostRegister): batches go to the device without a host copy.
// FILE is a file of 4 KiB pages, or one compressed with xz (*.xz).
#include <getopt.h>
#include <lz4.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hzram/backend.h"
#include "hzram/codec.h"
#ifdef HZRAM_HAVE_CUDA
#include "hzram/gpu_codec.h"
#endif
#include "hybrid_model.h"
#include "hzram/pages.h"
#include "page_codec_isa.h"

namespace {

using hzram::kPageSize;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::vector<std::uint8_t> LoadPages(const std::string& path) {
  std::vector<std::uint8_t> data;
  FILE* f;
  const bool xz = path.size() > 3 && path.compare(path.size() - 3, 3, ".xz") == 0;
  if (xz) {
    const std::string cmd = "xz -dc '" + path + "'";
    f = popen(cmd.c_str(), "r");
  } else {
    f = std::fopen(path.c_str(), "rb");
  }
  if (!f) return data;
  std::vector<std::uint8_t> buf(1 << 20);
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) data.insert(data.end(), buf.begin(), buf.begin() + n);
  if (xz)
    pclose(f);
  else
    std::fclose(f);
  data.resize(data.size() / kPageSize * kPageSize);
  return data;
}

struct Rate {
  double comp_gbs = 0, decomp_gbs = 0, ratio = 0;
};

// Per-batch times added up over a pass.
struct BatchTimingSum {
  std::size_t batches = 0;
  double host_ms = 0, h2d_ms = 0, kernel_ms = 0, d2h_ms = 0, wait_ms = 0, total_ms = 0;
  void Add(const hzram::BatchTiming& t) {
    batches++;
    host_ms += t.host_ms;
    h2d_ms += t.h2d_ms;
    kernel_ms += t.kernel_ms;
    d2h_ms += t.d2h_ms;
    wait_ms += t.wait_ms;
    total_ms += t.total_ms;
  }
};

// Run @fn (which processes @bytes) repeatedly for at least @seconds; the
// best pass is the figure (the least disturbed by the rest of the machine).
template <class F>
double BestGBs(std::size_t bytes, double seconds, F&& fn) {
  double best = 0, spent = 0;
  int passes = 0;
  while (spent < seconds || passes < 3) {
    const auto a = Clock::now();
    fn();
    const double s = Seconds(a, Clock::now());
    best = std::max(best, bytes / s / 1e9);
    spent += s;
    passes++;
  }
  return best;
}

Rate Baseline(const std::vector<std::uint8_t>& pages, double seconds) {
  const std::size_t n = pages.size() / kPageSize;
  std::vector<char> out(n * LZ4_COMPRESSBOUND(kPageSize));
  std::vector<int> len(n);
  std::vector<char> page(kPageSize);
  Rate r;
  r.comp_gbs = BestGBs(pages.size(), seconds, [&] {
    for (std::size_t i = 0; i < n; i++)
      len[i] = LZ4_compress_default(reinterpret_cast<const char*>(&pages[i * kPageSize]),
                                    &out[i * LZ4_COMPRESSBOUND(kPageSize)], kPageSize,
                                    LZ4_COMPRESSBOUND(kPageSize));
  });
  std::size_t stored = 0;
  for (int l : len) stored += std::min<std::size_t>(l, kPageSize);  // raw if no gain
  r.ratio = static_cast<double>(pages.size()) / stored;
  bool ok = true;
  r.decomp_gbs = BestGBs(pages.size(), seconds, [&] {
    for (std::size_t i = 0; i < n; i++)
      ok &= LZ4_decompress_safe(&out[i * LZ4_COMPRESSBOUND(kPageSize)], page.data(), len[i],
                                kPageSize) == static_cast<int>(kPageSize);
  });
  if (!ok) std::fprintf(stderr, "hzbench: liblz4 failed to decompress its own output\n");
  return r;
}

bool CodecRate(hzram::Codec& codec, const std::vector<std::uint8_t>& pages, std::size_t batch,
               double seconds, Rate* r) {
  const std::size_t n = pages.size() / kPageSize;
  const std::size_t nb = (n + batch - 1) / batch;
  std::vector<hzram_page_record> rec(n);
  std::vector<std::uint8_t> arena(hzram::Codec::ArenaBytes(n));
  std::vector<std::uint8_t> out(pages.size());
  std::vector<int> status(n);
  bool ok = true;
  auto span_of = [&](std::size_t b) {
    const std::size_t first = b * batch, count = std::min(batch, n - first);
    return std::pair(first, count);
  };
  r->comp_gbs = BestGBs(pages.size(), seconds, [&] {
    for (std::size_t b = 0; b < nb; b++) {
      auto [first, count] = span_of(b);
      ok &= codec.Compress(hzram::PageList(&pages[first * kPageSize], count),
                           std::span(&rec[first], count),
                           std::span(&arena[first * kPageSize], count * kPageSize)) == 0;
    }
  });
  std::size_t stored = 0;
  for (const auto& x : rec) stored += x.length;
  r->ratio = static_cast<double>(pages.size()) / stored;
  r->decomp_gbs = BestGBs(pages.size(), seconds, [&] {
    for (std::size_t b = 0; b < nb; b++) {
      auto [first, count] = span_of(b);
      ok &= codec.Decompress(std::span(&rec[first], count),
                             std::span(&arena[first * kPageSize], count * kPageSize),
                             hzram::MutablePageList(&out[first * kPageSize], count),
                             std::span(&status[first], count)) == 0;
    }
  });
  return ok && out == pages;
}

struct Latency {
  std::size_t batch;
  double comp_p50_us, comp_p99_us, decomp_p50_us, decomp_p99_us;
};

double Percentile(std::vector<double>& v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * v.size()))];
}

Latency BatchLatency(hzram::Codec& codec, const std::vector<std::uint8_t>& pages, std::size_t batch,
                     double seconds) {
  const std::size_t n = pages.size() / kPageSize;
  std::vector<hzram_page_record> rec(batch);
  std::vector<std::uint8_t> arena(hzram::Codec::ArenaBytes(batch)), out(batch * kPageSize);
  std::vector<int> status(batch);
  std::vector<double> ct, dt;
  hzram::PageRng rng(88172645463325252ull);
  const auto start = Clock::now();
  while (Seconds(start, Clock::now()) < seconds || ct.size() < 50) {
    const std::size_t first = rng.Next() % (n - batch + 1);
    const auto a = Clock::now();
    codec.Compress(hzram::PageList(&pages[first * kPageSize], batch), rec, arena);
    const auto b = Clock::now();
    codec.Decompress(rec, arena, hzram::MutablePageList(out.data(), batch), status);
    const auto c = Clock::now();
    ct.push_back(Seconds(a, b) * 1e6);
    dt.push_back(Seconds(b, c) * 1e6);
  }
  return {batch, Percentile(ct, 0.5), Percentile(ct, 0.99), Percentile(dt, 0.5), Percentile(dt, 0.99)};
}

// memcpy bandwidth over a buffer much larger than the caches.
double CopyGBs(unsigned threads, double seconds) {
  const std::size_t per = 64 << 20;
  std::vector<std::vector<std::uint8_t>> src(threads, std::vector<std::uint8_t>(per, 1)),
      dst(threads, std::vector<std::uint8_t>(per, 2));
  return BestGBs(per * threads, seconds, [&] {
    std::vector<std::thread> t;
    for (unsigned i = 0; i < threads; i++)
      t.emplace_back([&, i] { std::memcpy(dst[i].data(), src[i].data(), per); });
    for (auto& x : t) x.join();
  });
}

std::string CpuModel() {
  FILE* f = std::fopen("/proc/cpuinfo", "r");
  char line[512];
  std::string model = "unknown";
  while (f && std::fgets(line, sizeof(line), f)) {
    if (!std::strncmp(line, "model name", 10)) {
      const char* p = std::strchr(line, ':');
      if (p) model = std::string(p + 2, std::strcspn(p + 2, "\n"));
      break;
    }
  }
  if (f) std::fclose(f);
  return model;
}

void Usage() {
  std::fprintf(stderr,
               "usage: hzbench --corpus FILE [--threads 1,2,...] [--batch PAGES] [--seconds S]\n"
               "               [--isa scalar|avx2|avx512] [--json FILE]\n"
               "               [--backend cpu|gpu|hybrid] [--device N] [--slots N] [--warps N,...]\n"
               "               [--kernels 1|2,...] [--staging-threads N] [--register]\n");
  std::exit(2);
}

// The GPU and hybrid figures, in one run of the corpus each way.
struct Accel {
  std::string name;
  unsigned warps = 0, kernels = 0;              // the GPU's options
  double comp_gbs = 0, decomp_gbs = 0;          // end to end, copies included
  double comp_kernel_gbs = 0, decomp_kernel_gbs = 0;
  double ratio = 0;
  BatchTimingSum comp, decomp;                   // per batch, averages
  double backend_share = 0;                      // hybrid: the GPU's pages
  double comp_share = 0, decomp_share = 0;       // hybrid: per direction
  std::uint64_t probes = 0;                      // hybrid: probe shares given
  double link_h2d_gbs = 0, link_d2h_gbs = 0;     // hybrid: calibration's link rates
  hzram::HybridRates comp_rates, decomp_rates;  // hybrid: as calibrated
  hzram::HybridRates comp_rates_end, decomp_rates_end;  // hybrid: after the run
  std::string device;
};

#ifdef HZRAM_HAVE_CUDA
// Stream the corpus through @gpu in batches of @batch pages, up to @slots
// in flight; best of the passes made in @seconds.
// With @reg, the corpus and the arena are registered with the codec
// (page-locked), so that batches go to the device without host copies.
bool GpuRun(hzram::GpuCodec& gpu, const std::vector<std::uint8_t>& pages, std::size_t batch,
            unsigned slots, double seconds, bool reg, Accel* a) {
  const std::size_t n = pages.size() / kPageSize, nb = (n + batch - 1) / batch;
  std::vector<hzram_page_record> rec(n);
  std::vector<std::uint8_t> arena(hzram::Codec::ArenaBytes(n)), out(pages.size());
  std::vector<int> status(n);
  std::vector<int> tickets(nb, -1);
  bool ok = true;
  auto span_of = [&](std::size_t b) {
    const std::size_t first = b * batch;
    return std::pair(first, std::min(batch, n - first));
  };
  if (reg && (gpu.RegisterHostMemory(const_cast<std::uint8_t*>(pages.data()), pages.size()) ||
              gpu.RegisterHostMemory(arena.data(), arena.size()))) {
    std::fprintf(stderr, "hzbench: cannot register the buffers with the GPU\n");
    return false;
  }
  // Each batch's compressed bytes, packed from the start of its part of
  // the arena: what a decompression sends.
  auto used = [&](std::size_t b) {
    auto [first, count] = span_of(b);
    std::size_t end = 0;
    for (std::size_t i = first; i < first + count; i++)
      if (rec[i].kind != HZRAM_PAGE_SAME) end = std::max<std::size_t>(end, rec[i].value + rec[i].length);
    return end;
  };
  // One pass: submit batch b, wait for batch b - slots + 1 when the ring is full.
  auto pass = [&](bool compress, BatchTimingSum* sum) {
    *sum = BatchTimingSum();
    for (std::size_t b = 0; b < nb + slots; b++) {
      if (b >= slots) {
        const std::size_t w = b - slots;
        hzram::BatchTiming t;
        // Polling the batches in flight starts each one's copy back as
        // soon as its kernels are done.
        while (!gpu.Ready(tickets[w]))
          for (std::size_t k = w + 1; k < std::min(b, nb); k++) gpu.Ready(tickets[k]);
        const int ret = gpu.Wait(tickets[w], &t);
        ok &= ret == 0;  // decompression: no page failed
        sum->Add(t);
      }
      if (b >= nb) continue;
      auto [first, count] = span_of(b);
      tickets[b] = compress
          ? gpu.SubmitCompress(hzram::PageList(&pages[first * kPageSize], count),
                               std::span(&rec[first], count),
                               std::span(&arena[first * kPageSize], count * kPageSize))
          : gpu.SubmitDecompress(std::span(&rec[first], count),
                                 std::span(&arena[first * kPageSize], used(b)),
                                 hzram::MutablePageList(&out[first * kPageSize], count),
                                 std::span(&status[first], count));
      ok &= tickets[b] >= 0;
      if (!ok) return;
    }
  };
  BatchTimingSum best_c, best_d;
  a->comp_gbs = BestGBs(pages.size(), seconds, [&] {
    BatchTimingSum t;
    pass(true, &t);
    if (best_c.batches == 0 || t.kernel_ms < best_c.kernel_ms) best_c = t;
  });
  std::size_t stored = 0;
  for (const auto& r : rec) stored += r.length;
  a->ratio = static_cast<double>(pages.size()) / stored;
  a->decomp_gbs = BestGBs(pages.size(), seconds, [&] {
    BatchTimingSum t;
    pass(false, &t);
    if (best_d.batches == 0 || t.kernel_ms < best_d.kernel_ms) best_d = t;
  });
  a->comp = best_c;
  a->decomp = best_d;
  a->comp_kernel_gbs = pages.size() / (best_c.kernel_ms / 1e3) / 1e9;
  a->decomp_kernel_gbs = pages.size() / (best_d.kernel_ms / 1e3) / 1e9;
  a->device = gpu.device_name();
  return ok && out == pages;
}
#endif

// The hybrid codec over the corpus, in batches of @batch pages.
// With @gpu, the corpus, the arena and the output are registered with it.
bool HybridRun(hzram::HybridCodec& h, hzram::GpuCodec* gpu, const std::vector<std::uint8_t>& pages,
               std::size_t batch, double seconds, Accel* a) {
  const std::size_t n = pages.size() / kPageSize, nb = (n + batch - 1) / batch;
  std::vector<hzram_page_record> rec(n);
  std::vector<std::uint8_t> arena(hzram::Codec::ArenaBytes(n)), out(pages.size());
  std::vector<int> status(n);
  bool ok = true;
  if (gpu && (gpu->RegisterHostMemory(const_cast<std::uint8_t*>(pages.data()), pages.size()) ||
              gpu->RegisterHostMemory(arena.data(), arena.size()) ||
              gpu->RegisterHostMemory(out.data(), out.size()))) {
    std::fprintf(stderr, "hzbench: cannot register the buffers with the GPU\n");
    return false;
  }
  // Calibrated on batches of the size the run uses.
  if (h.Calibrate(hzram::PageList(pages.data(), std::min(n, batch)))) return false;
  a->comp_rates = h.model().compress;
  a->decomp_rates = h.model().decompress;
  const std::uint64_t before = h.backend_pages() + h.cpu_pages(), gpu_before = h.backend_pages();
  a->comp_gbs = BestGBs(pages.size(), seconds, [&] {
    for (std::size_t b = 0; b < nb; b++) {
      const std::size_t first = b * batch, count = std::min(batch, n - first);
      ok &= h.Compress(hzram::PageList(&pages[first * kPageSize], count), std::span(&rec[first], count),
                       std::span(&arena[first * kPageSize], count * kPageSize)) == 0;
    }
  });
  const std::uint64_t comp_all = h.backend_pages() + h.cpu_pages() - before,
                      comp_gpu = h.backend_pages() - gpu_before;
  std::size_t stored = 0;
  for (const auto& r : rec) stored += r.length;
  a->ratio = static_cast<double>(pages.size()) / stored;
  a->decomp_gbs = BestGBs(pages.size(), seconds, [&] {
    for (std::size_t b = 0; b < nb; b++) {
      const std::size_t first = b * batch, count = std::min(batch, n - first);
      ok &= h.Decompress(std::span(&rec[first], count), std::span(&arena[first * kPageSize], count * kPageSize),
                         hzram::MutablePageList(&out[first * kPageSize], count),
                         std::span(&status[first], count)) == 0;
    }
  });
  a->link_h2d_gbs = h.model().link.h2d_bytes_per_s / 1e9;
  a->link_d2h_gbs = h.model().link.d2h_bytes_per_s / 1e9;
  const std::uint64_t all = h.backend_pages() + h.cpu_pages() - before;
  a->backend_share = all ? static_cast<double>(h.backend_pages() - gpu_before) / all : 0;
  a->comp_share = comp_all ? static_cast<double>(comp_gpu) / comp_all : 0;
  a->decomp_share = all > comp_all ? static_cast<double>(h.backend_pages() - gpu_before - comp_gpu) /
                                         (all - comp_all)
                                   : 0;
  a->comp_rates_end = h.model().compress;
  a->decomp_rates_end = h.model().decompress;
  a->probes = h.probes();
  return ok && out == pages;
}

}  // namespace

int main(int argc, char** argv) {
  static const option opts[] = {{"corpus", 1, nullptr, 'c'}, {"threads", 1, nullptr, 't'},
                                {"batch", 1, nullptr, 'b'},  {"seconds", 1, nullptr, 's'},
                                {"isa", 1, nullptr, 'i'},    {"json", 1, nullptr, 'j'},
                                {"backend", 1, nullptr, 'B'}, {"device", 1, nullptr, 'D'},
                                {"slots", 1, nullptr, 'S'},  {"warps", 1, nullptr, 'W'},
                                {"staging-threads", 1, nullptr, 'T'}, {"register", 0, nullptr, 'R'},
                                {"kernels", 1, nullptr, 'K'},
                                {nullptr, 0, nullptr, 0}};
  std::string corpus, json, isa_name, backend = "cpu";
  int device = 0;
  unsigned slots = 3, staging = 0;
  bool reg = false;
  std::vector<unsigned> threads, warps_list, kernels_list;
  // A comma-separated list of numbers in [lo, hi] into @v.
  auto list = [](const char* arg, long lo, long hi, std::vector<unsigned>* v) {
    for (char* p = const_cast<char*>(arg); *p;) {
      const long x = std::strtol(p, &p, 10);
      if (x < lo || x > hi) Usage();
      v->push_back(static_cast<unsigned>(x));
      if (*p == ',') p++;
      else if (*p) Usage();
    }
  };
  std::size_t batch = 1024;
  double seconds = 1.0;
  cpu_set_t set;
  sched_getaffinity(0, sizeof(set), &set);
  const unsigned cpus = CPU_COUNT(&set);

  for (int c; (c = getopt_long(argc, argv, "", opts, nullptr)) != -1;) {
    switch (c) {
      case 'c': corpus = optarg; break;
      case 't': list(optarg, 1, 1024, &threads); break;
      case 'b': batch = std::strtoul(optarg, nullptr, 10); break;
      case 's': seconds = std::atof(optarg); break;
      case 'i': isa_name = optarg; break;
      case 'j': json = optarg; break;
      case 'B': backend = optarg; break;
      case 'D': device = std::atoi(optarg); break;
      case 'S': slots = static_cast<unsigned>(std::atoi(optarg)); break;
      case 'W': list(optarg, 1, 32, &warps_list); break;
      case 'K': list(optarg, 1, 2, &kernels_list); break;
      case 'T': staging = static_cast<unsigned>(std::atoi(optarg)); break;
      case 'R': reg = true; break;
      default: Usage();
    }
  }
  if (corpus.empty() || batch < 1 || batch > 4096 || seconds <= 0 || slots < 1) Usage();
  if (backend != "cpu" && backend != "gpu" && backend != "hybrid") Usage();
#ifndef HZRAM_HAVE_CUDA
  if (backend != "cpu") {
    std::fprintf(stderr, "hzbench: --backend %s: this build has no CUDA backend (nvcc was not found)\n",
                 backend.c_str());
    return 2;
  }
#else
  if (warps_list.empty()) warps_list.push_back(hzram::GpuOptions().warps_per_block);
  if (kernels_list.empty()) kernels_list.push_back(hzram::GpuOptions().compress_kernel);
  // A GPU codec of @warps per block and kernels @kernels.
  auto make_gpu = [&](unsigned warps, unsigned kernels) {
    hzram::GpuOptions go;
    go.device = device;
    go.slots = slots;
    go.max_batch = batch;
    go.warps_per_block = warps;
    go.compress_kernel = kernels;
    go.staging_threads = staging;
    int err = 0;
    std::string why;
    auto g = hzram::GpuCodec::Create(go, &err, &why);
    if (!g)
      std::fprintf(stderr, "hzbench: --backend %s (%u warps, kernels %u): no usable GPU: %s\n",
                   backend.c_str(), warps, kernels, why.c_str());
    return g;
  };
  // The first pair of the lists: for the hybrid codec, and to fail early.
  std::unique_ptr<hzram::GpuCodec> gpu;
  if (backend != "cpu" && !(gpu = make_gpu(warps_list[0], kernels_list[0]))) return 1;
#endif
  if (threads.empty())
    for (unsigned t = 1; t <= cpus; t++) threads.push_back(t);

  hzram::CodecOptions opt;
  opt.max_batch = 4096;
  if (!isa_name.empty()) {
    opt.force_isa = true;
    if (hzram::ParseIsa(isa_name, &opt.isa)) Usage();
  } else if (int e = hzram::DefaultIsa(&opt.isa); e) {
    std::fprintf(stderr, "hzbench: HZRAM_ISA: %s\n", std::strerror(-e));
    return 2;
  }
  opt.force_isa = true;
  if (!hzram::IsaSupported(opt.isa)) {
    std::fprintf(stderr, "hzbench: this CPU cannot run %s\n", hzram::IsaName(opt.isa));
    return 2;
  }

  const auto pages = LoadPages(corpus);
  if (pages.empty()) {
    std::fprintf(stderr, "hzbench: cannot read pages from %s\n", corpus.c_str());
    return 1;
  }
  const std::size_t n = pages.size() / kPageSize;
  // Without --isa, the library's own choice, an ISA for each direction
  // ($HZRAM_ISA, else the fastest by its start-up trial), and why.
  hzram::IsaChoice isas{opt.isa, opt.isa};
  std::string isa_why = "--isa";
  if (isa_name.empty() && hzram::DefaultIsas(&isas, &isa_why) == 0) {
    opt.isa = isas.compress;
    opt.decompress_isa = isas.decompress;
  }
  std::printf("hzbench: %zu pages (%.1f MiB) of %s; %s, %u CPUs; codec isa %s, batch %zu\n", n,
              pages.size() / 1048576.0, corpus.c_str(), CpuModel().c_str(), cpus,
              hzram::IsaName(opt.isa), batch);
  std::printf("codec isa: %s to compress, %s to decompress; %s\n", hzram::IsaName(isas.compress),
              hzram::IsaName(isas.decompress), isa_why.c_str());

  const Rate base = Baseline(pages, seconds);
  struct Row {
    unsigned threads;
    Rate r;
  };
  std::vector<Row> rows;
  for (unsigned t : threads) {
    opt.threads = t;
    int err;
    auto codec = hzram::Codec::Create(opt, &err);
    if (!codec) {
      std::fprintf(stderr, "hzbench: codec: %s\n", std::strerror(-err));
      return 1;
    }
    Rate r;
    if (!CodecRate(*codec, pages, batch, seconds, &r)) {
      std::fprintf(stderr, "hzbench: the codec did not give the pages back\n");
      return 1;
    }
    rows.push_back({t, r});
  }

  std::printf("\n%-22s %10s %10s %8s %12s %10s %10s\n", "", "comp GB/s", "dec GB/s", "ratio",
              "comp pages/s", "comp x", "dec x");
  std::printf("%-22s %10.2f %10.2f %8.3f %12.0f %10.2f %10.2f\n", "liblz4, 1 thread", base.comp_gbs,
              base.decomp_gbs, base.ratio, base.comp_gbs * 1e9 / kPageSize, 1.0, 1.0);
  for (const auto& row : rows) {
    char name[64];
    std::snprintf(name, sizeof(name), "hzram, %u thread%s", row.threads, row.threads > 1 ? "s" : "");
    std::printf("%-22s %10.2f %10.2f %8.3f %12.0f %10.2f %10.2f\n", name, row.r.comp_gbs,
                row.r.decomp_gbs, row.r.ratio, row.r.comp_gbs * 1e9 / kPageSize,
                row.r.comp_gbs / base.comp_gbs, row.r.decomp_gbs / base.decomp_gbs);
  }

  const unsigned max_threads = *std::max_element(threads.begin(), threads.end());
  opt.threads = max_threads;
  int err;
  auto codec = hzram::Codec::Create(opt, &err);
  std::vector<Latency> lat;
  for (std::size_t b : {1, 32, 256, 1024, 4096})
    if (b <= n) lat.push_back(BatchLatency(*codec, pages, b, seconds / 2));
  std::printf("\ntime per batch, %u thread%s   %12s %12s %12s %12s\n", max_threads,
              max_threads > 1 ? "s" : "", "comp p50 us", "comp p99 us", "dec p50 us", "dec p99 us");
  for (const auto& l : lat)
    std::printf("  %5zu pages               %12.1f %12.1f %12.1f %12.1f\n", l.batch, l.comp_p50_us,
                l.comp_p99_us, l.decomp_p50_us, l.decomp_p99_us);

  const double copy1 = CopyGBs(1, seconds / 2), copyn = CopyGBs(cpus, seconds / 2);
  std::printf("\nmemcpy: %.2f GB/s on 1 thread, %.2f GB/s on %u\n", copy1, copyn, cpus);

  std::vector<Accel> accel;
#ifdef HZRAM_HAVE_CUDA
  if (gpu && backend == "gpu") {
    for (unsigned k : kernels_list) {
      for (unsigned w : warps_list) {
        // A pair the device cannot run (more shared memory than a block
        // may have, say) is said and left out; the first must run.
        if (!gpu && !(gpu = make_gpu(w, k))) continue;
        Accel a;
        a.name = "gpu";
        a.warps = w;
        a.kernels = k;
        if (!GpuRun(*gpu, pages, batch, slots, seconds, reg, &a)) {
          std::fprintf(stderr, "hzbench: the GPU did not give the pages back: %s\n", gpu->why().c_str());
          return 1;
        }
        accel.push_back(a);
        gpu.reset();
      }
    }
  }
  if (gpu && backend == "hybrid") {
    Accel a;
    a.name = "hybrid";
    a.warps = warps_list[0];
    a.kernels = kernels_list[0];
    hzram::HybridCodec h(codec.get(), gpu.get());
    if (!HybridRun(h, reg ? gpu.get() : nullptr, pages, batch, seconds, &a)) {
      std::fprintf(stderr, "hzbench: the hybrid codec did not give the pages back\n");
      return 1;
    }
    // The codec says it, hzbench prints it.
    if (!h.backend_enabled())
      std::fprintf(stderr, "hzbench: the hybrid codec dropped the GPU, the CPU took over: %s\n",
                   h.backend_why().c_str());
    a.device = gpu->device_name();
    accel.push_back(a);
  }
#endif
  for (const auto& a : accel) {
    std::printf("\n%s on %s, batches of %zu pages, %u slots, %u warps per block, kernels %u, %s:\n",
                a.name.c_str(), a.device.c_str(), batch, slots, a.warps, a.kernels,
                reg ? "registered buffers" : "staged through pinned buffers");
    std::printf("  end to end   comp %.2f GB/s (%.2fx liblz4)  dec %.2f GB/s (%.2fx liblz4)  ratio %.3f\n",
                a.comp_gbs, a.comp_gbs / base.comp_gbs, a.decomp_gbs, a.decomp_gbs / base.decomp_gbs,
                a.ratio);
    if (a.comp.batches) {
      std::printf("  kernels only comp %.2f GB/s  dec %.2f GB/s\n", a.comp_kernel_gbs, a.decomp_kernel_gbs);
      const double nc = a.comp.batches, nd = a.decomp.batches;
      std::printf("  per batch, comp: host %.3f ms, h2d %.3f ms, kernel %.3f ms, d2h %.3f ms, "
                  "waiting for the host %.3f ms, total %.3f ms\n",
                  a.comp.host_ms / nc, a.comp.h2d_ms / nc, a.comp.kernel_ms / nc, a.comp.d2h_ms / nc,
                  a.comp.wait_ms / nc, a.comp.total_ms / nc);
      std::printf("  per batch, dec:  host %.3f ms, h2d %.3f ms, kernel %.3f ms, d2h %.3f ms, "
                  "waiting for the host %.3f ms, total %.3f ms\n",
                  a.decomp.host_ms / nd, a.decomp.h2d_ms / nd, a.decomp.kernel_ms / nd, a.decomp.d2h_ms / nd,
                  a.decomp.wait_ms / nd, a.decomp.total_ms / nd);
    } else {
      std::printf("  the GPU took %.1f%% of the pages (%.1f%% of compression's, %.1f%% of decompression's; "
                  "%llu probes); calibration measured the link at %.1f GB/s to the device, %.1f GB/s back\n",
                  100 * a.backend_share, 100 * a.comp_share, 100 * a.decomp_share,
                  static_cast<unsigned long long>(a.probes), a.link_h2d_gbs, a.link_d2h_gbs);
      for (const auto* r : {&a.comp_rates, &a.comp_rates_end, &a.decomp_rates, &a.decomp_rates_end})
        std::printf("  %s %s: CPU %.0f pages/s; GPU %.0f pages/s, %.1f us a batch, host %.3f us a page\n",
                    r == &a.comp_rates || r == &a.decomp_rates ? "calibrated" : "at the end,",
                    r == &a.comp_rates || r == &a.comp_rates_end ? "compression" : "decompression",
                    r->cpu_pages_per_s, r->backend_pages_per_s, r->backend_fixed_s * 1e6,
                    r->backend_host_s_per_page * 1e6);
    }
  }

  if (!json.empty()) {
    FILE* f = std::fopen(json.c_str(), "w");
    if (!f) {
      std::perror(json.c_str());
      return 1;
    }
    std::fprintf(f, "{\n  \"cpu\": \"%s\", \"cpus\": %u, \"isa\": \"%s\", \"pages\": %zu, \"batch\": %zu,\n",
                 CpuModel().c_str(), cpus, hzram::IsaName(opt.isa), n, batch);
    std::fprintf(f, "  \"baseline\": {\"name\": \"liblz4 %s, 1 thread\", \"comp_gbs\": %.3f, \"decomp_gbs\": %.3f, \"ratio\": %.4f},\n",
                 LZ4_versionString(), base.comp_gbs, base.decomp_gbs, base.ratio);
    std::fprintf(f, "  \"codec\": [\n");
    for (std::size_t i = 0; i < rows.size(); i++)
      std::fprintf(f, "    {\"threads\": %u, \"comp_gbs\": %.3f, \"decomp_gbs\": %.3f, \"ratio\": %.4f, \"comp_speedup\": %.3f, \"decomp_speedup\": %.3f}%s\n",
                   rows[i].threads, rows[i].r.comp_gbs, rows[i].r.decomp_gbs, rows[i].r.ratio,
                   rows[i].r.comp_gbs / base.comp_gbs, rows[i].r.decomp_gbs / base.decomp_gbs,
                   i + 1 < rows.size() ? "," : "");
    std::fprintf(f, "  ],\n  \"batch_latency\": {\"threads\": %u, \"batches\": [\n", max_threads);
    for (std::size_t i = 0; i < lat.size(); i++)
      std::fprintf(f, "    {\"pages\": %zu, \"comp_p50_us\": %.2f, \"comp_p99_us\": %.2f, \"decomp_p50_us\": %.2f, \"decomp_p99_us\": %.2f}%s\n",
                   lat[i].batch, lat[i].comp_p50_us, lat[i].comp_p99_us, lat[i].decomp_p50_us,
                   lat[i].decomp_p99_us, i + 1 < lat.size() ? "," : "");
    std::fprintf(f, "  ]},\n  \"memcpy_gbs\": {\"threads_1\": %.3f, \"threads_all\": %.3f},\n", copy1, copyn);
    std::fprintf(f, "  \"accelerated\": [");
    for (std::size_t i = 0; i < accel.size(); i++) {
      const Accel& a = accel[i];
      const double nc = a.comp.batches ? a.comp.batches : 1, nd = a.decomp.batches ? a.decomp.batches : 1;
      std::fprintf(f, "%s\n    {\"backend\": \"%s\", \"device\": \"%s\", \"slots\": %u, \"warps\": %u, \"kernels\": %u, \"comp_gbs\": %.3f, "
                   "\"decomp_gbs\": %.3f, \"comp_kernel_gbs\": %.3f, \"decomp_kernel_gbs\": %.3f, \"ratio\": %.4f, "
                   "\"comp_ms\": {\"host\": %.4f, \"h2d\": %.4f, \"kernel\": %.4f, \"d2h\": %.4f, \"total\": %.4f}, "
                   "\"decomp_ms\": {\"host\": %.4f, \"h2d\": %.4f, \"kernel\": %.4f, \"d2h\": %.4f, \"total\": %.4f}, "
                   "\"backend_share\": %.4f, \"comp_share\": %.4f, \"decomp_share\": %.4f, \"probes\": %llu, "
                   "\"comp_wait_ms\": %.4f, \"decomp_wait_ms\": %.4f, "
                   "\"link_h2d_gbs\": %.3f, \"link_d2h_gbs\": %.3f}",
                   i ? "," : "", a.name.c_str(), a.device.c_str(), slots, a.warps, a.kernels, a.comp_gbs, a.decomp_gbs,
                   a.comp_kernel_gbs, a.decomp_kernel_gbs, a.ratio, a.comp.host_ms / nc, a.comp.h2d_ms / nc,
                   a.comp.kernel_ms / nc, a.comp.d2h_ms / nc, a.comp.total_ms / nc, a.decomp.host_ms / nd,
                   a.decomp.h2d_ms / nd, a.decomp.kernel_ms / nd, a.decomp.d2h_ms / nd, a.decomp.total_ms / nd,
                   a.backend_share, a.comp_share, a.decomp_share, static_cast<unsigned long long>(a.probes),
                   a.comp.wait_ms / nc, a.decomp.wait_ms / nd, a.link_h2d_gbs, a.link_d2h_gbs);
    }
    std::fprintf(f, "%s]\n}\n", accel.empty() ? "" : "\n  ");
    std::fclose(f);
  }
  return 0;
}
